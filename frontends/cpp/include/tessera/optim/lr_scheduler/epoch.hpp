// tessera/optim/lr_scheduler/epoch.hpp - the chainable epoch schedulers
// StepLR, MultiStepLR, ExponentialLR, CosineAnnealingLR and LinearLR, and
// SequentialLR, which runs schedulers one after another. Each computes
// PyTorch 1.13's recursive form in PyTorch's operation order (see
// tessera/optim/lr_scheduler.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <numbers>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tessera/optim/lr_scheduler/scheduler.hpp"

namespace tessera::optim {

// lr *= gamma every step_size epochs.
class StepLR final : public LRScheduler {
 public:
  StepLR(Optimizer& optimizer, int64_t step_size, double gamma = 0.1, int64_t last_epoch = -1)
      : LRScheduler(optimizer, last_epoch), step_size_(step_size), gamma_(gamma) {
    // PyTorch fails later with ZeroDivisionError; refuse it up front.
    if (step_size < 1)
      lr_detail::invalid("StepLR: step_size must be a positive number of epochs, got " +
                         std::to_string(step_size));
    initial_step();
  }
  std::string type_name() const override { return "StepLR"; }

 protected:
  std::vector<double> get_lr() override {
    std::vector<double> lrs = current_lrs();
    if (last_epoch_ == 0 || last_epoch_ % step_size_ != 0) return lrs;
    for (double& lr : lrs) lr = lr * gamma_;
    return lrs;
  }
  std::optional<std::vector<double>> closed_form_lr() const override {
    std::vector<double> out;
    const int64_t k = last_epoch_ >= 0 ? last_epoch_ / step_size_
                                       : -((-last_epoch_ + step_size_ - 1) / step_size_);
    for (double base : base_lrs_) out.push_back(base * std::pow(gamma_, static_cast<double>(k)));
    return out;
  }

 private:
  int64_t step_size_;
  double gamma_;
};

// lr *= gamma (once per occurrence) when the epoch reaches a milestone.
class MultiStepLR final : public LRScheduler {
 public:
  MultiStepLR(Optimizer& optimizer, std::vector<int64_t> milestones, double gamma = 0.1,
              int64_t last_epoch = -1)
      : LRScheduler(optimizer, last_epoch), gamma_(gamma) {
    for (int64_t m : milestones) ++counts_[m];
    initial_step();
  }
  std::string type_name() const override { return "MultiStepLR"; }

 protected:
  std::vector<double> get_lr() override {
    std::vector<double> lrs = current_lrs();
    auto it = counts_.find(last_epoch_);
    if (it == counts_.end()) return lrs;
    for (double& lr : lrs) lr = lr * std::pow(gamma_, static_cast<double>(it->second));
    return lrs;
  }
  std::optional<std::vector<double>> closed_form_lr() const override {
    int64_t passed = 0;  // bisect_right over the sorted milestones
    for (const auto& [m, n] : counts_)
      if (m <= last_epoch_) passed += n;
    std::vector<double> out;
    for (double base : base_lrs_)
      out.push_back(base * std::pow(gamma_, static_cast<double>(passed)));
    return out;
  }

 private:
  std::map<int64_t, int64_t> counts_;  // milestone -> occurrences (PyTorch's Counter)
  double gamma_;
};

// lr *= gamma every epoch.
class ExponentialLR final : public LRScheduler {
 public:
  ExponentialLR(Optimizer& optimizer, double gamma, int64_t last_epoch = -1)
      : LRScheduler(optimizer, last_epoch), gamma_(gamma) {
    initial_step();
  }
  std::string type_name() const override { return "ExponentialLR"; }

 protected:
  std::vector<double> get_lr() override {
    std::vector<double> lrs = current_lrs();
    if (last_epoch_ == 0) return lrs;
    for (double& lr : lrs) lr = lr * gamma_;
    return lrs;
  }
  std::optional<std::vector<double>> closed_form_lr() const override {
    std::vector<double> out;
    for (double base : base_lrs_)
      out.push_back(base * std::pow(gamma_, static_cast<double>(last_epoch_)));
    return out;
  }

