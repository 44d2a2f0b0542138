// Sorting and searching: sort.stable (primitive) with sort/argsort routed to
// it, topk and kthvalue over it, searchsorted.Tensor (primitive) with
// searchsorted.Scalar and bucketize routed to it, and unique (_unique2,
// unique_consecutive) composed from sort, nonzero (one two-phase call),
// gather, _scatter_ and a cumulative sum.
//
// Order: NaN sorts above +inf (PyTorch's), the sort is always stable (equal
// elements keep their order, ascending and descending). topk returns the k
// first of a stable sort (largest: descending), so ties keep index order.
// unique treats NaNs as distinct values (each NaN is its own entry, as
// torch.unique does on CPU).
#include <string_view>

#include "dispatch/kernel_call.h"
#include "dispatch/op_api.h"
#include "dispatch/values.h"
#include "ops/indexing/helpers.h"
#include "ops/op_impls.h"
#include "ops/op_util.h"
#include "runtime/runtime.h"
#include "tessera/opcodes.h"
#include "util/error.h"

namespace tsr::ops {

namespace {

void check_sortable(const OpDef& op, const TensorImpl& self) {
  if (is_complex(self.dtype))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'self' is {}; complex numbers have no order (sort is not "
         "implemented for complex dtypes)",
         op.name, dtype_name(self.dtype));
}

void sort_impl(OpCall& c, int dim_arg, int descending_arg, bool want_values) {
  TensorImpl* self = c.tensor(0);
  check_sortable(*c.op, *self);
  int32_t dim = wrap_dim(c.int_arg(dim_arg), self->ndim, "dim");
  TensorRef values, indices;
  ix::sort_of(*c.op, self, dim, c.bool_arg(descending_arg), &values, &indices);
  if (want_values) c.set_result(std::move(values));
  c.set_result(std::move(indices));
}

// Resolves side/right (PyTorch's rules): true for "right".
bool resolve_right(const OpDef& op, const OpCall& c, int right_arg, int side_arg) {
  bool right = c.bool_arg(right_arg);
  if (side_arg < 0 || c.is_none(side_arg)) return right;
  std::string_view side(c.args[side_arg].u.str);
  if (side != "left" && side != "right")
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'side' = '{}': torch.searchsorted(): side can only be 'left' or "
         "'right'",
         op.name, side);
  if (side == "left" && right)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': torch.searchsorted(): side and right can't be set to opposites, got side of "
         "left while right was True",
         op.name);
  return side == "right";
}

// searchsorted with everything resolved: boundaries `seq` (1-d or matching
// self's leading dims), values `self`, optional sorter.
TensorRef searchsorted_impl(const OpDef& op, TensorImpl* seq, TensorImpl* self, bool out_int32,
                            bool right, TensorImpl* sorter) {
  check_same_device(op, *seq, *self, "sorted_sequence", "self");
  if (seq->ndim == 0)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'sorted_sequence' is 0-d; boundaries tensor should be 1 dimension "
         "or the first N-1 dimensions of boundaries tensor and input value tensor must match",
         op.name);
  bool match = seq->ndim == 1;
  if (!match && seq->ndim == self->ndim) {
    match = true;
    for (int32_t d = 0; d + 1 < seq->ndim; ++d) match = match && seq->sizes[d] == self->sizes[d];
  }
  if (!match)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': torch.searchsorted(): boundaries tensor should be 1 dimension or the first "
         "N-1 dimensions of boundaries tensor and input value tensor must match, but we got "
         "boundaries tensor {} and input value tensor {}",
         op.name, shape_str(seq->ndim, seq->sizes), shape_str(self->ndim, self->sizes));
  if (is_complex(seq->dtype) || is_complex(self->dtype) || seq->dtype == TSR_BOOL ||
      self->dtype == TSR_BOOL)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': searchsorted needs real, non-bool inputs, got {} boundaries and {} values",
         op.name, dtype_name(seq->dtype), dtype_name(self->dtype));
  TensorRef boundaries = TensorRef::borrow(seq);
  if (sorter) {
    check_same_device(op, *seq, *sorter, "sorted_sequence", "sorter");
    if (sorter->dtype != TSR_INT64)
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': argument 'sorter' has dtype {}; torch.searchsorted(): sorter must be a "
           "tensor of long dtype",
           op.name, dtype_name(sorter->dtype));
    if (!same_shape(*sorter, shape_of(*seq)))
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': torch.searchsorted(): boundary and sorter must have the same size, but got "
           "boundary tensor {} and got sorter tensor {}",
           op.name, shape_str(seq->ndim, seq->sizes), shape_str(sorter->ndim, sorter->sizes));
    boundaries = op::empty(seq, seq->dtype, shape_of(*seq));
    ix::gather_into(op, seq, seq->ndim - 1, sorter, boundaries.get());
  }
  tsr_dtype common = promote_types(seq->dtype, self->dtype);
  TensorRef b = cast(boundaries.get(), common);
  TensorRef v = cast(self, common);
  tsr_dtype out_dtype = out_int32 ? TSR_INT32 : TSR_INT64;
  TensorRef out = op::empty(self, out_dtype, shape_of(*self));
  DeviceRecord* dev = self->device();
  if (dev->is_meta || out->numel == 0) return out;
  if (b->sizes[b->ndim - 1] == 0) {
    fill_raw(out.get(), scalar_int(0));
    return out;
  }
  tsr_dtype dts[3] = {common, common, TSR_INT64};
  const BoundKernel& k = find_kernel(op, OpId::searchsorted_Tensor, dev, dts, 2);
  tsr_tensor_desc db = b->desc(), dv = v->desc(), dout = out->desc();
  tsr_value args[6];
  args[0] = tsr_value{};
  args[0].tag = TSR_VALUE_TENSOR;
  args[0].u.desc = &db;
  args[1] = tsr_value{};
  args[1].tag = TSR_VALUE_TENSOR;
  args[1].u.desc = &dv;
  args[2] = v_bool(out_int32);
  args[3] = v_bool(right);
  args[4] = v_none();
  args[5] = v_none();
  invoke_kernel(op, k, dev, args, 6, &dout, 1);
  return out;
}

