// The indexing family's gather and _scatter_ (primitives) with the ops
// routed to them (gather.out, scatter in all its overloads, scatter_add,
// index_select, take_along_dim, scatter_reduce), and nonzero/argwhere.
// Advanced indexing (index.Tensor, index_put_, masked_*) is in
// indexing/advanced.cpp; sorting and searching in indexing/sort.cpp.
//
// Shapes follow PyTorch's scatter/gather rules: index has self's number of
// dims (a 0-d tensor counts as 1-d), index.size(d) <= self.size(d) for
// d != dim and, for scatter, index.size(d) <= src.size(d); the kernels check
// every index value against self.size(dim) and report the first bad one.
#include <cmath>
#include <cstring>
#include <limits>
#include <string_view>

#include "dispatch/op_api.h"
#include "ops/indexing/helpers.h"
#include "ops/op_impls.h"
#include "ops/op_util.h"
#include "runtime/runtime.h"
#include "tessera/opcodes.h"
#include "util/error.h"

namespace tsr::ops {

namespace {

// Validates gather/scatter shapes; returns the wrapped dim.
int32_t check_gather_shapes(const OpDef& op, const TensorImpl& self, int64_t dim_arg,
                            const TensorImpl& index, const TensorImpl* src) {
  Shape s = ix::kernel_shape(self), i = ix::kernel_shape(index);
  if (i.ndim != s.ndim)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'index' has {} dims but 'self' has {}; index tensor must have the "
         "same number of dimensions as input tensor",
         op.name, index.ndim, self.ndim);
  int32_t dim = wrap_dim(dim_arg, self.ndim, "dim");
  Shape r;
  if (src) {
    r = ix::kernel_shape(*src);
    if (r.ndim != s.ndim)
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': argument 'src' has {} dims but 'self' has {}; index, src and self must "
           "have the same number of dimensions",
           op.name, src->ndim, self.ndim);
  }
  for (int32_t d = 0; d < s.ndim; ++d) {
    bool bad_self = d != dim && i.sizes[d] > s.sizes[d];
    bool bad_src = src && i.sizes[d] > r.sizes[d];
    if (bad_self || bad_src)
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': size does not match at dimension {}: expected argument 'index' {} to be "
           "smaller than 'self' {} apart from dimension {}{}",
           op.name, d, shape_str(index.ndim, index.sizes), shape_str(self.ndim, self.sizes), dim,
           src ? fmt::format(" and to be smaller than 'src' {}", shape_str(src->ndim, src->sizes))
               : std::string());
  }
  return dim;
}

TensorRef index_arg(const OpDef& op, TensorImpl* self, TensorImpl* index) {
  check_same_device(op, *self, *index, "self", "index");
  return ix::long_index(op, index, "index");
}

// out = gather(self, dim, index) into a new tensor or the out= tensor `out`.
TensorRef gather_impl(OpCall& c, TensorImpl* out) {
  const OpDef& op = *c.op;
  TensorImpl* self = c.tensor(0);
  if (c.tensor(2)->dtype != TSR_INT64 && c.tensor(2)->dtype != TSR_INT32)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'index' must be an int64 tensor (gather(): Expected dtype int64 for "
         "index), got {}; convert it with to(int64)",
         op.name, dtype_name(c.tensor(2)->dtype));
  TensorRef index = index_arg(op, self, c.tensor(2));
  int32_t dim = check_gather_shapes(op, *self, c.int_arg(1), *index, nullptr);
  Shape shape = shape_of(*index);
  TensorRef result;
  if (out) {
    check_same_device(op, *self, *out, "self", "out");
    if (out->dtype != self->dtype)
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': argument 'out' has dtype {} but 'self' has {}; gather writes self's dtype",
           op.name, dtype_name(out->dtype), dtype_name(self->dtype));
    resize_output(out, shape);
    assert_no_internal_overlap(*out, op.name.c_str(), "out");
    ix::check_no_overlap(op, *out, "out", *self, "self");
    ix::check_no_overlap(op, *out, "out", *index, "index");
    result = TensorRef::borrow(out);
  } else {
    result = op::empty(self, self->dtype, shape);
  }
  ix::gather_into(op, self, dim, index.get(), result.get());
  if (out) out->bump_version();
  return result;
}

