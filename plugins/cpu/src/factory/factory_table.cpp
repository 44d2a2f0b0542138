// factory_table.cpp - kernel entries of the factory op family (core/ops/defs/factory.def).
// Random fills are not kernels: they are the plugin's random_fill entry
// (factory/random_fill.hpp).
#include <iterator>

#include "factory/factory_kernels.hpp"
#include "kernel_entry.hpp"

namespace tessera::cpu {
namespace {

constexpr uint64_t kIotaDtypes = kAll & ~TSR_DTYPE_BIT(TSR_BOOL) & ~TSR_DTYPE_BIT(TSR_COMPLEX64) &
                                 ~TSR_DTYPE_BIT(TSR_COMPLEX128);

constexpr tsr_kernel_entry kFactory[] = {
    entry("_iota_(Tensor(a!) self, Scalar start, Scalar step, Scalar? end=None) -> Tensor(a!)",
          kIotaDtypes, 0, trampoline<iota_kernel>),
};

}  // namespace

std::span<const tsr_kernel_entry> factory_kernel_entries() noexcept {
  return std::span<const tsr_kernel_entry>(std::begin(kFactory), std::end(kFactory));
}

}  // namespace tessera::cpu
