// tessera/optim/sgd.hpp - torch.optim.SGD: momentum, dampening, Nesterov
// momentum, weight decay (L2, added to the gradient) and maximize.
//
// Per parameter p with gradient g (PyTorch's update):
//   d = g (or -g when maximize) + weight_decay * p
//   momentum != 0: buf = d on the first step, else buf = momentum * buf + (1 - dampening) * d;
//                  d = nesterov ? d + momentum * buf : buf
//   p -= lr * d
// State: "momentum_buffer" (only with momentum).
#pragma once

#include <string>
#include <vector>

#include "tessera/ops.hpp"
#include "tessera/optim/optimizer.hpp"

namespace tessera::optim {

struct SGDOptions {
  double lr = 1e-3;
  double momentum = 0.0;
  double dampening = 0.0;
  double weight_decay = 0.0;
  bool nesterov = false;
  bool maximize = false;
};

class SGD : public Optimizer {
 public:
  SGD(std::vector<ParamGroup> groups, const SGDOptions& o = {})
      : Optimizer({{"lr", o.lr},
                   {"momentum", o.momentum},
                   {"dampening", o.dampening},
                   {"weight_decay", o.weight_decay},
                   {"nesterov", o.nesterov ? 1.0 : 0.0},
                   {"maximize", o.maximize ? 1.0 : 0.0}}) {
    init_groups(std::move(groups));
  }
  SGD(std::vector<Tensor> params, const SGDOptions& o = {})
      : SGD(std::vector<ParamGroup>{ParamGroup(std::move(params))}, o) {}

  std::string type_name() const override { return "SGD"; }

  using Optimizer::step;  // step(closure)
  void step() override {
    autograd::NoGradGuard no_grad;
    for (ParamGroup& group : param_groups()) {
      const double lr = group.get("lr"), momentum = group.get("momentum"),
                   dampening = group.get("dampening"), weight_decay = group.get("weight_decay");
      const bool nesterov = group.get("nesterov") != 0.0, maximize = group.get("maximize") != 0.0;
      for (Tensor& p : group.params) {
        Tensor d = p.grad();
        if (!d.defined()) continue;
        if (maximize) d = -d;
        if (weight_decay != 0.0) d = d.add(p, weight_decay);
        if (momentum != 0.0) {
          ParamState& state = state_for(p);
          auto it = state.find("momentum_buffer");
          if (it == state.end()) {
            it = state.emplace("momentum_buffer", d.clone().detach()).first;
          } else {
            it->second.mul_(momentum).add_(d, 1.0 - dampening);
          }
          d = nesterov ? d.add(it->second, momentum) : it->second;
        }
        p.add_(d, -lr);
      }
    }
  }

 protected:
  void validate(const Options& o) const override {
    require_range(o.at("lr") >= 0.0, "learning rate", o.at("lr"));
    require_range(o.at("momentum") >= 0.0, "momentum", o.at("momentum"));
    require_range(o.at("weight_decay") >= 0.0, "weight_decay", o.at("weight_decay"));
    if (o.at("nesterov") != 0.0 && (o.at("momentum") <= 0.0 || o.at("dampening") != 0.0))
      tessera::detail::throw_error(TSR_INVALID_ARGUMENT,
                                   "Nesterov momentum requires a momentum and zero dampening");
  }
};

}  // namespace tessera::optim