// Validates and runs self.scatter_(dim, index, src, code) in place.
void scatter_in_place(const OpDef& op, TensorImpl* self, int64_t dim_arg, TensorImpl* index_in,
                      TensorImpl* src, int32_t code) {
  if (code < 0 || code >= TSR_SCATTER_CODE_COUNT)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'op' = {} is not a scatter code (tsr_scatter_op: 0 to {})", op.name,
         code, TSR_SCATTER_CODE_COUNT - 1);
  check_same_device(op, *self, *src, "self", "src");
  TensorRef index = index_arg(op, self, index_in);
  if (src->dtype != self->dtype)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'src' has dtype {} but 'self' has {}; scatter(): Expected self.dtype "
         "to be equal to src.dtype",
         op.name, dtype_name(src->dtype), dtype_name(self->dtype));
  int32_t dim = check_gather_shapes(op, *self, dim_arg, *index, src);
  assert_no_internal_overlap(*self, op.name.c_str(), "self");
  ix::check_no_overlap(op, *self, "self", *index, "index");
  ix::check_no_overlap(op, *self, "self", *src, "src");
  ix::scatter_into(op, self, dim, index.get(), src, code);
  self->bump_version();
}

// A 0-d tensor of self's dtype holding `value`, expanded to index's shape.
TensorRef value_source(TensorImpl* self, TensorImpl* index, const tsr_scalar& value) {
  TensorRef s = ix::scalar(self, value, self->dtype);
  return op::expand(s.get(), shape_of(*index));
}

int32_t scatter_reduce_code(const OpDef& op, const char* reduce) {
  std::string_view r(reduce);
  if (r == "add") return TSR_SCATTER_ADD;
  if (r == "multiply") return TSR_SCATTER_MUL;
  fail(TSR_INVALID_ARGUMENT,
       "op '{}': argument 'reduce' = '{}' is not supported; reduce argument must be either add "
       "or multiply.",
       op.name, reduce);
}

// The value every reduction of `code` starts from (include_self=False).
tsr_scalar reduce_identity(tsr_dtype dtype, int32_t code) {
  switch (code) {
    case TSR_SCATTER_MUL:
      return scalar_int(1);
    case TSR_SCATTER_AMAX:
    case TSR_SCATTER_AMIN: {
      bool max = code == TSR_SCATTER_AMAX;
      if (dtype == TSR_BOOL) return scalar_int(max ? 0 : 1);
      if (is_floating(dtype))
        return scalar_float(max ? -std::numeric_limits<double>::infinity()
                                : std::numeric_limits<double>::infinity());
      int64_t lo = 0, hi = 0;
      switch (dtype) {
        case TSR_UINT8:
          lo = 0, hi = 255;
          break;
        case TSR_INT8:
          lo = -128, hi = 127;
          break;
        case TSR_INT16:
          lo = -32768, hi = 32767;
          break;
        case TSR_INT32:
          lo = std::numeric_limits<int32_t>::min(), hi = std::numeric_limits<int32_t>::max();
          break;
        default:
          lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
      }
      return scalar_int(max ? lo : hi);
    }
    default:
      return scalar_int(0);
  }
}

