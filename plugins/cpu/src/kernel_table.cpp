// kernel_table.cpp - the CPU plugin's kernel table: copy_, fill_, the four
// arithmetic primitives and mm/bmm, then every op family's table
// (<family>/<family>_table.cpp), concatenated once. Schema
// strings match the core's registry exactly (docs/operators.md).
#include <iterator>
#include <vector>

#include "wrong_kernel.hpp"

namespace tessera::cpu {
namespace {

// Masks: index i is the i-th Tensor argument of the schema; 0 = any dtype.
constexpr tsr_kernel_entry kCorePrimitives[] = {
    sdk::make_entry(sdk::schema::kCopy, {sdk::kAllDtypes, sdk::kAllDtypes},
                    cpu_kernel<copy_kernel>),
    sdk::make_entry(sdk::schema::kFill, {sdk::kAllDtypes}, cpu_kernel<fill_kernel>),
    sdk::make_entry(sdk::schema::kAdd, {sdk::kAllDtypes, sdk::kAllDtypes}, cpu_kernel<add_kernel>),
    sdk::make_entry(sdk::schema::kSub, {sdk::kNotBoolDtypes, sdk::kNotBoolDtypes},
                    cpu_kernel<sub_kernel>),
    sdk::make_entry(sdk::schema::kMul, {sdk::kAllDtypes, sdk::kAllDtypes}, cpu_kernel<mul_kernel>),
    sdk::make_entry(sdk::schema::kDiv,
                    {sdk::kFloatingOrComplexDtypes, sdk::kFloatingOrComplexDtypes},
                    cpu_kernel<div_kernel>),
    sdk::make_entry(sdk::schema::kMm, {sdk::kNotBoolDtypes, sdk::kNotBoolDtypes},
                    cpu_kernel<mm_kernel>),
    sdk::make_entry(sdk::schema::kBmm, {sdk::kNotBoolDtypes, sdk::kNotBoolDtypes},
                    cpu_kernel<bmm_kernel>),
};

}  // namespace

std::span<const tsr_kernel_entry> kernel_entries() noexcept {
  // Built on first use (plugin query), before any concurrent call.
  static const std::vector<tsr_kernel_entry> all = [] {
    std::vector<tsr_kernel_entry> v(std::begin(kCorePrimitives), std::end(kCorePrimitives));
    for (auto table :
         {pointwise_kernel_entries(), reduction_kernel_entries(), indexing_kernel_entries(),
          factory_kernel_entries(), conv_kernel_entries(), nn_kernel_entries()})
      v.insert(v.end(), table.begin(), table.end());
    return v;
  }();
  return std::span<const tsr_kernel_entry>(all.data(), all.size());
}

}  // namespace tessera::cpu
