// tessera/optim/foreach.hpp - the optimizers' multi-tensor path: a param
// group's parameters of one device and dtype live in one flat buffer, so a
// step updates all of them with a handful of kernel calls instead of a handful
// per parameter.
//
// Note [Flat parameters]
// ~~~~~~~~~~~~~~~~~~~~~~
// When an optimizer is built with `.foreach = true`
// it moves each group's dense parameters, per (device, dtype), into one 1-D
// buffer (FlatBucket::flat) with Tensor::set_data - every parameter keeps its
// identity, shape and strides, and becomes a view of the buffer, as PyTorch's
// `param.data = flat[off:off+n].view_as(param)` would. The optimizer's state
// (exp_avg, momentum_buffer, ...) is laid out the same way, each parameter's
// entry a view of the state's flat buffer, so state() and state_dict() look as
// they do without the path. A step then gathers the gradients with one cat
// and runs the update on the flat buffers.
//
// The path steps aside - the per-parameter loop runs instead, with the same
// arithmetic - for a bucket where a parameter has no gradient this step,
// where the parameters' step counts differ, or where a parameter no longer
// aliases the buffer (Module::to() after the optimizer was built: the bucket
// is rebuilt on the next step). Non-dense parameters are never flattened.
//
// Side effect to know: a tensor aliasing a parameter's old storage (a
// detach() taken before the optimizer) no longer sees its updates, exactly as
// after PyTorch's `param.data = ...`.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "tessera/autograd.hpp"
#include "tessera/factories.hpp"
#include "tessera/ops/shape.hpp"
#include "tessera/tensor.hpp"

namespace tessera::optim::detail {

// Parameters of one device and dtype, in group order, re-homed into `flat`.
// Invariant (while intact()): params[k] is a contiguous view of `flat` at
// element offsets[k] with numel numels[k]; sum of numels == flat.numel().
struct FlatBucket {
  Tensor flat;
  std::vector<Tensor> params;
  std::vector<int64_t> offsets;
  std::vector<int64_t> numels;
  // The optimizer's flat state buffers by state name (flat_state's cache).
  std::map<std::string, Tensor> states;

