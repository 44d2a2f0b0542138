// tessera/optim/lr_scheduler/one_cycle.hpp - OneCycleLR, the 1cycle policy
// (torch.optim.lr_scheduler.OneCycleLR): lr and momentum (or Adam's beta1)
// annealed by cosine or linearly through two or three phases.
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>
#include <optional>
#include <string>
#include <vector>

#include "tessera/optim/lr_scheduler/scheduler.hpp"

namespace tessera::optim {

struct OneCycleLROptions {
  GroupValues max_lr = 0.0;                // required: the peak lr (per group or one)
  std::optional<int64_t> total_steps;      // or epochs * steps_per_epoch
  std::optional<int64_t> epochs;           //
  std::optional<int64_t> steps_per_epoch;  //
  double pct_start = 0.3;                  // fraction of the cycle spent increasing
  std::string anneal_strategy = "cos";     // "cos" or "linear"
  bool cycle_momentum = true;              // needs "momentum" or "beta1" in the optimizer
  GroupValues base_momentum = 0.85;        // momentum at the lr peak
  GroupValues max_momentum = 0.95;         // momentum at the start and end
  double div_factor = 25.0;                // initial_lr = max_lr / div_factor
  double final_div_factor = 1e4;           // min_lr = initial_lr / final_div_factor
  bool three_phase = false;                // PyTorch's three_phase
  int64_t last_epoch = -1;                 // the last batch index when resuming
};

namespace lr_detail {

// OneCycleLR's validated arguments and phases. A base of OneCycleLR listed
// before LRScheduler, so it is built (validating and writing the groups'
// cycle options) before LRScheduler records initial_lr: PyTorch's order.
class OneCycleConfig {
 protected:
  struct Phase {
    double end_step;
    const char* start_lr;
    const char* end_lr;
    const char* start_momentum;
    const char* end_momentum;
  };

