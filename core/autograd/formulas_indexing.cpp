// formulas_indexing.cpp - derivatives of gathering and masking ops: the
// gradient goes back to the positions that were read (scatter-add into zeros)
// or that were kept.
#include <string>

#include "autograd/formulas.h"
#include "autograd/functions.h"
#include "ops/registry.h"
#include "runtime/device.h"
#include "util/error.h"

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

// scatter_add(self, dim, index, src): self passes g; src gets g at index.
void scatter_add_f(BackwardContext& c) {
  Runtime* rt = c.runtime();
  c.set(0, TensorRef::borrow(c.grad()));
  if (c.needs(3))
    c.set(3, op(rt, OpId::gather,
                {v_tensor(c.grad()), v_int(c.int_arg(1)), v_tensor(c.input(2).get())}));
}
// scatter.src / scatter.value: overwritten positions of self get nothing.
void scatter_f(BackwardContext& c) {
  Runtime* rt = c.runtime();
  R index = c.input(2);
  if (c.needs(0))
    c.set(0, op(rt, OpId::scatter_value,
                {v_tensor(c.grad()), v_int(c.int_arg(1)), v_tensor(index.get()),
                 v_scalar(scalar_float(0.0))}));
  if (c.op().schema.args[3].kind == ArgKind::kTensor && c.needs(3))
    c.set(3,
          op(rt, OpId::gather, {v_tensor(c.grad()), v_int(c.int_arg(1)), v_tensor(index.get())}));
}
// sort/topk/kthvalue (values, indices): the values' gradient scattered back
// to the indices they came from (zeros elsewhere).
template <int DimArg, int KeepdimArg>
void values_at_indices_f(BackwardContext& c) {
  Runtime* rt = c.runtime();
  const TensorMeta& m = c.input_meta(0);
  R idx = c.result(1);
  R g = TensorRef::borrow(c.grad(0));
  int64_t dim = c.int_arg(DimArg);
  if (dim < 0) dim += m.ndim;
  if (KeepdimArg >= 0 && !c.bool_arg(KeepdimArg) && m.ndim > 0) {
    idx = op(rt, OpId::unsqueeze, {v_tensor(idx.get()), v_int(dim)});
    g = op(rt, OpId::unsqueeze, {v_tensor(g.get()), v_int(dim)});
  }
  R z = zeros_of(rt, m);
  c.set(0, op(rt, OpId::scatter_add,
              {v_tensor(z.get()), v_int(m.ndim > 0 ? dim : 0), v_tensor(idx.get()),
               v_tensor(g.get())}));
}
// index.Tensor(self, indices): g accumulated into zeros at the indices.
void index_f(BackwardContext& c) {
  Runtime* rt = c.runtime();
  const int32_t n = c.list_size(1);
  std::vector<TensorRef> keep;
  std::vector<TensorImpl*> indices;
  for (int32_t j = 0; j < n; ++j) {
    if (c.list_meta(1, j).device == nullptr) {
      indices.push_back(nullptr);  // None entry
      continue;
    }
    keep.push_back(c.list_input(1, j));
    indices.push_back(keep.back().get());
  }
  R z = zeros_of(rt, c.input_meta(0));
  tsr_value list{};
  list.tag = TSR_VALUE_TENSOR_LIST;
  list.len = n;
  list.u.tensors = reinterpret_cast<tsr_tensor* const*>(indices.data());
  c.set(0, op(rt, OpId::index_put, {v_tensor(z.get()), list, v_tensor(c.grad()), v_bool(true)}));
}
// masked_select(self, mask): g put back where mask (broadcast to self) holds.
void masked_select_f(BackwardContext& c) {
  Runtime* rt = c.runtime();
  const TensorMeta& m = c.input_meta(0);
  R z = zeros_of(rt, m);
  R mask = op(rt, OpId::expand, {v_tensor(c.input(1).get()), v_ints(m.sizes, m.ndim)});
  c.set(0, op(rt, OpId::masked_scatter,
              {v_tensor(z.get()), v_tensor(mask.get()), v_tensor(c.grad())}));
}
// where(condition, self, Scalar other) / where(condition, Scalar self, other).
void where_scalar_other_f(BackwardContext& c) {
  Runtime* rt = c.runtime();
  R zeros = op(rt, OpId::zeros_like, {v_tensor(c.grad())});
  c.set(1, op(rt, OpId::where_self,
              {v_tensor(c.input(0).get()), v_tensor(c.grad()), v_tensor(zeros.get())}));
}
void where_scalar_self_f(BackwardContext& c) {
  Runtime* rt = c.runtime();
  R zeros = op(rt, OpId::zeros_like, {v_tensor(c.grad())});
  c.set(2, op(rt, OpId::where_self,
              {v_tensor(c.input(0).get()), v_tensor(zeros.get()), v_tensor(c.grad())}));
}

