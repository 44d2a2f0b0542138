// reduction_table.cpp - kernel entries of the reduction op family
// (core/ops/defs/reduction.def): the _reduce, _arg_reduce and _scan
// primitives with every code of opcodes.h, and fused kernels of the fusable
// composites cummax, cummin, _softmax, _log_softmax and their backward ops.
#include <iterator>

#include "kernel_entry.hpp"
#include "reduction/reduction_kernels.hpp"

namespace tessera::cpu {
namespace {

constexpr uint64_t kReal = kAll & ~(TSR_DTYPE_BIT(TSR_COMPLEX64) | TSR_DTYPE_BIT(TSR_COMPLEX128));
constexpr uint64_t kFloating = TSR_DTYPE_BIT(TSR_FLOAT16) | TSR_DTYPE_BIT(TSR_BFLOAT16) |
                               TSR_DTYPE_BIT(TSR_FLOAT32) | TSR_DTYPE_BIT(TSR_FLOAT64);

constexpr tsr_kernel_entry kEntries[] = {
    // Every dtype; the kernel refuses MEAN of integers and AMAX/AMIN of complex.
    with_code_range(entry("_reduce(Tensor self, int op, int[] dim, bool keepdim=False) -> Tensor",
                          kAll, 0, trampoline<reduce_kernel>),
                    TSR_REDUCE_CODE_COUNT),
    with_code_range(entry("_arg_reduce(Tensor self, int op, int dim, bool keepdim=False) -> Tensor",
                          kReal, 0, trampoline<arg_reduce_kernel>),
                    TSR_ARG_REDUCE_CODE_COUNT),
    // LOGCUMSUMEXP floating only, CUMMAX/CUMMIN real only: the kernel refuses the rest.
    with_code_range(
        entry("_scan(Tensor self, int op, int dim) -> Tensor", kAll, 0, trampoline<scan_kernel>),
        TSR_SCAN_CODE_COUNT),
    entry("cummax(Tensor self, int dim) -> (Tensor values, Tensor indices)", kReal, 0,
          trampoline<cummax_kernel>),
    entry("cummin(Tensor self, int dim) -> (Tensor values, Tensor indices)", kReal, 0,
          trampoline<cummin_kernel>),
    entry("_softmax(Tensor self, int dim, bool half_to_float) -> Tensor", kFloating, 0,
          trampoline<softmax_kernel>),
    entry("_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor", kFloating, 0,
          trampoline<log_softmax_kernel>),
    entry("_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType "
          "input_dtype) -> Tensor",
          kFloating, kFloating, trampoline<softmax_backward_kernel>),
    entry("_log_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType "
          "input_dtype) -> Tensor",
          kFloating, kFloating, trampoline<log_softmax_backward_kernel>),
};

}  // namespace

std::span<const tsr_kernel_entry> reduction_kernel_entries() noexcept {
  return std::span<const tsr_kernel_entry>(kEntries, std::size(kEntries));
}

}  // namespace tessera::cpu