  OneCycleConfig(Optimizer& optimizer, const OneCycleLROptions& o) {
    if (!o.total_steps && !o.epochs && !o.steps_per_epoch)
      invalid("OneCycleLR: You must define either total_steps OR (epochs AND steps_per_epoch)");
    if (o.total_steps) {
      if (*o.total_steps <= 0)
        invalid("OneCycleLR: Expected positive integer total_steps, but got " +
                std::to_string(*o.total_steps));
      total_steps_ = *o.total_steps;
    } else {
      if (!o.epochs || *o.epochs <= 0)
        invalid("OneCycleLR: Expected positive integer epochs, but got " +
                (o.epochs ? std::to_string(*o.epochs) : std::string("none")));
      if (!o.steps_per_epoch || *o.steps_per_epoch <= 0)
        invalid("OneCycleLR: Expected positive integer steps_per_epoch, but got " +
                (o.steps_per_epoch ? std::to_string(*o.steps_per_epoch) : std::string("none")));
      total_steps_ = *o.epochs * *o.steps_per_epoch;
    }
    const double total = static_cast<double>(total_steps_);
    if (o.three_phase) {
      phases_ = {
          {o.pct_start * total - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum"},
          {2 * o.pct_start * total - 2, "max_lr", "initial_lr", "base_momentum", "max_momentum"},
          {total - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum"}};
    } else {
      phases_ = {{o.pct_start * total - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum"},
                 {total - 1, "max_lr", "min_lr", "base_momentum", "max_momentum"}};
    }
    pct_start_ = o.pct_start;
    if (!(o.pct_start >= 0 && o.pct_start <= 1))
      invalid("OneCycleLR: Expected float between 0 and 1 pct_start, but got " + fmt(o.pct_start));
    if (o.anneal_strategy != "cos" && o.anneal_strategy != "linear")
      invalid("OneCycleLR: anneal_strategy must be one of 'cos' or 'linear', instead got '" +
              o.anneal_strategy + "'");
    linear_ = o.anneal_strategy == "linear";

    auto& groups = optimizer.param_groups();
    const std::vector<double> max_lrs = o.max_lr.expand("max_lr", groups.size());
    if (o.last_epoch == -1) {
      for (size_t i = 0; i < groups.size(); ++i) {
        groups[i].set("initial_lr", max_lrs[i] / o.div_factor);
        groups[i].set("max_lr", max_lrs[i]);
        groups[i].set("min_lr", groups[i].get("initial_lr") / o.final_div_factor);
      }
    }
    cycle_momentum_ = o.cycle_momentum;
    if (cycle_momentum_) {
      const Options& defaults = optimizer.defaults();
      if (!defaults.count("momentum") && !defaults.count("beta1"))
        invalid("OneCycleLR: optimizer " + optimizer.type_name() +
                " must support momentum with `cycle_momentum` option enabled (it has no "
                "'momentum' or 'beta1' option); pass cycle_momentum = false");
      momentum_key_ = defaults.count("beta1") ? "beta1" : "momentum";
      const auto max_m = o.max_momentum.expand("max_momentum", groups.size());
      const auto base_m = o.base_momentum.expand("base_momentum", groups.size());
      if (o.last_epoch == -1) {
        for (size_t i = 0; i < groups.size(); ++i) {
          groups[i].set(momentum_key_, max_m[i]);
          groups[i].set("max_momentum", max_m[i]);
          groups[i].set("base_momentum", base_m[i]);
        }
      }
    }
  }

  double anneal(double start, double end, double pct) const {
    if (linear_) return (end - start) * pct + start;
    const double cos_out = std::cos(std::numbers::pi * pct) + 1;
    return end + (start - end) / 2.0 * cos_out;
  }

  int64_t total_steps_ = 0;
  double pct_start_ = 0;
  std::vector<Phase> phases_;
  bool linear_ = false;
  bool cycle_momentum_ = false;
  std::string momentum_key_;  // "momentum" or "beta1"
};

}  // namespace lr_detail

// The 1cycle policy (fastai's two phases by default, the paper's three with
// three_phase): lr from max_lr/div_factor up to max_lr and down to
// min_lr, momentum inversely between max_momentum and base_momentum.
// Stepping more than total_steps times throws. Not chainable.
class OneCycleLR final : private lr_detail::OneCycleConfig, public LRScheduler {
 public:
  OneCycleLR(Optimizer& optimizer, const OneCycleLROptions& o)
      : lr_detail::OneCycleConfig(optimizer, o), LRScheduler(optimizer, o.last_epoch) {
    initial_step();
  }
  std::string type_name() const override { return "OneCycleLR"; }
  int64_t total_steps() const noexcept { return total_steps_; }

 protected:
  std::vector<double> get_lr() override {
    const int64_t step_num = last_epoch_;
    if (step_num > total_steps_)
      lr_detail::invalid("OneCycleLR: Tried to step " + std::to_string(step_num + 1) +
                         " times. The specified number of total steps is " +
                         std::to_string(total_steps_) + "; build it with a larger total_steps");
    std::vector<double> lrs;
    for (ParamGroup& group : optimizer_->param_groups()) {
      double start_step = 0, lr = 0, momentum = 0;
      for (size_t i = 0; i < phases_.size(); ++i) {
        const Phase& phase = phases_[i];
        if (static_cast<double>(step_num) <= phase.end_step || i == phases_.size() - 1) {
          const double span = phase.end_step - start_step;
          if (span == 0.0)  // PyTorch: ZeroDivisionError
            lr_detail::invalid("OneCycleLR: phase " + std::to_string(i) +
                               " has no steps (pct_start = " + lr_detail::fmt(pct_start_) +
                               " of total_steps = " + std::to_string(total_steps_) +
                               "); use more total_steps or another pct_start");
          const double pct = (static_cast<double>(step_num) - start_step) / span;
          lr = anneal(group.get(phase.start_lr), group.get(phase.end_lr), pct);
          if (cycle_momentum_)
            momentum = anneal(group.get(phase.start_momentum), group.get(phase.end_momentum), pct);
          break;
        }
        start_step = phase.end_step;
      }
      lrs.push_back(lr);
      if (cycle_momentum_) group.set(momentum_key_, momentum);
    }
    return lrs;
  }
};
}  // namespace tessera::optim
