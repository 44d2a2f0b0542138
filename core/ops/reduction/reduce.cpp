// Reductions over dim lists: the family's shared machinery
// (reduction/reduce_common.h), the _reduce primitive and the PyTorch ops
// routed to it - sum, mean, prod, max(), min(), amax, amin, any, all and their
// out= forms - plus nansum and count_nonzero, which decompose into them.
//
// Dtypes (PyTorch's): sum and prod of integer and bool inputs give int64, a
// `dtype` argument converts the input first, and an out= form without `dtype`
// computes in out's dtype; mean needs a floating or complex dtype; any/all give
// bool (uint8 for uint8 inputs); amax/amin keep the input's dtype and refuse
// empty reductions (they have no identity).
#include <cmath>
#include <limits>

#include "dispatch/kernel_call.h"
#include "dispatch/op_api.h"
#include "dispatch/values.h"
#include "ops/op_impls.h"
#include "ops/reduction/reduce_common.h"
#include "runtime/runtime.h"
#include "util/error.h"

namespace tsr::ops {

namespace reduction {

int32_t wrap_dim_of(const OpDef& op, int64_t dim, int32_t ndim, const char* arg) {
  const int64_t n = ndim == 0 ? 1 : ndim;
  if (dim < -n || dim >= n)
    fail(TSR_OUT_OF_RANGE,
         "op '{}': argument '{}' = {} is out of range: dimension expected in [{}, {}] for a "
         "tensor of {} dim(s)",
         op.name, arg, dim, -n, n - 1, ndim);
  return static_cast<int32_t>(dim < 0 ? dim + n : dim);
}

uint32_t dim_mask(const OpDef& op, const TensorImpl& self, const tsr_value* dims, bool empty_is_all,
                  const char* arg) {
  if (dims == nullptr || dims->tag == TSR_VALUE_NONE || (dims->len == 0 && empty_is_all))
    return all_dims_mask(self);
  uint32_t mask = 0;
  for (int32_t i = 0; i < dims->len; ++i) {
    const int32_t d = wrap_dim_of(op, dims->u.ints[i], self.ndim, arg);
    if (self.ndim == 0) continue;  // a 0-d tensor reduces over nothing
    if (mask & (1u << d))
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': dim {} appears multiple times in the list of dims (argument '{}'); list "
           "each dim once",
           op.name, d, arg);
    mask |= 1u << d;
  }
  return mask;
}

uint32_t single_dim_mask(const OpDef& op, const TensorImpl& self, int64_t dim, const char* arg) {
  const int32_t d = wrap_dim_of(op, dim, self.ndim, arg);
  return self.ndim == 0 ? 0u : 1u << d;
}

Shape reduced_shape(const TensorImpl& self, uint32_t mask, bool keepdim) {
  Shape s;
  for (int32_t d = 0; d < self.ndim; ++d) {
    const bool r = (mask >> d) & 1u;
    if (r && !keepdim) continue;
    s.sizes[s.ndim++] = r ? 1 : self.sizes[d];
  }
  return s;
}

int64_t reduced_count(const TensorImpl& self, uint32_t mask) {
  int64_t n = 1;
  for (int32_t d = 0; d < self.ndim; ++d)
    if ((mask >> d) & 1u) n *= self.sizes[d];
  return n;
}

void check_nonempty(const OpDef& op, const TensorImpl& self, uint32_t mask, bool all_dims) {
  if (all_dims && self.numel == 0)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': Expected reduction dim to be specified for input.numel() == 0 (input shape "
         "{}; the reduction has no identity). Specify the reduction dim with the 'dim' argument.",
         op.name, shape_str(self.ndim, self.sizes));
  for (int32_t d = 0; d < self.ndim; ++d)
    if (((mask >> d) & 1u) && self.sizes[d] == 0)
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': Expected reduction dim {} to have non-zero size (input shape {}; the "
           "reduction has no identity); reduce over a non-empty dim",
           op.name, d, shape_str(self.ndim, self.sizes));
}

void check_not_complex(const OpDef& op, const TensorImpl& self) {
  if (is_complex(self.dtype))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'self' has dtype {}, but the op orders values and complex numbers "
         "have no order; reduce the real part or abs() instead",
         op.name, dtype_name(self.dtype));
}

