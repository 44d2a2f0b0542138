// tessera/optim/adam.hpp - torch.optim.Adam and torch.optim.AdamW.
//
// Per parameter p with gradient g, at step t (PyTorch's update):
//   Adam:  g += weight_decay * p            (L2 in the gradient)
//   AdamW: p *= 1 - lr * weight_decay       (decoupled decay)
//   m = beta1 * m + (1 - beta1) * g;  v = beta2 * v + (1 - beta2) * g^2
//   amsgrad: v_max = max(v_max, v), used for v below
//   p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
// State, created on the first step: "step" (float32 scalar on the host),
// "exp_avg", "exp_avg_sq", and "max_exp_avg_sq" with amsgrad.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "tessera/factories.hpp"
#include "tessera/ops.hpp"
#include "tessera/ops/pointwise.hpp"
#include "tessera/optim/optimizer.hpp"

namespace tessera::optim {

struct AdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;  // AdamW's default is 1e-2 (AdamWOptions)
  bool amsgrad = false;
  bool maximize = false;
};
struct AdamWOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 1e-2;
  bool amsgrad = false;
  bool maximize = false;
};

namespace detail {

template <class O>
inline Options adam_defaults(const O& o) {
  return {{"lr", o.lr},
          {"beta1", o.beta1},
          {"beta2", o.beta2},
          {"eps", o.eps},
          {"weight_decay", o.weight_decay},
          {"amsgrad", o.amsgrad ? 1.0 : 0.0},
          {"maximize", o.maximize ? 1.0 : 0.0}};
}

// The Adam/AdamW step; `decoupled` selects AdamW's weight decay.
class AdamBase : public Optimizer {
 public:
  std::string type_name() const override { return name_; }
  using Optimizer::step;  // step(closure)
  void step() override {
    autograd::NoGradGuard no_grad;
    for (ParamGroup& group : param_groups()) {
      const double lr = group.get("lr"), beta1 = group.get("beta1"), beta2 = group.get("beta2"),
                   eps = group.get("eps"), weight_decay = group.get("weight_decay");
      const bool amsgrad = group.get("amsgrad") != 0.0, maximize = group.get("maximize") != 0.0;
      for (Tensor& p : group.params) {
        Tensor grad = p.grad();
        if (!grad.defined()) continue;
        if (maximize) grad = -grad;
        bool created = false;
        ParamState& state = state_for(p, &created);
        if (created) {
          state["step"] = zeros(IntList(), kFloat32);
          state["exp_avg"] = zeros_like(p);
          state["exp_avg_sq"] = zeros_like(p);
          if (amsgrad) state["max_exp_avg_sq"] = zeros_like(p);
        }
        Tensor& step_t = state.at("step");
        Tensor& exp_avg = state.at("exp_avg");
        Tensor& exp_avg_sq = state.at("exp_avg_sq");
        step_t.add_(1);
        if (weight_decay != 0.0) {
          if (decoupled_) {
            p.mul_(1.0 - lr * weight_decay);
          } else {
            grad = grad.add(p, weight_decay);
          }
        }
        exp_avg.mul_(beta1).add_(grad, 1.0 - beta1);
        exp_avg_sq.mul_(beta2);
        addcmul_(exp_avg_sq, grad, grad, 1.0 - beta2);
        const double t = step_t.item<float>();
        const double bias_correction1 = 1.0 - std::pow(beta1, t);
        const double bias_correction2_sqrt = std::sqrt(1.0 - std::pow(beta2, t));
        Tensor second = exp_avg_sq;
        if (amsgrad) {
          Tensor& max_sq = state.at("max_exp_avg_sq");
          maximum_out(max_sq, max_sq, exp_avg_sq);
          second = max_sq;
        }
        Tensor denom = sqrt(second).div_(bias_correction2_sqrt).add_(eps);
        addcdiv_(p, exp_avg, denom, -lr / bias_correction1);
      }
    }
  }

 protected:
  AdamBase(const char* name, std::vector<ParamGroup> groups, const Options& defaults,
           bool decoupled)
      : Optimizer(defaults), name_(name), decoupled_(decoupled) {
    init_groups(std::move(groups));
  }

  void validate(const Options& o) const override {
    require_range(o.at("lr") >= 0.0, "learning rate", o.at("lr"));
    require_range(o.at("eps") >= 0.0, "epsilon", o.at("eps"));
    require_range(o.at("beta1") >= 0.0 && o.at("beta1") < 1.0, "beta parameter at index 0",
                  o.at("beta1"));
    require_range(o.at("beta2") >= 0.0 && o.at("beta2") < 1.0, "beta parameter at index 1",
                  o.at("beta2"));
    require_range(o.at("weight_decay") >= 0.0, "weight_decay", o.at("weight_decay"));
  }

 private:
  std::string name_;  // "Adam" or "AdamW"
  bool decoupled_;
};

}  // namespace detail

class Adam : public detail::AdamBase {
 public:
  Adam(std::vector<ParamGroup> groups, const AdamOptions& o = {})
      : AdamBase("Adam", std::move(groups), detail::adam_defaults(o), false) {}
  Adam(std::vector<Tensor> params, const AdamOptions& o = {})
      : Adam(std::vector<ParamGroup>{ParamGroup(std::move(params))}, o) {}
};

class AdamW : public detail::AdamBase {
 public:
  AdamW(std::vector<ParamGroup> groups, const AdamWOptions& o = {})
      : AdamBase("AdamW", std::move(groups), detail::adam_defaults(o), true) {}
  AdamW(std::vector<Tensor> params, const AdamWOptions& o = {})
      : AdamW(std::vector<ParamGroup>{ParamGroup(std::move(params))}, o) {}
};

}  // namespace tessera::optim
