// tessera/optim/lr_scheduler/scheduler.hpp - LRScheduler, the base of the
// epoch-driven learning-rate schedulers (PyTorch's _LRScheduler), its state
// dict (LRSchedulerState) and GroupValues (a "float or per-group list"
// argument). See tessera/optim/lr_scheduler.hpp for the semantics shared by
// every scheduler.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <map>
#include <memory>
#include <numbers>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tessera/error.hpp"
#include "tessera/optim/optimizer.hpp"

namespace tessera::optim {

// A scheduler's state, PyTorch's state_dict() without the hyperparameters:
// numbers ("last_epoch", "_step_count", "best", ...), per-group lists
// ("base_lrs", "_last_lr", ...) and, for SequentialLR, the states of its
// schedulers in order. Counters are integers held exactly as doubles.
struct LRSchedulerState {
  std::string type;  // "StepLR", ...; load_state_dict refuses another type
  std::map<std::string, double> values;
  std::map<std::string, std::vector<double>> lists;
  std::vector<LRSchedulerState> schedulers;
};

// One value for every param group, or one per group (PyTorch's "float or
// list" arguments). A list must have one entry per group.
class GroupValues {
 public:
  GroupValues(double value) : values_{value}, scalar_(true) {}             // NOLINT
  GroupValues(std::vector<double> values) : values_(std::move(values)) {}  // NOLINT
  GroupValues(std::initializer_list<double> values) : values_(values) {}

  // The value of each of `groups` groups; throws naming `name` when a list
  // has another length.
  std::vector<double> expand(const std::string& name, size_t groups) const {
    if (scalar_) return std::vector<double>(groups, values_.front());
    if (values_.size() != groups)
      tessera::detail::throw_error(TSR_INVALID_ARGUMENT, "expected " + std::to_string(groups) +
                                                             " values for " + name +
                                                             " (one per param group), got " +
                                                             std::to_string(values_.size()));
    return values_;
  }