TensorRef drop_dims(TensorRef keep, const TensorImpl& in, uint32_t mask, bool keepdim) {
  if (keepdim || mask == 0) return keep;
  const Shape fin = reduced_shape(in, mask, false);
  int64_t strides[TSR_MAX_DIMS];
  contiguous_strides(fin.ndim, fin.sizes, strides);
  return make_alias(keep.get(), fin.ndim, fin.sizes, strides, 0);
}

namespace {

tsr_value tensor_value(const tsr_tensor_desc* d) {
  tsr_value v{};
  v.tag = TSR_VALUE_TENSOR;
  v.u.desc = d;
  return v;
}

}  // namespace

TensorRef run_reduce(const OpDef& op, TensorImpl* in, int32_t code, uint32_t mask, bool keepdim) {
  const Shape keep = reduced_shape(*in, mask, true);
  const tsr_dtype out_dtype =
      (code == TSR_REDUCE_ANY || code == TSR_REDUCE_ALL) ? TSR_BOOL : in->dtype;
  DeviceRecord* dev = in->device();
  TensorRef out = new_tensor(in->runtime, dev, out_dtype, keep);
  if (!dev->is_meta && in->numel == 0 && out->numel > 0 && code >= 0 &&
      code < TSR_REDUCE_CODE_COUNT && code != TSR_REDUCE_AMAX && code != TSR_REDUCE_AMIN) {
    // Over an empty dim every output is the identity (opcodes.h); the kernel
    // is not called, since the input has no memory to offset into (its data
    // pointer is NULL).
    const double identity[] = {0.0, 1.0, std::numeric_limits<double>::quiet_NaN(), 0, 0, 0, 1.0};
    fill_raw(out.get(), scalar_float(identity[code]));
  } else if (!dev->is_meta) {
    int64_t dims[TSR_MAX_DIMS];
    int32_t ndims = 0;
    for (int32_t d = 0; d < in->ndim; ++d)
      if ((mask >> d) & 1u) dims[ndims++] = d;
    tsr_dtype dt = in->dtype;
    const BoundKernel& k = find_kernel(op, OpId::_reduce, dev, &dt, 1, code);
    const tsr_tensor_desc din = in->desc();
    tsr_tensor_desc dout = out->desc();
    for (int32_t i = 0; i < ndims; ++i) dout.strides[dims[i]] = 0;
    const tsr_value args[4] = {tensor_value(&din), v_int(code), v_ints(dims, ndims),
                               v_bool(keepdim)};
    invoke_kernel(op, k, dev, args, 4, &dout, 1);
  }
  return drop_dims(std::move(out), *in, mask, keepdim);
}

TensorRef run_arg_reduce(const OpDef& op, TensorImpl* in, int32_t code, int32_t dim, bool keepdim) {
  const uint32_t mask = in->ndim == 0 ? 0u : 1u << dim;
  const Shape keep = reduced_shape(*in, mask, true);
  DeviceRecord* dev = in->device();
  TensorRef out = new_tensor(in->runtime, dev, TSR_INT64, keep);
  if (!dev->is_meta) {
    tsr_dtype dt = in->dtype;
    const BoundKernel& k = find_kernel(op, OpId::_arg_reduce, dev, &dt, 1, code);
    const tsr_tensor_desc din = in->desc();
    tsr_tensor_desc dout = out->desc();
    if (in->ndim > 0) dout.strides[dim] = 0;
    const tsr_value args[4] = {tensor_value(&din), v_int(code), v_int(dim), v_bool(keepdim)};
    invoke_kernel(op, k, dev, args, 4, &dout, 1);
  }
  return drop_dims(std::move(out), *in, mask, keepdim);
}

TensorRef run_scan(const OpDef& op, TensorImpl* in, int32_t code, int32_t dim) {
  DeviceRecord* dev = in->device();
  TensorRef out = new_tensor(in->runtime, dev, in->dtype, in->ndim, in->sizes);
  if (!dev->is_meta && in->numel > 0) {
    tsr_dtype dt = in->dtype;
    const BoundKernel& k = find_kernel(op, OpId::_scan, dev, &dt, 1, code);
    const tsr_tensor_desc din = in->desc();
    tsr_tensor_desc dout = out->desc();
    const tsr_value args[3] = {tensor_value(&din), v_int(code), v_int(dim)};
    invoke_kernel(op, k, dev, args, 3, &dout, 1);
  }
  return out;
}

}  // namespace reduction

