// node.cpp - graph nodes, saved tensors, leaf accumulation.
#include "autograd/node.h"

#include <atomic>
#include <mutex>

#include "autograd/grad_ops.h"
#include "autograd/hooks.h"
#include "autograd/meta.h"
#include "dispatch/op_api.h"
#include "dispatch/op_call.h"
#include "ops/shorthands.h"
#include "registry/registry.h"
#include "runtime/device.h"
#include "tensor/geometry.h"
#include "tensor/grad_mode.h"
#include "util/error.h"

namespace tsr::autograd {
namespace {
std::atomic<uint64_t> g_next_sequence_nr{0};
}  // namespace

uint64_t next_sequence_nr() noexcept { return g_next_sequence_nr.load(std::memory_order_relaxed); }

TensorMeta::TensorMeta(const TensorImpl& t) noexcept
    : ndim(t.ndim), dtype(t.dtype), device(t.device()) {
  for (int32_t d = 0; d < t.ndim; ++d) sizes[d] = t.sizes[d];
}

Node::Node(const char* name)
    : name_(name), sequence_nr_(g_next_sequence_nr.fetch_add(1, std::memory_order_relaxed)) {}

Node::~Node() = default;

SavedTensor::SavedTensor(TensorImpl* t, bool is_output, uint32_t output_nr)
    : version_(t->version->version.load(std::memory_order_relaxed)),
      output_nr_(output_nr),
      is_output_(is_output) {
  if (t->is_inference)
    fail(TSR_FAILED_PRECONDITION,
         "Inference tensors cannot be saved for backward ([{} {}] was made in inference mode). "
         "To work around you can make a clone to get a normal tensor and use it in autograd.",
         dtype_name(t->dtype), shape_str(t->ndim, t->sizes));
  if (!is_output) {
    data_ = TensorRef::borrow(t);
    return;
  }
  // A detached alias that does not keep its root base alive: the base may be
  // this very output, whose grad_fn owns this saved tensor (a cycle).
  data_ = detached(t);
  if (data_->view_base != nullptr) {
    data_->view_base->release();
    data_->view_base = nullptr;
  }
}

TensorRef SavedTensor::unpack(Node& node, const char* what) const {
  if (released_)
    fail(TSR_INVALID_ARGUMENT,
         "Trying to backward through the graph a second time (or directly access saved tensors "
         "after they have already been freed): {} saved '{}' and it was freed by an earlier "
         "backward. Saved intermediate values of the graph are freed when you call backward() "
         "or grad(); pass retain_graph=True to the first call if you need to backward through "
         "the graph a second time",
         node.name(), what);
  if (!data_) return TensorRef();
  const uint64_t now = data_->version->version.load(std::memory_order_relaxed);
  if (now != version_)
    fail(TSR_FAILED_PRECONDITION,
         "one of the variables needed for gradient computation has been modified by an inplace "
         "operation: [{} {}], saved by {} as '{}', is at version {}; expected version {} "
         "instead. Clone it before the in-place op, or do the op out of place",
         dtype_name(data_->dtype), shape_str(data_->ndim, data_->sizes), node.name(), what, now,
         version_);
  if (!is_output_ || !grad_enabled()) return data_;
  // create_graph: the output again carries this node as its grad_fn.
  TensorRef alias = detached(data_.get());
  set_history(*alias, node.shared_from_this(), output_nr_);
  return alias;
}

AccumulateGrad::AccumulateGrad(TensorImpl* leaf) : Node("AccumulateGrad"), leaf_(leaf) {
  outputs.push_back(TensorMeta::of(*leaf));
}

TensorRef AccumulateGrad::leaf() const {
  std::lock_guard<std::mutex> lock(leaf_mu_);
  if (leaf_ == nullptr || !leaf_->try_retain()) return TensorRef();
  return TensorRef(leaf_);
}

void AccumulateGrad::detach_leaf() noexcept {
  std::lock_guard<std::mutex> lock(leaf_mu_);
  leaf_ = nullptr;
}

bool AccumulateGrad::matches(const TensorImpl& leaf) const noexcept {
  const TensorMeta& m = outputs[0];
  if (m.ndim != leaf.ndim || m.dtype != leaf.dtype || m.device != leaf.device()) return false;
  for (int32_t d = 0; d < m.ndim; ++d) {
    if (m.sizes[d] != leaf.sizes[d]) return false;
  }
  return true;
}

namespace {

// Note [Gradient layout contract]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// PyTorch's rule: a leaf's .grad has the leaf's
// strides when the leaf is non-overlapping and dense, and is contiguous
// otherwise. A gradient that arrives in another layout - linear's weight
// gradient comes back transposed - is copied once into that layout, so the
// optimizer's elementwise updates (param, grad, and state made with
// zeros_like(param)) all walk memory in the same order.
bool obeys_layout_contract(const TensorImpl& grad, const TensorImpl& leaf) {
  if (!is_non_overlapping_and_dense(leaf)) return grad.contiguous;
  if (!is_non_overlapping_and_dense(grad) || grad.ndim != leaf.ndim) return false;
  for (int32_t d = 0; d < leaf.ndim; ++d)
    if (leaf.sizes[d] > 1 && grad.strides[d] != leaf.strides[d]) return false;
  return true;
}

TensorRef clone_obeying_layout(TensorImpl* grad, const TensorImpl& leaf) {
  if (obeys_layout_contract(*grad, leaf)) return clone_detached(grad);
  GradModeGuard no_grad(false);
  int64_t strides[TSR_MAX_DIMS];
  if (is_non_overlapping_and_dense(leaf)) {
    for (int32_t d = 0; d < leaf.ndim; ++d) strides[d] = leaf.strides[d];
  } else {
    contiguous_strides(grad->ndim, grad->sizes, strides);
  }
  TensorRef out =
      op::call(grad->runtime, OpId::empty_strided, op::ints(grad->sizes, grad->ndim),
               op::ints(strides, grad->ndim), grad->dtype, op::none, grad->device()->device);
  op::call(grad->runtime, OpId::copy_, out, grad);
  return out;
}

}  // namespace

std::vector<TensorRef> AccumulateGrad::apply(std::vector<TensorRef>&& grads) {
  // Declared before the lock, so released after it: dropping the last
  // reference destroys the leaf, which detaches this node.
  const TensorRef leaf = this->leaf();
  if (!leaf) return {};
  static std::mutex mu;  // backward on several threads may reach one leaf
  std::lock_guard<std::mutex> lock(mu);
  AutogradMeta& m = meta_of(*leaf);
  TensorRef& incoming = grads[0];
  if (!m.grad) {
    // Keep a private copy: the incoming tensor may be the caller's
    // grad_tensors or shared with another edge. With create_graph it is kept
    // as is, history included, so it can be differentiated again.
    // It is taken as is when nothing else can see it, as PyTorch steals
    // such a gradient too: ours is the only reference, no history, in the
    // leaf's layout (Note [Gradient layout contract]), and its storage is
    // held by nobody else - or only by the root it is a view of, which
    // nothing else holds.
    TensorImpl* g = incoming.get();
    bool private_to_us = g->refs.load(std::memory_order_acquire) == 1 && g->autograd == nullptr;
    int32_t storage_refs = 1;
    if (private_to_us && g->view_base != nullptr) {
      private_to_us = g->view_base->refs.load(std::memory_order_acquire) == 1;
      storage_refs = 2;
    }
    private_to_us = private_to_us &&
                    g->storage->refs.load(std::memory_order_acquire) == storage_refs &&
                    obeys_layout_contract(*g, *leaf);
    if (grad_enabled()) {
      m.grad = std::move(incoming);
    } else {
      m.grad = private_to_us ? std::move(incoming) : clone_obeying_layout(g, *leaf);
    }
  } else if (grad_enabled()) {
    m.grad = op::add(m.grad, incoming);
  } else {
    op::call(leaf->runtime, OpId::add__Tensor, m.grad.get(), incoming);
  }
  return {};
}

void AccumulateGrad::after_apply() {
  if (const TensorRef leaf = this->leaf()) run_post_accumulate_hooks(*leaf);
}

NotImplementedNode::NotImplementedNode(const std::string& op_name)
    : Node("NotImplemented"), op_name_(op_name) {}

std::vector<TensorRef> NotImplementedNode::apply(std::vector<TensorRef>&&) {
  // Reached only when a gradient must flow through the op.
  fail(TSR_UNIMPLEMENTED,
       "the derivative of op '{}' is not implemented; detach its inputs or compute the op under "
       "no_grad if you do not need its gradient",
       op_name_);
}

}  // namespace tsr::autograd
