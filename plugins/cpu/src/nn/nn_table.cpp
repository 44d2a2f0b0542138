// nn_table.cpp - kernel entries of the nn op family (core/registry/defs/nn.def):
// fused float32 kernels for native_layer_norm and its backward,
// scaled_dot_product_attention (with its _forward/_backward pair for
// training) and cross_entropy_loss with its backward (class-index targets).
// They take contiguous tensors (the core passes them so; the kernels check)
// except sdpa's attn_mask, which may have any strides. Other dtypes run the
// core's decompositions.
#include <iterator>

#include "../wrong_kernel.hpp"
#include "nn_kernels.hpp"
#include "tessera/sdk/primitives.hpp"

namespace tessera::cpu {
namespace {

constexpr uint64_t kF32 = TSR_DTYPE_BIT(TSR_FLOAT32);
constexpr uint64_t kBoolOrF32 = TSR_DTYPE_BIT(TSR_BOOL) | kF32;

constexpr tsr_kernel_entry kEntries[] = {
    sdk::with_flags(sdk::with_mask(sdk::make_entry(sdk::schema::kNativeLayerNorm, {kF32, kF32},
                                                   cpu_kernel<layer_norm_kernel>),
                                   2, kF32),
                    TSR_KERNEL_CONTIGUOUS_INPUTS),
    sdk::with_flags(
        sdk::with_mask(
            sdk::with_mask(
                sdk::with_mask(
                    sdk::with_mask(
                        sdk::make_entry(sdk::schema::kNativeLayerNormBackward, {kF32, kF32},
                                        cpu_kernel<layer_norm_backward_kernel>),
                        2, kF32),
                    3, kF32),
                4, kF32),
            5, kF32),
        TSR_KERNEL_CONTIGUOUS_INPUTS),
    sdk::with_mask(sdk::with_mask(sdk::make_entry(sdk::schema::kScaledDotProductAttention,
                                                  {kF32, kF32}, cpu_kernel<sdpa_kernel>),
                                  2, kF32),
                   3, kBoolOrF32),
    sdk::with_mask(sdk::with_mask(sdk::make_entry(sdk::schema::kScaledDotProductAttentionForward,
                                                  {kF32, kF32}, cpu_kernel<sdpa_forward_kernel>),
                                  2, kF32),
                   3, kBoolOrF32),
    sdk::with_mask(
        sdk::with_mask(
            sdk::with_mask(
                sdk::with_mask(
                    sdk::with_mask(sdk::make_entry(sdk::schema::kScaledDotProductAttentionBackward,
                                                   {kF32, kF32}, cpu_kernel<sdpa_backward_kernel>),
                                   2, kF32),
                    3, kF32),
                4, kF32),
            5, kF32),
        6, kBoolOrF32),
    sdk::with_flags(
        sdk::with_mask(sdk::make_entry(sdk::schema::kCrossEntropyLoss, {kF32, sdk::kInt64Dtype},
                                       cpu_kernel<cross_entropy_kernel>),
                       2, kF32),
        TSR_KERNEL_CONTIGUOUS_INPUTS),
    sdk::with_flags(
        sdk::with_mask(
            sdk::with_mask(sdk::make_entry(sdk::schema::kCrossEntropyLossBackward, {kF32, kF32},
                                           cpu_kernel<cross_entropy_backward_kernel>),
                           2, sdk::kInt64Dtype),
            3, kF32),
        TSR_KERNEL_CONTIGUOUS_INPUTS),
};

}  // namespace

std::span<const tsr_kernel_entry> nn_kernel_entries() noexcept {
  return std::span<const tsr_kernel_entry>(kEntries, std::size(kEntries));
}

}  // namespace tessera::cpu
