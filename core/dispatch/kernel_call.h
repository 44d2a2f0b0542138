// Running a plugin kernel: kernel selection by device type and dtypes, the
// tsr_kernel_call frame, scratch memory, stream checks and error wrapping.
//
// Selection: the first kernel bound for (op, device type) whose per-argument
// dtype masks accept the tensor arguments' dtypes. No kernel: UNIMPLEMENTED
// naming op, device, dtype and plugin (the seed's "no kernel for dispatch key").
#pragma once

#include <cstdint>

#include "dispatch/op_call.h"
#include "registry/registry.h"
#include "runtime/device.h"
#include "runtime/runtime.h"
#include "tessera/plugin.h"

namespace tsr {

// Finds the kernel of `kernel_op` for `device` and the given tensor-argument
// dtypes (in schema order). Throws UNIMPLEMENTED when none fits; `op` is the
// op the user called, for the message.
// `code` is the function code for family primitives (opcodes.h), -1 otherwise.
const BoundKernel& find_kernel(const OpDef& op, OpId kernel_op, DeviceRecord* device,
                               const tsr_dtype* tensor_dtypes, int32_t n_tensor_dtypes,
                               int32_t code = -1);

// The kernel a plugin registered for `op` itself (a fusable composite, or a
// primitive) on `device` for these dtypes; null when there is none (then a
// composite runs its decomposition). Never throws for a missing kernel.
const BoundKernel* try_find_kernel(OpId op, DeviceRecord* device, const tsr_dtype* tensor_dtypes,
                                   int32_t n_tensor_dtypes, int32_t code = -1);

// Phase 1 of a two-phase kernel (plugin.h, Note [Two-phase kernels]): calls
// its size_fn, which writes each output's ndim and sizes (nouts rows of
// TSR_MAX_DIMS). Same frame, scratch and error wrapping as invoke_kernel.
void invoke_kernel_sizes(const OpDef& op, const BoundKernel& kernel, DeviceRecord* device,
                         const tsr_value* args, int32_t nargs, tsr_tensor_desc* outs, int32_t nouts,
                         int32_t* out_ndims, int64_t* out_sizes);

// Calls `kernel` with `args` (tensors as descriptors) and `outs` on the
// device's current stream. Throws on error (with the op named).
void invoke_kernel(const OpDef& op, const BoundKernel& kernel, DeviceRecord* device,
                   const tsr_value* args, int32_t nargs, tsr_tensor_desc* outs, int32_t nouts);

}  // namespace tsr
