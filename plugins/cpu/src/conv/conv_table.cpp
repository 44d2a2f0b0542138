// conv_table.cpp - kernel entries of the conv op family (core/registry/defs/conv.def).
// The linalg family's kernels are the primitives mm and bmm (kernel_table.cpp);
// its composites decompose into them. The fused
// convolution and pooling kernels (conv/*.cpp) claim float32 and float64,
// convolution_backward float32; other dtypes run the core's decompositions.
#include <iterator>

#include "../wrong_kernel.hpp"
#include "conv_kernels.hpp"

namespace tessera::cpu {
namespace {

constexpr uint64_t kF32 = TSR_DTYPE_BIT(TSR_FLOAT32);
constexpr uint64_t kF32F64 = kF32 | TSR_DTYPE_BIT(TSR_FLOAT64);

constexpr tsr_kernel_entry kEntries[] = {
    sdk::with_mask(sdk::make_entry(sdk::schema::kConvolution, {kF32F64, kF32F64},
                                   cpu_kernel<convolution_kernel>),
                   2, kF32F64),
    sdk::with_flags(
        sdk::with_mask(
            sdk::make_entry("convolution_backward(Tensor grad_output, Tensor input, Tensor "
                            "weight, SymInt[]? bias_sizes, SymInt[] stride, SymInt[] "
                            "padding, SymInt[] dilation, bool transposed, SymInt[] "
                            "output_padding, SymInt groups, bool[3] output_mask) -> (Tensor, "
                            "Tensor, Tensor)",
                            {kF32, kF32}, cpu_kernel<convolution_backward_kernel>),
            2, kF32),
        TSR_KERNEL_CONTIGUOUS_INPUTS),
    sdk::make_entry(
        "max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], "
        "int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)",
        {kF32F64}, cpu_kernel<max_pool2d_with_indices_kernel>),
    sdk::make_entry(
        "max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
        "int[2] dilation=1, bool ceil_mode=False) -> Tensor",
        {kF32F64}, cpu_kernel<max_pool2d_kernel>),
    sdk::make_entry(
        "avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
        "bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) "
        "-> Tensor",
        {kF32F64}, cpu_kernel<avg_pool2d_kernel>),
    sdk::make_entry("_adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor", {kF32F64},
                    cpu_kernel<adaptive_avg_pool2d_kernel>),
    sdk::make_entry("adaptive_max_pool2d(Tensor self, int[2] output_size) -> (Tensor, Tensor)",
                    {kF32F64}, cpu_kernel<adaptive_max_pool2d_kernel>),
    sdk::with_mask(
        sdk::make_entry("max_pool2d_with_indices_backward(Tensor grad_output, Tensor self, "
                        "int[2] kernel_size, int[2] stride, int[2] padding, int[2] dilation, "
                        "bool ceil_mode, Tensor indices) -> Tensor",
                        {kF32F64, kF32F64}, cpu_kernel<max_pool2d_with_indices_backward_kernel>),
        2, sdk::kInt64Dtype),
    sdk::with_mask(
        sdk::make_entry("adaptive_max_pool2d_backward(Tensor grad_output, Tensor self, Tensor "
                        "indices) -> Tensor",
                        {kF32F64, kF32F64}, cpu_kernel<adaptive_max_pool2d_backward_kernel>),
        2, sdk::kInt64Dtype),
    sdk::make_entry("avg_pool2d_backward(Tensor grad_output, Tensor self, int[2] kernel_size, "
                    "int[2] stride, int[2] padding, bool ceil_mode, bool count_include_pad, "
                    "int? divisor_override) -> Tensor",
                    {kF32F64, kF32F64}, cpu_kernel<avg_pool2d_backward_kernel>),
    sdk::make_entry("_adaptive_avg_pool2d_backward(Tensor grad_output, Tensor self) -> Tensor",
                    {kF32F64, kF32F64}, cpu_kernel<adaptive_avg_pool2d_backward_kernel>),
};

}  // namespace

std::span<const tsr_kernel_entry> conv_kernel_entries() noexcept {
  return std::span<const tsr_kernel_entry>(kEntries, std::size(kEntries));
}

}  // namespace tessera::cpu
