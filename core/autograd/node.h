// The autograd graph: nodes (one per recorded op, one per leaf that
// accumulates), the edges between them, and saved tensors.
//
// Note [Autograd graph]
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
#include <string>
#include <vector>

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
struct TensorMeta {
  int32_t ndim = 0;
  int64_t sizes[TSR_MAX_DIMS] = {};
  tsr_dtype dtype = TSR_FLOAT32;
  DeviceRecord* device = nullptr;
  static TensorMeta of(const TensorImpl& t);
};

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

  // Forward outputs (input slots of this node in backward).
  std::vector<TensorMeta> outputs;
  std::vector<Edge> next;
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
class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(TensorImpl* leaf);
  std::vector<TensorRef> apply(std::vector<TensorRef>&& grads) override;
  // Runs the leaf's post-accumulate hooks (outside apply's lock).
  void after_apply();
  TensorImpl* leaf() const { return leaf_.get(); }

 private:
  TensorRef leaf_;  // strong: the leaf's meta holds this node only weakly
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
