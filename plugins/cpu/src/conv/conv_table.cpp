// linalg_table.cpp - kernel entries of the linalg and conv op families
// (core/ops/defs/linalg.def, conv.def). mm and bmm are spine entries
// (kernel_table.cpp); the linalg composites decompose into them. The fused
// convolution and pooling kernels (conv/*.cpp) claim float32 and float64,
// convolution_backward float32; other dtypes run the core's decompositions.
#include <iterator>

#include "conv/conv_kernels.hpp"
#include "kernel_entry.hpp"

namespace tessera::cpu {
namespace {

constexpr uint64_t kF32 = TSR_DTYPE_BIT(TSR_FLOAT32);
constexpr uint64_t kF32F64 = kF32 | TSR_DTYPE_BIT(TSR_FLOAT64);
constexpr uint64_t kI64 = TSR_DTYPE_BIT(TSR_INT64);

constexpr tsr_kernel_entry kEntries[] = {
    with_mask(entry("convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, "
                    "SymInt[] padding, SymInt[] dilation, bool transposed, "
                    "SymInt[] output_padding, SymInt groups) -> Tensor",
                    kF32F64, kF32F64, trampoline<convolution_kernel>),
              2, kF32F64),
    with_flags(with_mask(entry("convolution_backward(Tensor grad_output, Tensor input, Tensor "
                               "weight, SymInt[]? bias_sizes, SymInt[] stride, SymInt[] "
                               "padding, SymInt[] dilation, bool transposed, SymInt[] "
                               "output_padding, SymInt groups, bool[3] output_mask) -> (Tensor, "
                               "Tensor, Tensor)",
                               kF32, kF32, trampoline<convolution_backward_kernel>),
                         2, kF32),
               TSR_KERNEL_CONTIGUOUS_INPUTS),
    entry("max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], "
          "int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)",
          kF32F64, 0, trampoline<max_pool2d_with_indices_kernel>),
    entry("max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
          "int[2] dilation=1, bool ceil_mode=False) -> Tensor",
          kF32F64, 0, trampoline<max_pool2d_kernel>),
    entry("avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
          "bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) "
          "-> Tensor",
          kF32F64, 0, trampoline<avg_pool2d_kernel>),
    entry("_adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor", kF32F64, 0,
          trampoline<adaptive_avg_pool2d_kernel>),
    entry("adaptive_max_pool2d(Tensor self, int[2] output_size) -> (Tensor, Tensor)", kF32F64, 0,
          trampoline<adaptive_max_pool2d_kernel>),
    with_mask(entry("max_pool2d_with_indices_backward(Tensor grad_output, Tensor self, "
                    "int[2] kernel_size, int[2] stride, int[2] padding, int[2] dilation, "
                    "bool ceil_mode, Tensor indices) -> Tensor",
                    kF32F64, kF32F64, trampoline<max_pool2d_with_indices_backward_kernel>),
              2, kI64),
    with_mask(entry("adaptive_max_pool2d_backward(Tensor grad_output, Tensor self, Tensor "
                    "indices) -> Tensor",
                    kF32F64, kF32F64, trampoline<adaptive_max_pool2d_backward_kernel>),
              2, kI64),
    entry("avg_pool2d_backward(Tensor grad_output, Tensor self, int[2] kernel_size, "
          "int[2] stride, int[2] padding, bool ceil_mode, bool count_include_pad, "
          "int? divisor_override) -> Tensor",
          kF32F64, kF32F64, trampoline<avg_pool2d_backward_kernel>),
    entry("_adaptive_avg_pool2d_backward(Tensor grad_output, Tensor self) -> Tensor", kF32F64,
          kF32F64, trampoline<adaptive_avg_pool2d_backward_kernel>),
};

}  // namespace

std::span<const tsr_kernel_entry> linalg_kernel_entries() noexcept {
  return std::span<const tsr_kernel_entry>(kEntries, std::size(kEntries));
}

}  // namespace tessera::cpu