// A 0-d tensor holding a Scalar value (its own dtype kind) next to `like`.
TensorRef scalar_value(TensorImpl* like, const tsr_scalar& s) {
  return ix::scalar(like, s, static_cast<tsr_dtype>(s.kind == TSR_BOOL ? TSR_INT64 : s.kind));
}

// The unique-value machinery on a flat, ordered sequence `vals` (n >= 1):
// `first` marks the start of each run of equal values.
TensorRef run_starts(const OpDef& op, TensorImpl* vals) {
  int64_t n = vals->numel;
  TensorRef first = op::empty(vals, TSR_BOOL, {n});
  TensorRef head = op::slice(first.get(), 0, 0, 1);
  fill_raw(head.get(), scalar_int(1));
  if (n > 1) {
    constexpr OpId ne = OpId::ne_Tensor;
    TensorRef later = op::slice(vals, 0, 1, n);
    TensorRef earlier = op::slice(vals, 0, 0, n - 1);
    TensorRef differs = op::call(vals->runtime, ne, later, earlier);
    TensorRef tail = op::slice(first.get(), 0, 1, n);
    copy_raw(tail.get(), differs.get());
  }
  (void)op;
  return first;
}

// cumsum(first) - 1: the run number of each element.
TensorRef run_numbers(TensorImpl* first) {
  constexpr OpId cumsum = OpId::cumsum;
  TensorRef cs = op::call(first->runtime, cumsum, first, 0, TSR_INT64);
  return op::call(cs.get()->runtime, OpId::sub_Scalar, cs, int64_t{1});
}

// counts[i] = starts[i + 1] - starts[i] (with starts[u] = n).
TensorRef run_counts(TensorImpl* starts, int64_t n) {
  int64_t u = starts->numel;
  TensorRef ends = op::empty(starts, TSR_INT64, {u});
  if (u > 1) {
    TensorRef head = op::slice(ends.get(), 0, 0, u - 1);
    TensorRef next = op::slice(starts, 0, 1, u);
    copy_raw(head.get(), next.get());
  }
  TensorRef last = op::slice(ends.get(), 0, u - 1, u);
  fill_raw(last.get(), scalar_int(n));
  return op::call(starts->runtime, OpId::sub_Tensor, ends, starts);
}

