// kernel_table.cpp - the CPU plugin's kernel table: the spine's entries plus
// every op family's table (<family>_table.cpp), concatenated once. Schema
// strings match the core's registry exactly (docs/operators.md).
#include <iterator>
#include <vector>

#include "kernel_entry.hpp"

namespace tessera::cpu {
namespace {

// Masks: index i is the i-th Tensor argument of the schema; 0 = any dtype.
constexpr tsr_kernel_entry kSpine[] = {
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
};

}  // namespace

std::span<const tsr_kernel_entry> kernel_entries() noexcept {
  // Built on first use (plugin query), before any concurrent call.
  static const std::vector<tsr_kernel_entry> all = [] {
    std::vector<tsr_kernel_entry> v(std::begin(kSpine), std::end(kSpine));
    for (auto table :
         {pointwise_kernel_entries(), reduction_kernel_entries(), indexing_kernel_entries(),
          factory_kernel_entries(), linalg_kernel_entries(), nn_kernel_entries()})
      v.insert(v.end(), table.begin(), table.end());
    return v;
  }();
  return std::span<const tsr_kernel_entry>(all.data(), all.size());
}

}  // namespace tessera::cpu