// scatter_reduce.two(self, dim, index, src, reduce, include_self) for "sum"
// and "mean"; scatter.reduce(..., reduce="add"). Other reductions fail in
// backward naming themselves.
void scatter_reduce_f(BackwardContext& c) {
  Runtime* rt = c.runtime();
  const std::string reduce = c.arg(4).u.str != nullptr ? c.arg(4).u.str : "";
  const bool include_self = c.op().id == OpId::scatter_reduce_two ? c.bool_arg(5) : true;
  if (reduce != "sum" && reduce != "mean" && reduce != "add")
    fail(TSR_UNIMPLEMENTED,
         "the derivative of op '{}' with reduce='{}' is not implemented (sum, mean and add are)",
         c.op().name, reduce);
  const int64_t dim = c.int_arg(1);
  R index = c.input(2);
  R g = TensorRef::borrow(c.grad());
  R ones_src = op(rt, OpId::ones_like, {v_tensor(c.input(3).get())});
  R count = op(rt, OpId::scatter_add,
               {v_tensor(op(rt, OpId::zeros_like, {v_tensor(g.get())}).get()), v_int(dim),
                v_tensor(index.get()), v_tensor(ones_src.get())});
  R scattered = op(rt, OpId::gt_Scalar, {v_tensor(count.get()), v_scalar(scalar_float(0.0))});
  R per = g;
  if (reduce == "mean") {
    R total = include_self
                  ? op(rt, OpId::add_Scalar, {v_tensor(count.get()), v_scalar(scalar_float(1.0))})
                  : op(rt, OpId::clamp_min, {v_tensor(count.get()), v_scalar(scalar_float(1.0))});
    per = op(rt, OpId::div_Tensor, {v_tensor(g.get()), v_tensor(total.get())});
  }
  if (c.needs(0)) {
    R zeros = op(rt, OpId::zeros_like, {v_tensor(g.get())});
    c.set(0, include_self
                 ? per
                 : op(rt, OpId::where_self,
                      {v_tensor(scattered.get()), v_tensor(zeros.get()), v_tensor(g.get())}));
  }
  if (c.needs(3))
    c.set(3, op(rt, OpId::gather, {v_tensor(per.get()), v_int(dim), v_tensor(index.get())}));
}

}  // namespace

void add_indexing_formulas(FormulaTable& f) {
  f.add({OpId::scatter_reduce_two, OpId::scatter_reduce}, scatter_reduce_f,
        arg_bit(2) | arg_bit(3));
  f.add(OpId::scatter_add, scatter_add_f, arg_bit(2));
  f.add({OpId::scatter_src, OpId::scatter_value}, scatter_f, arg_bit(2));
  f.add(OpId::sort, values_at_indices_f<1, -1>, 0, arg_bit(1));
  f.add(OpId::sort_stable, values_at_indices_f<2, -1>, 0, arg_bit(1));
  f.add(OpId::topk, values_at_indices_f<2, -1>, 0, arg_bit(1));
  f.add(OpId::kthvalue, values_at_indices_f<2, 3>, 0, arg_bit(1));
  f.add(OpId::index_Tensor, index_f, arg_bit(1));
  f.add(OpId::masked_select, masked_select_f, arg_bit(1));
  f.add(OpId::where_ScalarOther, where_scalar_other_f, arg_bit(0));
  f.add(OpId::where_ScalarSelf, where_scalar_self_f, arg_bit(0));
  f.add_nondifferentiable({OpId::_unique2});
  f.add(OpId::gather, gather_formula, arg_bit(2));
  f.add(OpId::index_select, index_select_formula, arg_bit(2));
  f.add({OpId::masked_fill_Scalar, OpId::masked_fill_Tensor, OpId::masked_fill__Scalar,
         OpId::masked_fill__Tensor},
        masked_fill_formula, arg_bit(1));
}

}  // namespace tsr::autograd
