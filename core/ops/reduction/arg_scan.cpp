// Arg reductions and scans: the _arg_reduce and _scan primitives, the ops
// routed to them (argmax, argmin, cumsum, cumprod, logcumsumexp and out=
// forms), max.dim / min.dim / aminmax (values from _reduce, indices from
// _arg_reduce), and the fusable cummax / cummin.
//
// Index semantics (PyTorch's): argmax/argmin return the first index of the
// extreme, a NaN counting as the extreme; cummax/cummin return, at each
// position, the last index at which the running extreme was attained (a NaN
// sets it, and every later NaN moves it).
#include "dispatch/kernel_call.h"
#include "dispatch/op_api.h"
#include "dispatch/values.h"
#include "ops/op_impls.h"
#include "ops/reduction/reduce_common.h"
#include "runtime/runtime.h"
#include "util/error.h"

namespace tsr::ops {

namespace {

using namespace reduction;

void check_code(const OpDef& op, int64_t code, int64_t count, const char* family) {
  if (code < 0 || code >= count)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'op' = {} is not a {} code; use a value 0..{} from tessera/opcodes.h",
         op.name, code, family, count - 1);
}

// argmax/argmin: `dim_arg` is an int? (None flattens the input).
TensorRef arg_reduce_of(OpCall& c, int32_t code, int dim_arg, int keepdim_arg) {
  const OpDef& op = *c.op;
  TensorImpl* self = c.tensor(0);
  check_not_complex(op, *self);
  const bool keepdim = c.bool_arg(keepdim_arg);
  if (c.is_none(dim_arg)) {
    if (self->numel == 0)
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': Expected reduction dim to be specified for input.numel() == 0 (input shape "
           "{}); pass a dim",
           op.name, shape_str(self->ndim, self->sizes));
    const int64_t flat_size = -1;
    TensorRef flat = op::call(c.runtime, OpId::reshape, self, op::ints(&flat_size, 1));
    TensorRef r = run_arg_reduce(op, flat.get(), code, 0, false);
    if (!keepdim || self->ndim == 0) return r;
    int64_t ones[TSR_MAX_DIMS], zeros[TSR_MAX_DIMS] = {};
    for (int32_t d = 0; d < self->ndim; ++d) ones[d] = 1;
    return make_alias(r.get(), self->ndim, ones, zeros, 0);
  }
  const int32_t dim = wrap_dim_of(op, c.int_arg(dim_arg), self->ndim);
  check_nonempty(op, *self, self->ndim == 0 ? 0u : 1u << dim, false);
  return run_arg_reduce(op, self, code, dim, keepdim);
}

// max.dim / min.dim: (values, indices) along one dim.
void extreme_dim(OpCall& c, bool is_max, TensorRef& values, TensorRef& indices) {
  const OpDef& op = *c.op;
  TensorImpl* self = c.tensor(0);
  check_not_complex(op, *self);
  const int32_t dim = wrap_dim_of(op, c.int_arg(1), self->ndim);
  const uint32_t mask = self->ndim == 0 ? 0u : 1u << dim;
  check_nonempty(op, *self, mask, false);
  const bool keepdim = c.bool_arg(2);
  values = run_reduce(op, self, is_max ? TSR_REDUCE_AMAX : TSR_REDUCE_AMIN, mask, keepdim);
  indices = run_arg_reduce(op, self, is_max ? TSR_ARG_REDUCE_ARGMAX : TSR_ARG_REDUCE_ARGMIN, dim,
                           keepdim);
}

// aminmax(self, *, int? dim=None, bool keepdim=False) -> (min, max)
void aminmax_of(OpCall& c, TensorRef& mn, TensorRef& mx) {
  const OpDef& op = *c.op;
  TensorImpl* self = c.tensor(0);
  check_not_complex(op, *self);
  const uint32_t mask =
      c.is_none(1) ? all_dims_mask(*self) : single_dim_mask(op, *self, c.int_arg(1));
  if (reduced_count(*self, mask) == 0)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': cannot compute aminmax over an empty dimension (input shape {}) as the "
         "operation has no identity",
         op.name, shape_str(self->ndim, self->sizes));
  const bool keepdim = c.bool_arg(2);
  mn = run_reduce(op, self, TSR_REDUCE_AMIN, mask, keepdim);
  mx = run_reduce(op, self, TSR_REDUCE_AMAX, mask, keepdim);
}

