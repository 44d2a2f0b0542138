// formulas_indexing.cpp - derivatives of gathering and masking ops: the
// gradient goes back to the positions that were read (scatter-add into zeros)
// or that were kept.
#include <string>

#include "autograd/formulas.h"
#include "autograd/grad_ops.h"
#include "dispatch/call.h"
#include "registry/registry.h"
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
    // g is 0-d and the index holds one value: both as 0-d.
    const int64_t scalar_shape[1] = {0};
    R index0 = op(rt, OpId::reshape, {v_tensor(index.get()), v_ints(scalar_shape, 0)});
    c.set(0, op(rt, OpId::scatter_add,
                {v_tensor(zeros.get()), v_int(0), v_tensor(index0.get()), v_tensor(g)}));
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
// The saved Tensor?[] argument i as a list value; `keep` holds the entries.
tsr_value saved_index_list(const BackwardContext& c, int i, std::vector<TensorRef>& keep,
                           std::vector<TensorImpl*>& entries) {
  const int32_t n = c.list_size(i);
  keep.clear();
  entries.clear();
  keep.reserve(static_cast<size_t>(n));
  for (int32_t j = 0; j < n; ++j) {
    if (c.list_meta(i, j).device == nullptr) {
      entries.push_back(nullptr);  // None entry
      continue;
    }
    keep.push_back(c.list_input(i, j));
    entries.push_back(keep.back().get());
  }
  tsr_value list{};
  list.tag = TSR_VALUE_TENSOR_LIST;
  list.len = n;
  list.u.tensors = reinterpret_cast<tsr_tensor* const*>(entries.data());
  return list;
}

// index.Tensor(self, indices): g accumulated into zeros at the indices.
void index_f(BackwardContext& c) {
  Runtime* rt = c.runtime();
  std::vector<TensorRef> keep;
  std::vector<TensorImpl*> entries;
  const tsr_value list = saved_index_list(c, 1, keep, entries);
  R z = zeros_of(rt, c.input_meta(0));
  c.set(0, op(rt, OpId::index_put, {v_tensor(z.get()), list, v_tensor(c.grad()), v_bool(true)}));
}

// index_put(self, indices, values, accumulate) and index_put_ (PyTorch's
// derivatives.yaml): self passes g, except that without accumulate the
// positions written get nothing (their old values are gone); values get g
// read at the indices (summed over the dims they were broadcast along, and
// once per repeat of a repeated index, whichever write won).
void index_put_f(BackwardContext& c) {
  Runtime* rt = c.runtime();
  TensorImpl* g = c.grad();
  const bool accumulate = c.bool_arg(3);
  std::vector<TensorRef> keep;
  std::vector<TensorImpl*> entries;
  const tsr_value list = saved_index_list(c, 1, keep, entries);
  if (c.needs(0)) {
    if (accumulate) {
      c.set(0, TensorRef::borrow(g));
    } else {
      const tsr_device device = c.input_meta(0).device->device;
      R zero =
          op(rt, OpId::zeros, {v_ints(nullptr, 0), v_dtype(g->dtype), v_none(), v_device(device)});
      c.set(0, op(rt, OpId::index_put, {v_tensor(g), list, v_tensor(zero.get()), v_bool(false)}));
    }
  }
  if (c.needs(2)) c.set(2, op(rt, OpId::index_Tensor, {v_tensor(g), list}));
}

