// formulas_indexing.cpp - derivatives of gathering and masking ops: the
// gradient goes back to the positions that were read (scatter-add into zeros)
// or that were kept.
#include <string>

#include "autograd/formulas.h"
#include "autograd/grad_ops.h"
#include "dispatch/op_api.h"
#include "dispatch/op_call.h"
#include "ops/shorthands.h"
#include "registry/registry.h"
#include "runtime/device.h"
#include "util/error.h"

namespace tsr::autograd {
namespace {

using R = TensorRef;

// gather(self, dim, index): zeros(self).scatter_add(dim, index, g).
void gather_formula(BackwardContext& c) {
  Runtime* rt = c.runtime();
  R zeros = zeros_of(rt, c.input_meta(0));
  c.set(0, op::call(rt, OpId::scatter_add, zeros, c.int_arg(1), c.input(2).get(), c.grad()));
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
    R index0 = op::call(rt, OpId::reshape, index, op::ints(scalar_shape, 0));
    c.set(0, op::call(rt, OpId::scatter_add, zeros, 0, index0, g));
    return;
  }
  int64_t shape[TSR_MAX_DIMS];
  for (int32_t d = 0; d < m.ndim; ++d) shape[d] = d == dim ? index->numel : 1;
  R laid = op::call(rt, OpId::reshape, index, op::ints(shape, m.ndim));
  R expanded = op::call(rt, OpId::expand, laid, op::ints(g->sizes, g->ndim));
  c.set(0, op::call(rt, OpId::scatter_add, zeros, dim, expanded, g));
}

// masked_fill(self, mask, value): self keeps the gradient where mask is false;
// a tensor value receives the sum where it is true.
void masked_fill_formula(BackwardContext& c) {
  Runtime* rt = c.runtime();
  TensorImpl* g = c.grad();
  R mask = c.input(1);
  R zeros = op::call(rt, OpId::zeros_like, g);
  if (c.needs(0)) c.set(0, op::call(rt, OpId::where_self, mask, zeros, g));
  if (c.op().schema.args[2].kind == ArgKind::kTensor && c.needs(2)) {
    R kept = op::call(rt, OpId::where_self, mask, g, zeros);
    c.set(2, op::call(rt, OpId::sum, kept));
  }
}

// scatter_add(self, dim, index, src): self passes g; src gets g at index.
void scatter_add_f(BackwardContext& c) {
  Runtime* rt = c.runtime();
  c.set(0, TensorRef::borrow(c.grad()));
  if (c.needs(3)) c.set(3, op::call(rt, OpId::gather, c.grad(), c.int_arg(1), c.input(2).get()));
}
// scatter.src / scatter.value: overwritten positions of self get nothing.
void scatter_f(BackwardContext& c) {
  Runtime* rt = c.runtime();
  R index = c.input(2);
  if (c.needs(0)) c.set(0, op::call(rt, OpId::scatter_value, c.grad(), c.int_arg(1), index, 0.0));
  if (c.op().schema.args[3].kind == ArgKind::kTensor && c.needs(3))
    c.set(3, op::call(rt, OpId::gather, c.grad(), c.int_arg(1), index));
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
    idx = op::call(rt, OpId::unsqueeze, idx, dim);
    g = op::call(rt, OpId::unsqueeze, g, dim);
  }
  R z = zeros_of(rt, m);
  c.set(0, op::call(rt, OpId::scatter_add, z, m.ndim > 0 ? dim : 0, idx, g));
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
  c.set(0, op::call(rt, OpId::index_put, z, list, c.grad(), true));
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
      R zero = op::call(rt, OpId::zeros, op::ints(nullptr, 0), g->dtype, op::none, device);
      c.set(0, op::call(rt, OpId::index_put, g, list, zero, false));
    }
  }
  if (c.needs(2)) c.set(2, op::call(rt, OpId::index_Tensor, g, list));
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
  if (index->dtype != TSR_INT64) index = op::call(rt, OpId::_to_copy, index, TSR_INT64);
  index = op::call(rt, OpId::reshape, index, op::ints(&n, 1));
  const int64_t rows_shape[2] = {n, dim};
  R rows = op::call(rt, OpId::reshape, g, op::ints(rows_shape, 2));
  R column = op::call(rt, OpId::unsqueeze, index, 1);
  const tsr_device device = m.device->device;
  if (c.bool_arg(3)) {
    R counts = op::call(rt, OpId::zeros, op::ints(m.sizes, 1), g->dtype, op::none, device);
    R ones = op::call(rt, OpId::ones_like, index, g->dtype);
    counts = op::call(rt, OpId::scatter_add, counts, 0, index, ones);
    R freq = op::call(rt, OpId::gather, counts, 0, index);
    freq = op::call(rt, OpId::unsqueeze, freq, 1);
    rows = op::call(rt, OpId::div_Tensor, rows, freq);
  }
  if (padding_idx >= 0) {
    R keep_row = op::call(rt, OpId::ne_Scalar, column, static_cast<int64_t>(padding_idx));
    R zeros = op::call(rt, OpId::zeros_like, rows);
    rows = op::call(rt, OpId::where_self, keep_row, rows, zeros);
  }
  R spread = op::call(rt, OpId::expand, column, op::ints(rows_shape, 2));
  R z = op::call(rt, OpId::zeros, op::ints(m.sizes, 2), g->dtype, op::none, device);
  c.set(0, op::call(rt, OpId::scatter_add, z, 0, spread, rows));
}
// masked_select(self, mask): g put back where mask (broadcast to self) holds.
void masked_select_f(BackwardContext& c) {
  Runtime* rt = c.runtime();
  const TensorMeta& m = c.input_meta(0);
  R z = zeros_of(rt, m);
  R mask = op::call(rt, OpId::expand, c.input(1).get(), op::ints(m.sizes, m.ndim));
  c.set(0, op::call(rt, OpId::masked_scatter, z, mask, c.grad()));
}
// masked_scatter(self, mask, source): self keeps g where the mask is off;
// source element j, the j-th one written, gets g at the j-th set position of
// the mask (in row-major order), and the unused tail of source gets 0.
void masked_scatter_f(BackwardContext& c) {
  Runtime* rt = c.runtime();
  TensorImpl* g = c.grad();
  R mask = c.input(1);
  if (c.needs(0)) {
    R zeros = op::call(rt, OpId::zeros_like, g);
    c.set(0, op::call(rt, OpId::where_self, mask, zeros, g));
  }
  if (c.needs(2)) {
    const TensorMeta& sm = c.input_meta(2);
    int64_t total = 1;
    for (int32_t d = 0; d < sm.ndim; ++d) total *= sm.sizes[d];
    R mask_b = op::call(rt, OpId::expand, mask, op::ints(g->sizes, g->ndim));
    R picked = op::call(rt, OpId::masked_select, g, mask_b);
    if (picked->numel < total) {
      const int64_t rest = total - picked->numel;
      R tail = op::call(rt, OpId::zeros, op::ints(&rest, 1), g->dtype, op::none, sm.device->device);
      TensorImpl* parts[2] = {picked.get(), tail.get()};
      picked = op::call(rt, OpId::cat, op::tensors(parts, 2), 0);
    }
    c.set(2, op::call(rt, OpId::reshape, picked, op::ints(sm.sizes, sm.ndim)));
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
  if (index->dtype != TSR_INT64) index = op::call(rt, OpId::_to_copy, index, TSR_INT64);
  const tsr_device device = m.device->device;
  if (c.is_none(2)) {
    int64_t total = 1;
    for (int32_t d = 0; d < m.ndim; ++d) total *= m.sizes[d];
    const int64_t minus_one = -1;
    R flat = op::call(rt, OpId::zeros, op::ints(&total, 1), g->dtype, op::none, device);
    R idx = op::call(rt, OpId::reshape, index, op::ints(&minus_one, 1));
    R gf = op::call(rt, OpId::reshape, g, op::ints(&minus_one, 1));
    flat = op::call(rt, OpId::scatter_add, flat, 0, idx, gf);
    c.set(0, op::call(rt, OpId::reshape, flat, op::ints(m.sizes, m.ndim)));
    return;
  }
  if (m.ndim == 0) {
    R z = zeros_of(rt, m);
    c.set(0, op::call(rt, OpId::scatter_add, z, 0, index, g));
    return;
  }
  int64_t dim = c.int_arg(2);
  if (dim < 0) dim += m.ndim;
  int64_t shape[TSR_MAX_DIMS];
  for (int32_t d = 0; d < g->ndim; ++d) shape[d] = d == dim ? m.sizes[d] : g->sizes[d];
  R z = op::call(rt, OpId::zeros, op::ints(shape, g->ndim), g->dtype, op::none, device);
  R idx = op::call(rt, OpId::expand, index, op::ints(g->sizes, g->ndim));
  c.set(0, op::call(rt, OpId::scatter_add, z, dim, idx, g));
}

// where(condition, self, Scalar other) / where(condition, Scalar self, other).
void where_scalar_other_f(BackwardContext& c) {
  Runtime* rt = c.runtime();
  R zeros = op::call(rt, OpId::zeros_like, c.grad());
  c.set(1, op::call(rt, OpId::where_self, c.input(0).get(), c.grad(), zeros));
}
void where_scalar_self_f(BackwardContext& c) {
  Runtime* rt = c.runtime();
  R zeros = op::call(rt, OpId::zeros_like, c.grad());
  c.set(2, op::call(rt, OpId::where_self, c.input(0).get(), zeros, c.grad()));
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
  auto gather = [&](const R& t) { return op::call(rt, OpId::gather, t, dim, index); };
  auto scatter_add = [&](const R& into, const R& what) {
    return op::call(rt, OpId::scatter_add, into, dim, index, what);
  };
  auto where = [&](const R& cond, const R& a, const R& b) {
    return op::call(rt, OpId::where_self, cond, a, b);
  };
  R zeros_g = op::call(rt, OpId::zeros_like, g);
  R ones_g = op::call(rt, OpId::ones_like, g);
  R count = scatter_add(zeros_g, op::call(rt, OpId::ones_like, src));
  R scattered = op::call(rt, OpId::gt_Scalar, count, 0.0);
  // Whether self[p] is a member of p's reduction.
  R self_member =
      include_self ? op::call(rt, OpId::ones_like, g) : where(scattered, zeros_g, ones_g);
  R grad_self, grad_src;
  if (reduce == "sum" || reduce == "mean") {
    R per = g;
    if (reduce == "mean") {
      R total = op::call(rt, OpId::add_Tensor, count, self_member);
      per = op::call(rt, OpId::div_Tensor, g, total);
    }
    grad_self = op::call(rt, OpId::mul_Tensor, per, self_member);
    grad_src = gather(per);
  } else if (reduce == "amax" || reduce == "amin") {
    R self = c.input(0);
    R result = c.result(0);
    auto as_float = [&](const R& mask) { return where(mask, ones_g, zeros_g); };
    R self_is = op::call(rt, OpId::mul_Tensor,
                         as_float(op::call(rt, OpId::eq_Tensor, self, result)), self_member);
    R src_ones = op::call(rt, OpId::ones_like, src);
    R src_zeros = op::call(rt, OpId::zeros_like, src);
    R src_is = where(op::call(rt, OpId::eq_Tensor, src, gather(result)), src_ones, src_zeros);
    R n = scatter_add(self_is, src_is);  // >= 1: the result is one of the members
    R per = op::call(rt, OpId::div_Tensor, g, n);
    grad_self = op::call(rt, OpId::mul_Tensor, self_is, per);
    grad_src = op::call(rt, OpId::mul_Tensor, src_is, gather(per));
  } else {  // prod
    R self = c.input(0);
    // Non-members count as 1; zeros are set aside.
    R self_m = where(op::call(rt, OpId::gt_Scalar, self_member, 0.0), self, ones_g);
    R self_zero = op::call(rt, OpId::eq_Scalar, self_m, 0.0);
    R src_zero = op::call(rt, OpId::eq_Scalar, src, 0.0);
    R src_ones = op::call(rt, OpId::ones_like, src);
    R src_zeros = op::call(rt, OpId::zeros_like, src);
    R self_nz = where(self_zero, ones_g, self_m);
    R src_nz = where(src_zero, src_ones, src);
    R zeros_count =
        scatter_add(where(self_zero, ones_g, zeros_g), where(src_zero, src_ones, src_zeros));
    R product = op::call(rt, OpId::scatter_reduce_two, self_nz, dim, index, src_nz, "prod", true);
    R gp = op::call(rt, OpId::mul_Tensor, g, product);
    R no_zero = op::call(rt, OpId::eq_Scalar, zeros_count, 0.0);
    R one_zero = op::call(rt, OpId::eq_Scalar, zeros_count, 1.0);
    // self: g P / self where no member is 0; g P for the single zero; else 0.
    R self_single = op::call(rt, OpId::logical_and, one_zero, self_zero);
    grad_self = where(no_zero, op::call(rt, OpId::div_Tensor, gp, self_nz),
                      where(self_single, gp, zeros_g));
    grad_self = op::call(rt, OpId::mul_Tensor, grad_self, self_member);
    R gp_src = gather(gp);
    R src_single = op::call(rt, OpId::logical_and, gather(one_zero), src_zero);
    grad_src = where(gather(no_zero), op::call(rt, OpId::div_Tensor, gp_src, src_nz),
                     where(src_single, gp_src, src_zeros));
  }
  if (c.needs(0)) c.set(0, grad_self);
  if (c.needs(3)) c.set(3, grad_src);
}

// scatter.value_reduce(self, dim, index, value, reduce): "add" adds a
// constant (gradient g); "multiply" multiplies each position by value once
// per index hitting it (gradient g value^count).
void scatter_value_reduce_f(BackwardContext& c) {
  R g = TensorRef::borrow(c.grad());
  const std::string reduce = c.arg(4).u.str != nullptr ? c.arg(4).u.str : "";
  if (reduce != "multiply") {
    c.set(0, g);
    return;
  }
  R index = c.input(2);
  R ones = op::call(OpId::ones_like, index);
  R count = op::call(OpId::scatter_add, op::zeros_like(g), c.int_arg(1), index,
                     op::call(OpId::_to_copy, ones, g->dtype));
  // (op::call takes the runtime from a first tensor argument; this one is a Scalar.)
  R factor =
      op::call(g->runtime, OpId::pow_Scalar, static_cast<double>(scalar_value(c.scalar(3))), count);
  c.set(0, op::mul(g, factor));
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
  f.add(OpId::scatter_value_reduce, scatter_value_reduce_f, arg_bit(2));
}

}  // namespace tsr::autograd
