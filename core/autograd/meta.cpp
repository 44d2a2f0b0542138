// meta.cpp - per-tensor autograd state.
#include "autograd/meta.h"

#include <new>

#include "tensor/dtype.h"
#include "util/object_pool.h"

namespace tsr::autograd {

// Metas come from a pool as tensors do (util/object_pool.h): every recorded
// op gives its outputs one, and a training step makes and drops thousands.
AutogradMeta& meta_of(TensorImpl& t) {
  if (t.autograd == nullptr) {
    // Installed once, before the first meta (Note [Autograd state behind a hook]).
    static const bool installed = (set_autograd_meta_deleter(&destroy_meta), true);
    (void)installed;
    t.autograd = new (ObjectPool<AutogradMeta>::acquire()) AutogradMeta();
  }
  return *t.autograd;
}

void destroy_meta(AutogradMeta* meta) noexcept {
  if (meta->grad_accumulator) meta->grad_accumulator->detach_leaf();
  for (const auto& acc : meta->retired) acc->detach_leaf();
  meta->~AutogradMeta();
  ObjectPool<AutogradMeta>::recycle(meta);
}

bool is_differentiable_dtype(tsr_dtype d) noexcept { return is_floating(d) || is_complex(d); }

Edge gradient_edge(TensorImpl& t) {
  AutogradMeta& m = meta_of(t);
  if (m.grad_fn) return Edge{m.grad_fn, m.output_nr};
  std::lock_guard<std::mutex> lock(m.mu);
  if (m.grad_accumulator && !m.grad_accumulator->matches(t)) {
    m.retired.push_back(std::move(m.grad_accumulator));
    m.grad_accumulator = nullptr;
  }
  if (!m.grad_accumulator) m.grad_accumulator = std::make_shared<AccumulateGrad>(&t);
  return Edge{m.grad_accumulator, 0};
}

void set_history(TensorImpl& t, const std::shared_ptr<Node>& node, uint32_t output_nr) {
  AutogradMeta& m = meta_of(t);
  t.requires_grad = true;
  m.grad_fn = node;
  m.output_nr = output_nr;
}

}  // namespace tsr::autograd