// cumsum / cumprod (dtype argument; integer inputs scan in int64) and
// logcumsumexp (floating only).
TensorRef scan_of(OpCall& c, int dtype_arg, TensorImpl* out) {
  const OpDef& op = *c.op;
  const int32_t code = op.code;
  TensorImpl* self = c.tensor(0);
  const int32_t dim = wrap_dim_of(op, c.int_arg(1), self->ndim);
  tsr_dtype dtype = self->dtype;
  if (code == TSR_SCAN_LOGCUMSUMEXP) {
    if (!is_floating(self->dtype))
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': argument 'self' has dtype {}, but logcumsumexp needs a floating point "
           "tensor; convert it with to(float32)",
           op.name, dtype_name(self->dtype));
  } else if (dtype_arg >= 0 && !c.is_none(dtype_arg)) {
    dtype = static_cast<tsr_dtype>(c.int_arg(dtype_arg));
  } else if (out) {
    dtype = out->dtype;
  } else {
    dtype = widened_dtype(self->dtype);
  }
  TensorRef in = cast(self, dtype);
  return run_scan(op, in.get(), code, dim);
}

// The decomposition of cummax/cummin's indices for devices without a fused
// kernel: position i is a candidate where x[i] equals the running extreme (or
// is NaN); the index is the running maximum of the candidates' positions.
TensorRef cum_indices(OpCall& c, TensorImpl* self, TensorImpl* values, int32_t dim) {
  constexpr OpId eq = OpId::eq_Tensor;
  constexpr OpId isnan = OpId::isnan;
  constexpr OpId logical_or = OpId::logical_or;
  constexpr OpId arange = OpId::arange;
  constexpr OpId where = OpId::where_self;
  Runtime* rt = c.runtime;
  TensorRef hit = op::call(rt, eq, self, values);
  TensorRef nan = op::call(rt, isnan, self);
  hit = op::call(rt, logical_or, hit, nan);
  const int64_t n = self->ndim == 0 ? 1 : self->sizes[dim];
  TensorRef iota =
      op::call(rt, arange, static_cast<int64_t>(n), TSR_INT64, op::none, self->device()->device);
  int64_t shape[TSR_MAX_DIMS];
  for (int32_t d = 0; d < self->ndim; ++d) shape[d] = d == dim ? n : 1;
  iota = op::call(rt, OpId::view, iota, op::ints(shape, self->ndim));
  TensorRef zero = scalar_tensor(rt, self->device(), scalar_int(0), TSR_INT64);
  TensorRef pos = op::call(rt, where, hit, iota, zero);
  return run_scan(*c.op, pos.get(), TSR_SCAN_CUMMAX, dim);
}

void cum_extreme(OpCall& c, bool is_max, TensorRef& values, TensorRef& indices) {
  const OpDef& op = *c.op;
  TensorImpl* self = c.tensor(0);
  check_not_complex(op, *self);
  const int32_t dim = wrap_dim_of(op, c.int_arg(1), self->ndim);
  DeviceRecord* dev = self->device();
  const OpId fused = is_max ? OpId::cummax : OpId::cummin;
  tsr_dtype dt = self->dtype;
  const BoundKernel* k = try_find_kernel(fused, dev, &dt, 1);
  if (k || dev->is_meta || self->numel == 0) {
    values = new_tensor(c.runtime, dev, self->dtype, self->ndim, self->sizes);
    indices = new_tensor(c.runtime, dev, TSR_INT64, self->ndim, self->sizes);
    if (!k || self->numel == 0) return;
    const tsr_tensor_desc din = self->desc();
    tsr_tensor_desc outs[2] = {values->desc(), indices->desc()};
    tsr_value args[2] = {v_none(), v_int(dim)};
    args[0].tag = TSR_VALUE_TENSOR;
    args[0].u.desc = &din;
    invoke_kernel(op, *k, dev, args, 2, outs, 2);
    return;
  }
  values = run_scan(op, self, is_max ? TSR_SCAN_CUMMAX : TSR_SCAN_CUMMIN, dim);
  indices = cum_indices(c, self, values.get(), dim);
}

}  // namespace

void arg_reduce_primitive(OpCall& c) {
  const OpDef& op = *c.op;
  TensorImpl* self = c.tensor(0);
  check_code(op, c.int_arg(1), TSR_ARG_REDUCE_CODE_COUNT, "_arg_reduce");
  check_not_complex(op, *self);
  const int32_t dim = wrap_dim_of(op, c.int_arg(2), self->ndim);
  check_nonempty(op, *self, self->ndim == 0 ? 0u : 1u << dim, false);
  c.set_result(run_arg_reduce(op, self, static_cast<int32_t>(c.int_arg(1)), dim, c.bool_arg(3)));
}