 private:
  std::vector<double> values_;
  bool scalar_ = false;
};

namespace lr_detail {

inline std::string fmt(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

[[noreturn]] inline void invalid(const std::string& message) {
  tessera::detail::throw_error(TSR_INVALID_ARGUMENT, message);
}

inline double state_value(const LRSchedulerState& s, const std::string& key) {
  auto it = s.values.find(key);
  if (it == s.values.end())
    tessera::detail::throw_error(TSR_INVALID_ARGUMENT, s.type + " state dict has no '" + key +
                                                           "'; pass one made by state_dict()");
  return it->second;
}

inline const std::vector<double>& state_list(const LRSchedulerState& s, const std::string& key,
                                             size_t size) {
  auto it = s.lists.find(key);
  if (it == s.lists.end())
    tessera::detail::throw_error(TSR_INVALID_ARGUMENT, s.type + " state dict has no '" + key +
                                                           "'; pass one made by state_dict()");
  if (it->second.size() != size)
    tessera::detail::throw_error(TSR_INVALID_ARGUMENT,
                                 s.type + " state dict has " + std::to_string(it->second.size()) +
                                     " values in '" + key + "' but the optimizer has " +
                                     std::to_string(size) + " param groups");
  return it->second;
}

inline void check_type(const LRSchedulerState& s, const std::string& type) {
  if (s.type != type)
    tessera::detail::throw_error(
        TSR_INVALID_ARGUMENT,
        "cannot load a state dict of " + (s.type.empty() ? "no type" : s.type) + " into a " + type);
}

// Python's bisect.bisect_right: the index after the last entry <= x.
inline size_t bisect_right(const std::vector<int64_t>& sorted, int64_t x) {
  size_t lo = 0, hi = sorted.size();
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (x < sorted[mid])
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

}  // namespace lr_detail

class SequentialLR;

// The base of the epoch-driven schedulers (PyTorch's _LRScheduler).
// Invariant: base_lrs() has one entry per param group present at
// construction; get_last_lr() is the groups' lr after the latest step.
// A derived class's constructor validates its arguments, then calls
// initial_step() last (the base constructor cannot call virtuals).
class LRScheduler {
 public:
  virtual ~LRScheduler() = default;
  LRScheduler(const LRScheduler&) = delete;
  LRScheduler& operator=(const LRScheduler&) = delete;

  virtual std::string type_name() const = 0;

  // Advances one epoch (or batch) and writes each group's lr.
  void step() { do_step(std::nullopt); }
  // PyTorch's deprecated step(epoch): sets last_epoch to `epoch` and uses
  // the closed form where the scheduler has one (the recursive one else).
  void step(int64_t epoch) { do_step(epoch); }

  // The lr of each group after the latest step.
  const std::vector<double>& get_last_lr() const noexcept { return last_lr_; }
  // The "initial_lr" of each group at construction.
  const std::vector<double>& base_lrs() const noexcept { return base_lrs_; }
  int64_t last_epoch() const noexcept { return last_epoch_; }
  Optimizer& optimizer() const noexcept { return *optimizer_; }

  virtual LRSchedulerState state_dict() const {
    LRSchedulerState s;
    s.type = type_name();
    s.values["last_epoch"] = static_cast<double>(last_epoch_);
    s.values["_step_count"] = static_cast<double>(step_count_);
    s.lists["base_lrs"] = base_lrs_;
    s.lists["_last_lr"] = last_lr_;
    return s;
  }
  // Resumes from `state` (from state_dict() of a scheduler of this type over
  // an optimizer with as many groups). The optimizer's groups are not
  // touched: load the optimizer's own state dict for their lr.
  virtual void load_state_dict(const LRSchedulerState& state) {
    lr_detail::check_type(state, type_name());
    const double last_epoch = lr_detail::state_value(state, "last_epoch");
    const double step_count = lr_detail::state_value(state, "_step_count");
    base_lrs_ = lr_detail::state_list(state, "base_lrs", base_lrs_.size());
    last_lr_ = lr_detail::state_list(state, "_last_lr", last_lr_.size());
    last_epoch_ = static_cast<int64_t>(last_epoch);
    step_count_ = static_cast<int64_t>(step_count);
  }

 protected:
  // Records "initial_lr" per group (last_epoch == -1) or requires it
  // (resuming, last_epoch >= 0).
  LRScheduler(Optimizer& optimizer, int64_t last_epoch)
      : optimizer_(&optimizer), last_epoch_(last_epoch) {
    if (last_epoch < -1)
      lr_detail::invalid("last_epoch must be -1 (start) or the index of the last epoch, got " +
                         std::to_string(last_epoch));
    auto& groups = optimizer.param_groups();
    for (size_t i = 0; i < groups.size(); ++i) {
      if (last_epoch == -1) {
        groups[i].options.emplace("initial_lr", groups[i].lr());
      } else if (!groups[i].has("initial_lr")) {
        tessera::detail::throw_error(
            TSR_INVALID_ARGUMENT,
            "param 'initial_lr' is not specified in param_groups[" + std::to_string(i) +
                "] when resuming an optimizer; load the optimizer's state dict saved with the "
                "scheduler, or pass last_epoch = -1");
      }
      base_lrs_.push_back(groups[i].get("initial_lr"));
    }
  }

  // Resets the step count and performs the first step.
  void initial_step() {
    step_count_ = 0;
    step();
  }

  // The new lr of each group, for last_epoch() (already advanced); may
  // update other group options (OneCycleLR's momentum).
  virtual std::vector<double> get_lr() = 0;
  // The lr of each group at last_epoch() from base_lrs(), when the
  // scheduler has a closed form.
  virtual std::optional<std::vector<double>> closed_form_lr() const { return std::nullopt; }

  virtual void do_step(std::optional<int64_t> epoch) {
    ++step_count_;
    std::vector<double> values;
    if (!epoch) {
      ++last_epoch_;
      values = get_lr();
    } else {
      last_epoch_ = *epoch;
      auto closed = closed_form_lr();
      values = closed ? std::move(*closed) : get_lr();
    }
    auto& groups = optimizer_->param_groups();
    for (size_t i = 0; i < groups.size() && i < values.size(); ++i) groups[i].set_lr(values[i]);
    record_last_lr();
  }

  void record_last_lr() {
    last_lr_.clear();
    for (const auto& g : optimizer_->param_groups()) last_lr_.push_back(g.lr());
  }
  std::vector<double> current_lrs() const {
    std::vector<double> out;
    for (const auto& g : optimizer_->param_groups()) out.push_back(g.lr());
    return out;
  }
  int64_t step_count() const noexcept { return step_count_; }

  Optimizer* optimizer_;
  int64_t last_epoch_;
  int64_t step_count_ = 0;
  std::vector<double> base_lrs_;
  std::vector<double> last_lr_;

 private:
  friend class SequentialLR;  // rewinds and restarts its schedulers
};

}  // namespace tessera::optim
