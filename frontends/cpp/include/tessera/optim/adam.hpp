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
#include "tessera/ops/arithmetic.hpp"
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
  bool foreach = false;  // Note [Flat parameters] (foreach.hpp)
};
struct AdamWOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 1e-2;
  bool amsgrad = false;
  bool maximize = false;
  bool foreach = false;  // Note [Flat parameters] (foreach.hpp)
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
    for (size_t g = 0; g < param_groups().size(); ++g) {
      const ParamGroup& group = param_groups()[g];
      const Hyper h{group.get("lr"),
                    group.get("beta1"),
                    group.get("beta2"),
                    group.get("eps"),
                    group.get("weight_decay"),
                    group.get("amsgrad") != 0.0,
                    group.get("maximize") != 0.0};
      if (!foreach_enabled()) {
        for (Tensor p : group.params) step_one(p, h);
        continue;
      }
      for (detail::FlatBucket& b : buckets(g)) {
        if (!step_flat(b, h))
          for (Tensor& p : b.params) step_one(p, h);
      }
      for (Tensor& p : unbucketed(g)) step_one(p, h);
    }
  }

 private:
  struct Hyper {
    double lr, beta1, beta2, eps, weight_decay;
    bool amsgrad, maximize;
  };

  // The update of `p` (one parameter, or a flat bucket of them) with
  // gradient `grad` at step t; identical arithmetic on both paths.
  void update(Tensor& p, Tensor grad, Tensor& exp_avg, Tensor& exp_avg_sq, Tensor* max_sq, double t,
              const Hyper& h) {
    if (h.weight_decay != 0.0) {
      if (decoupled_) {
        p.mul_(1.0 - h.lr * h.weight_decay);
      } else {
        grad = grad.add(p, h.weight_decay);
      }
    }
    exp_avg.mul_(h.beta1).add_(grad, 1.0 - h.beta1);
    exp_avg_sq.mul_(h.beta2);
    addcmul_(exp_avg_sq, grad, grad, 1.0 - h.beta2);
    const double bias_correction1 = 1.0 - std::pow(h.beta1, t);
    const double bias_correction2_sqrt = std::sqrt(1.0 - std::pow(h.beta2, t));
    Tensor second = exp_avg_sq;
    if (max_sq != nullptr) {
      maximum_out(*max_sq, *max_sq, exp_avg_sq);
      second = *max_sq;
    }
    Tensor denom = sqrt(second).div_(bias_correction2_sqrt).add_(h.eps);
    addcdiv_(p, exp_avg, denom, -h.lr / bias_correction1);
  }

  void step_one(Tensor& p, const Hyper& h) {
    Tensor grad = p.grad();
    if (!grad.defined()) return;
    if (h.maximize) grad = -grad;
    bool created = false;
    ParamState& state = state_for(p, &created);
    if (created) {
      state["step"] = zeros(IntList(), kFloat32);
      state["exp_avg"] = zeros_like(p);
      state["exp_avg_sq"] = zeros_like(p);
      if (h.amsgrad) state["max_exp_avg_sq"] = zeros_like(p);
    }
    Tensor& step_t = state.at("step");
    step_t.add_(1);
    update(p, grad, state.at("exp_avg"), state.at("exp_avg_sq"),
           h.amsgrad ? &state.at("max_exp_avg_sq") : nullptr, step_t.item<float>(), h);
  }

  // See Note [Flat parameters]: the whole bucket in one update; false (nothing
  // done) when a parameter has no gradient or the step counts differ.
  bool step_flat(detail::FlatBucket& b, const Hyper& h) {
    Tensor grad = b.flat_grads();
    if (!grad.defined()) return false;
    auto state_of = [&](size_t k) -> ParamState& { return state_for(b.params[k]); };
    Tensor steps = detail::flat_steps(b, state_of);
    const std::vector<float> counts = steps.to_vector<float>();
    for (float c : counts)
      if (c != counts[0]) return false;
    if (h.maximize) grad = -grad;
    Tensor exp_avg = detail::flat_state(b, "exp_avg", state_of);
    Tensor exp_avg_sq = detail::flat_state(b, "exp_avg_sq", state_of);
    Tensor max_sq = h.amsgrad ? detail::flat_state(b, "max_exp_avg_sq", state_of) : Tensor();
    steps.add_(1);
    update(b.flat, grad, exp_avg, exp_avg_sq, h.amsgrad ? &max_sq : nullptr,
           static_cast<double>(counts[0]) + 1.0, h);
    return true;
  }

 protected:
  AdamBase(const char* name, std::vector<ParamGroup> groups, const Options& defaults,
           bool decoupled, bool foreach)
      : Optimizer(defaults), name_(name), decoupled_(decoupled) {
    set_foreach(foreach);
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
      : AdamBase("Adam", std::move(groups), detail::adam_defaults(o), false, o.foreach) {}
  Adam(std::vector<Tensor> params, const AdamOptions& o = {})
      : Adam(std::vector<ParamGroup>{ParamGroup(std::move(params))}, o) {}
};

class AdamW : public detail::AdamBase {
 public:
  AdamW(std::vector<ParamGroup> groups, const AdamWOptions& o = {})
      : AdamBase("AdamW", std::move(groups), detail::adam_defaults(o), true, o.foreach) {}
  AdamW(std::vector<Tensor> params, const AdamWOptions& o = {})
      : AdamW(std::vector<ParamGroup>{ParamGroup(std::move(params))}, o) {}
};

}  // namespace tessera::optim
