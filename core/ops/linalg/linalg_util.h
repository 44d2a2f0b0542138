// Building blocks shared by the linalg and conv op implementations
// (core/ops/linalg/*, core/ops/conv/*): writing a computed result into out=
// and in-place targets, and reading int-list arguments that PyTorch lets be
// given as one value for every dim. Their op calls go through
// ops/shorthands.h.
#pragma once

#include <cstdint>

#include "dispatch/op_call.h"
#include "ops/op_util.h"
#include "ops/shorthands.h"
#include "registry/registry.h"

namespace tsr::ops::linalg_detail {

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
