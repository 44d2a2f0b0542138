// kernels_random.cpp - Philox4x32-10 random fills on the device.
#include "kernel_util.hpp"

namespace tessera::vulkan {

RandomFillFn random_fill_kernel() { return nullptr; }

}  // namespace tessera::vulkan
