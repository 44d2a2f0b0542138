// formulas_indexing.cpp - derivatives of gathering and masking ops: the
// gradient goes back to the positions that were read (scatter-add into zeros)
// or that were kept.
#include "autograd/formulas.h"
#include "autograd/functions.h"
#include "ops/registry.h"

namespace tsr::autograd {
namespace {

using R = TensorRef;

R op(Runtime* rt, OpId id, std::initializer_list<tsr_value> args) { return call_op(rt, id, args); }

// gather(self, dim, index): zeros(self).scatter_add(dim, index, g).
void gather_formula(BackwardContext& c) {
  Runtime* rt = c.runtime();
  R zeros = zeros_of(rt, c.input_meta(0));
  c.set(0, op(rt, OpId::scatter_add,
              {v_tensor(zeros.get()), v_int(c.int_arg(1)), v_tensor(c.input(2).get()),
               v_tensor(c.grad())}));
}

// index_select(self, dim, index): the index laid along `dim` and expanded to
// g's shape, then scatter-added into zeros.
void index_select_formula(BackwardContext& c) {
  Runtime* rt = c.runtime();
  const TensorMeta& m = c.input_meta(0);
  TensorImpl* g = c.grad();
  int64_t dim = c.int_arg(1);
  if (dim < 0) dim += m.ndim;
  R index = c.input(2);
  R zeros = zeros_of(rt, m);
  if (m.ndim == 0) {
    c.set(0, op(rt, OpId::scatter_add,
                {v_tensor(zeros.get()), v_int(0), v_tensor(index.get()), v_tensor(g)}));
    return;
  }
  int64_t shape[TSR_MAX_DIMS];
  for (int32_t d = 0; d < m.ndim; ++d) shape[d] = d == dim ? index->numel : 1;
  R laid = op(rt, OpId::reshape, {v_tensor(index.get()), v_ints(shape, m.ndim)});
  R expanded = op(rt, OpId::expand, {v_tensor(laid.get()), v_ints(g->sizes, g->ndim)});
  c.set(0, op(rt, OpId::scatter_add,
              {v_tensor(zeros.get()), v_int(dim), v_tensor(expanded.get()), v_tensor(g)}));
}

// masked_fill(self, mask, value): self keeps the gradient where mask is false;
// a tensor value receives the sum where it is true.
void masked_fill_formula(BackwardContext& c) {
  Runtime* rt = c.runtime();
  TensorImpl* g = c.grad();
  R mask = c.input(1);
  R zeros = op(rt, OpId::zeros_like, {v_tensor(g)});
  if (c.needs(0))
    c.set(0, op(rt, OpId::where_self, {v_tensor(mask.get()), v_tensor(zeros.get()), v_tensor(g)}));
  if (c.op().schema.args[2].kind == ArgKind::kTensor && c.needs(2)) {
    R kept = op(rt, OpId::where_self, {v_tensor(mask.get()), v_tensor(g), v_tensor(zeros.get())});
    c.set(2, op(rt, OpId::sum, {v_tensor(kept.get())}));
  }
}

}  // namespace

void add_indexing_formulas(FormulaTable& f) {
  f.add(OpId::gather, gather_formula, arg_bit(2));
  f.add(OpId::index_select, index_select_formula, arg_bit(2));
  f.add({OpId::masked_fill_Scalar, OpId::masked_fill_Tensor, OpId::masked_fill__Scalar,
         OpId::masked_fill__Tensor},
        masked_fill_formula, arg_bit(1));
}

}  // namespace tsr::autograd
