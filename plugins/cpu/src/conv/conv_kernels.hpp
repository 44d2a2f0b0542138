// conv_kernels.hpp - the CPU plugin's convolution and pooling kernels
// (listed in linalg_table.cpp; contracts in core/ops/defs/conv.def), and the
// argument readers they share.
//
// convolution: float32 runs oneDNN (onednn_conv.hpp), float64 and float32
// shapes oneDNN refuses run direct loops. Pooling: float32 and float64 run
// row-wise loops (a vertical pass over the window's rows into a row buffer,
// then a horizontal pass over the window's columns), which vectorise along the
// row and keep PyTorch's tie and NaN order for the indices.
#ifndef TESSERA_PLUGINS_CPU_CONV_CONV_KERNELS_HPP_
#define TESSERA_PLUGINS_CPU_CONV_CONV_KERNELS_HPP_

#include <cstdint>

#include "../context.hpp"
#include "tessera/plugin.h"

namespace tessera::cpu {

void convolution_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call);
void max_pool2d_with_indices_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call);
void max_pool2d_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call);
void avg_pool2d_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call);
void adaptive_avg_pool2d_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call);
void adaptive_max_pool2d_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call);

namespace conv_detail {

// An `int` argument.
int64_t int_arg(const tsr_kernel_call& call, int index, const char* name);
// An `int?` argument: false for None.
bool optional_int_arg(const tsr_kernel_call& call, int index, const char* name, int64_t& value);
// An `int[]` argument of exactly `n` entries, copied into `out`.
void int_list_arg(const tsr_kernel_call& call, int index, const char* name, int n, int64_t* out);
// Throws INVALID_ARGUMENT naming `what` unless `ok`.
void require(const tsr_kernel_call& call, bool ok, const char* what);

}  // namespace conv_detail

}  // namespace tessera::cpu

#endif  // TESSERA_PLUGINS_CPU_CONV_CONV_KERNELS_HPP_
