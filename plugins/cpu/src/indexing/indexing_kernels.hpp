// indexing_kernels.hpp - the CPU kernels of the indexing op family
// (core/registry/defs/indexing.def) and the argument readers they share.
//
// Every kernel validates its call (kernel_args.hpp plus the readers below) and
// throws sdk::status_error on bad input; indexing_table.cpp wraps each in the
// noexcept trampoline. Index values are checked against the indexed size before
// any memory is touched: an out-of-range index is an OUT_OF_RANGE status
// ("index 7 is out of bounds for dimension 0 with size 3"), never a read or
// write outside the tensor.
#ifndef TESSERA_PLUGINS_CPU_INDEXING_INDEXING_KERNELS_HPP_
#define TESSERA_PLUGINS_CPU_INDEXING_INDEXING_KERNELS_HPP_

#include <cstdint>

#include "../context.hpp"
#include "tessera/plugin.h"
#include "tessera/sdk/kernel_args.hpp"

namespace tessera::cpu {

// gather_scatter.cpp
void gather_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call);
void scatter_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call);
// nonzero.cpp (two-phase: nonzero_size is the size_fn)
void nonzero_size(const tsr_plugin_context& context, const tsr_kernel_call* call,
                  int32_t* out_ndims, int64_t* out_sizes);
void nonzero_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call);
// sort.cpp
void sort_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call);
// searchsorted.cpp
void searchsorted_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call);

// Throws INVALID_ARGUMENT unless `dim` lies in [0, ndim) (a 0-d tensor has no dim).
void check_dim(const tsr_kernel_call& call, int64_t dim, int32_t ndim, const char* name);
// Throws OUT_OF_RANGE with PyTorch's message for an index outside [0, size).
[[noreturn]] void throw_index_out_of_bounds(int64_t index, int64_t dim, int64_t size);

}  // namespace tessera::cpu

#endif  // TESSERA_PLUGINS_CPU_INDEXING_INDEXING_KERNELS_HPP_
