// Advanced indexing: index.Tensor, index_put_/index_put, masked_select,
// masked_scatter_/masked_scatter, decomposed into gather, _scatter_ and
// nonzero (the family's primitives) plus views.
//
// PyTorch's rules (x[i0, None, m] as index.Tensor(x, [i0, None, m])):
//  - a bool (or uint8) mask covering k dims becomes the k columns of
//    nonzero(mask) (one two-phase call, Note [Two-phase calls]); a 0-d mask
//    indexes a new dim of size 1;
//  - integer index tensors (int64, int32) broadcast together to a shape B;
//    negative values count from the end; None entries and missing trailing
//    entries are full slices;
//  - the result is self's un-indexed dims with B in place of the indexed ones
//    when those are adjacent, else B first and then the un-indexed dims.
// Computation: self is permuted so the indexed dims lead and, for more than
// one, reshaped to one dim of N = prod(sizes) elements; negative indices are
// moved up by the dim's size (lt.Scalar and where.self of the pointwise
// family), the wrapped indices are combined row-major into one linear index L
// (shape B), and the result is a gather along dim 0 with L broadcast over the
// remaining dims (index_put_: a _scatter_, ASSIGN or ADD for accumulate). The
// kernels' bounds checks cover a single index; combined ones are checked first
// by a gather from a stride-0 dummy. An out-of-range index is reported with its
// own value, the entry and the dim (read on the host, on the error path only).
#include <cstring>
#include <vector>

#include "dispatch/op_api.h"
#include "ops/indexing/helpers.h"
#include "ops/op_impls.h"
#include "ops/op_util.h"
#include "runtime/runtime.h"
#include "tessera/opcodes.h"
#include "util/error.h"

