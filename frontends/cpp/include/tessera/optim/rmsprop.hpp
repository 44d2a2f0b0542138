// tessera/optim/rmsprop.hpp - torch.optim.RMSprop.
//
// Per parameter p with gradient g (PyTorch's update):
//   g += weight_decay * p
//   v = alpha * v + (1 - alpha) * g^2
//   centered: a = alpha * a + (1 - alpha) * g;  avg = sqrt(v - a^2) + eps
//   otherwise avg = sqrt(v) + eps
//   momentum > 0: buf = momentum * buf + g / avg; p -= lr * buf
//   otherwise p -= lr * g / avg
// State: "step", "square_avg", "momentum_buffer" (momentum > 0), "grad_avg"
// (centered).
#pragma once

#include <string>
#include <vector>

#include "tessera/factories.hpp"
#include "tessera/ops/arithmetic.hpp"
#include "tessera/ops/pointwise.hpp"
#include "tessera/optim/optimizer.hpp"

namespace tessera::optim {

struct RMSpropOptions {
  double lr = 1e-2;
  double alpha = 0.99;
  double eps = 1e-8;
  double weight_decay = 0.0;
  double momentum = 0.0;
  bool centered = false;
  bool maximize = false;
};

class RMSprop : public Optimizer {
 public:
  RMSprop(std::vector<ParamGroup> groups, const RMSpropOptions& o = {})
      : Optimizer({{"lr", o.lr},
                   {"alpha", o.alpha},
                   {"eps", o.eps},
                   {"weight_decay", o.weight_decay},
                   {"momentum", o.momentum},
                   {"centered", o.centered ? 1.0 : 0.0},
                   {"maximize", o.maximize ? 1.0 : 0.0}}) {
    init_groups(std::move(groups));
  }
  RMSprop(std::vector<Tensor> params, const RMSpropOptions& o = {})
      : RMSprop(std::vector<ParamGroup>{ParamGroup(std::move(params))}, o) {}
  std::string type_name() const override { return "RMSprop"; }

  using Optimizer::step;  // step(closure)
  void step() override {
    autograd::NoGradGuard no_grad;
    for (ParamGroup& group : param_groups()) {
      const double lr = group.get("lr"), alpha = group.get("alpha"), eps = group.get("eps"),
                   weight_decay = group.get("weight_decay"), momentum = group.get("momentum");
      const bool centered = group.get("centered") != 0.0, maximize = group.get("maximize") != 0.0;
      for (Tensor& p : group.params) {
        Tensor grad = p.grad();
        if (!grad.defined()) continue;
        if (maximize) grad = -grad;
        bool created = false;
        ParamState& state = state_for(p, &created);
        if (created) {
          state["step"] = zeros(IntList(), kFloat32);
          state["square_avg"] = zeros_like(p);
          if (momentum > 0.0) state["momentum_buffer"] = zeros_like(p);
          if (centered) state["grad_avg"] = zeros_like(p);
        }
        state.at("step").add_(1);
        if (weight_decay != 0.0) grad = grad.add(p, weight_decay);
        Tensor& square_avg = state.at("square_avg");
        square_avg.mul_(alpha);
        addcmul_(square_avg, grad, grad, 1.0 - alpha);
        Tensor avg;
        if (centered) {
          Tensor& grad_avg = state.at("grad_avg");
          grad_avg.mul_(alpha).add_(grad, 1.0 - alpha);
          Tensor variance = addcmul(square_avg, grad_avg, grad_avg, -1.0);
          avg = sqrt_(variance).add_(eps);
        } else {
          avg = sqrt(square_avg).add_(eps);
        }
        if (momentum > 0.0) {
          Tensor& buf = state.at("momentum_buffer");
          buf.mul_(momentum);
          addcdiv_(buf, grad, avg);
          p.add_(buf, -lr);
        } else {
          addcdiv_(p, grad, avg, -lr);
        }
      }
    }
  }

 protected:
  void validate(const Options& o) const override {
    require_range(o.at("lr") >= 0.0, "learning rate", o.at("lr"));
    require_range(o.at("eps") >= 0.0, "epsilon", o.at("eps"));
    require_range(o.at("momentum") >= 0.0, "momentum", o.at("momentum"));
    require_range(o.at("weight_decay") >= 0.0, "weight_decay", o.at("weight_decay"));
    require_range(o.at("alpha") >= 0.0, "alpha", o.at("alpha"));
  }
};

}  // namespace tessera::optim