// self.scatter_reduce_(dim, index, src, reduce, include_self) in place.
void scatter_reduce_in_place(const OpDef& op, TensorImpl* self, int64_t dim, TensorImpl* index_in,
                             TensorImpl* src, const char* reduce, bool include_self) {
  std::string_view r(reduce);
  int32_t code;
  bool mean = false;
  if (r == "sum") {
    code = TSR_SCATTER_ADD;
  } else if (r == "prod") {
    code = TSR_SCATTER_MUL;
  } else if (r == "mean") {
    code = TSR_SCATTER_ADD;
    mean = true;
  } else if (r == "amax") {
    code = TSR_SCATTER_AMAX;
  } else if (r == "amin") {
    code = TSR_SCATTER_AMIN;
  } else {
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'reduce' = '{}' is not supported; reduce argument must be either "
         "sum, prod, mean, amax or amin.",
         op.name, reduce);
  }
  if (mean && self->dtype == TSR_BOOL)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': reduce='mean' needs a numeric self, got bool; convert self and src with to()",
         op.name);
  TensorRef index = index_arg(op, self, index_in);
  if (!include_self) {
    TensorRef identity = value_source(self, index.get(), reduce_identity(self->dtype, code));
    scatter_in_place(op, self, dim, index.get(), identity.get(), TSR_SCATTER_ASSIGN);
  }
  scatter_in_place(op, self, dim, index.get(), src, code);
  if (!mean) return;
  // count = 1 (self) or 0 (include_self=False) at scattered positions, plus one
  // per scattered element; 1 elsewhere (those keep self).
  TensorRef count = op::empty(self, self->dtype, shape_of(*self));
  fill_raw(count.get(), scalar_int(1));
  if (!include_self) {
    TensorRef zero = value_source(self, index.get(), scalar_int(0));
    scatter_in_place(op, count.get(), dim, index.get(), zero.get(), TSR_SCATTER_ASSIGN);
  }
  TensorRef one = value_source(self, index.get(), scalar_int(1));
  scatter_in_place(op, count.get(), dim, index.get(), one.get(), TSR_SCATTER_ADD);
  if (is_integral(self->dtype, false)) {
    constexpr OpId div_mode = OpId::div__Tensor_mode;
    op::call(self->runtime, div_mode, self, count, "floor");
  } else {
    op::call(self->runtime, OpId::div__Tensor, self, count);
  }
}

// The index of index_select as a gather index: viewed along `dim` of a
// tensor shaped `out` (stride 0 elsewhere).
TensorRef select_index(TensorImpl* index, int32_t dim, const Shape& out) {
  int64_t n = index->numel;
  TensorRef flat = op::view(index, op::ints(&n, 1));
  Shape along;
  along.ndim = out.ndim;
  for (int32_t d = 0; d < out.ndim; ++d) along.sizes[d] = d == dim ? n : 1;
  TensorRef shaped = op::view(flat.get(), along);
  return op::expand(shaped.get(), out);
}

TensorRef index_select_impl(OpCall& c, TensorImpl* out) {
  const OpDef& op = *c.op;
  TensorImpl* self = c.tensor(0);
  TensorImpl* index_in = c.tensor(2);
  if (index_in->ndim > 1)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'index' has shape {}; index_select(): Index is supposed to be a "
         "vector (0-d or 1-d)",
         op.name, shape_str(index_in->ndim, index_in->sizes));
  TensorRef index = index_arg(op, self, index_in);
  int32_t dim = wrap_dim(c.int_arg(1), self->ndim, "dim");
  // A 0-d self takes exactly one index and gives a 0-d result, whatever the
  // index's shape (PyTorch's rule).
  if (self->ndim == 0 && index->numel != 1)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': index_select(): Index to scalar can have only 1 value, got {} value(s); "
         "pass one index for a 0-d self",
         op.name, index->numel);
  // Kernel view: self as >= 1-d; the result shape as PyTorch gives it.
  TensorRef src = TensorRef::borrow(self);
  Shape kshape = ix::kernel_shape(*self);
  if (self->ndim == 0) src = op::view(self, kshape);
  kshape.sizes[dim] = index->numel;
  Shape shape = kshape;
  if (self->ndim == 0) shape = Shape{};
  TensorRef result;
  if (out) {
    check_same_device(op, *self, *out, "self", "out");
    if (out->dtype != self->dtype)
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': argument 'out' has dtype {} but 'self' has {}; index_select writes self's "
           "dtype",
           op.name, dtype_name(out->dtype), dtype_name(self->dtype));
    resize_output(out, shape);
    assert_no_internal_overlap(*out, op.name.c_str(), "out");
    ix::check_no_overlap(op, *out, "out", *self, "self");
    result = TensorRef::borrow(out);
  } else {
    result = op::empty(self, self->dtype, shape);
  }
  if (result->numel > 0 && !self->device()->is_meta) {
    TensorRef gather_index = select_index(index.get(), dim, kshape);
    TensorRef target = result->ndim == kshape.ndim ? result : op::view(result.get(), kshape);
    ix::gather_into(op, src.get(), dim, gather_index.get(), target.get());
  }
  if (out) out->bump_version();
  return result;
}

}  // namespace

