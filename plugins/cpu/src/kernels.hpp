// kernels.hpp - the CPU plugin's kernels and their table.
//
// Each kernel validates its call (kernel_args.hpp) and throws
// sdk::status_error on bad input; kernel_table.cpp wraps every one in a
// noexcept trampoline that turns exceptions into host statuses, and lists them
// with their exact schemas (docs/operators.md) and dtype masks.
#ifndef TESSERA_PLUGINS_CPU_KERNELS_HPP_
#define TESSERA_PLUGINS_CPU_KERNELS_HPP_

#include <span>

#include "context.hpp"
#include "tessera/plugin.h"

namespace tessera::cpu {

// pointwise/copy_fill.cpp
void copy_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call);
void fill_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call);
// pointwise/arith.cpp
void add_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call);
void sub_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call);
void mul_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call);
void div_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call);
// linalg/matmul.cpp
void mm_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call);
void bmm_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call);

// The kernel table; static storage.
std::span<const tsr_kernel_entry> kernel_entries() noexcept;
// Each op family's entries (<family>/<family>_table.cpp), concatenated by
// kernel_entries.
std::span<const tsr_kernel_entry> pointwise_kernel_entries() noexcept;
std::span<const tsr_kernel_entry> reduction_kernel_entries() noexcept;
std::span<const tsr_kernel_entry> indexing_kernel_entries() noexcept;
std::span<const tsr_kernel_entry> factory_kernel_entries() noexcept;
std::span<const tsr_kernel_entry> conv_kernel_entries() noexcept;
std::span<const tsr_kernel_entry> nn_kernel_entries() noexcept;

}  // namespace tessera::cpu

#endif  // TESSERA_PLUGINS_CPU_KERNELS_HPP_
