// nn_kernels.hpp - the nn family's fused CPU kernels (nn_table.cpp lists them)
// and the argument readers they share.
//
// Each kernel validates its call: argument tags, dtypes (float32 data, int64
// targets), shapes against each other, and contiguity where the kernel relies
// on it (the core passes contiguous tensors, defs/nn.def); a violation throws
// sdk::status_error naming the op and argument. Nothing out of bounds is ever
// read: class targets are range-checked before any row is touched.
#ifndef TESSERA_PLUGINS_CPU_NN_NN_KERNELS_HPP_
#define TESSERA_PLUGINS_CPU_NN_NN_KERNELS_HPP_

#include <cstdint>
#include <span>

#include "../context.hpp"
#include "tessera/plugin.h"
#include "tessera/sdk/kernel_args.hpp"
#include "tessera/sdk/op_checks.hpp"
#include "tessera/sdk/status.hpp"
#include "tessera/sdk/strided.hpp"

namespace tessera::cpu {

// native_layer_norm (float32)
void layer_norm_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call);
// native_layer_norm_backward (float32; dx one pass per row, dw/db by columns)
void layer_norm_backward_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call);
// scaled_dot_product_attention (float32; flash-style, no L x S matrix)
void sdpa_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call);
// scaled_dot_product_attention_forward (the same bodies, also writing logsumexp)
void sdpa_forward_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call);
// scaled_dot_product_attention_backward (float32; P recomputed per tile from
// the saved logsumexp, attention_backward.cpp)
void sdpa_backward_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call);
// cross_entropy_loss with class-index targets (float32 self, int64 target)
void cross_entropy_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call);
// cross_entropy_loss_backward with class-index targets (float32, int64 target)
void cross_entropy_backward_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call);

namespace nn {

// The arguments cross_entropy_loss and its backward share, checked once:
// self float32 (else UNIMPLEMENTED for the dtype), contiguous, (C) or
// (N, C, d...); target int64, contiguous, self's shape without the class dim,
// every entry in [0, C) or ignore_index (OUT_OF_RANGE otherwise); weight (may
// be null) float32, contiguous, one per class; reduction 0, 1 or 2. The
// result: n, c and d = prod(d...), so positions = n * d.
sdk::class_dims check_cross_entropy_args(const tsr_kernel_call& call, const tsr_tensor_desc& self,
                                         const tsr_tensor_desc& target,
                                         const tsr_tensor_desc* weight, int64_t reduction,
                                         int64_t ignore_index);

}  // namespace nn
}  // namespace tessera::cpu

#endif  // TESSERA_PLUGINS_CPU_NN_NN_KERNELS_HPP_
