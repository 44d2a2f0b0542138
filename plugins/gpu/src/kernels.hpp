// kernels.hpp - the GPU plugins' kernel table, assembled from families.
//
// Kernels live in src/<family>/<name>.cu, the families named as the core's
// (core/ops/: pointwise, reduction, indexing, factory, linalg, conv, nn),
// compiled by nvcc, hipcc, or the host compiler for the emulation (Note [GPU
// plugin flavours], runtime.hpp); each file adds its entries through
// add_<name>_kernels(). The entries' semantics are the CPU plugin's
// (docs/primitives.md); kernel bodies are functors over work items
// (launch.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tessera/plugin.h"

namespace tessera::gpu {

using KernelList = std::vector<tsr_kernel_entry>;

// pointwise/: copy_, fill_.Scalar (copy_fill.cu); add/sub/mul/div.Tensor,
// _unary, _binary, where.self (pointwise.cu)
void add_copy_fill_kernels(KernelList& out);
void add_pointwise_kernels(KernelList& out);
// reduction/: _reduce, _arg_reduce, _scan, cummax, cummin (reduce.cu); fused
// _softmax, _log_softmax (softmax.cu)
void add_reduce_kernels(KernelList& out);
void add_softmax_kernels(KernelList& out);
// nn/: fused native_layer_norm, cross_entropy_loss (norm.cu);
// scaled_dot_product_attention (attention.cu)
void add_norm_kernels(KernelList& out);
void add_attention_kernels(KernelList& out);
// factory/: _iota_ (iota.cu); random_fill below (random.cu)
void add_iota_kernels(KernelList& out);
// indexing/: gather, _scatter_ (gather_scatter.cu); nonzero, sort.stable,
// searchsorted.Tensor (sort.cu)
void add_gather_scatter_kernels(KernelList& out);
void add_sort_kernels(KernelList& out);
// linalg/: mm, bmm (matmul.cu)
void add_matmul_kernels(KernelList& out);
// conv/: convolution (convolution.cu)
void add_convolution_kernels(KernelList& out);

// tsr_plugin_api.random_fill (factory/random.cu): Philox4x32-10 bit-identical to the CPU.
using RandomFillFn = tsr_status* (*)(tsr_plugin_context*, const tsr_random_fill_call*) noexcept;
RandomFillFn random_fill_kernel();

// The table: every family's entries. Static storage.
const tsr_kernel_entry* kernel_table(size_t* count);
// The dtypes the kernels compute in (device properties).
uint64_t kernel_dtypes();

}  // namespace tessera::gpu
