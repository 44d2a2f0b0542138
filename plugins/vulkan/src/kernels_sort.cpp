// kernels_sort.cpp - nonzero, sort.stable and searchsorted.Tensor.
#include "kernel_util.hpp"

namespace tessera::vulkan {

void add_sort_kernels(KernelList&) {}

}  // namespace tessera::vulkan