namespace tsr::ops {

namespace {

// One indexed dim of `src`: its (int64) index tensor and where it came from.
struct DimIndex {
  TensorRef index;    // null: a full slice
  int32_t entry = 0;  // position in the user's list (for messages)
  bool from_mask = false;
};

struct Plan {
  TensorRef src;                 // self, with new dims for 0-d masks
  std::vector<DimIndex> dims;    // one per dim of src
  std::vector<int32_t> indexed;  // dims of src that have an index, ascending
  Shape b;                       // broadcast shape of the indices
  bool adjacent = true;          // indexed dims are consecutive
  Shape result;                  // the shape index.Tensor gives
};

bool is_mask(tsr_dtype d) { return d == TSR_BOOL || d == TSR_UINT8; }

std::string list_shapes(const std::vector<DimIndex>& dims) {
  std::string s;
  for (const DimIndex& d : dims) {
    if (!d.index) continue;
    if (!s.empty()) s += ", ";
    s += shape_str(d.index->ndim, d.index->sizes);
  }
  return s;
}

Plan make_plan(const OpDef& op, TensorImpl* self, const OpCall& c, int list_arg) {
  Plan p;
  p.src = TensorRef::borrow(self);
  int32_t n = c.list_size(list_arg);
  int32_t dim = 0;
  // First pass: count the dims the entries consume, for "too many indices".
  int32_t consumed = 0;
  for (int32_t j = 0; j < n; ++j) {
    TensorImpl* t = c.list_tensor(list_arg, j);
    consumed += (t && is_mask(t->dtype)) ? std::max<int32_t>(t->ndim, 0) : 1;
  }
  if (consumed > self->ndim)
    fail(TSR_OUT_OF_RANGE, "op '{}': too many indices for tensor of dimension {} ({} given)",
         op.name, self->ndim, consumed);
  for (int32_t j = 0; j < n; ++j) {
    TensorImpl* t = c.list_tensor(list_arg, j);
    if (t == nullptr) {
      p.dims.push_back({});
      ++dim;
      continue;
    }
    check_same_device(op, *self, *t, "self", "indices");
    if (is_mask(t->dtype)) {
      TensorRef mask = TensorRef::borrow(t);
      if (t->ndim == 0) {  // a new dim of size 1, indexed by [0] or []
        p.src = op::unsqueeze(p.src.get(), dim);
        int64_t one = 1;
        mask = op::view(t, op::ints(&one, 1));
      }
      for (int32_t k = 0; k < mask->ndim; ++k)
        if (mask->sizes[k] != p.src->sizes[dim + k])
          fail(TSR_OUT_OF_RANGE,
               "op '{}': argument 'indices' entry {}: the shape of the mask {} at index {} does "
               "not match the shape of the indexed tensor {} at index {}",
               op.name, j, shape_str(mask->ndim, mask->sizes), k,
               shape_str(p.src->ndim, p.src->sizes), dim + k);
      TensorRef nz = ix::nonzero_of(op, mask.get());
      for (int32_t k = 0; k < mask->ndim; ++k)
        p.dims.push_back({op::select(nz.get(), 1, k), j, true});
      dim += mask->ndim;
      continue;
    }
    if (t->dtype != TSR_INT64 && t->dtype != TSR_INT32)
      fail(TSR_OUT_OF_RANGE,
           "op '{}': argument 'indices' entry {} has dtype {}; tensors used as indices must be "
           "long, int, byte or bool tensors",
           op.name, j, dtype_name(t->dtype));
    p.dims.push_back({ix::long_index(op, t, "indices"), j, false});
    ++dim;
  }
  while (static_cast<int32_t>(p.dims.size()) < p.src->ndim) p.dims.push_back({});

  for (int32_t d = 0; d < p.src->ndim; ++d) {
    const DimIndex& di = p.dims[static_cast<size_t>(d)];
    if (!di.index) continue;
    if (!p.indexed.empty() && p.indexed.back() != d - 1) p.adjacent = false;
    if (p.indexed.empty()) {
      p.b = shape_of(*di.index);
    } else {
      // Broadcast with PyTorch's message on mismatch.
      Shape next;
      const TensorImpl& t = *di.index;
      next.ndim = std::max(p.b.ndim, t.ndim);
      for (int32_t i = 0; i < next.ndim; ++i) {
        int32_t ai = i - (next.ndim - p.b.ndim), bi = i - (next.ndim - t.ndim);
        int64_t x = ai >= 0 ? p.b.sizes[ai] : 1, y = bi >= 0 ? t.sizes[bi] : 1;
        if (x != y && x != 1 && y != 1)
          fail(TSR_OUT_OF_RANGE,
               "op '{}': shape mismatch: indexing tensors could not be broadcast together with "
               "shapes {}",
               op.name, list_shapes(p.dims));
        next.sizes[i] = x == 1 ? y : x;
      }
      p.b = next;
    }
    p.indexed.push_back(d);
  }

  // The result's shape.
  const TensorImpl& s = *p.src;
  Shape& r = p.result;
  auto append = [&r](int64_t size) { r.sizes[r.ndim++] = size; };
  auto append_b = [&] {
    if (r.ndim + p.b.ndim > TSR_MAX_DIMS)
      fail(TSR_INVALID_ARGUMENT, "op '{}': the indexing result would have more than {} dims",
           op.name, TSR_MAX_DIMS);
    for (int32_t i = 0; i < p.b.ndim; ++i) append(p.b.sizes[i]);
  };
  if (p.indexed.empty()) {
    r = shape_of(s);
  } else if (p.adjacent) {
    for (int32_t d = 0; d < p.indexed.front(); ++d) append(s.sizes[d]);
    append_b();
    for (int32_t d = p.indexed.back() + 1; d < s.ndim; ++d) append(s.sizes[d]);
  } else {
    append_b();
    for (int32_t d = 0; d < s.ndim; ++d)
      if (!p.dims[static_cast<size_t>(d)].index) append(s.sizes[d]);
  }
  return p;
}

// Reports the first index outside [-size, size) of the plan's integer index
// tensors (the error path of a kernel's bounds check: reads them to the host).
[[noreturn]] void report_out_of_range(const OpDef& op, const Plan& p, const Error& original) {
  for (int32_t d : p.indexed) {
    const DimIndex& di = p.dims[static_cast<size_t>(d)];
    if (di.from_mask) continue;  // nonzero() results are in range
    int64_t size = p.src->sizes[d];
    std::vector<int64_t> host(static_cast<size_t>(di.index->numel));
    read_to_host(di.index.get(), host.data());
    for (int64_t v : host)
      if (v < -size || v >= size)
        fail(TSR_OUT_OF_RANGE,
             "op '{}': argument 'indices' entry {}: index {} is out of bounds for dimension {} "
             "with size {}",
             op.name, di.entry, v, d, size);
  }
  throw original;
}

// Runs `f` (a kernel call whose bounds check covers the plan's indices) and
// turns an out-of-range failure into report_out_of_range's message.
template <class F>
void with_index_report(const OpDef& op, const Plan& p, F&& f) {
  try {
    f();
  } catch (const Error& e) {
    if (e.code() != TSR_OUT_OF_RANGE) throw;
    report_out_of_range(op, p, e);
  }
}

// `di.index` with negative values moved up by `size` (where(i < 0, i + size,
// i)); values outside [-size, size) stay outside [0, size), so the kernel
// that uses the result still rejects them.
TensorRef wrap_index(const DimIndex& di, int64_t size) {
  TensorImpl* index = di.index.get();
  if (di.from_mask) return di.index;
  constexpr OpId lt = OpId::lt_Scalar;
  constexpr OpId where = OpId::where_self;
  TensorRef negative = op::call(index->runtime, lt, index, int64_t{0});
  TensorRef shifted = op::call(index->runtime, OpId::add_Scalar, index, static_cast<int64_t>(size));
  return op::call(index->runtime, where, negative, shifted, index);
}

// Bounds-checks wrapped indices `w` against `size` with a gather from a
// stride-0 dummy (no memory read beyond one element). Needed where indices
// are combined before any kernel sees them.
void check_wrapped(const OpDef& op, const Plan& p, TensorImpl* w, int64_t size) {
  if (w->numel == 0) return;
  TensorRef cell = ix::scalar(w, scalar_int(0), TSR_BOOL);
  TensorRef dummy = op::expand(cell.get(), Shape{1, {size}});
  TensorRef flat = op::flatten(w);
  TensorRef sink = op::empty(w, TSR_BOOL, shape_of(*flat));
  with_index_report(op, p, [&] { ix::gather_into(op, dummy.get(), 0, flat.get(), sink.get()); });
}

// The row-major linear index over the indexed dims (shape p.b), and the
// source permuted/reshaped to [N, rest...]. For writes (`for_write`), `src` is
// a view of p.src when one exists; otherwise it views a contiguous copy
// (`work`) that the caller copies back into `writeback` afterwards.
struct Linear {
  TensorRef index;      // int64, shape p.b
  TensorRef src;        // [N, rest...]
  Shape rest;           // the un-indexed dims of src, in order
  TensorRef work;       // set when src views a copy
  TensorRef writeback;  // where `work` goes back (a permuted view of p.src)
};

void linearize(const OpDef& op, Plan& p, TensorImpl* src, bool for_write, Linear* out) {
  const int32_t m = static_cast<int32_t>(p.indexed.size());
  int64_t perm[TSR_MAX_DIMS];
  int32_t k = 0;
  for (int32_t d : p.indexed) perm[k++] = d;
  Shape rest;
  for (int32_t d = 0; d < src->ndim; ++d)
    if (!p.dims[static_cast<size_t>(d)].index) {
      perm[k++] = d;
      rest.sizes[rest.ndim++] = src->sizes[d];
    }
  TensorRef permuted = op::permute(src, op::ints(perm, src->ndim));
  Shape flat;
  flat.ndim = 1 + rest.ndim;
  flat.sizes[0] = 1;
  for (int32_t d : p.indexed) flat.sizes[0] *= src->sizes[d];
  for (int32_t i = 0; i < rest.ndim; ++i) flat.sizes[1 + i] = rest.sizes[i];
  if (m == 1) {
    out->src = permuted;
  } else {
    int64_t strides[TSR_MAX_DIMS];
    if (compute_view_strides(permuted->ndim, permuted->sizes, permuted->strides, flat.ndim,
                             flat.sizes, strides)) {
      out->src = op::view(permuted.get(), flat);
    } else if (for_write) {
      out->work = contiguous_of(permuted.get());
      out->writeback = permuted;
      out->src = op::view(out->work.get(), flat);
    } else {
      out->src = op::reshape(permuted.get(), flat);
    }
  }
  out->rest = rest;
  if (src->device()->is_meta) return;
  // L = sum_k wrap(I_k) * prod(sizes of the later indexed dims).
  TensorRef linear;
  int64_t multiplier = 1;
  for (int32_t i = m - 1; i >= 0; --i) {
    int32_t d = p.indexed[static_cast<size_t>(i)];
    const DimIndex& di = p.dims[static_cast<size_t>(d)];
    TensorRef w = wrap_index(di, src->sizes[d]);
    if (m > 1 && !di.from_mask) check_wrapped(op, p, w.get(), src->sizes[d]);
    if (multiplier != 1)
      w = op::call(w.get()->runtime, OpId::mul_Scalar, w, static_cast<int64_t>(multiplier));
    linear = linear ? op::call(w.get()->runtime, OpId::add_Tensor, linear, w) : w;
    multiplier *= src->sizes[d];
  }
  out->index = op::expand(linear.get(), p.b);
}

// The gather/scatter index over [nB, rest...]: L flattened along dim 0.
TensorRef spread_index(TensorImpl* linear, const Shape& rest) {
  TensorRef flat = op::reshape(linear, Shape{1, {linear->numel}});
  Shape col, full;
  col.ndim = full.ndim = 1 + rest.ndim;
  col.sizes[0] = full.sizes[0] = linear->numel;
  for (int32_t i = 0; i < rest.ndim; ++i) {
    col.sizes[1 + i] = 1;
    full.sizes[1 + i] = rest.sizes[i];
  }
  TensorRef v = op::view(flat.get(), col);
  return op::expand(v.get(), full);
}

// The permutation from the result's dims to [B..., rest...] (identity unless
// the indexed dims were adjacent and not leading).
void result_to_b_first(const Plan& p, int64_t* perm) {
  int32_t nb = p.b.ndim, nd = p.result.ndim;
  int32_t lead = (p.adjacent && !p.indexed.empty()) ? p.indexed.front() : 0;
  int32_t k = 0;
  for (int32_t i = 0; i < nb; ++i) perm[k++] = lead + i;
  for (int32_t i = 0; i < lead; ++i) perm[k++] = i;
  for (int32_t i = lead + nb; i < nd; ++i) perm[k++] = i;
}

// [nB, rest...] view of `t` (shaped like the result).
TensorRef as_rows(TensorImpl* t, const Plan& p, const Shape& rest) {
  int64_t perm[TSR_MAX_DIMS];
  result_to_b_first(p, perm);
  TensorRef b_first = op::permute(t, op::ints(perm, t->ndim));
  Shape rows;
  rows.ndim = 1 + rest.ndim;
  rows.sizes[0] = shape_numel(p.b);
  for (int32_t i = 0; i < rest.ndim; ++i) rows.sizes[1 + i] = rest.sizes[i];
  return op::reshape(b_first.get(), rows);
}

TensorRef index_impl(const OpDef& op, TensorImpl* self, const OpCall& c, int list_arg) {
  Plan p = make_plan(op, self, c, list_arg);
  if (p.indexed.empty()) return op::call(self->runtime, OpId::clone, self);
  TensorRef result = op::empty(self, self->dtype, p.result);
  if (self->device()->is_meta || result->numel == 0) return result;
  Linear lin;
  linearize(op, p, p.src.get(), false, &lin);
  TensorRef index = spread_index(lin.index.get(), lin.rest);
  TensorRef rows = as_rows(result.get(), p, lin.rest);  // a view: result is contiguous
  with_index_report(op, p, [&] { ix::gather_into(op, lin.src.get(), 0, index.get(), rows.get()); });
  return result;
}

void index_put_impl(const OpDef& op, TensorImpl* self, const OpCall& c, int list_arg,
                    TensorImpl* values, bool accumulate) {
  check_same_device(op, *self, *values, "self", "values");
  if (values->dtype != self->dtype)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': Index put requires the source and destination dtypes match, got {} for the "
         "destination and {} for the source; convert 'values' with to()",
         op.name, dtype_name(self->dtype), dtype_name(values->dtype));
  assert_no_internal_overlap(*self, op.name.c_str(), "self");
  ix::check_no_overlap(op, *self, "self", *values, "values");
  Plan p = make_plan(op, self, c, list_arg);
  // values must broadcast to the indexing result's shape.
  bool ok = values->ndim <= p.result.ndim;
  for (int32_t i = 1; ok && i <= values->ndim; ++i) {
    int64_t v = values->sizes[values->ndim - i], r = p.result.sizes[p.result.ndim - i];
    ok = v == r || v == 1;
  }
  if (!ok)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': shape mismatch: value tensor of shape {} cannot be broadcast to indexing "
         "result of shape {}",
         op.name, shape_str(values->ndim, values->sizes), shape_str(p.result.ndim, p.result.sizes));
  if (p.indexed.empty()) {
    if (accumulate)
      op::call(self->runtime, OpId::add__Tensor, self, values);
    else
      op::copy_(self, values);
    return;
  }
  if (self->device()->is_meta || shape_numel(p.result) == 0) {
    self->bump_version();
    return;
  }
  // Write through a view of self, or through a contiguous copy copied back.
  Linear lin;
  linearize(op, p, p.src.get(), true, &lin);
  TensorRef expanded = op::expand(values, p.result);
  TensorRef rows = as_rows(expanded.get(), p, lin.rest);
  TensorRef index = spread_index(lin.index.get(), lin.rest);
  with_index_report(op, p, [&] {
    ix::scatter_into(op, lin.src.get(), 0, index.get(), rows.get(),
                     accumulate ? TSR_SCATTER_ADD : TSR_SCATTER_ASSIGN);
  });
  if (lin.work) copy_raw(lin.writeback.get(), lin.work.get());
  self->bump_version();
}

