// Building blocks shared by the linalg and conv op implementations
// (core/ops/linalg/*, core/ops/conv/*): calling ops with argument arrays,
// views through registry ops (so observers see the decomposition), writing a
// computed result into out= and in-place targets, and reading int-list
// arguments that PyTorch lets be given as one value for every dim.
#pragma once

#include <cstdint>

#include "dispatch/call.h"
#include "ops/op_util.h"
#include "registry/registry.h"

namespace tsr::ops::linalg_detail {

// call_op over an array of already-typed values (call_op takes a braced list).
TensorRef call_op_array(Runtime* runtime, OpId id, const tsr_value* args, int32_t nargs);
OpResults call_op_all_array(Runtime* runtime, OpId id, const tsr_value* args, int32_t nargs);

// `t` viewed (or copied, when no view exists) as `shape`: the reshape op.
TensorRef reshaped(TensorImpl* t, const Shape& shape);
TensorRef reshaped(TensorImpl* t, std::initializer_list<int64_t> sizes);
// as_strided(t, sizes, strides, offset): a view of t's storage.
TensorRef strided_view(TensorImpl* t, int32_t ndim, const int64_t* sizes, const int64_t* strides,
                       int64_t offset);
TensorRef unsqueezed(TensorImpl* t, int64_t dim);
TensorRef squeezed(TensorImpl* t, int64_t dim);
TensorRef permuted(TensorImpl* t, const int64_t* dims, int32_t ndim);
TensorRef contiguous(TensorImpl* t);

// A new tensor of `shape` filled with `value` (zeros: scalar_int(0)).
TensorRef filled(Runtime* rt, DeviceRecord* dev, tsr_dtype dtype, const Shape& shape,
                 const tsr_scalar& value);

// Writes `result` into the out= argument `out` (PyTorch's rules: same device,
// out's dtype must be result's, out resized when its shape differs), bumps
// out's version and makes it the call's result.
void finish_out(OpCall& c, TensorImpl* result, TensorImpl* out);
// Writes `result` into `self` for an in-place op; self must already have the
// result's shape (no broadcasting of the target) and dtype.
void finish_in_place(OpCall& c, TensorImpl* result, TensorImpl* self);

// The `int[N]` argument `i` of `c` with one entry per dim: a single value is
// repeated (PyTorch's expand_param_if_needed); otherwise the length must be
// `n`. Throws INVALID_ARGUMENT naming the op and argument.
struct IntParams {
  int32_t n = 0;
  int64_t v[TSR_MAX_DIMS] = {};
};
IntParams int_params(const OpCall& c, int i, int32_t n);

// True when `s` (a Scalar argument) equals the integer `value`.
bool scalar_is(const tsr_scalar& s, int64_t value);

}  // namespace tsr::ops::linalg_detail
