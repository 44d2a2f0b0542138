// linalg_table.cpp - kernel entries of the linalg op family (core/ops/defs/linalg.def).
#include "kernel_entry.hpp"

namespace tessera::cpu {

std::span<const tsr_kernel_entry> linalg_kernel_entries() noexcept { return {}; }

}  // namespace tessera::cpu