// unique over the flattened `self`. `sort` orders first (else consecutive
// runs); returns values, inverse (self's shape) and counts as requested
// (empty 1-d tensors otherwise, as PyTorch does).
void unique_flat(OpCall& c, TensorImpl* self, bool sort, bool want_inverse, bool want_counts) {
  const OpDef& op = *c.op;
  if (sort) check_sortable(op, *self);
  TensorRef flat = op::flatten(self);
  int64_t n = flat->numel;
  TensorRef empty_long = op::empty(self, TSR_INT64, {0});
  if (n == 0) {
    c.set_result(op::empty(self, self->dtype, {0}));
    c.set_result(want_inverse ? op::empty(self, TSR_INT64, shape_of(*self)) : empty_long);
    c.set_result(want_counts ? op::empty(self, TSR_INT64, {0}) : empty_long);
    return;
  }
  TensorRef vals = flat, perm;
  if (sort) ix::sort_of(op, flat.get(), 0, false, &vals, &perm);
  TensorRef first = run_starts(op, vals.get());
  TensorRef nz = ix::nonzero_of(op, first.get());  // [u, 1]: the one synchronisation
  int64_t u = nz->sizes[0];
  TensorRef starts = op::view(nz.get(), Shape{1, {u}});
  TensorRef values = op::empty(self, self->dtype, {u});
  ix::gather_into(op, vals.get(), 0, starts.get(), values.get());
  c.set_result(std::move(values));
  if (want_inverse) {
    TensorRef numbers = run_numbers(first.get());
    TensorRef inverse;
    if (sort) {
      inverse = op::empty(self, TSR_INT64, {n});
      ix::scatter_into(op, inverse.get(), 0, perm.get(), numbers.get(), TSR_SCATTER_ASSIGN);
    } else {
      inverse = numbers;
    }
    c.set_result(op::view(inverse.get(), shape_of(*self)));
  } else {
    c.set_result(empty_long);
  }
  c.set_result(want_counts ? run_counts(starts.get(), n) : empty_long);
}

// unique_consecutive along `dim`: runs of equal slices.
void unique_consecutive_dim(OpCall& c, TensorImpl* self, int32_t dim, bool want_inverse,
                            bool want_counts) {
  const OpDef& op = *c.op;
  int64_t n = self->sizes[dim];
  TensorRef empty_long = op::empty(self, TSR_INT64, {0});
  if (n == 0 || self->numel == 0) {
    c.set_result(op::call(self->runtime, OpId::clone, self));
    c.set_result(want_inverse ? op::empty(self, TSR_INT64, {n}) : empty_long);
    c.set_result(want_counts ? op::empty(self, TSR_INT64, {n > 0 ? 1 : 0}) : empty_long);
    if (want_counts && n > 0) fill_raw(c.results[2].get(), scalar_int(n));
    return;
  }
  // first[j]: slice j differs from slice j-1 anywhere.
  TensorRef first = op::empty(self, TSR_BOOL, {n});
  TensorRef head = op::slice(first.get(), 0, 0, 1);
  fill_raw(head.get(), scalar_int(1));
  if (n > 1) {
    constexpr OpId ne = OpId::ne_Tensor;
    constexpr OpId any_dim = OpId::any_dim;
    TensorRef later = op::transpose(op::slice(self, dim, 1, n).get(), 0, dim);
    TensorRef earlier = op::transpose(op::slice(self, dim, 0, n - 1).get(), 0, dim);
    TensorRef differs = op::call(self->runtime, ne, later, earlier);
    Shape rows{2, {n - 1, -1}};
    TensorRef flat = op::reshape(differs.get(), rows);
    TensorRef any = op::call(self->runtime, any_dim, flat, 1);
    TensorRef tail = op::slice(first.get(), 0, 1, n);
    copy_raw(tail.get(), any.get());
  }
  TensorRef nz = ix::nonzero_of(op, first.get());
  int64_t u = nz->sizes[0];
  TensorRef starts = op::view(nz.get(), Shape{1, {u}});
  c.set_result(op::call(self->runtime, OpId::index_select, self, dim, starts));
  c.set_result(want_inverse ? run_numbers(first.get()) : empty_long);
  c.set_result(want_counts ? run_counts(starts.get(), n) : empty_long);
}

}  // namespace

void sort_stable(OpCall& c) { sort_impl(c, 2, 3, true); }
void sort(OpCall& c) { sort_impl(c, 1, 2, true); }
void argsort(OpCall& c) { sort_impl(c, 1, 2, false); }
void argsort_stable(OpCall& c) { sort_impl(c, 2, 3, false); }

