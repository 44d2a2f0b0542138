// tessera/optim/optimizer.hpp - tessera::optim::Optimizer, the base of the
// optimizers: parameter groups with per-group options, lazily created
// per-parameter state, zero_grad, and state_dict/load_state_dict, as
// torch.optim.Optimizer.
//
// A ParamGroup holds parameters (Tensor handles shared with the model) and
// named numeric options ("lr", "momentum", "beta1", ...). Options a group
// leaves out take the optimizer's defaults when the group is added. A
// parameter belongs to at most one group.
//
// State is created on a parameter's first step (PyTorch's lazy state): the
// optimizer's `state` is empty after construction. Entries are tensors on the
// parameter's device ("step" is a float32 scalar tensor, as PyTorch >= 1.12
// keeps it).
//
// state_dict() numbers the parameters 0, 1, ... in group order (PyTorch's
// packing), so it can be loaded into an optimizer over another model with
// the same structure. Betas are stored as beta1/beta2 here and appear as
// PyTorch's "betas" pair only where a checkpoint writer renders JSON.
//
// Threads: one thread at a time (step mutates parameters and state).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "tessera/autograd.hpp"
#include "tessera/error.hpp"
#include "tessera/optim/foreach.hpp"
#include "tessera/tensor.hpp"

namespace tessera::optim {

using Options = std::map<std::string, double>;

struct ParamGroup {
  ParamGroup() = default;
  ParamGroup(std::vector<Tensor> params, Options options = {})  // NOLINT
      : params(std::move(params)), options(std::move(options)) {}

  std::vector<Tensor> params;
  Options options;

  // The option `key`; throws NOT_FOUND naming it.
  double get(const std::string& key) const {
    auto it = options.find(key);
    if (it == options.end())
      tessera::detail::throw_error(TSR_NOT_FOUND, "param group has no option '" + key + "'");
    return it->second;
  }
  bool has(const std::string& key) const { return options.count(key) != 0; }
  void set(const std::string& key, double value) { options[key] = value; }
  double lr() const { return get("lr"); }
  void set_lr(double lr) { set("lr", lr); }
};

// A parameter's state: named tensors ("step", "exp_avg", ...).
using ParamState = std::map<std::string, Tensor>;

// The packed form of an optimizer: per-parameter state by index, and each
// group's options with the indices of its parameters.
struct OptimizerStateDict {
  std::vector<std::pair<int64_t, ParamState>> state;
  std::vector<std::pair<Options, std::vector<int64_t>>> param_groups;
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // One update of every parameter that has a gradient.
  virtual void step() = 0;
  // Re-evaluates the loss with `closure` (under grad mode) before the step
  // and returns it, as PyTorch's step(closure).
  Tensor step(const std::function<Tensor()>& closure) {
    Tensor loss;
    {
      autograd::EnableGradGuard enable;
      loss = closure();
    }
    step();
    return loss;
  }

  virtual std::string type_name() const = 0;

  // Clears (set_to_none, PyTorch's default) or zeroes every gradient.
  void zero_grad(bool set_to_none = true) {
    for (auto& group : groups_) {
      for (Tensor& p : group.params) {
        if (set_to_none) {
          p.set_grad(Tensor());
        } else if (Tensor g = p.grad(); g.defined()) {
          autograd::NoGradGuard no_grad;
          p.set_grad(g.detach().zero_());
        }
      }
    }
  }

  // Adds a group: options it lacks come from the defaults; unknown options
  // and parameters already in a group are refused.
  void add_param_group(ParamGroup group) {
    for (const auto& [key, value] : group.options) {
      if (!defaults_.count(key))
        tessera::detail::throw_error(
            TSR_INVALID_ARGUMENT, type_name() + ": unknown option '" + key + "' in a param group");
    }
    for (const auto& [key, value] : defaults_) group.options.emplace(key, value);
    validate(group.options);
    // All checks before any change, so a refused group leaves no trace.
    std::unordered_set<tsr_tensor*> mine;
    for (const Tensor& p : group.params) {
      if (!p.defined())
        tessera::detail::throw_error(TSR_INVALID_ARGUMENT,
                                     type_name() + ": a parameter is an undefined tensor");
      if (!p.is_leaf())
        tessera::detail::throw_error(TSR_INVALID_ARGUMENT,
                                     type_name() + ": can't optimize a non-leaf Tensor");
      if (owners_.count(p.get()))
        tessera::detail::throw_error(TSR_INVALID_ARGUMENT,
                                     type_name() +
                                         ": some parameters appear in more than one parameter "
                                         "group");
      if (!mine.insert(p.get()).second)
        tessera::detail::throw_error(TSR_INVALID_ARGUMENT,
                                     type_name() +
                                         ": a parameter appears twice in one parameter group; "
                                         "list each tensor once (tied weights are one tensor)");
    }
    owners_.insert(mine.begin(), mine.end());
    groups_.push_back(std::move(group));
  }

  std::vector<ParamGroup>& param_groups() noexcept { return groups_; }
  const std::vector<ParamGroup>& param_groups() const noexcept { return groups_; }
  const Options& defaults() const noexcept { return defaults_; }

  // The state of `param` (empty until its first step).
  const ParamState& state(const Tensor& param) const {
    static const ParamState empty;
    auto it = state_.find(param.get());
    return it == state_.end() ? empty : it->second.entries;
  }
  // Parameters that have state.
  size_t state_size() const noexcept { return state_.size(); }