namespace {

using namespace reduction;

// Where a routed reduction's arguments sit in its schema (-1: absent).
struct Args {
  int dim = -1;
  bool int_dim = false;  // `int dim` rather than `int[1]? dim`
  int keepdim = -1;
  int dtype = -1;
  int out = -1;
};

// The ops routed to _reduce; the function code is the op's (c.op->code).
void reduce_routed(OpCall& c, Args a) {
  const OpDef& op = *c.op;
  const int32_t code = op.code;
  TensorImpl* self = c.tensor(0);
  TensorImpl* out = a.out >= 0 ? c.tensor(a.out) : nullptr;
  if (out) check_same_device(op, *self, *out, "self", "out");
  uint32_t mask = all_dims_mask(*self);
  bool all_dims = true;
  if (a.dim >= 0 && a.int_dim) {
    mask = single_dim_mask(op, *self, c.int_arg(a.dim));
    all_dims = false;
  } else if (a.dim >= 0) {
    mask = dim_mask(op, *self, &c.args[a.dim]);
    all_dims = c.is_none(a.dim) || c.args[a.dim].len == 0;
  }
  const bool keepdim = a.keepdim >= 0 && c.bool_arg(a.keepdim);

  tsr_dtype kernel_dtype = self->dtype;
  tsr_dtype result_dtype = self->dtype;
  bool exact_out = true;
  switch (code) {
    case TSR_REDUCE_SUM:
    case TSR_REDUCE_PROD:
    case TSR_REDUCE_MEAN: {
      const bool has_dtype = a.dtype >= 0 && !c.is_none(a.dtype);
      if (has_dtype)
        kernel_dtype = static_cast<tsr_dtype>(c.int_arg(a.dtype));
      else if (out)
        kernel_dtype = out->dtype;
      else if (code != TSR_REDUCE_MEAN)
        kernel_dtype = widened_dtype(self->dtype);
      if (code == TSR_REDUCE_MEAN && !is_floating(kernel_dtype) && !is_complex(kernel_dtype)) {
        if (has_dtype || out)
          fail(TSR_INVALID_ARGUMENT,
               "op '{}': could not infer output dtype. Optional dtype must be either a floating "
               "point or complex dtype. Got: {}; pass dtype=float32 (or a floating out)",
               op.name, dtype_name(kernel_dtype));
        fail(TSR_INVALID_ARGUMENT,
             "op '{}': could not infer output dtype. Input dtype must be either a floating point "
             "or complex dtype. Got: {}; pass dtype=float32 or convert the input with to()",
             op.name, dtype_name(self->dtype));
      }
      result_dtype = kernel_dtype;
      exact_out = false;
      break;
    }
    case TSR_REDUCE_AMAX:
    case TSR_REDUCE_AMIN:
      check_not_complex(op, *self);
      check_nonempty(op, *self, mask, all_dims);
      break;
    default:  // ANY, ALL
      result_dtype = self->dtype == TSR_UINT8 ? TSR_UINT8 : TSR_BOOL;
      break;
  }
  TensorRef in = cast(self, kernel_dtype);
  TensorRef r = run_reduce(op, in.get(), code, mask, keepdim);
  if (r->dtype != result_dtype) r = cast(r.get(), result_dtype);
  if (out) {
    c.set_result(write_out(op, out, r.get(), exact_out));
    return;
  }
  c.set_result(std::move(r));
}

}  // namespace

void reduce_primitive(OpCall& c) {
  const OpDef& op = *c.op;
  TensorImpl* self = c.tensor(0);
  const int64_t code = c.int_arg(1);
  if (code < 0 || code >= TSR_REDUCE_CODE_COUNT)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'op' = {} is not a reduce code; use a tsr_reduce_op value (0..{}) "
         "from tessera/opcodes.h",
         op.name, code, TSR_REDUCE_CODE_COUNT - 1);
  const uint32_t mask = dim_mask(op, *self, &c.args[2]);
  if (code == TSR_REDUCE_MEAN && !is_floating(self->dtype) && !is_complex(self->dtype))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': MEAN needs a floating or complex input, got {}; convert the input with to()",
         op.name, dtype_name(self->dtype));
  if (code == TSR_REDUCE_AMAX || code == TSR_REDUCE_AMIN) {
    check_not_complex(op, *self);
    check_nonempty(op, *self, mask, c.args[2].len == 0);
  }
  c.set_result(run_reduce(op, self, static_cast<int32_t>(code), mask, c.bool_arg(3)));
}

