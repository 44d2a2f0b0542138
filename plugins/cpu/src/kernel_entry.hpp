// kernel_entry.hpp - helpers for writing kernel table entries: the noexcept
// trampoline that keeps exceptions inside the plugin, dtype mask constants and
// entry builders. Each op family's table (<family>_table.cpp) uses them.
#ifndef TESSERA_PLUGINS_CPU_KERNEL_ENTRY_HPP_
#define TESSERA_PLUGINS_CPU_KERNEL_ENTRY_HPP_

#include <cstdint>
#include <initializer_list>

#include "kernels.hpp"
#include "tessera/sdk/status.hpp"

namespace tessera::cpu {

using kernel_impl = void (*)(const tsr_plugin_context&, const tsr_kernel_call*);

// TEST ONLY (tsr_plugin_context::wrong_kernel): shifts the first element of
// the first floating result by 1e-2 relative plus 1e-3, or makes it NaN.
void make_wrong(const tsr_kernel_call* call, bool nan) noexcept;

template <kernel_impl Impl>
tsr_status* trampoline(tsr_plugin_context* context, const tsr_kernel_call* call) noexcept {
  const tsr_host_api* host = context != nullptr ? context->host : query_host();
  return sdk::guard(host, [&] {
    if (context == nullptr) {
      sdk::throw_status(TSR_INVALID_ARGUMENT, "cpu kernel called with a NULL plugin context");
    }
    Impl(*context, call);
    if (!context->wrong_kernel.empty() && call->op_name != nullptr &&
        context->wrong_kernel == call->op_name) [[unlikely]]
      make_wrong(call, context->wrong_nan);
  });
}

constexpr uint64_t kAll = TSR_DTYPE_MASK_ALL;
constexpr uint64_t kNotBool = kAll & ~TSR_DTYPE_BIT(TSR_BOOL);
constexpr uint64_t kFloatingOrComplex =
    TSR_DTYPE_BIT(TSR_FLOAT16) | TSR_DTYPE_BIT(TSR_BFLOAT16) | TSR_DTYPE_BIT(TSR_FLOAT32) |
    TSR_DTYPE_BIT(TSR_FLOAT64) | TSR_DTYPE_BIT(TSR_COMPLEX64) | TSR_DTYPE_BIT(TSR_COMPLEX128);

constexpr tsr_kernel_entry entry(const char* schema, uint64_t mask0, uint64_t mask1,
                                 tsr_kernel_fn fn) {
  tsr_kernel_entry e{};
  e.struct_size = sizeof(tsr_kernel_entry);
  e.schema = schema;
  e.dtype_masks[0] = mask0;
  e.dtype_masks[1] = mask1;
  e.flags = 0;  // kernels honour any strides
  e.fn = fn;
  e.size_fn = nullptr;
  e.kernel_data = nullptr;
  return e;
}

// Sets the function-code bits of a family primitive's entry (opcodes.h).
constexpr tsr_kernel_entry with_codes(tsr_kernel_entry e, std::initializer_list<int> codes) {
  for (int c : codes) e.op_codes[c / 64] |= uint64_t{1} << (c % 64);
  return e;
}
// Sets the codes [0, count) - every code of a family known when the plugin was built.
constexpr tsr_kernel_entry with_code_range(tsr_kernel_entry e, int count) {
  for (int c = 0; c < count; ++c) e.op_codes[c / 64] |= uint64_t{1} << (c % 64);
  return e;
}
// Sets the dtype mask of tensor argument i (i >= 2; entry() sets the first two).
constexpr tsr_kernel_entry with_mask(tsr_kernel_entry e, int i, uint64_t mask) {
  e.dtype_masks[i] = mask;
  return e;
}
// Sets flags (TSR_KERNEL_CONTIGUOUS_INPUTS, TSR_KERNEL_TWO_PHASE) and size_fn.
constexpr tsr_kernel_entry with_flags(tsr_kernel_entry e, uint32_t flags,
                                      tsr_kernel_size_fn size_fn = nullptr) {
  e.flags = flags;
  e.size_fn = size_fn;
  return e;
}

}  // namespace tessera::cpu

#endif  // TESSERA_PLUGINS_CPU_KERNEL_ENTRY_HPP_