  OptimizerStateDict state_dict() const {
    OptimizerStateDict out;
    int64_t index = 0;
    for (const auto& group : groups_) {
      std::vector<int64_t> ids;
      for (const Tensor& p : group.params) {
        auto it = state_.find(p.get());
        if (it != state_.end()) out.state.emplace_back(index, it->second.entries);
        ids.push_back(index++);
      }
      out.param_groups.emplace_back(group.options, std::move(ids));
    }
    return out;
  }

  // Takes the groups' options and the state from `dict`, matching parameters
  // by index; the group count and sizes must match. State tensors are
  // copied to each parameter's device (floating ones to its dtype, "step"
  // excepted), as PyTorch does.
  void load_state_dict(const OptimizerStateDict& dict) {
    if (dict.param_groups.size() != groups_.size())
      tessera::detail::throw_error(TSR_INVALID_ARGUMENT,
                                   "loaded state dict has a different number of parameter "
                                   "groups (" +
                                       std::to_string(dict.param_groups.size()) + " vs " +
                                       std::to_string(groups_.size()) + ")");
    std::unordered_map<int64_t, Tensor> by_index;
    for (size_t g = 0; g < groups_.size(); ++g) {
      const auto& ids = dict.param_groups[g].second;
      if (ids.size() != groups_[g].params.size())
        tessera::detail::throw_error(TSR_INVALID_ARGUMENT,
                                     "loaded state dict contains a parameter group that doesn't "
                                     "match the size of optimizer's group");
      for (size_t k = 0; k < ids.size(); ++k) by_index[ids[k]] = groups_[g].params[k];
    }
    std::unordered_map<tsr_tensor*, Entry> state;
    for (const auto& [index, entries] : dict.state) {
      auto it = by_index.find(index);
      if (it == by_index.end())
        tessera::detail::throw_error(TSR_INVALID_ARGUMENT,
                                     "loaded state dict has state for "
                                     "parameter " +
                                         std::to_string(index) + ", which no group lists");
      const Tensor& p = it->second;
      Entry e{p, {}};
      for (const auto& [name, value] : entries) {
        Tensor v = value.to(p.device());
        if (name != "step" && is_floating_point(v.dtype())) v = v.to(p.dtype());
        e.entries.emplace(name, v.is_same(value) ? value.clone() : v);
      }
      state.emplace(p.get(), std::move(e));
    }
    for (size_t g = 0; g < groups_.size(); ++g) {
      Options options = dict.param_groups[g].first;
      validate(options);
      groups_[g].options = std::move(options);
    }
    state_ = std::move(state);
  }

 protected:
  explicit Optimizer(Options defaults) : defaults_(std::move(defaults)) {}
  // Adds the constructor's groups; a derived constructor calls it (validate
  // is virtual, so the base constructor cannot).
  void init_groups(std::vector<ParamGroup> groups) {
    size_t count = 0;
    for (const auto& g : groups) count += g.params.size();
    if (count == 0)
      tessera::detail::throw_error(TSR_INVALID_ARGUMENT,
                                   type_name() + " got an empty parameter list");
    for (auto& g : groups) add_param_group(std::move(g));
  }

  // Checks a group's options (ranges); throws naming the option and value.
  virtual void validate(const Options& options) const = 0;

  // The state of `param`, created (empty) on first use; `created` tells.
  ParamState& state_for(const Tensor& param, bool* created = nullptr) {
    auto [it, inserted] = state_.try_emplace(param.get(), Entry{param, {}});
    if (created != nullptr) *created = inserted;
    return it->second.entries;
  }

  // Note [Flat parameters] (foreach.hpp): the flat buckets of group `g`,
  // made on first use and remade when a parameter stopped aliasing its
  // bucket (Module::to() after construction).
  std::vector<detail::FlatBucket>& buckets(size_t g) {
    if (buckets_.size() < groups_.size()) buckets_.resize(groups_.size());
    std::vector<detail::FlatBucket>& mine = buckets_[g];
    bool intact = !mine.empty();
    for (const auto& b : mine) intact = intact && b.intact();
    if (!intact) mine = detail::make_buckets(groups_[g].params);
    return mine;
  }
  // Whether the multi-tensor path is on (the optimizer's `foreach` option).
  bool foreach_enabled() const noexcept { return foreach_; }
  void set_foreach(bool on) noexcept { foreach_ = on; }
  // Params of group `g` the flat buckets do not cover (non-dense ones).
  std::vector<Tensor> unbucketed(size_t g) {
    std::unordered_set<tsr_tensor*> in;
    for (const auto& b : buckets(g))
      for (const Tensor& p : b.params) in.insert(p.get());
    std::vector<Tensor> out;
    for (const Tensor& p : groups_[g].params)
      if (!in.count(p.get())) out.push_back(p);
    return out;
  }

  static void require_range(bool ok, const std::string& what, double value) {
    if (!ok)
      tessera::detail::throw_error(TSR_INVALID_ARGUMENT,
                                   "Invalid " + what + " value: " + std::to_string(value));
  }

 private:
  struct Entry {
    Tensor param;  // keeps the key's tensor alive while it has state
    ParamState entries;
  };
  std::vector<ParamGroup> groups_;
  Options defaults_;
  std::unordered_set<tsr_tensor*> owners_;  // parameters in some group
  std::unordered_map<tsr_tensor*, Entry> state_;
  bool foreach_ = false;
  std::vector<std::vector<detail::FlatBucket>> buckets_;  // per group
};

}  // namespace tessera::optim
