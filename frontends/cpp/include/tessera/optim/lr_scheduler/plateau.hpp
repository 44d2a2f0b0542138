// tessera/optim/lr_scheduler/plateau.hpp - ReduceLROnPlateau
// (torch.optim.lr_scheduler.ReduceLROnPlateau): reduces the lr when a
// metric passed to step(metric) stops improving. Not an LRScheduler, as in
// PyTorch 1.13.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "tessera/optim/lr_scheduler/scheduler.hpp"

namespace tessera::optim {

struct ReduceLROnPlateauOptions {
  std::string mode = "min";            // "min": lower is better; "max": higher is better
  double factor = 0.1;                 // new_lr = lr * factor; < 1
  int64_t patience = 10;               // bad epochs tolerated before reducing
  double threshold = 1e-4;             // how much better counts as better
  std::string threshold_mode = "rel";  // "rel" (best * (1 -/+ threshold)) or "abs"
  int64_t cooldown = 0;                // epochs ignored after a reduction
  GroupValues min_lr = 0.0;            // lower bound per group (or one for all)
  double eps = 1e-8;                   // reductions smaller than this are skipped
};

// Reduces the lr by `factor` when a metric has not improved for more than
// `patience` steps. Invariant: best() is the best metric seen since the
// last reset (+inf in min mode, -inf in max mode before any).
class ReduceLROnPlateau {
 public:
  explicit ReduceLROnPlateau(Optimizer& optimizer, const ReduceLROnPlateauOptions& o = {})
      : optimizer_(&optimizer),
        factor_(o.factor),
        patience_(o.patience),
        threshold_(o.threshold),
        cooldown_(o.cooldown),
        eps_(o.eps) {
    if (o.factor >= 1.0)
      lr_detail::invalid("ReduceLROnPlateau: Factor should be < 1.0, got factor = " +
                         lr_detail::fmt(o.factor));
    min_lrs_ = o.min_lr.expand("min_lr", optimizer.param_groups().size());
    if (o.mode != "min" && o.mode != "max")
      lr_detail::invalid("ReduceLROnPlateau: mode '" + o.mode + "' is unknown! Use 'min' or 'max'");
    if (o.threshold_mode != "rel" && o.threshold_mode != "abs")
      lr_detail::invalid("ReduceLROnPlateau: threshold mode '" + o.threshold_mode +
                         "' is unknown! Use 'rel' or 'abs'");
    max_mode_ = o.mode == "max";
    abs_mode_ = o.threshold_mode == "abs";
    reset();
    for (const auto& g : optimizer.param_groups()) last_lr_.push_back(g.lr());
  }

  // One epoch with its metric (a NaN metric counts as no improvement).
  void step(double metric) {
    const double current = metric;
    last_epoch_ += 1;
    if (is_better(current, best_)) {
      best_ = current;
      num_bad_epochs_ = 0;
    } else {
      num_bad_epochs_ += 1;
    }
    if (cooldown_counter_ > 0) {
      cooldown_counter_ -= 1;
      num_bad_epochs_ = 0;  // bad epochs in cooldown are ignored
    }
    if (num_bad_epochs_ > patience_) {
      reduce_lr();
      cooldown_counter_ = cooldown_;
      num_bad_epochs_ = 0;
    }
    last_lr_.clear();
    for (const auto& g : optimizer_->param_groups()) last_lr_.push_back(g.lr());
  }

  // The groups' lr after the latest step (at construction: their lr then).
  const std::vector<double>& get_last_lr() const noexcept { return last_lr_; }
  int64_t last_epoch() const noexcept { return last_epoch_; }
  double best() const noexcept { return best_; }
  int64_t num_bad_epochs() const noexcept { return num_bad_epochs_; }
  bool in_cooldown() const noexcept { return cooldown_counter_ > 0; }
  Optimizer& optimizer() const noexcept { return *optimizer_; }

  LRSchedulerState state_dict() const {
    LRSchedulerState s;
    s.type = "ReduceLROnPlateau";
    s.values["last_epoch"] = static_cast<double>(last_epoch_);
    s.values["best"] = best_;
    s.values["num_bad_epochs"] = static_cast<double>(num_bad_epochs_);
    s.values["cooldown_counter"] = static_cast<double>(cooldown_counter_);
    s.lists["_last_lr"] = last_lr_;
    return s;
  }
  void load_state_dict(const LRSchedulerState& state) {
    lr_detail::check_type(state, "ReduceLROnPlateau");
    const double last_epoch = lr_detail::state_value(state, "last_epoch");
    const double best = lr_detail::state_value(state, "best");
    const double bad = lr_detail::state_value(state, "num_bad_epochs");
    const double cooldown = lr_detail::state_value(state, "cooldown_counter");
    last_lr_ = lr_detail::state_list(state, "_last_lr", last_lr_.size());
    last_epoch_ = static_cast<int64_t>(last_epoch);
    best_ = best;
    num_bad_epochs_ = static_cast<int64_t>(bad);
    cooldown_counter_ = static_cast<int64_t>(cooldown);
  }

 private:
  void reset() {
    best_ = max_mode_ ? -std::numeric_limits<double>::infinity()
                      : std::numeric_limits<double>::infinity();
    cooldown_counter_ = 0;
    num_bad_epochs_ = 0;
  }
  bool is_better(double a, double best) const {
    if (!max_mode_ && !abs_mode_) return a < best * (1. - threshold_);
    if (!max_mode_) return a < best - threshold_;
    if (!abs_mode_) return a > best * (threshold_ + 1.);
    return a > best + threshold_;
  }
  void reduce_lr() {
    auto& groups = optimizer_->param_groups();
    for (size_t i = 0; i < groups.size() && i < min_lrs_.size(); ++i) {
      const double old_lr = groups[i].lr();
      const double new_lr = std::max(old_lr * factor_, min_lrs_[i]);
      if (old_lr - new_lr > eps_) groups[i].set_lr(new_lr);
    }
  }

  Optimizer* optimizer_;
  double factor_;
  int64_t patience_;
  double threshold_;
  int64_t cooldown_;
  double eps_;
  std::vector<double> min_lrs_;
  bool max_mode_ = false;
  bool abs_mode_ = false;
  int64_t last_epoch_ = 0;
  double best_ = 0;
  int64_t num_bad_epochs_ = 0;
  int64_t cooldown_counter_ = 0;
  std::vector<double> last_lr_;
};
}  // namespace tessera::optim
