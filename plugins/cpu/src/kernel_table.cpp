// kernel_table.cpp - the CPU plugin's kernel entries: schema strings exactly as
// in docs/operators.md, the dtypes each tensor argument accepts, and the
// noexcept trampolines that keep exceptions inside the plugin.
#include <iterator>

#include "kernels.hpp"
#include "tessera/sdk/status.hpp"

namespace tessera::cpu {
namespace {

using kernel_impl = void (*)(const tsr_plugin_context&, const tsr_kernel_call*);

template <kernel_impl Impl>
tsr_status* trampoline(tsr_plugin_context* context, const tsr_kernel_call* call) noexcept {
  const tsr_host_api* host = context != nullptr ? context->host : query_host();
  return sdk::guard(host, [&] {
    if (context == nullptr) {
      sdk::throw_status(TSR_INVALID_ARGUMENT, "cpu kernel called with a NULL plugin context");
    }
    Impl(*context, call);
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

// Masks: index i is the i-th Tensor argument of the schema; 0 = unused.
constexpr tsr_kernel_entry kEntries[] = {
    entry("copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)", kAll, kAll,
          trampoline<copy_kernel>),
    entry("fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)", kAll, 0,
          trampoline<fill_kernel>),
    entry("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", kAll, kAll,
          trampoline<add_kernel>),
    entry("sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", kNotBool, kNotBool,
          trampoline<sub_kernel>),
    entry("mul.Tensor(Tensor self, Tensor other) -> Tensor", kAll, kAll, trampoline<mul_kernel>),
    entry("div.Tensor(Tensor self, Tensor other) -> Tensor", kFloatingOrComplex, kFloatingOrComplex,
          trampoline<div_kernel>),
    entry("mm(Tensor self, Tensor mat2) -> Tensor", kNotBool, kNotBool, trampoline<mm_kernel>),
    entry("bmm(Tensor self, Tensor mat2) -> Tensor", kNotBool, kNotBool, trampoline<bmm_kernel>),
    entry("sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? "
          "dtype=None) -> Tensor",
          kNotBool, 0, trampoline<sum_kernel>),
    entry("mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> "
          "Tensor",
          kFloatingOrComplex, 0, trampoline<mean_kernel>),
};

}  // namespace

std::span<const tsr_kernel_entry> kernel_entries() noexcept {
  return std::span<const tsr_kernel_entry>(kEntries, std::size(kEntries));
}

}  // namespace tessera::cpu