 private:
  double gamma_;
};

// Cosine annealing from the initial lr to eta_min over T_max epochs (and
// back up over the next T_max, periodically), in PyTorch's recursive form.
class CosineAnnealingLR final : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min = 0.0,  // NOLINT
                    int64_t last_epoch = -1)
      : LRScheduler(optimizer, last_epoch), t_max_(T_max), eta_min_(eta_min) {
    // PyTorch fails later with ZeroDivisionError; refuse it up front.
    if (T_max < 1)
      lr_detail::invalid("CosineAnnealingLR: T_max must be a positive number of epochs, got " +
                         std::to_string(T_max));
    initial_step();
  }
  std::string type_name() const override { return "CosineAnnealingLR"; }

 protected:
  std::vector<double> get_lr() override {
    constexpr double pi = std::numbers::pi;
    const double t_max = static_cast<double>(t_max_);
    const double e = static_cast<double>(last_epoch_);
    std::vector<double> lrs = current_lrs();
    if (last_epoch_ == 0) return lrs;
    if (step_count() == 1 && last_epoch_ > 0) {
      for (size_t i = 0; i < lrs.size(); ++i)
        lrs[i] = eta_min_ + (base_lrs_[i] - eta_min_) * (1 + std::cos(e * pi / t_max)) / 2;
      return lrs;
    }
    if ((last_epoch_ - 1 - t_max_) % (2 * t_max_) == 0) {
      for (size_t i = 0; i < lrs.size(); ++i)
        lrs[i] = lrs[i] + (base_lrs_[i] - eta_min_) * (1 - std::cos(pi / t_max)) / 2;
      return lrs;
    }
    for (double& lr : lrs)
      lr = (1 + std::cos(pi * e / t_max)) / (1 + std::cos(pi * (e - 1) / t_max)) * (lr - eta_min_) +
           eta_min_;
    return lrs;
  }
  std::optional<std::vector<double>> closed_form_lr() const override {
    constexpr double pi = std::numbers::pi;
    std::vector<double> out;
    for (double base : base_lrs_)
      out.push_back(eta_min_ + (base - eta_min_) *
                                   (1 + std::cos(pi * static_cast<double>(last_epoch_) /
                                                 static_cast<double>(t_max_))) /
                                   2);
    return out;
  }

 private:
  int64_t t_max_;
  double eta_min_;
};

// The lr factor goes linearly from start_factor to end_factor over
// total_iters epochs, then stays.
class LinearLR final : public LRScheduler {
 public:
  LinearLR(Optimizer& optimizer, double start_factor = 1.0 / 3, double end_factor = 1.0,
           int64_t total_iters = 5, int64_t last_epoch = -1)
      : LRScheduler(optimizer, last_epoch),
        start_factor_(start_factor),
        end_factor_(end_factor),
        total_iters_(total_iters) {
    if (start_factor > 1.0 || start_factor < 0)
      lr_detail::invalid(
          "LinearLR: Starting multiplicative factor expected to be between 0 and 1, "
          "got start_factor = " +
          lr_detail::fmt(start_factor));
    if (end_factor > 1.0 || end_factor < 0)
      lr_detail::invalid(
          "LinearLR: Ending multiplicative factor expected to be between 0 and 1, got "
          "end_factor = " +
          lr_detail::fmt(end_factor));
    // PyTorch fails later with ZeroDivisionError on these; refuse them now.
    if (start_factor == 0.0)
      lr_detail::invalid(
          "LinearLR: start_factor must be greater than 0 (the recursive form divides "
          "by it), got 0");
    if (total_iters < 1)
      lr_detail::invalid("LinearLR: total_iters must be a positive number of epochs, got " +
                         std::to_string(total_iters));
    initial_step();
  }
  std::string type_name() const override { return "LinearLR"; }

 protected:
  std::vector<double> get_lr() override {
    std::vector<double> lrs = current_lrs();
    if (last_epoch_ == 0) {
      for (double& lr : lrs) lr = lr * start_factor_;
      return lrs;
    }
    if (last_epoch_ > total_iters_) return lrs;
    const double d = end_factor_ - start_factor_;
    const double factor = 1. + d / (static_cast<double>(total_iters_) * start_factor_ +
                                    static_cast<double>(last_epoch_ - 1) * d);
    for (double& lr : lrs) lr = lr * factor;
    return lrs;
  }
  std::optional<std::vector<double>> closed_form_lr() const override {
    std::vector<double> out;
    const double done = static_cast<double>(std::min(total_iters_, last_epoch_));
    for (double base : base_lrs_)
      out.push_back(base * (start_factor_ + (end_factor_ - start_factor_) * done /
                                                static_cast<double>(total_iters_)));
    return out;
  }

