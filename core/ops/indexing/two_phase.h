// Running a two-phase kernel: the core side of plugin.h's Note [Two-phase
// kernels], for ops whose output shapes depend on the data (nonzero, and
// through it masked_select, boolean indexing, unique, masked_scatter).
//
// Note [Two-phase calls]
// ~~~~~~~~~~~~~~~~~~~~~~
// run_two_phase() makes exactly one round trip to the host per call:
//   1. the kernel's size_fn runs with the call frame whose output descriptors
//      carry only their dtype; it reports each output's ndim and sizes. This is
//      the one point where the device may synchronise with the host (a GPU
//      plugin copies its count back here); the core itself never synchronises;
//   2. the core validates those sizes (0..TSR_MAX_DIMS dims, non-negative,
//      byte size within int64, and the op's own shape rule where it has one:
//      nonzero's result is [n, self.ndim] with n <= self.numel), allocates the
//      outputs contiguous, and
//      3. calls the kernel's fn on the device's current stream, which fills
//      them asynchronously like any kernel.
// A data-dependent op therefore costs one synchronisation however it is
// composed: masked_select is one nonzero plus a gather, unique one nonzero plus
// sorts and scans. The meta device has no data: these ops fail there with
// UNIMPLEMENTED (as PyTorch's meta backend does).
#pragma once

#include <cstdint>

#include "dispatch/op_call.h"
#include "registry/registry.h"
#include "runtime/device.h"

namespace tsr {

// An op's rule for the sizes a size_fn may report: `expected_ndim[i]` dims for
// output i (-1: any), `fixed[i * TSR_MAX_DIMS + d]` for dim d (-1: any), and
// at most `max_size[i * TSR_MAX_DIMS + d]` (-1: no bound). A report that breaks
// it is a plugin bug, refused before anything is allocated.
struct TwoPhaseShapeRule {
  int32_t expected_ndim[TSR_MAX_DIMS] = {-1, -1, -1, -1, -1, -1, -1, -1};
  int64_t fixed[TSR_MAX_DIMS * TSR_MAX_DIMS];
  int64_t max_size[TSR_MAX_DIMS * TSR_MAX_DIMS];
  TwoPhaseShapeRule() {
    for (int64_t& v : fixed) v = -1;
    for (int64_t& v : max_size) v = -1;
  }
};

// Runs the two-phase kernel of `kernel_op` for `device` and the tensor
// argument dtypes `dtypes`, with kernel arguments `args` (tensors as
// descriptors), producing `nouts` new tensors of dtypes `out_dtypes` into
// `results`. `op` is the op the user called (for messages). Throws
// UNIMPLEMENTED when the device has no such kernel or on the meta device,
// INTERNAL when the kernel is not registered as two-phase, and the kernel's
// own errors with the op named.
void run_two_phase(const OpDef& op, OpId kernel_op, DeviceRecord* device, const tsr_dtype* dtypes,
                   int32_t n_dtypes, const tsr_value* args, int32_t nargs,
                   const tsr_dtype* out_dtypes, int32_t nouts, TensorRef* results,
                   const TwoPhaseShapeRule* rule = nullptr);

}  // namespace tsr
