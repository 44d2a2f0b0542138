// factory_table.cpp - kernel entries of the factory op family (core/ops/defs/factory.def).
#include "kernel_entry.hpp"

namespace tessera::cpu {

std::span<const tsr_kernel_entry> factory_kernel_entries() noexcept { return {}; }

}  // namespace tessera::cpu
