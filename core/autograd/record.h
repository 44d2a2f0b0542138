// Recording: the dispatcher's autograd step (Note [Autograd graph] in node.h).
//
// run_op calls record_and_run instead of the op's function when grad mode is
// on and a tensor argument requires grad. Then:
//  - an op with a derivative formula runs with grad mode off (its inner calls
//    are not recorded) and its differentiable outputs get one OpNode as
//    grad_fn; an in-place op's target is rebased onto it; a leaf that
//    requires grad may not be written in place;
//  - a composite without a formula runs as usual, so the ops it decomposes
//    into record themselves (a fusable composite is made to decompose);
//  - out= overloads refuse inputs that require grad, as PyTorch does;
//  - any other op runs, and its differentiable outputs get a node that fails
//    in backward naming the op.
// Integer and bool outputs never require grad.
#pragma once

#include "autograd/formulas.h"
#include "dispatch/op_call.h"
#include "registry/registry.h"

namespace tsr::autograd {

// Whether `c` must be recorded: grad mode on and a tensor argument (or list
// entry) requires grad.
bool needs_recording(const OpCall& c) noexcept;

// Runs c.op->fn(c) and records it (see above).
void record_and_run(OpCall& c);

// Which of record_and_run's paths `op` takes (tsr_op_autograd_support).
tsr_op_autograd autograd_support(const OpDef& op);

// Records op `c`, which writes in place into tensor argument `mutated`, a view
// of another tensor (TensorImpl::view_base): the base is rebased onto a
// CopySlices node and the view onto a view of it. Runs the op.
void record_view_write(OpCall& c, const Formula& formula, int32_t mutated);

// The results of a call: c.results, or c.list_results for a Tensor[] return.
boost::container::small_vector<TensorImpl*, 4> results_of(const OpCall& c);

// The node a recorded op's outputs point at.
class OpNode final : public Node {
 public:
  OpNode(const OpCall& c, const Formula& formula);
  std::vector<TensorRef> apply(std::vector<TensorRef>&& grads) override;
  void release_saved() override;

  const OpDef& op() const { return *op_; }
  const char* forward_op() const override { return op_->name.c_str(); }
  Runtime* runtime() const { return runtime_; }

 private:
  friend class BackwardContext;
  friend void record_and_run(OpCall& c);
  friend void record_view_write(OpCall& c, const Formula& formula, int32_t mutated);
  const OpDef* op_;
  const Formula* formula_;
  Runtime* runtime_;
  // One per schema argument: the copied value (tensors: a bare tag), its
  // saved tensor, its forward metadata (tensors), the index of its edge in
  // `next` (-1: none) and whether it needs a gradient. Inside the node for
  // ops of up to four arguments.
  struct Slot {
    tsr_value value{};
    SavedTensor saved;
    TensorMeta meta;
    int32_t edge = -1;
    bool needs = false;
  };
  boost::container::small_vector<Slot, 4> slots_;
  // Tensor[] arguments: each entry's meta, saved tensor (when the formula
  // reads the argument) and edge index (-1: none).
  struct ListArg {
    int32_t arg = 0;
    std::vector<TensorMeta> metas;
    std::vector<SavedTensor> saved;
    std::vector<int32_t> edges;
  };
  // Rare parts, allocated only for ops that have them: list arguments and the
  // backing store of copied int/float/bool lists and strings.
  struct Extra {
    std::vector<ListArg> lists;
    std::vector<std::vector<int64_t>> int_lists;
    std::vector<std::vector<double>> float_lists;
    std::vector<std::vector<int32_t>> bool_lists;
    std::vector<std::string> strings;
  };
  Extra& extra();
  const ListArg& list_arg(int i) const;
  std::unique_ptr<Extra> extra_;
  std::vector<SavedTensor> saved_outputs_;
};

}  // namespace tsr::autograd