// `mask` (bool or uint8) and `t` broadcast together, flattened.
void masked_operands(const OpDef& op, TensorImpl* t, const char* t_name, TensorImpl* mask,
                     const Shape& shape, TensorRef* flat_t, TensorRef* flat_mask) {
  if (!is_mask(mask->dtype))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'mask' has dtype {}; {}: expected BoolTensor or ByteTensor for mask",
         op.name, dtype_name(mask->dtype), op.name);
  check_same_device(op, *t, *mask, t_name, "mask");
  TensorRef mb = op::expand(mask, shape);
  *flat_mask = op::flatten(mb.get());
  if (flat_t) {
    TensorRef tb = op::expand(t, shape);
    *flat_t = op::flatten(tb.get());
  }
}

void masked_scatter_impl(const OpDef& op, TensorImpl* self, TensorImpl* mask, TensorImpl* source) {
  check_same_device(op, *self, *source, "self", "source");
  if (source->dtype != self->dtype)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': masked_scatter: expected self and source to have same dtypes but got {} and "
         "{}",
         op.name, dtype_name(self->dtype), dtype_name(source->dtype));
  Shape shape = shape_of(*self);
  bool fits = mask->ndim <= shape.ndim;
  for (int32_t i = 1; fits && i <= mask->ndim; ++i) {
    int64_t m = mask->sizes[mask->ndim - i];
    fits = m == shape.sizes[shape.ndim - i] || m == 1;
  }
  if (!fits)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'mask' of shape {} cannot be broadcast to the shape {} of 'self'",
         op.name, shape_str(mask->ndim, mask->sizes), shape_str(shape.ndim, shape.sizes));
  assert_no_internal_overlap(*self, op.name.c_str(), "self");
  ix::check_no_overlap(op, *self, "self", *source, "source");
  TensorRef flat_mask;
  masked_operands(op, self, "self", mask, shape, nullptr, &flat_mask);
  if (self->device()->is_meta) {
    self->bump_version();
    return;
  }
  TensorRef nz = ix::nonzero_of(op, flat_mask.get());  // [n, 1]
  int64_t n = nz->sizes[0];
  if (source->numel < n)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': Number of elements of source < number of ones in mask ({} < {})", op.name,
         source->numel, n);
  if (n > 0) {
    TensorRef positions = op::view(nz.get(), Shape{1, {n}});
    TensorRef src_flat = op::flatten(source);
    TensorRef src_used = op::slice(src_flat.get(), 0, 0, n);
    TensorRef target = TensorRef::borrow(self);
    int64_t strides[TSR_MAX_DIMS];
    int64_t all = self->numel;
    bool direct = compute_view_strides(self->ndim, self->sizes, self->strides, 1, &all, strides);
    if (!direct) target = contiguous_of(self);
    TensorRef flat_self = op::flatten(target.get());
    ix::scatter_into(op, flat_self.get(), 0, positions.get(), src_used.get(), TSR_SCATTER_ASSIGN);
    if (!direct) copy_raw(self, target.get());
  }
  self->bump_version();
}

}  // namespace

