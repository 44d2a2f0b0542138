// reduction_table.cpp - kernel entries of the reduction op family
// (core/ops/defs/reduction.def).
#include <iterator>

#include "kernel_entry.hpp"

namespace tessera::cpu {
namespace {

constexpr tsr_kernel_entry kEntries[] = {
    entry("sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? "
          "dtype=None) -> Tensor",
          kNotBool, 0, trampoline<sum_kernel>),
    entry("mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> "
          "Tensor",
          kFloatingOrComplex, 0, trampoline<mean_kernel>),
};

}  // namespace

std::span<const tsr_kernel_entry> reduction_kernel_entries() noexcept {
  return std::span<const tsr_kernel_entry>(kEntries, std::size(kEntries));
}

}  // namespace tessera::cpu