 private:
  double start_factor_;
  double end_factor_;
  int64_t total_iters_;
};
// Runs schedulers[0] until milestones[0], then schedulers[1] (restarted at
// epoch 0 with its closed form) until milestones[1], and so on. The
// schedulers must be over the same optimizer; they are shared, not copied.
class SequentialLR final : public LRScheduler {
 public:
  SequentialLR(Optimizer& optimizer, std::vector<std::shared_ptr<LRScheduler>> schedulers,
               std::vector<int64_t> milestones, int64_t last_epoch = -1)
      : LRScheduler(optimizer, last_epoch),
        schedulers_(std::move(schedulers)),
        milestones_(std::move(milestones)) {
    for (size_t i = 0; i < schedulers_.size(); ++i) {
      if (!schedulers_[i])
        lr_detail::invalid("SequentialLR: scheduler " + std::to_string(i) + " is null");
      if (&schedulers_[i]->optimizer() != &optimizer)
        lr_detail::invalid(
            "Sequential Schedulers expects all schedulers to belong to the same "
            "optimizer, but got schedulers at index " +
            std::to_string(i) + " to be different than the optimizer passed in.");
    }
    if (milestones_.size() + 1 != schedulers_.size())
      lr_detail::invalid(
          "Sequential Schedulers expects number of schedulers provided to be one more "
          "than the number of milestone points, but got number of schedulers " +
          std::to_string(schedulers_.size()) + " and the number of milestones to be equal to " +
          std::to_string(milestones_.size()));
    last_epoch_ = last_epoch + 1;
    // Reset the lr the schedulers' first steps changed, rewind them, and
    // restart only the first.
    for (ParamGroup& group : optimizer.param_groups()) group.set_lr(group.get("initial_lr"));
    for (auto& s : schedulers_) s->last_epoch_ -= 1;
    schedulers_[0]->initial_step();
    last_lr_ = schedulers_[0]->get_last_lr();
  }
  std::string type_name() const override { return "SequentialLR"; }

  LRSchedulerState state_dict() const override {
    LRSchedulerState s;
    s.type = type_name();
    s.values["last_epoch"] = static_cast<double>(last_epoch_);
    s.lists["_last_lr"] = last_lr_;
    for (const auto& child : schedulers_) s.schedulers.push_back(child->state_dict());
    return s;
  }
  void load_state_dict(const LRSchedulerState& state) override {
    lr_detail::check_type(state, type_name());
    if (state.schedulers.size() != schedulers_.size())
      lr_detail::invalid("SequentialLR state dict has " + std::to_string(state.schedulers.size()) +
                         " schedulers but this SequentialLR has " +
                         std::to_string(schedulers_.size()));
    const double last_epoch = lr_detail::state_value(state, "last_epoch");
    last_lr_ = lr_detail::state_list(state, "_last_lr", last_lr_.size());
    for (size_t i = 0; i < schedulers_.size(); ++i)
      schedulers_[i]->load_state_dict(state.schedulers[i]);
    last_epoch_ = static_cast<int64_t>(last_epoch);
  }

 protected:
  std::vector<double> get_lr() override { return current_lrs(); }  // unused: do_step is ours
  void do_step(std::optional<int64_t> epoch) override {
    if (epoch) lr_detail::invalid("SequentialLR.step() takes no epoch; call step() once per epoch");
    ++last_epoch_;
    const size_t idx = lr_detail::bisect_right(milestones_, last_epoch_);
    LRScheduler& s = *schedulers_[idx];
    if (idx > 0 && milestones_[idx - 1] == last_epoch_)
      s.step(0);
    else
      s.step();
    last_lr_ = s.get_last_lr();
  }

 private:
  std::vector<std::shared_ptr<LRScheduler>> schedulers_;
  std::vector<int64_t> milestones_;
};
}  // namespace tessera::optim
