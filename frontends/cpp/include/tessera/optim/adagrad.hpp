// tessera/optim/adagrad.hpp - torch.optim.Adagrad.
//
// Per parameter p with gradient g, at step t (PyTorch's update):
//   g += weight_decay * p
//   clr = lr / (1 + (t - 1) * lr_decay)
//   sum += g^2;  p -= clr * g / (sqrt(sum) + eps)
// State: "step" and "sum" (starting at initial_accumulator_value). Unlike
// the other optimizers PyTorch creates Adagrad's state in the constructor,
// and so does this one.
#pragma once

#include <string>
#include <vector>

#include "tessera/factories.hpp"
#include "tessera/ops/arithmetic.hpp"
#include "tessera/ops/pointwise.hpp"
#include "tessera/optim/optimizer.hpp"

namespace tessera::optim {

struct AdagradOptions {
  double lr = 1e-2;
  double lr_decay = 0.0;
  double weight_decay = 0.0;
  double initial_accumulator_value = 0.0;
  double eps = 1e-10;
  bool maximize = false;
};

class Adagrad : public Optimizer {
 public:
  Adagrad(std::vector<ParamGroup> groups, const AdagradOptions& o = {})
      : Optimizer({{"lr", o.lr},
                   {"lr_decay", o.lr_decay},
                   {"weight_decay", o.weight_decay},
                   {"initial_accumulator_value", o.initial_accumulator_value},
                   {"eps", o.eps},
                   {"maximize", o.maximize ? 1.0 : 0.0}}) {
    init_groups(std::move(groups));
    for (ParamGroup& group : param_groups()) {
      for (Tensor& p : group.params) {
        ParamState& state = state_for(p);
        state["step"] = zeros(IntList(), kFloat32);
        state["sum"] = full_like(p, group.get("initial_accumulator_value"));
      }
    }
  }
  Adagrad(std::vector<Tensor> params, const AdagradOptions& o = {})
      : Adagrad(std::vector<ParamGroup>{ParamGroup(std::move(params))}, o) {}
  std::string type_name() const override { return "Adagrad"; }

  using Optimizer::step;  // step(closure)
  void step() override {
    autograd::NoGradGuard no_grad;
    for (ParamGroup& group : param_groups()) {
      const double lr = group.get("lr"), lr_decay = group.get("lr_decay"),
                   weight_decay = group.get("weight_decay"), eps = group.get("eps");
      const bool maximize = group.get("maximize") != 0.0;
      for (Tensor& p : group.params) {
        Tensor grad = p.grad();
        if (!grad.defined()) continue;
        if (maximize) grad = -grad;
        bool created = false;
        ParamState& state = state_for(p, &created);
        if (created) {  // a group added after construction
          state["step"] = zeros(IntList(), kFloat32);
          state["sum"] = full_like(p, group.get("initial_accumulator_value"));
        }
        Tensor& step_t = state.at("step");
        step_t.add_(1);
        const double t = step_t.item<float>();
        if (weight_decay != 0.0) grad = grad.add(p, weight_decay);
        const double clr = lr / (1.0 + (t - 1.0) * lr_decay);
        Tensor& sum = state.at("sum");
        addcmul_(sum, grad, grad, 1.0);
        addcdiv_(p, grad, sqrt(sum).add_(eps), -clr);
      }
    }
  }

 protected:
  void validate(const Options& o) const override {
    require_range(o.at("lr") >= 0.0, "learning rate", o.at("lr"));
    require_range(o.at("lr_decay") >= 0.0, "lr_decay", o.at("lr_decay"));
    require_range(o.at("weight_decay") >= 0.0, "weight_decay", o.at("weight_decay"));
    require_range(o.at("initial_accumulator_value") >= 0.0, "initial_accumulator_value",
                  o.at("initial_accumulator_value"));
    require_range(o.at("eps") >= 0.0, "epsilon", o.at("eps"));
  }
};

}  // namespace tessera::optim
