// nn_table.cpp - kernel entries of the nn op family (core/ops/defs/nn.def).
#include "kernel_entry.hpp"

namespace tessera::cpu {

std::span<const tsr_kernel_entry> nn_kernel_entries() noexcept { return {}; }

}  // namespace tessera::cpu
