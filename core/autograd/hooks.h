// Tensor hooks (tessera.h "Tensor hooks"): gradient hooks that may replace the
// gradient of a tensor as backward computes it, and post-accumulate hooks that
// run after a leaf's .grad was updated.
//
// Where they live: a leaf's hooks in its AutogradMeta (its AccumulateGrad
// node is recreated on demand, the meta is not); a non-leaf's gradient hooks
// on its grad_fn, keyed by output_nr, so they fire when that node receives
// the tensor's gradient. Every hook is also listed in the tensor's meta so it
// can be removed by handle. A hook is owned by whoever lists it (shared):
// `destroy` runs once none does. Removing marks it dead at once, so a node
// that still holds it skips it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "tensor/tensor_impl.h"
#include "tessera/tessera.h"

namespace tsr::autograd {

class Node;

struct Hook {
  enum class Kind { kGrad, kPostAccumulate };
  Hook(tsr_grad_hook_fn fn, void* ctx, void (*destroy_fn)(void*));
  Hook(tsr_post_accumulate_hook_fn fn, void* ctx, void (*destroy_fn)(void*));
  ~Hook();
  Hook(const Hook&) = delete;
  Hook& operator=(const Hook&) = delete;

  // Gradient hooks: the gradient after this hook (`grad` itself when the hook
  // keeps it). Throws with the hook's message on error; a replacement of
  // another shape, dtype or device is INVALID_ARGUMENT.
  TensorRef run_grad(TensorImpl* grad) const;
  // Post-accumulate hooks: called with the leaf.
  void run_post(TensorImpl* leaf) const;

  // Who frees the context once the hook is gone (set after registration).
  void set_destroy(void (*destroy_fn)(void*)) { destroy_ = destroy_fn; }

  const Kind kind;
  const uint64_t id;
  std::atomic<bool> removed{false};

 private:
  tsr_grad_hook_fn grad_fn_ = nullptr;
  tsr_post_accumulate_hook_fn post_fn_ = nullptr;
  void* context_;
  void (*destroy_)(void*);
};

// Registers a hook on `t` (which must require grad; post-accumulate hooks on
// leaves only). Returns its handle.
uint64_t register_hook(TensorImpl& t, std::shared_ptr<Hook> hook);
// Removes hook `id` of `t`; false when `t` has no such hook.
bool remove_hook(TensorImpl& t, uint64_t id);

// Runs the gradient hooks that apply to the gradients `node` received (its
// own, per slot; a leaf's, for an AccumulateGrad node).
void run_tensor_hooks(Node& node, std::vector<TensorRef>& grads);
// Runs `leaf`'s post-accumulate hooks.
void run_post_accumulate_hooks(TensorImpl& leaf);

}  // namespace tsr::autograd