void argmax(OpCall& c) { c.set_result(arg_reduce_of(c, TSR_ARG_REDUCE_ARGMAX, 1, 2)); }
void argmin(OpCall& c) { c.set_result(arg_reduce_of(c, TSR_ARG_REDUCE_ARGMIN, 1, 2)); }
void argmax_out(OpCall& c) {
  TensorRef r = arg_reduce_of(c, TSR_ARG_REDUCE_ARGMAX, 1, 2);
  c.set_result(write_out(*c.op, c.tensor(3), r.get(), true));
}
void argmin_out(OpCall& c) {
  TensorRef r = arg_reduce_of(c, TSR_ARG_REDUCE_ARGMIN, 1, 2);
  c.set_result(write_out(*c.op, c.tensor(3), r.get(), true));
}

void max_dim(OpCall& c) {
  TensorRef v, i;
  extreme_dim(c, true, v, i);
  c.set_result(std::move(v));
  c.set_result(std::move(i));
}
void min_dim(OpCall& c) {
  TensorRef v, i;
  extreme_dim(c, false, v, i);
  c.set_result(std::move(v));
  c.set_result(std::move(i));
}
void max_dim_max(OpCall& c) {
  TensorRef v, i;
  extreme_dim(c, true, v, i);
  c.set_result(write_out(*c.op, c.tensor(3), v.get(), true, "max"));
  c.set_result(write_out(*c.op, c.tensor(4), i.get(), true, "max_values"));
}
void min_dim_min(OpCall& c) {
  TensorRef v, i;
  extreme_dim(c, false, v, i);
  c.set_result(write_out(*c.op, c.tensor(3), v.get(), true, "min"));
  c.set_result(write_out(*c.op, c.tensor(4), i.get(), true, "min_indices"));
}

void aminmax(OpCall& c) {
  TensorRef mn, mx;
  aminmax_of(c, mn, mx);
  c.set_result(std::move(mn));
  c.set_result(std::move(mx));
}
void aminmax_out(OpCall& c) {
  TensorRef mn, mx;
  aminmax_of(c, mn, mx);
  c.set_result(write_out(*c.op, c.tensor(3), mn.get(), true, "min"));
  c.set_result(write_out(*c.op, c.tensor(4), mx.get(), true, "max"));
}

void scan_primitive(OpCall& c) {
  const OpDef& op = *c.op;
  TensorImpl* self = c.tensor(0);
  const int64_t code = c.int_arg(1);
  check_code(op, code, TSR_SCAN_CODE_COUNT, "_scan");
  if (code == TSR_SCAN_CUMMAX || code == TSR_SCAN_CUMMIN) check_not_complex(op, *self);
  if (code == TSR_SCAN_LOGCUMSUMEXP && !is_floating(self->dtype))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': LOGCUMSUMEXP needs a floating point input, got {}; convert it with to()",
         op.name, dtype_name(self->dtype));
  const int32_t dim = wrap_dim_of(op, c.int_arg(2), self->ndim);
  c.set_result(run_scan(op, self, static_cast<int32_t>(code), dim));
}

void cumsum(OpCall& c) { c.set_result(scan_of(c, 2, nullptr)); }
void cumsum_out(OpCall& c) {
  TensorRef r = scan_of(c, 2, c.tensor(3));
  c.set_result(write_out(*c.op, c.tensor(3), r.get(), false));
}
void cumprod(OpCall& c) { c.set_result(scan_of(c, 2, nullptr)); }
void cumprod_out(OpCall& c) {
  TensorRef r = scan_of(c, 2, c.tensor(3));
  c.set_result(write_out(*c.op, c.tensor(3), r.get(), false));
}
void logcumsumexp(OpCall& c) { c.set_result(scan_of(c, -1, nullptr)); }
void logcumsumexp_out(OpCall& c) {
  TensorRef r = scan_of(c, -1, nullptr);
  c.set_result(write_out(*c.op, c.tensor(2), r.get(), false));
}

void cummax(OpCall& c) {
  TensorRef v, i;
  cum_extreme(c, true, v, i);
  c.set_result(std::move(v));
  c.set_result(std::move(i));
}
void cummin(OpCall& c) {
  TensorRef v, i;
  cum_extreme(c, false, v, i);
  c.set_result(std::move(v));
  c.set_result(std::move(i));
}
void cummax_out(OpCall& c) {
  TensorRef v, i;
  cum_extreme(c, true, v, i);
  c.set_result(write_out(*c.op, c.tensor(2), v.get(), true, "values"));
  c.set_result(write_out(*c.op, c.tensor(3), i.get(), true, "indices"));
}
void cummin_out(OpCall& c) {
  TensorRef v, i;
  cum_extreme(c, false, v, i);
  c.set_result(write_out(*c.op, c.tensor(2), v.get(), true, "values"));
  c.set_result(write_out(*c.op, c.tensor(3), i.get(), true, "indices"));
}

}  // namespace tsr::ops