void index_Tensor(OpCall& c) { c.set_result(index_impl(*c.op, c.tensor(0), c, 1)); }

void index_put_(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  index_put_impl(*c.op, self, c, 1, c.tensor(2), c.bool_arg(3));
  c.set_result(TensorRef::borrow(self));
}

void index_put(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  TensorRef out = op::call(self->runtime, OpId::clone, self);
  index_put_impl(*c.op, out.get(), c, 1, c.tensor(2), c.bool_arg(3));
  c.set_result(std::move(out));
}

void masked_select(OpCall& c) {
  const OpDef& op = *c.op;
  TensorImpl* self = c.tensor(0);
  TensorImpl* mask = c.tensor(1);
  if (!is_mask(mask->dtype))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'mask' has dtype {}; masked_select: expected BoolTensor or "
         "ByteTensor for mask",
         op.name, dtype_name(mask->dtype));
  Shape shape = broadcast_shapes(self->ndim, self->sizes, mask->ndim, mask->sizes);
  TensorRef flat_self, flat_mask;
  masked_operands(op, self, "self", mask, shape, &flat_self, &flat_mask);
  TensorRef nz = ix::nonzero_of(op, flat_mask.get());  // [n, 1]
  int64_t n = nz->sizes[0];
  TensorRef out = op::empty(self, self->dtype, {n});
  TensorRef positions = op::view(nz.get(), Shape{1, {n}});
  ix::gather_into(op, flat_self.get(), 0, positions.get(), out.get());
  c.set_result(std::move(out));
}

void masked_scatter_(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  masked_scatter_impl(*c.op, self, c.tensor(1), c.tensor(2));
  c.set_result(TensorRef::borrow(self));
}

void masked_scatter(OpCall& c) {
  const OpDef& op = *c.op;
  TensorImpl* self = c.tensor(0);
  TensorImpl* mask = c.tensor(1);
  Shape shape = broadcast_shapes(self->ndim, self->sizes, mask->ndim, mask->sizes);
  TensorRef expanded = op::expand(self, shape);
  TensorRef out = contiguous_of(expanded.get());
  if (out.get() == self || out->storage == self->storage)
    out = op::call(self->runtime, OpId::clone, self);
  masked_scatter_impl(op, out.get(), mask, c.tensor(2));
  c.set_result(std::move(out));
}

}  // namespace tsr::ops
