// kernels.cpp - the kernel table of the GPU plugins.
#include "kernels/kernels.hpp"

#include "kernels/dtypes.hpp"

namespace tessera::gpu {

const tsr_kernel_entry* kernel_table(size_t* count) {
  static const KernelList table = [] {
    KernelList t;
    add_copy_fill_kernels(t);
    add_pointwise_kernels(t);
    add_reduce_kernels(t);
    add_index_kernels(t);
    add_linalg_kernels(t);
    return t;
  }();
  *count = table.size();
  return table.data();
}

uint64_t kernel_dtypes() { return kRealDtypes; }

}  // namespace tessera::gpu
