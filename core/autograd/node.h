// The autograd graph: nodes (one per recorded op, one per leaf that
// accumulates), the edges between them, and saved tensors.
//
// Note [Autograd graph]
// ~~~~~~~~~~~~~~~~~~~~~
// A recorded op's outputs point at its Node (grad_fn, output_nr). The node's
// `next` edges point where the gradient of each of the op's tensor inputs goes:
// the input's own grad_fn (at the input's output_nr), or the AccumulateGrad
// node of a leaf that requires grad, or nowhere (an input that needs no grad).
// Ownership runs one way - tensors own their grad_fn, nodes own their next
// nodes and saved tensors - so a graph lives exactly as long as the tensors
// that can reach it. Saved outputs are kept as detached aliases (no grad_fn),
// which keeps an output -> node -> output cycle from forming; unpacking one
// re-attaches the node, so create_graph differentiates through it.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "tensor/tensor_impl.h"

namespace tsr::autograd {

class Node;
struct Hook;

// Where a gradient goes: input slot `input_nr` of node `fn` (fn null: nowhere).
struct Edge {
  std::shared_ptr<Node> fn;
  uint32_t input_nr = 0;
};

// Shape, dtype and device of a forward output, for zero-filling a gradient
// nobody sent and for checking the ones that arrive.
// Invariant: sizes[0, ndim) are the sizes; entries past ndim are unspecified
// and never read (copies move only the first ndim, so the many metas a
// recorded graph holds cost no zero-filling).
struct TensorMeta {
  int32_t ndim = 0;
  tsr_dtype dtype = TSR_FLOAT32;
  DeviceRecord* device = nullptr;
  int64_t sizes[TSR_MAX_DIMS];

  TensorMeta() noexcept {}  // NOLINT: sizes past ndim stay unset on purpose
  explicit TensorMeta(const TensorImpl& t) noexcept;
  TensorMeta(const TensorMeta& o) noexcept { *this = o; }
  TensorMeta& operator=(const TensorMeta& o) noexcept {
    ndim = o.ndim;
    dtype = o.dtype;
    device = o.device;
    for (int32_t d = 0; d < o.ndim; ++d) sizes[d] = o.sizes[d];
    return *this;
  }
  static TensorMeta of(const TensorImpl& t) noexcept { return TensorMeta(t); }
};

// The sequence number the next node created will get.
uint64_t next_sequence_nr() noexcept;

class Node : public std::enable_shared_from_this<Node> {
 public:
  // `name` has static storage (a literal, or node_name_of()).
  explicit Node(const char* name);
  virtual ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // "MulBackward0", "AccumulateGrad".
  const char* name() const { return name_; }
  // Creation order across threads; the engine runs ready nodes latest first.
  // Every node created after next_sequence_nr() returned n has a number >= n.
  uint64_t sequence_nr() const { return sequence_nr_; }

  // Gradients of the forward outputs in, gradients for each next edge out
  // (null where an input gets none). `grads` has one defined tensor per
  // forward output (the engine zero-fills missing ones).
  virtual std::vector<TensorRef> apply(std::vector<TensorRef>&& grads) = 0;
  // Drops saved tensors after a backward without retain_graph.
  virtual void release_saved() {}
  // The forward op that recorded this node ("mul.Tensor"), for messages;
  // empty for nodes no op recorded (AccumulateGrad).
  virtual const char* forward_op() const { return ""; }

  // Forward outputs (input slots of this node in backward). Most ops have one
  // output and one or two inputs that need a gradient: kept inside the node,
  // so recording an op costs no allocation for them.
  boost::container::small_vector<TensorMeta, 1> outputs;
  boost::container::small_vector<Edge, 2> next;
  // Outputs that asked for retain_grad: (output_nr, the tensor's grad cell).
  std::vector<std::pair<uint32_t, std::weak_ptr<TensorRef>>> retained;
  // Gradient hooks of this node's output tensors (autograd/hooks.h):
  // (output_nr, hook), in registration order. Not to be changed while a
  // backward runs through the node.
  std::vector<std::pair<uint32_t, std::shared_ptr<Hook>>> tensor_hooks;

 private:
  const char* name_;
  uint64_t sequence_nr_;
};

// A tensor a derivative formula needs later, with the version it had when
// saved (Note [Version counter]): unpacking a tensor modified in place since,
// or one freed by an earlier backward, is an error naming the node.
class SavedTensor {
 public:
  SavedTensor() = default;
  // `is_output`: t is an output of the node saving it (kept as a detached
  // alias; see Note [Autograd graph]).
  SavedTensor(TensorImpl* t, bool is_output, uint32_t output_nr);

  bool defined() const { return static_cast<bool>(data_) || released_; }
  // The tensor, or throws INVALID_ARGUMENT (freed by an earlier backward) /
  // FAILED_PRECONDITION (modified in place). `node` is the saving node;
  // `what` names the saved value in messages ("self", "result").
  TensorRef unpack(Node& node, const char* what) const;
  // Whether the saved tensor is `t` itself (not a copy or an alias).
  bool holds(const TensorImpl* t) const { return data_.get() == t; }
  void release() {
    if (data_) released_ = true;
    data_ = TensorRef();
  }

 private:
  TensorRef data_;
  uint64_t version_ = 0;
  uint32_t output_nr_ = 0;
  bool is_output_ = false;
  bool released_ = false;
};

// The node at the end of a leaf's edges: adds what arrives into leaf.grad.
//
// Note [Leaf accumulator]
// ~~~~~~~~~~~~~~~~~~~~~~~
// A leaf's AutogradMeta owns its accumulator for the leaf's whole life, so
// recording an op on a leaf finds it ready instead of building one per
// graph. The node points at the leaf without owning it (an owning pointer
// would be a cycle leaf -> meta -> node -> leaf): the leaf's destruction
// detaches it (detach_leaf), and each use takes a reference first with
// TensorImpl::try_retain. A leaf nobody holds any more therefore receives no
// gradient - nothing could read it - and its hooks, which lived in its meta,
// are gone with it.
class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(TensorImpl* leaf);
  std::vector<TensorRef> apply(std::vector<TensorRef>&& grads) override;
  // Runs the leaf's post-accumulate hooks (outside apply's lock).
  void after_apply();
  // A reference to the leaf; null once the leaf is being destroyed.
  TensorRef leaf() const;
  // Called by the leaf's destruction (destroy_meta): forget the leaf.
  void detach_leaf() noexcept;
  // Whether the leaf still has the shape, dtype and device this node was
  // made for (a leaf resized under no_grad gets a new accumulator).
  bool matches(const TensorImpl& leaf) const noexcept;

 private:
  mutable std::mutex leaf_mu_;
  TensorImpl* leaf_;  // not owned; guarded by leaf_mu_; null once detached
};

// Attached to the outputs of an op that has no derivative formula: backward
// through it fails naming the op.
class NotImplementedNode final : public Node {
 public:
  explicit NotImplementedNode(const std::string& op_name);
  std::vector<TensorRef> apply(std::vector<TensorRef>&& grads) override;

 private:
  std::string op_name_;
};

}  // namespace tsr::autograd
