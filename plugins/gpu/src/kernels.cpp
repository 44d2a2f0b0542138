// kernels.cpp - the kernel table of the GPU plugins.
#include "kernels.hpp"

#include "dtypes.hpp"

namespace tessera::gpu {

const tsr_kernel_entry* kernel_table(size_t* count) {
  static const KernelList table = [] {
    KernelList t;
    add_copy_fill_kernels(t);
    add_pointwise_kernels(t);
    add_reduce_kernels(t);
    add_softmax_kernels(t);
    add_norm_kernels(t);
    add_iota_kernels(t);
    add_gather_scatter_kernels(t);
    add_sort_kernels(t);
    add_matmul_kernels(t);
    add_convolution_kernels(t);
    add_attention_kernels(t);
    return t;
  }();
  *count = table.size();
  return table.data();
}

uint64_t kernel_dtypes() { return kRealDtypes; }

}  // namespace tessera::gpu
