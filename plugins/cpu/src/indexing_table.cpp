// indexing_table.cpp - kernel entries of the indexing op family (core/ops/defs/indexing.def).
#include "kernel_entry.hpp"

namespace tessera::cpu {

std::span<const tsr_kernel_entry> indexing_kernel_entries() noexcept { return {}; }

}  // namespace tessera::cpu