void topk(OpCall& c) {
  const OpDef& op = *c.op;
  TensorImpl* self = c.tensor(0);
  check_sortable(op, *self);
  int64_t k = c.int_arg(1);
  int32_t dim = wrap_dim(c.int_arg(2), self->ndim, "dim");
  int64_t size = self->ndim == 0 ? 1 : self->sizes[dim];
  if (k < 0 || k > size)
    fail(TSR_OUT_OF_RANGE,
         "op '{}': argument 'k' = {}: selected index k out of range (dim {} has size {})", op.name,
         k, dim, size);
  TensorRef values, indices;
  ix::sort_of(op, self, dim, c.bool_arg(3), &values, &indices);
  if (self->ndim == 0) {
    c.set_result(std::move(values));
    c.set_result(std::move(indices));
    return;
  }
  TensorRef v = op::slice(values.get(), dim, 0, k);
  TensorRef i = op::slice(indices.get(), dim, 0, k);
  c.set_result(contiguous_of(v.get()));
  c.set_result(contiguous_of(i.get()));
}

void kthvalue(OpCall& c) {
  const OpDef& op = *c.op;
  TensorImpl* self = c.tensor(0);
  check_sortable(op, *self);
  int64_t k = c.int_arg(1);
  int32_t dim = wrap_dim(c.int_arg(2), self->ndim, "dim");
  bool keepdim = c.bool_arg(3);
  int64_t size = self->ndim == 0 ? 1 : self->sizes[dim];
  if (k < 1 || k > size)
    fail(TSR_OUT_OF_RANGE,
         "op '{}': argument 'k' = {}: kthvalue(): selected number k out of range for dimension "
         "{} (size {})",
         op.name, k, dim, size);
  TensorRef values, indices;
  ix::sort_of(op, self, dim, false, &values, &indices);
  if (self->ndim == 0) {
    c.set_result(std::move(values));
    c.set_result(std::move(indices));
    return;
  }
  TensorRef v = op::select(values.get(), dim, k - 1);
  TensorRef i = op::select(indices.get(), dim, k - 1);
  if (keepdim) {
    v = op::unsqueeze(v.get(), dim);
    i = op::unsqueeze(i.get(), dim);
  }
  c.set_result(contiguous_of(v.get()));
  c.set_result(contiguous_of(i.get()));
}

void searchsorted_Tensor(OpCall& c) {
  bool right = resolve_right(*c.op, c, 3, 4);
  c.set_result(
      searchsorted_impl(*c.op, c.tensor(0), c.tensor(1), c.bool_arg(2), right, c.opt_tensor(5)));
}

void searchsorted_Scalar(OpCall& c) {
  bool right = resolve_right(*c.op, c, 3, 4);
  TensorRef value = scalar_value(c.tensor(0), c.scalar(1));
  c.set_result(
      searchsorted_impl(*c.op, c.tensor(0), value.get(), c.bool_arg(2), right, c.opt_tensor(5)));
}

void bucketize_Tensor(OpCall& c) {
  TensorImpl* boundaries = c.tensor(1);
  if (boundaries->ndim != 1)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'boundaries' has {} dims; boundaries tensor must be 1 dimension",
         c.op->name, boundaries->ndim);
  c.set_result(
      searchsorted_impl(*c.op, boundaries, c.tensor(0), c.bool_arg(2), c.bool_arg(3), nullptr));
}

void bucketize_Scalar(OpCall& c) {
  TensorImpl* boundaries = c.tensor(1);
  if (boundaries->ndim != 1)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'boundaries' has {} dims; boundaries tensor must be 1 dimension",
         c.op->name, boundaries->ndim);
  TensorRef value = scalar_value(boundaries, c.scalar(0));
  c.set_result(
      searchsorted_impl(*c.op, boundaries, value.get(), c.bool_arg(2), c.bool_arg(3), nullptr));
}

void unique2(OpCall& c) {
  // sorted=False may return any order; sorted order is one.
  unique_flat(c, c.tensor(0), true, c.bool_arg(2), c.bool_arg(3));
}

void unique_consecutive(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  if (c.is_none(3)) {
    unique_flat(c, self, false, c.bool_arg(1), c.bool_arg(2));
    return;
  }
  int32_t dim = wrap_dim(c.int_arg(3), self->ndim, "dim");
  if (self->ndim == 0) {
    unique_flat(c, self, false, c.bool_arg(1), c.bool_arg(2));
    return;
  }
  unique_consecutive_dim(c, self, dim, c.bool_arg(1), c.bool_arg(2));
}

}  // namespace tsr::ops
