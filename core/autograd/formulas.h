// Derivative formulas: how each differentiable op's gradient is computed,
// written with registry ops so every device that runs the forward runs the
// backward (create_graph records them in turn, for higher orders).
//
// A formula reads the op's saved arguments and output gradients through a
// BackwardContext and sets the gradient of each tensor argument that needs
// one. It may return a gradient of the broadcast shape and in the computation
// dtype: the node reduces it to the input's shape and casts it (as PyTorch's
// engine does). Ops without a formula: composites are differentiated through
// the ops they decompose into; other ops get a node that fails in backward
// naming the op (record.h).
#pragma once

#include <cstdint>
#include <span>

#include "autograd/node.h"
#include "dispatch/op_call.h"
#include "registry/registry.h"
#include "util/error.h"

namespace tsr::autograd {

class OpNode;

class BackwardContext {
 public:
  BackwardContext(OpNode& node, std::vector<TensorRef>& grads, std::vector<TensorRef>& out)
      : node_(node), grads_(grads), out_(out) {}

  Runtime* runtime() const;
  const OpDef& op() const;
  // Gradient of forward output k (always defined).
  TensorImpl* grad(int k = 0) const { return grads_[static_cast<size_t>(k)].get(); }
  // The tensor argument at schema position i (saved: see Formula::inputs).
  TensorRef input(int i) const;
  // Forward output k (saved: see Formula::outputs).
  TensorRef result(int k = 0) const;
  // Shape/dtype of tensor argument i as it was in forward.
  const TensorMeta& input_meta(int i) const;
  // Non-tensor arguments as passed (lists and strings copied at record time).
  const tsr_value& arg(int i) const;
  int64_t int_arg(int i) const { return arg(i).u.i; }
  double float_arg(int i) const { return arg(i).u.f; }
  bool bool_arg(int i) const { return arg(i).u.b != 0; }
  bool is_none(int i) const { return arg(i).tag == TSR_VALUE_NONE; }
  const tsr_scalar& scalar(int i) const { return arg(i).u.scalar; }
  std::span<const int64_t> ints(int i) const {
    return {arg(i).u.ints, static_cast<size_t>(arg(i).len)};
  }
  // Whether tensor argument i (any entry of a Tensor[] argument) needs a
  // gradient.
  bool needs(int i) const;
  // Tensor[] argument i: its length, entry j's forward meta, saved entry,
  // whether entry j needs a gradient, and setting it.
  int32_t list_size(int i) const;
  const TensorMeta& list_meta(int i, int32_t j) const;
  TensorRef list_input(int i, int32_t j) const;
  bool list_needs(int i, int32_t j) const;
  void set_list(int i, int32_t j, TensorRef g);
  // Forward outputs (list returns: the list's length).
  int32_t num_outputs() const;
  // The gradient for tensor argument i.
  void set(int i, TensorRef g);

 private:
  OpNode& node_;
  std::vector<TensorRef>& grads_;
  std::vector<TensorRef>& out_;
};

using BackwardFn = void (*)(BackwardContext& ctx);

// Formulas hold tensors as references.
using R = TensorRef;

// A Scalar argument as a double (complex scalars are refused: UNIMPLEMENTED).
inline double scalar_value(const tsr_scalar& v) {
  switch (v.kind) {
    case TSR_BOOL:
    case TSR_INT64:
      return static_cast<double>(v.v.i);
    case TSR_COMPLEX128:
      fail(TSR_UNIMPLEMENTED, "autograd: complex scalar arguments are not differentiable yet");
    default:
      return v.v.f;
  }
}

struct Formula {
  BackwardFn fn = nullptr;
  uint32_t inputs = 0;   // bit i: the formula reads tensor argument i
  uint32_t outputs = 0;  // bit k: the formula reads output k
  // The op's outputs never require grad (zeros_like, random draws, ...): it
  // runs unrecorded whatever its inputs.
  bool nondifferentiable = false;
  // (optional) Whether the formula can differentiate this call; when it says
  // no, the op records as if it had no formula (a composite decomposes).
  bool (*applies)(const OpCall& c) = nullptr;
};

// The formula of op `id`, or null.
const Formula* formula_for(OpId id);
// The formula every custom op records (custom_backward.cpp): it saves every
// tensor argument and result and calls the op's derivative.
const Formula& custom_formula();

// Per-family registration (formulas_<family>.cpp).
class FormulaTable {
 public:
  void add(OpId id, BackwardFn fn, uint32_t inputs, uint32_t outputs = 0);
  // A formula used only for calls `applies` accepts.
  void add_when(OpId id, BackwardFn fn, bool (*applies)(const OpCall&), uint32_t inputs,
                uint32_t outputs = 0);
  void add(std::initializer_list<OpId> ids, BackwardFn fn, uint32_t inputs, uint32_t outputs = 0) {
    for (OpId id : ids) add(id, fn, inputs, outputs);
  }
  void add_nondifferentiable(std::initializer_list<OpId> ids);
  // Gives every in-place op without a formula ("exp_") its functional
  // form's formula ("exp"), when that has one with the same arguments.
  void add_inplace_variants();
  // Drops the formulas of the composites named in `names` (comma-separated,
  // TESSERA_AUTOGRAD_DECOMPOSE), so they are differentiated through their
  // decompositions: for checking a formula against its decomposition, and
  // the reachability check (Note [Composite reachability]) against a real
  // graph cut. Throws INVALID_ARGUMENT naming an entry that is not a
  // composite with a formula.
  void decompose_listed(const char* names);
  const Formula* find(OpId id) const;

 private:
  std::vector<Formula> by_id_;
};

void add_basic_formulas(FormulaTable& t);
void add_indexing_formulas(FormulaTable& t);
void add_pointwise_formulas(FormulaTable& t);
void add_shape_formulas(FormulaTable& t);
void add_nn_formulas(FormulaTable& t);
void add_pointwise_special_formulas(FormulaTable& t);
void add_reduction_formulas(FormulaTable& t);

// Bit masks for Formula::inputs / outputs.
constexpr uint32_t arg_bit(int i) { return uint32_t{1} << i; }

}  // namespace tsr::autograd
