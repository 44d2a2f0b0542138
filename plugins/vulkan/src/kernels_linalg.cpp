// kernels_linalg.cpp - mm, bmm (not written yet: the core reports these ops as
// missing on vulkan devices, or decomposes the composites that need them).
#include "kernel_util.hpp"

namespace tessera::vulkan {

void add_linalg_kernels(KernelList& out) { (void)out; }

}  // namespace tessera::vulkan
