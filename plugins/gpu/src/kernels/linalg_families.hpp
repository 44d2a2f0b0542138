// linalg_families.hpp - the kernel families add_linalg_kernels (linalg.cu)
// registers besides mm and bmm: the fused convolution (conv.cu) and
// scaled_dot_product_attention (attention.cu).
#pragma once

#include "kernels/kernels.hpp"

namespace tessera::gpu {

// convolution (conv.cu)
void add_conv_kernels(KernelList& out);
// scaled_dot_product_attention (attention.cu)
void add_attention_kernels(KernelList& out);

}  // namespace tessera::gpu
