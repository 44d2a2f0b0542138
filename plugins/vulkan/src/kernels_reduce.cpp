// kernels_reduce.cpp - _reduce, _arg_reduce, _scan (not written yet: the core reports these ops as
// missing on vulkan devices, or decomposes the composites that need them).
#include "kernel_util.hpp"

namespace tessera::vulkan {

void add_reduce_kernels(KernelList& out) { (void)out; }

}  // namespace tessera::vulkan
