// The pointwise driver shared by every pointwise op (basic.def's add/sub/
// mul/div, _unary, _binary, where.self and their routed overloads).
//
// One call runs one pointwise kernel with PyTorch's rules:
//  - inputs are tensors or wrapped scalars (Python numbers); tensors broadcast
//    to a common shape, scalars become 0-d tensors of their input dtype;
//  - every input is converted to the dtype its kernel argument needs (only
//    those that differ are converted);
//  - the result goes to a new tensor (functional), to `self` (in-place: the
//    broadcast shape must be self's shape) or to `out` (resized as PyTorch
//    does); the result dtype must be castable to the target's (can_cast), the
//    target must not overlap itself, and no input may partially overlap it;
//  - targets whose dtype differs from the result's get the result through a
//    temporary and a copy; the target's version is bumped once;
//  - on the meta device only shapes and dtypes are computed.
#pragma once

#include <cstdint>

#include "dispatch/op_call.h"
#include "registry/registry.h"
#include "tensor/geometry.h"

namespace tsr::ops {

enum class Mode { kFunctional, kInPlace, kOut };

// The mode of a call from its schema: no mutated argument is functional, a
// mutated `self` (argument 0) in-place, any other mutated argument out=.
// `target` receives the written tensor (null when functional).
Mode mode_of(const OpCall& c, TensorImpl** target);

// One input: a tensor, or a wrapped scalar (tensor == null).
struct EwInput {
  TensorImpl* tensor = nullptr;
  tsr_scalar scalar{};
  tsr_dtype dtype = TSR_FLOAT32;  // the dtype the kernel receives it in
};

// Argument i of the call as an input (a Tensor or a Scalar argument); its
// kernel dtype is left to the caller.
EwInput input_of(const OpCall& c, int i);

// The kernel to run: `kernel_op` with function code `code` (-1: none); the
// non-tensor arguments that follow the tensors in its schema; the dtype it writes.
struct EwKernel {
  OpId kernel_op = OpId::kNone;
  int32_t code = -1;
  tsr_dtype result = TSR_FLOAT32;
  const tsr_value* extra = nullptr;
  int32_t nextra = 0;
};

// PyTorch's result_type over the inputs (tensors by rank, scalars wrapped).
tsr_dtype result_type(const EwInput* inputs, int32_t n);

// The broadcast shape of the inputs' tensors (scalars are 0-d).
Shape broadcast_inputs(const OpDef& op, const EwInput* inputs, int32_t n);

// Validates `target` for a result of `result` dtype and `shape` (castability,
// in-place shape, out= resize, overlaps with the inputs). No-op when null.
void check_target(const OpDef& op, Mode mode, TensorImpl* target, tsr_dtype result,
                  const Shape& shape, const EwInput* inputs, int32_t n);

// Writes a computed `value` into the validated target (copy when it is not the
// target itself), bumps the target's version and sets the call's result; for a
// functional call `value` itself becomes the result.
void finish(OpCall& c, TensorImpl* target, TensorRef value);

// Runs the whole protocol above for `n` inputs (at most 4) and sets c's result.
void run_pointwise(OpCall& c, Mode mode, TensorImpl* target, const EwInput* inputs, int32_t n,
                   const EwKernel& kernel);

// Throws INVALID_ARGUMENT unless the inputs' devices match each other and the target's.
void check_devices(const OpDef& op, const EwInput* inputs, int32_t n, TensorImpl* target);

}  // namespace tsr::ops
