// factory_table.cpp - kernel entries of the factory op family (core/registry/defs/factory.def).
// Random fills are not kernels: they are the plugin's random_fill entry
// (factory/random_fill.hpp).
#include <iterator>

#include "../wrong_kernel.hpp"
#include "factory_kernels.hpp"

namespace tessera::cpu {
namespace {

constexpr tsr_kernel_entry kFactory[] = {
    sdk::make_entry(sdk::schema::kIota, {sdk::kNumericDtypes}, cpu_kernel<iota_kernel>),
};

}  // namespace

std::span<const tsr_kernel_entry> factory_kernel_entries() noexcept {
  return std::span<const tsr_kernel_entry>(std::begin(kFactory), std::end(kFactory));
}

}  // namespace tessera::cpu
