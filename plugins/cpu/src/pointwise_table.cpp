// pointwise_table.cpp - kernel entries of the pointwise op family (core/ops/defs/pointwise.def).
#include "kernel_entry.hpp"

namespace tessera::cpu {

std::span<const tsr_kernel_entry> pointwise_kernel_entries() noexcept { return {}; }

}  // namespace tessera::cpu
