// kernels.hpp - the GPU plugins' kernel table, assembled from families.
//
// Each family lives in kernels/<family>.cu (compiled by nvcc, hipcc, or the
// host compiler for the emulation; Note [GPU plugin flavours], runtime.hpp)
// and adds its entries through add_<family>_kernels(). The entries'
// semantics are the CPU plugin's (docs/primitives.md); kernel bodies are
// functors over work items (launch.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tessera/plugin.h"

namespace tessera::gpu {

using KernelList = std::vector<tsr_kernel_entry>;

// copy_, fill_.Scalar (copy_fill.cu)
void add_copy_fill_kernels(KernelList& out);
// add/sub/mul/div.Tensor, _unary, _binary, where.self (pointwise.cu)
void add_pointwise_kernels(KernelList& out);
// _reduce, _arg_reduce, _scan; fused _softmax, _log_softmax,
// native_layer_norm, cross_entropy_loss (reduce.cu, norm.cu)
void add_reduce_kernels(KernelList& out);
// _iota_, gather, _scatter_, nonzero, sort.stable, searchsorted.Tensor (index.cu, sort.cu)
void add_index_kernels(KernelList& out);
// mm, bmm, convolution, scaled_dot_product_attention (linalg.cu, conv.cu, attention.cu)
void add_linalg_kernels(KernelList& out);

// tsr_plugin_api.random_fill (random.cu): Philox4x32-10 bit-identical to the CPU.
using RandomFillFn = tsr_status* (*)(tsr_plugin_context*, const tsr_random_fill_call*) noexcept;
RandomFillFn random_fill_kernel();

// The table: every family's entries. Static storage.
const tsr_kernel_entry* kernel_table(size_t* count);
// The dtypes the kernels compute in (device properties).
uint64_t kernel_dtypes();

}  // namespace tessera::gpu
