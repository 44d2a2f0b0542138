// conv_table.cpp - kernel entries of the conv op family (core/registry/defs/conv.def).
// The linalg family's kernels are the primitives mm and bmm (kernel_table.cpp);
// its composites decompose into them. The fused
// convolution and pooling kernels (conv/*.cpp) claim float32 and float64,
// convolution_backward float32; other dtypes run the core's decompositions.
#include <iterator>

#include "../wrong_kernel.hpp"
#include "conv_kernels.hpp"
#include "tessera/sdk/primitives.hpp"

namespace tessera::cpu {
namespace {

constexpr uint64_t kF32 = TSR_DTYPE_BIT(TSR_FLOAT32);
constexpr uint64_t kF32F64 = kF32 | TSR_DTYPE_BIT(TSR_FLOAT64);

constexpr tsr_kernel_entry kEntries[] = {
    sdk::with_mask(sdk::make_entry(sdk::schema::kConvolution, {kF32F64, kF32F64},
                                   cpu_kernel<convolution_kernel>),
                   2, kF32F64),
    sdk::with_flags(sdk::with_mask(sdk::make_entry(sdk::schema::kConvolutionBackward, {kF32, kF32},
                                                   cpu_kernel<convolution_backward_kernel>),
                                   2, kF32),
                    TSR_KERNEL_CONTIGUOUS_INPUTS),
    sdk::make_entry(sdk::schema::kMaxPool2dWithIndices, {kF32F64},
                    cpu_kernel<max_pool2d_with_indices_kernel>),
    sdk::make_entry(sdk::schema::kMaxPool2d, {kF32F64}, cpu_kernel<max_pool2d_kernel>),
    sdk::make_entry(sdk::schema::kAvgPool2d, {kF32F64}, cpu_kernel<avg_pool2d_kernel>),
    sdk::make_entry(sdk::schema::kAdaptiveAvgPool2d, {kF32F64},
                    cpu_kernel<adaptive_avg_pool2d_kernel>),
    sdk::make_entry(sdk::schema::kAdaptiveMaxPool2d, {kF32F64},
                    cpu_kernel<adaptive_max_pool2d_kernel>),
    sdk::with_mask(sdk::make_entry(sdk::schema::kMaxPool2dWithIndicesBackward, {kF32F64, kF32F64},
                                   cpu_kernel<max_pool2d_with_indices_backward_kernel>),
                   2, sdk::kInt64Dtype),
    sdk::with_mask(sdk::make_entry(sdk::schema::kAdaptiveMaxPool2dBackward, {kF32F64, kF32F64},
                                   cpu_kernel<adaptive_max_pool2d_backward_kernel>),
                   2, sdk::kInt64Dtype),
    sdk::make_entry(sdk::schema::kAvgPool2dBackward, {kF32F64, kF32F64},
                    cpu_kernel<avg_pool2d_backward_kernel>),
    sdk::make_entry(sdk::schema::kAdaptiveAvgPool2dBackward, {kF32F64, kF32F64},
                    cpu_kernel<adaptive_avg_pool2d_backward_kernel>),
};

}  // namespace

std::span<const tsr_kernel_entry> conv_kernel_entries() noexcept {
  return std::span<const tsr_kernel_entry>(kEntries, std::size(kEntries));
}

}  // namespace tessera::cpu