void gather(OpCall& c) { c.set_result(gather_impl(c, nullptr)); }
void gather_out(OpCall& c) { c.set_result(gather_impl(c, c.tensor(4))); }

void scatter_primitive(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  scatter_in_place(*c.op, self, c.int_arg(1), c.tensor(2), c.tensor(3),
                   static_cast<int32_t>(c.int_arg(4)));
  c.set_result(TensorRef::borrow(self));
}

void scatter__src(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  scatter_in_place(*c.op, self, c.int_arg(1), c.tensor(2), c.tensor(3), TSR_SCATTER_ASSIGN);
  c.set_result(TensorRef::borrow(self));
}
void scatter__value(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  TensorRef src = value_source(self, c.tensor(2), c.scalar(3));
  scatter_in_place(*c.op, self, c.int_arg(1), c.tensor(2), src.get(), TSR_SCATTER_ASSIGN);
  c.set_result(TensorRef::borrow(self));
}
void scatter__reduce(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  int32_t code = scatter_reduce_code(*c.op, c.args[4].u.str);
  scatter_in_place(*c.op, self, c.int_arg(1), c.tensor(2), c.tensor(3), code);
  c.set_result(TensorRef::borrow(self));
}
void scatter__value_reduce(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  int32_t code = scatter_reduce_code(*c.op, c.args[4].u.str);
  TensorRef src = value_source(self, c.tensor(2), c.scalar(3));
  scatter_in_place(*c.op, self, c.int_arg(1), c.tensor(2), src.get(), code);
  c.set_result(TensorRef::borrow(self));
}
void scatter_add_(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  scatter_in_place(*c.op, self, c.int_arg(1), c.tensor(2), c.tensor(3), TSR_SCATTER_ADD);
  c.set_result(TensorRef::borrow(self));
}

void scatter_src(OpCall& c) {
  TensorRef out = op::call(OpId::clone, c.tensor(0));
  scatter_in_place(*c.op, out.get(), c.int_arg(1), c.tensor(2), c.tensor(3), TSR_SCATTER_ASSIGN);
  c.set_result(std::move(out));
}
void scatter_value(OpCall& c) {
  TensorRef out = op::call(OpId::clone, c.tensor(0));
  TensorRef src = value_source(out.get(), c.tensor(2), c.scalar(3));
  scatter_in_place(*c.op, out.get(), c.int_arg(1), c.tensor(2), src.get(), TSR_SCATTER_ASSIGN);
  c.set_result(std::move(out));
}
void scatter_reduce(OpCall& c) {
  int32_t code = scatter_reduce_code(*c.op, c.args[4].u.str);
  TensorRef out = op::call(OpId::clone, c.tensor(0));
  scatter_in_place(*c.op, out.get(), c.int_arg(1), c.tensor(2), c.tensor(3), code);
  c.set_result(std::move(out));
}
void scatter_value_reduce(OpCall& c) {
  int32_t code = scatter_reduce_code(*c.op, c.args[4].u.str);
  TensorRef out = op::call(OpId::clone, c.tensor(0));
  TensorRef src = value_source(out.get(), c.tensor(2), c.scalar(3));
  scatter_in_place(*c.op, out.get(), c.int_arg(1), c.tensor(2), src.get(), code);
  c.set_result(std::move(out));
}
void scatter_add(OpCall& c) {
  TensorRef out = op::call(OpId::clone, c.tensor(0));
  scatter_in_place(*c.op, out.get(), c.int_arg(1), c.tensor(2), c.tensor(3), TSR_SCATTER_ADD);
  c.set_result(std::move(out));
}

