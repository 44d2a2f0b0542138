// kernels_index.cpp - _iota_, gather, _scatter_, nonzero, sort.stable, searchsorted.Tensor (not
// written yet: the core reports these ops as missing on vulkan devices, or decomposes the
// composites that need them).
#include "kernel_util.hpp"

namespace tessera::vulkan {

void add_index_kernels(KernelList& out) { (void)out; }

}  // namespace tessera::vulkan