  // Whether every parameter still aliases `flat` where it was put.
  bool intact() const {
    const uint64_t id = flat.storage_id();
    for (size_t k = 0; k < params.size(); ++k) {
      const Tensor& p = params[k];
      if (p.storage_id() != id || p.storage_offset() != offsets[k] || !p.is_contiguous() ||
          p.numel() != numels[k] || p.dtype() != flat.dtype())
        return false;
    }
    return true;
  }
  // The view of a flat buffer shaped like `flat` that belongs to param k.
  Tensor view_of(const Tensor& buffer, size_t k) const {
    return buffer.narrow(0, offsets[k], numels[k]).view(params[k].sizes());
  }
  // The gradients as one flat tensor (one cat), or undefined when a
  // parameter has none.
  Tensor flat_grads() const {
    std::vector<Tensor> grads;
    grads.reserve(params.size());
    for (const Tensor& p : params) {
      Tensor g = p.grad();
      if (!g.defined()) return Tensor();
      grads.push_back(g.reshape(-1));
    }
    return grads.size() == 1 ? grads[0] : cat(grads, 0);
  }
};

// Moves the dense parameters of `params` into flat buckets, one per (device,
// dtype), in order of first appearance; non-dense ones stay out.
inline std::vector<FlatBucket> make_buckets(const std::vector<Tensor>& params) {
  std::vector<FlatBucket> buckets;
  std::map<std::pair<std::string, int>, size_t> index;
  for (const Tensor& p : params) {
    if (!p.is_contiguous() || p.numel() == 0) continue;
    const auto key = std::make_pair(p.device().str(), static_cast<int>(p.dtype()));
    auto [it, fresh] = index.try_emplace(key, buckets.size());
    if (fresh) buckets.emplace_back();
    FlatBucket& b = buckets[it->second];
    b.params.push_back(p);
  }
  autograd::NoGradGuard no_grad;
  for (FlatBucket& b : buckets) {
    int64_t total = 0;
    for (const Tensor& p : b.params) {
      b.offsets.push_back(total);
      b.numels.push_back(p.numel());
      total += p.numel();
    }
    const Tensor& first = b.params.front();
    b.flat = empty({total}, TensorOptions(first.dtype()).device(first.device()));
    for (size_t k = 0; k < b.params.size(); ++k) {
      Tensor slot = b.view_of(b.flat, k);
      slot.copy_(b.params[k]);
      Tensor grad = b.params[k].grad();
      b.params[k].set_data(slot);
      if (grad.defined()) b.params[k].set_grad(grad);
    }
  }
  return buckets;
}

// A flat state buffer for `bucket` whose per-parameter views are the entries
// `name` of `states` (one per bucket parameter). Entries that already are
// those views are kept; otherwise the buffer is made from the entries'
// values (zeros where absent) and the entries re-pointed at it. Returns the
// buffer.
template <class StateOf>
Tensor flat_state(FlatBucket& bucket, const std::string& name, StateOf&& state_of) {
  Tensor& cached = bucket.states[name];
  bool aligned = cached.defined();
  for (size_t k = 0; aligned && k < bucket.params.size(); ++k) {
    auto& entries = state_of(k);
    auto it = entries.find(name);
    aligned = it != entries.end() && it->second.storage_id() == cached.storage_id() &&
              it->second.storage_offset() == bucket.offsets[k];
  }
  if (aligned) return cached;
  autograd::NoGradGuard no_grad;
  Tensor buffer = zeros({bucket.flat.numel()}, bucket.flat.options());
  for (size_t k = 0; k < bucket.params.size(); ++k) {
    auto& entries = state_of(k);
    Tensor view = bucket.view_of(buffer, k);
    auto it = entries.find(name);
    if (it != entries.end()) view.copy_(it->second);
    entries[name] = view;
  }
  cached = buffer;
  return buffer;
}

// The parameters' "step" counters as one float32 host buffer whose element k
// is param k's "step" entry (a 0-d view), made from the existing counters
// (zero where absent) unless they already are those views.
template <class StateOf>
Tensor flat_steps(FlatBucket& bucket, StateOf&& state_of) {
  Tensor& cached = bucket.states["step"];
  bool aligned = cached.defined();
  for (size_t k = 0; aligned && k < bucket.params.size(); ++k) {
    auto& entries = state_of(k);
    auto it = entries.find("step");
    aligned = it != entries.end() && it->second.storage_id() == cached.storage_id() &&
              it->second.storage_offset() == static_cast<int64_t>(k);
  }
  if (aligned) return cached;
  autograd::NoGradGuard no_grad;
  const auto n = static_cast<int64_t>(bucket.params.size());
  Tensor buffer = zeros({n}, kFloat32);
  for (size_t k = 0; k < bucket.params.size(); ++k) {
    auto& entries = state_of(k);
    Tensor view = buffer.select(0, static_cast<int64_t>(k));
    auto it = entries.find("step");
    if (it != entries.end()) view.copy_(it->second);
    entries["step"] = view;
  }
  cached = buffer;
  return buffer;
}

// Whether every entry `name` exists for the bucket's parameters (all), none
// does (none), or some do (mixed).
enum class Presence { All, None, Mixed };
template <class StateOf>
Presence presence(const FlatBucket& bucket, const std::string& name, StateOf&& state_of) {
  size_t have = 0;
  for (size_t k = 0; k < bucket.params.size(); ++k) have += state_of(k).count(name);
  return have == bucket.params.size() ? Presence::All
         : have == 0                  ? Presence::None
                                      : Presence::Mixed;
}

}  // namespace tessera::optim::detail