void scatter_reduce_two(OpCall& c) {
  TensorRef out = op::call(OpId::clone, c.tensor(0));
  scatter_reduce_in_place(*c.op, out.get(), c.int_arg(1), c.tensor(2), c.tensor(3), c.args[4].u.str,
                          c.bool_arg(5));
  c.set_result(std::move(out));
}
void scatter_reduce__two(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  scatter_reduce_in_place(*c.op, self, c.int_arg(1), c.tensor(2), c.tensor(3), c.args[4].u.str,
                          c.bool_arg(5));
  c.set_result(TensorRef::borrow(self));
}

void index_select(OpCall& c) { c.set_result(index_select_impl(c, nullptr)); }
void index_select_out(OpCall& c) { c.set_result(index_select_impl(c, c.tensor(3))); }

void take_along_dim(OpCall& c) {
  const OpDef& op = *c.op;
  TensorImpl* self = c.tensor(0);
  TensorImpl* indices_in = c.tensor(1);
  check_same_device(op, *self, *indices_in, "self", "indices");
  if (indices_in->dtype != TSR_INT64 && indices_in->dtype != TSR_INT32)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'indices' must be an int64 tensor, got {} (torch.take_along_dim(): "
         "dtype of indices should be Long); convert it with to(int64)",
         op.name, dtype_name(indices_in->dtype));
  TensorRef indices = ix::long_index(op, indices_in, "indices");
  if (c.is_none(2)) {
    TensorRef flat_self = op::flatten(self);
    TensorRef flat_index = op::flatten(indices.get());
    TensorRef out = op::empty(self, self->dtype, shape_of(*flat_index));
    ix::gather_into(op, flat_self.get(), 0, flat_index.get(), out.get());
    c.set_result(std::move(out));
    return;
  }
  if (self->ndim != indices->ndim)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': torch.take_along_dim(): input and indices should have the same number of "
         "dimensions, but got {} dimensions for input, and {} dimensions for indices",
         op.name, self->ndim, indices->ndim);
  int32_t dim = wrap_dim(c.int_arg(2), self->ndim, "dim");
  if (self->ndim == 0) {
    TensorRef out = op::empty(self, self->dtype, Shape{});
    ix::gather_into(op, self, 0, indices.get(), out.get());
    c.set_result(std::move(out));
    return;
  }
  // Broadcast every dim but `dim`.
  int64_t a[TSR_MAX_DIMS], b[TSR_MAX_DIMS];
  for (int32_t d = 0; d < self->ndim; ++d) {
    a[d] = d == dim ? 1 : self->sizes[d];
    b[d] = d == dim ? 1 : indices->sizes[d];
  }
  Shape common = broadcast_shapes(self->ndim, a, indices->ndim, b);
  Shape self_shape = common, index_shape = common;
  self_shape.sizes[dim] = self->sizes[dim];
  index_shape.sizes[dim] = indices->sizes[dim];
  TensorRef self_b = op::expand(self, self_shape);
  TensorRef index_b = op::expand(indices.get(), index_shape);
  TensorRef out = op::empty(self, self->dtype, index_shape);
  ix::gather_into(op, self_b.get(), dim, index_b.get(), out.get());
  c.set_result(std::move(out));
}

void nonzero(OpCall& c) { c.set_result(ix::nonzero_of(*c.op, c.tensor(0))); }
void argwhere(OpCall& c) { c.set_result(ix::nonzero_of(*c.op, c.tensor(0))); }

}  // namespace tsr::ops