void sum_dim(OpCall& c) { reduce_routed(c, {.dim = 1, .keepdim = 2, .dtype = 3}); }
void sum(OpCall& c) { reduce_routed(c, {.dtype = 1}); }
void sum_IntList_out(OpCall& c) {
  reduce_routed(c, {.dim = 1, .keepdim = 2, .dtype = 3, .out = 4});
}
void mean_dim(OpCall& c) { reduce_routed(c, {.dim = 1, .keepdim = 2, .dtype = 3}); }
void mean(OpCall& c) { reduce_routed(c, {.dtype = 1}); }
void mean_out(OpCall& c) { reduce_routed(c, {.dim = 1, .keepdim = 2, .dtype = 3, .out = 4}); }
void prod(OpCall& c) { reduce_routed(c, {.dtype = 1}); }
void prod_dim_int(OpCall& c) {
  reduce_routed(c, {.dim = 1, .int_dim = true, .keepdim = 2, .dtype = 3});
}
void prod_int_out(OpCall& c) {
  reduce_routed(c, {.dim = 1, .int_dim = true, .keepdim = 2, .dtype = 3, .out = 4});
}
void max_all(OpCall& c) { reduce_routed(c, {}); }
void min_all(OpCall& c) { reduce_routed(c, {}); }
void amax(OpCall& c) { reduce_routed(c, {.dim = 1, .keepdim = 2}); }
void amax_out(OpCall& c) { reduce_routed(c, {.dim = 1, .keepdim = 2, .out = 3}); }
void amin(OpCall& c) { reduce_routed(c, {.dim = 1, .keepdim = 2}); }
void amin_out(OpCall& c) { reduce_routed(c, {.dim = 1, .keepdim = 2, .out = 3}); }
void any_all(OpCall& c) { reduce_routed(c, {}); }
void any_dim(OpCall& c) { reduce_routed(c, {.dim = 1, .int_dim = true, .keepdim = 2}); }
void any_out(OpCall& c) { reduce_routed(c, {.dim = 1, .int_dim = true, .keepdim = 2, .out = 3}); }
void any_all_out(OpCall& c) { reduce_routed(c, {.out = 1}); }
void all_all(OpCall& c) { reduce_routed(c, {}); }
void all_dim(OpCall& c) { reduce_routed(c, {.dim = 1, .int_dim = true, .keepdim = 2}); }
void all_out(OpCall& c) { reduce_routed(c, {.dim = 1, .int_dim = true, .keepdim = 2, .out = 3}); }
void all_all_out(OpCall& c) { reduce_routed(c, {.out = 1}); }

namespace {

// nansum: NaNs become 0 (nan_to_num keeping the infinities), then sum.
TensorRef nansum_of(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  TensorRef x = TensorRef::borrow(self);
  if (is_floating(self->dtype) || is_complex(self->dtype)) {
    constexpr OpId nan_to_num = OpId::nan_to_num;
    const double inf = std::numeric_limits<double>::infinity();
    x = op::call(c.runtime, nan_to_num, self, 0.0, inf, -inf);
  }
  return op::call(c.runtime, OpId::sum_dim_IntList, x, c.args[1], c.args[2], c.args[3]);
}

// count_nonzero: x != 0 through a conversion to bool, summed (int64).
TensorRef count_nonzero_of(OpCall& c, const tsr_value& dims) {
  TensorRef nonzero = op::call(c.runtime, OpId::_to_copy, c.tensor(0), TSR_BOOL);
  return op::call(c.runtime, OpId::sum_dim_IntList, nonzero, dims, false);
}

}  // namespace

void nansum(OpCall& c) { c.set_result(nansum_of(c)); }
void nansum_out(OpCall& c) {
  TensorImpl* out = c.tensor(4);
  TensorRef r;
  if (c.is_none(3) && out->dtype != widened_dtype(c.tensor(0)->dtype)) {
    // Without dtype, out's dtype is the computation dtype (as sum.out).
    TensorRef x = cast(c.tensor(0), out->dtype);
    r = op::call(c.runtime, OpId::nansum, x, c.args[1], c.args[2]);
  } else {
    r = nansum_of(c);
  }
  c.set_result(write_out(*c.op, out, r.get(), false));
}

void count_nonzero(OpCall& c) {
  if (c.is_none(1)) {
    c.set_result(count_nonzero_of(c, v_none()));
    return;
  }
  c.set_result(count_nonzero_of(c, c.args[1]));
}
void count_nonzero_dim_IntList(OpCall& c) { c.set_result(count_nonzero_of(c, c.args[1])); }

}  // namespace tsr::ops
