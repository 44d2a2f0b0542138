// reduction_kernels.hpp - the CPU kernels of the reduction family
// (core/registry/defs/reduction.def) and helpers they share.
//
// Primitives: _reduce (reduce.cpp), _arg_reduce (arg_reduce.cpp), _scan
// (scan.cpp); fused composites: cummax/cummin (scan.cpp) and
// _softmax/_log_softmax (softmax.cpp) and their backward ops
// (softmax_backward.cpp). Each validates its call and throws
// sdk::status_error on bad input (the table's trampolines turn that into a
// status).
#ifndef TESSERA_PLUGINS_CPU_REDUCTION_REDUCTION_KERNELS_HPP_
#define TESSERA_PLUGINS_CPU_REDUCTION_REDUCTION_KERNELS_HPP_

#include <cstdint>

#include "../context.hpp"
#include "tessera/plugin.h"
#include "tessera/sdk/kernel_args.hpp"
#include "tessera/sdk/status.hpp"

namespace tessera::cpu {

void reduce_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call);
void arg_reduce_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call);
void scan_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call);
void cummax_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call);
void cummin_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call);
void softmax_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call);
void log_softmax_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call);
// _softmax_backward_data / _log_softmax_backward_data (softmax_backward.cpp)
void softmax_backward_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call);
void log_softmax_backward_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call);

// A resolved single dim of a tensor of `ndim` dims: 0 <= dim < max(ndim, 1)
// (0-d tensors take dim 0), else INVALID_ARGUMENT.
inline int resolved_dim_arg(const tsr_kernel_call& call, int index, int ndim) {
  const int64_t dim = sdk::int_arg(call, index, "dim");
  if (dim < 0 || dim >= (ndim == 0 ? 1 : ndim)) {
    sdk::throw_status(TSR_INVALID_ARGUMENT,
                      "%s: dim %lld is not valid for a %d-d input (the core passes a resolved, "
                      "non-negative dim)",
                      sdk::op_name(call), static_cast<long long>(dim), ndim);
  }
  return static_cast<int>(dim);
}

}  // namespace tessera::cpu

#endif  // TESSERA_PLUGINS_CPU_REDUCTION_REDUCTION_KERNELS_HPP_