// embedding(weight, indices, padding_idx, scale_grad_by_freq, sparse)
// (PyTorch's embedding_dense_backward): row r of weight gets the sum of g's
// rows whose index is r, each divided by how often its index occurs when
// scale_grad_by_freq; the padding_idx row gets nothing (a negative padding_idx
// matches no index, as in ATen). sparse=True gives the same values, dense.
void embedding_f(BackwardContext& c) {
  Runtime* rt = c.runtime();
  const TensorMeta& m = c.input_meta(0);
  TensorImpl* g = c.grad();
  const int64_t padding_idx = c.int_arg(2);
  const int64_t dim = m.sizes[1];
  R index = c.input(1);
  const int64_t n = index->numel;
  if (index->dtype != TSR_INT64)
    index = op(rt, OpId::_to_copy, {v_tensor(index.get()), v_dtype(TSR_INT64)});
  index = op(rt, OpId::reshape, {v_tensor(index.get()), v_ints(&n, 1)});
  const int64_t rows_shape[2] = {n, dim};
  R rows = op(rt, OpId::reshape, {v_tensor(g), v_ints(rows_shape, 2)});
  R column = op(rt, OpId::unsqueeze, {v_tensor(index.get()), v_int(1)});
  const tsr_device device = m.device->device;
  if (c.bool_arg(3)) {
    R counts =
        op(rt, OpId::zeros, {v_ints(m.sizes, 1), v_dtype(g->dtype), v_none(), v_device(device)});
    R ones = op(rt, OpId::ones_like, {v_tensor(index.get()), v_dtype(g->dtype)});
    counts = op(rt, OpId::scatter_add,
                {v_tensor(counts.get()), v_int(0), v_tensor(index.get()), v_tensor(ones.get())});
    R freq = op(rt, OpId::gather, {v_tensor(counts.get()), v_int(0), v_tensor(index.get())});
    freq = op(rt, OpId::unsqueeze, {v_tensor(freq.get()), v_int(1)});
    rows = op(rt, OpId::div_Tensor, {v_tensor(rows.get()), v_tensor(freq.get())});
  }
  if (padding_idx >= 0) {
    R keep_row =
        op(rt, OpId::ne_Scalar, {v_tensor(column.get()), v_scalar(scalar_int(padding_idx))});
    R zeros = op(rt, OpId::zeros_like, {v_tensor(rows.get())});
    rows = op(rt, OpId::where_self,
              {v_tensor(keep_row.get()), v_tensor(rows.get()), v_tensor(zeros.get())});
  }
  R spread = op(rt, OpId::expand, {v_tensor(column.get()), v_ints(rows_shape, 2)});
  R z = op(rt, OpId::zeros, {v_ints(m.sizes, 2), v_dtype(g->dtype), v_none(), v_device(device)});
  c.set(0, op(rt, OpId::scatter_add,
              {v_tensor(z.get()), v_int(0), v_tensor(spread.get()), v_tensor(rows.get())}));
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
// masked_scatter(self, mask, source): self keeps g where the mask is off;
// source element j, the j-th one written, gets g at the j-th set position of
// the mask (in row-major order), and the unused tail of source gets 0.
void masked_scatter_f(BackwardContext& c) {
  Runtime* rt = c.runtime();
  TensorImpl* g = c.grad();
  R mask = c.input(1);
  if (c.needs(0)) {
    R zeros = op(rt, OpId::zeros_like, {v_tensor(g)});
    c.set(0, op(rt, OpId::where_self, {v_tensor(mask.get()), v_tensor(zeros.get()), v_tensor(g)}));
  }
  if (c.needs(2)) {
    const TensorMeta& sm = c.input_meta(2);
    int64_t total = 1;
    for (int32_t d = 0; d < sm.ndim; ++d) total *= sm.sizes[d];
    R mask_b = op(rt, OpId::expand, {v_tensor(mask.get()), v_ints(g->sizes, g->ndim)});
    R picked = op(rt, OpId::masked_select, {v_tensor(g), v_tensor(mask_b.get())});
    if (picked->numel < total) {
      const int64_t rest = total - picked->numel;
      R tail = op(rt, OpId::zeros,
                  {v_ints(&rest, 1), v_dtype(g->dtype), v_none(), v_device(sm.device->device)});
      TensorImpl* parts[2] = {picked.get(), tail.get()};
      picked = op(rt, OpId::cat, {v_tensors(parts, 2), v_int(0)});
    }
    c.set(2, op(rt, OpId::reshape, {v_tensor(picked.get()), v_ints(sm.sizes, sm.ndim)}));
  }
}

// take_along_dim(self, indices, dim?): gather over self and indices
// broadcast against each other (all dims but `dim`), or over the flattened
// self when dim is None; the gradient scatter-adds g back (in the broadcast
// shape, which the node reduces to self's).
void take_along_dim_f(BackwardContext& c) {
  Runtime* rt = c.runtime();
  const TensorMeta& m = c.input_meta(0);
  TensorImpl* g = c.grad();
  R index = c.input(1);
  if (index->dtype != TSR_INT64)
    index = op(rt, OpId::_to_copy, {v_tensor(index.get()), v_dtype(TSR_INT64)});
  const tsr_device device = m.device->device;
  if (c.is_none(2)) {
    int64_t total = 1;
    for (int32_t d = 0; d < m.ndim; ++d) total *= m.sizes[d];
    const int64_t minus_one = -1;
    R flat =
        op(rt, OpId::zeros, {v_ints(&total, 1), v_dtype(g->dtype), v_none(), v_device(device)});
    R idx = op(rt, OpId::reshape, {v_tensor(index.get()), v_ints(&minus_one, 1)});
    R gf = op(rt, OpId::reshape, {v_tensor(g), v_ints(&minus_one, 1)});
    flat = op(rt, OpId::scatter_add,
              {v_tensor(flat.get()), v_int(0), v_tensor(idx.get()), v_tensor(gf.get())});
    c.set(0, op(rt, OpId::reshape, {v_tensor(flat.get()), v_ints(m.sizes, m.ndim)}));
    return;
  }
  if (m.ndim == 0) {
    R z = zeros_of(rt, m);
    c.set(0, op(rt, OpId::scatter_add,
                {v_tensor(z.get()), v_int(0), v_tensor(index.get()), v_tensor(g)}));
    return;
  }
  int64_t dim = c.int_arg(2);
  if (dim < 0) dim += m.ndim;
  int64_t shape[TSR_MAX_DIMS];
  for (int32_t d = 0; d < g->ndim; ++d) shape[d] = d == dim ? m.sizes[d] : g->sizes[d];
  R z =
      op(rt, OpId::zeros, {v_ints(shape, g->ndim), v_dtype(g->dtype), v_none(), v_device(device)});
  R idx = op(rt, OpId::expand, {v_tensor(index.get()), v_ints(g->sizes, g->ndim)});
  c.set(0, op(rt, OpId::scatter_add,
              {v_tensor(z.get()), v_int(dim), v_tensor(idx.get()), v_tensor(g)}));
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

// scatter_reduce.two(self, dim, index, src, reduce, include_self) and
// scatter.reduce(..., reduce="add"|"multiply") (include_self always).
// Output position p reduces its members: self[p] (when include_self, or when
// nothing was scattered to p) and every src[j] with index[j] -> p.
//  - sum/add: each member gets g[p]; mean: g[p] / (member count);
//  - amax/amin: the members equal to the result share g[p] evenly;
//  - prod/multiply: member m gets g[p] * (product of the other members),
//    computed without dividing by zero: with Z zeros among the members, a
//    non-zero member gets g * P / m when Z == 0 (P: product of the non-zero
//    members), the zero member gets g * P when Z == 1, all get 0 when Z >= 2.
void scatter_reduce_f(BackwardContext& c) {
  Runtime* rt = c.runtime();
  std::string reduce = c.arg(4).u.str != nullptr ? c.arg(4).u.str : "";
  if (reduce == "add") reduce = "sum";
  if (reduce == "multiply") reduce = "prod";
  const bool include_self = c.op().id == OpId::scatter_reduce_two ? c.bool_arg(5) : true;
  if (reduce != "sum" && reduce != "mean" && reduce != "amax" && reduce != "amin" &&
      reduce != "prod")
    fail(TSR_UNIMPLEMENTED, "the derivative of op '{}' with reduce='{}' is not implemented",
         c.op().name, reduce);
  const int64_t dim = c.int_arg(1);
  R index = c.input(2);
  R src = c.input(3);
  R g = TensorRef::borrow(c.grad());
  auto T = [](const R& t) { return v_tensor(t.get()); };
  auto gather = [&](const R& t) { return op(rt, OpId::gather, {T(t), v_int(dim), T(index)}); };
  auto scatter_add = [&](const R& into, const R& what) {
    return op(rt, OpId::scatter_add, {T(into), v_int(dim), T(index), T(what)});
  };
  auto where = [&](const R& cond, const R& a, const R& b) {
    return op(rt, OpId::where_self, {T(cond), T(a), T(b)});
  };
  R zeros_g = op(rt, OpId::zeros_like, {T(g)});
  R ones_g = op(rt, OpId::ones_like, {T(g)});
  R count = scatter_add(zeros_g, op(rt, OpId::ones_like, {T(src)}));
  R scattered = op(rt, OpId::gt_Scalar, {T(count), v_scalar(scalar_float(0.0))});
  // Whether self[p] is a member of p's reduction.
  R self_member =
      include_self ? op(rt, OpId::ones_like, {T(g)}) : where(scattered, zeros_g, ones_g);
  R grad_self, grad_src;
  if (reduce == "sum" || reduce == "mean") {
    R per = g;
    if (reduce == "mean") {
      R total = op(rt, OpId::add_Tensor, {T(count), T(self_member)});
      per = op(rt, OpId::div_Tensor, {T(g), T(total)});
    }
    grad_self = op(rt, OpId::mul_Tensor, {T(per), T(self_member)});
    grad_src = gather(per);
  } else if (reduce == "amax" || reduce == "amin") {
    R self = c.input(0);
    R result = c.result(0);
    auto as_float = [&](const R& mask) { return where(mask, ones_g, zeros_g); };
    R self_is = op(rt, OpId::mul_Tensor,
                   {T(as_float(op(rt, OpId::eq_Tensor, {T(self), T(result)}))), T(self_member)});
    R src_ones = op(rt, OpId::ones_like, {T(src)});
    R src_zeros = op(rt, OpId::zeros_like, {T(src)});
    R src_is = where(op(rt, OpId::eq_Tensor, {T(src), T(gather(result))}), src_ones, src_zeros);
    R n = scatter_add(self_is, src_is);  // >= 1: the result is one of the members
    R per = op(rt, OpId::div_Tensor, {T(g), T(n)});
    grad_self = op(rt, OpId::mul_Tensor, {T(self_is), T(per)});
    grad_src = op(rt, OpId::mul_Tensor, {T(src_is), T(gather(per))});
  } else {  // prod
    R self = c.input(0);
    // Non-members count as 1; zeros are set aside.
    R self_m =
        where(op(rt, OpId::gt_Scalar, {T(self_member), v_scalar(scalar_float(0.0))}), self, ones_g);
    R self_zero = op(rt, OpId::eq_Scalar, {T(self_m), v_scalar(scalar_float(0.0))});
    R src_zero = op(rt, OpId::eq_Scalar, {T(src), v_scalar(scalar_float(0.0))});
    R src_ones = op(rt, OpId::ones_like, {T(src)});
    R src_zeros = op(rt, OpId::zeros_like, {T(src)});
    R self_nz = where(self_zero, ones_g, self_m);
    R src_nz = where(src_zero, src_ones, src);
    R zeros_count =
        scatter_add(where(self_zero, ones_g, zeros_g), where(src_zero, src_ones, src_zeros));
    R product = op(rt, OpId::scatter_reduce_two,
                   {T(self_nz), v_int(dim), T(index), T(src_nz), v_str("prod"), v_bool(true)});
    R gp = op(rt, OpId::mul_Tensor, {T(g), T(product)});
    R no_zero = op(rt, OpId::eq_Scalar, {T(zeros_count), v_scalar(scalar_float(0.0))});
    R one_zero = op(rt, OpId::eq_Scalar, {T(zeros_count), v_scalar(scalar_float(1.0))});
    // self: g P / self where no member is 0; g P for the single zero; else 0.
    R self_single = op(rt, OpId::logical_and, {T(one_zero), T(self_zero)});
    grad_self = where(no_zero, op(rt, OpId::div_Tensor, {T(gp), T(self_nz)}),
                      where(self_single, gp, zeros_g));
    grad_self = op(rt, OpId::mul_Tensor, {T(grad_self), T(self_member)});
    R gp_src = gather(gp);
    R src_single = op(rt, OpId::logical_and, {T(gather(one_zero)), T(src_zero)});
    grad_src = where(gather(no_zero), op(rt, OpId::div_Tensor, {T(gp_src), T(src_nz)}),
                     where(src_single, gp_src, src_zeros));
  }
  if (c.needs(0)) c.set(0, grad_self);
  if (c.needs(3)) c.set(3, grad_src);
}

}  // namespace

void add_indexing_formulas(FormulaTable& f) {
  f.add({OpId::scatter_reduce_two, OpId::scatter_reduce}, scatter_reduce_f,
        arg_bit(0) | arg_bit(2) | arg_bit(3), arg_bit(0));
  f.add(OpId::scatter_add, scatter_add_f, arg_bit(2));
  f.add({OpId::scatter_src, OpId::scatter_value}, scatter_f, arg_bit(2));
  f.add(OpId::sort, values_at_indices_f<1, -1>, 0, arg_bit(1));
  f.add(OpId::sort_stable, values_at_indices_f<2, -1>, 0, arg_bit(1));
  f.add(OpId::topk, values_at_indices_f<2, -1>, 0, arg_bit(1));
  f.add(OpId::kthvalue, values_at_indices_f<2, 3>, 0, arg_bit(1));
  f.add(OpId::index_Tensor, index_f, arg_bit(1));
  f.add(OpId::index_put, index_put_f, arg_bit(1));
  f.add(OpId::embedding, embedding_f, arg_bit(1));
  f.add(OpId::masked_select, masked_select_f, arg_bit(1));
  f.add(OpId::where_ScalarOther, where_scalar_other_f, arg_bit(0));
  f.add(OpId::where_ScalarSelf, where_scalar_self_f, arg_bit(0));
  f.add_nondifferentiable({OpId::_unique2});
  f.add(OpId::gather, gather_formula, arg_bit(2));
  f.add(OpId::masked_scatter, masked_scatter_f, arg_bit(1));
  f.add(OpId::take_along_dim, take_along_dim_f, arg_bit(1));
  f.add(OpId::index_select, index_select_formula, arg_bit(2));
  f.add({OpId::masked_fill_Scalar, OpId::masked_fill_Tensor, OpId::masked_fill__Scalar,
         OpId::masked_fill__Tensor},
        masked_fill_formula, arg_bit(1));
}

}  // namespace tsr::autograd
