// AutogradMeta: the autograd state of one tensor (TensorImpl::autograd).
//
// Absent (null) on tensors that never required grad, so plain tensors pay
// nothing. A leaf has requires_grad (TensorImpl::requires_grad) set by the
// user and no grad_fn; a non-leaf has a grad_fn (and requires_grad). `grad` holds what backward
// accumulated. Owned by its TensorImpl and destroyed with it.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "autograd/node.h"
#include "tensor/tensor_impl.h"

namespace tsr::autograd {

struct AutogradMeta {
  // retain_grad() on a non-leaf: backward also accumulates its gradient, into
  // the cell its grad_fn holds weakly (Node::retained); `grad` of a leaf.
  bool retains_grad = false;
  std::shared_ptr<TensorRef> retained;
  TensorRef grad;
  std::shared_ptr<Node> grad_fn;  // null for leaves
  uint32_t output_nr = 0;         // which output of grad_fn this tensor is
  // Leaves: the AccumulateGrad node edges point to (Note [Leaf accumulator]
  // in node.h), owned for the leaf's life; `retired` keeps earlier ones a
  // graph may still hold (the leaf changed shape since), to detach them too.
  // Several threads may record ops on one leaf at once: guarded by `mu`.
  std::shared_ptr<AccumulateGrad> grad_accumulator;
  std::vector<std::shared_ptr<AccumulateGrad>> retired;
  std::mutex mu;
  // Hooks (autograd/hooks.h): a leaf's gradient hooks and post-accumulate
  // hooks in registration order; `registered` lists every hook of this
  // tensor (leaf or not) for removal by handle.
  std::vector<std::shared_ptr<Hook>> hooks;
  std::vector<std::shared_ptr<Hook>> post_hooks;
  std::vector<std::shared_ptr<Hook>> registered;
};

// The meta of `t`, created on first use.
AutogradMeta& meta_of(TensorImpl& t);
// Frees t's meta (TensorImpl::release).
void destroy_meta(AutogradMeta* meta) noexcept;

inline bool requires_grad(const TensorImpl& t) noexcept { return t.requires_grad; }
// Sets or clears requires_grad, creating t's meta to set it (the flag lives
// on TensorImpl, and only tensors with a meta carry it).
inline void set_requires_grad(TensorImpl& t, bool on) {
  if (on) meta_of(t);
  if (t.autograd != nullptr) t.requires_grad = on;
}
inline bool is_leaf(const TensorImpl& t) noexcept {
  return t.autograd == nullptr || t.autograd->grad_fn == nullptr;
}
// Floating and complex tensors can carry gradients; integer and bool ones never.
bool is_differentiable_dtype(tsr_dtype d) noexcept;

// The edge a gradient for `t` (which requires grad) follows: its grad_fn, or
// its leaf accumulator (created on demand).
Edge gradient_edge(TensorImpl& t);

// Makes `t` an output of `node`: requires_grad, grad_fn = node, output_nr.
void set_history(TensorImpl& t, const std::shared_ptr<Node>& node, uint32_t output_nr);

}  // namespace tsr::autograd
