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

#include "tessera/ops/arithmetic.hpp"
#include "tessera/optim/optimizer.hpp"

namespace tessera::optim {

struct SGDOptions {
  double lr = 1e-3;
  double momentum = 0.0;
  double dampening = 0.0;
  double weight_decay = 0.0;
  bool nesterov = false;
  bool maximize = false;
  bool foreach = false;  // Note [Flat parameters] (foreach.hpp)
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
    set_foreach(o.foreach);
    init_groups(std::move(groups));
  }
  SGD(std::vector<Tensor> params, const SGDOptions& o = {})
      : SGD(std::vector<ParamGroup>{ParamGroup(std::move(params))}, o) {}

  std::string type_name() const override { return "SGD"; }

  using Optimizer::step;  // step(closure)
  void step() override {
    autograd::NoGradGuard no_grad;
    for (size_t g = 0; g < param_groups().size(); ++g) {
      const ParamGroup& group = param_groups()[g];
      const Hyper h{
          group.get("lr"),           group.get("momentum"),        group.get("dampening"),
          group.get("weight_decay"), group.get("nesterov") != 0.0, group.get("maximize") != 0.0};
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
    double lr, momentum, dampening, weight_decay;
    bool nesterov, maximize;
  };

  // The update of `p` (a parameter or a flat bucket) with gradient `d` and
  // momentum buffer `buf` (null: none yet, or no momentum); returns the
  // buffer it made on a first momentum step.
  Tensor update(Tensor& p, Tensor d, Tensor* buf, const Hyper& h) {
    if (h.maximize) d = -d;
    if (h.weight_decay != 0.0) d = d.add(p, h.weight_decay);
    Tensor made;
    if (h.momentum != 0.0) {
      if (buf == nullptr) {
        made = d.clone().detach();
        buf = &made;
      } else {
        buf->mul_(h.momentum).add_(d, 1.0 - h.dampening);
      }
      d = h.nesterov ? d.add(*buf, h.momentum) : *buf;
    }
    p.add_(d, -h.lr);
    return made;
  }

  void step_one(Tensor& p, const Hyper& h) {
    Tensor d = p.grad();
    if (!d.defined()) return;
    if (h.momentum == 0.0) {
      update(p, d, nullptr, h);
      return;
    }
    ParamState& state = state_for(p);
    auto it = state.find("momentum_buffer");
    if (it == state.end()) {
      state.emplace("momentum_buffer", update(p, d, nullptr, h));
    } else {
      update(p, d, &it->second, h);
    }
  }

  // See Note [Flat parameters]: the whole bucket in one update; false (nothing
  // done) when a parameter has no gradient or only some have a momentum
  // buffer.
  bool step_flat(detail::FlatBucket& b, const Hyper& h) {
    Tensor grad = b.flat_grads();
    if (!grad.defined()) return false;
    if (h.momentum == 0.0) {
      update(b.flat, grad, nullptr, h);
      return true;
    }
    auto state_of = [&](size_t k) -> ParamState& { return state_for(b.params[k]); };
    switch (detail::presence(b, "momentum_buffer", state_of)) {
      case detail::Presence::Mixed:
        return false;
      case detail::Presence::None: {
        // first step: the buffer is d itself, laid out flat
        Tensor& cached = b.states["momentum_buffer"];
        cached = update(b.flat, grad, nullptr, h);
        for (size_t k = 0; k < b.params.size(); ++k)
          state_of(k)["momentum_buffer"] = b.view_of(cached, k);
        return true;
      }
      case detail::Presence::All: {
        Tensor buf = detail::flat_state(b, "momentum_buffer", state_of);
        update(b.flat, grad, &buf, h);
        return true;
      }
    }
    return false;
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
