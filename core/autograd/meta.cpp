// meta.cpp - per-tensor autograd state.
#include "autograd/meta.h"

#include "tensor/dtype.h"

namespace tsr::autograd {

AutogradMeta& meta_of(TensorImpl& t) {
  if (t.autograd == nullptr) t.autograd = new AutogradMeta();
  return *t.autograd;
}

void destroy_meta(AutogradMeta* meta) noexcept { delete meta; }

bool is_differentiable_dtype(tsr_dtype d) noexcept { return is_floating(d) || is_complex(d); }

Edge gradient_edge(TensorImpl& t) {
  AutogradMeta& m = meta_of(t);
  if (m.grad_fn) return Edge{m.grad_fn, m.output_nr};
  std::lock_guard<std::mutex> lock(m.mu);
  std::shared_ptr<Node> acc = m.grad_accumulator.lock();
  if (!acc) {
    acc = std::make_shared<AccumulateGrad>(&t);
    m.grad_accumulator = acc;
  }
  return Edge{std::move(acc), 0};
}

void set_history(TensorImpl& t, const std::shared_ptr<Node>& node, uint32_t output_nr) {
  AutogradMeta& m = meta_of(t);
  m.requires_grad = true;
  m.grad_fn = node;
  m.output_nr = output_nr;
}

}  // namespace tsr::autograd
