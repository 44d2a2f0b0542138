// pointwise_table.cpp - kernel entries of the pointwise op family
// (core/registry/defs/pointwise.def): _unary and _binary split by the dtypes each
// group of function codes is defined for (the SDK's code sets, the same
// domains the core applies, so coverage reports say exactly which code runs
// on which dtype), and where.self for every dtype.
#include <array>

#include "../wrong_kernel.hpp"
#include "pointwise_kernels.hpp"
#include "tessera/sdk/kernel_entry.hpp"
#include "tessera/sdk/primitives.hpp"

namespace tessera::cpu {
namespace {

// The usual three-entry split of _unary and _binary (kernel_entry.hpp), then
// where.self.
constexpr auto kEntries = sdk::join_entries(
    sdk::unary_entries(cpu_kernel<unary_kernel>),
    sdk::binary_entries(cpu_kernel<binary_code_kernel>),
    std::array{sdk::make_entry(sdk::schema::kWhere, {sdk::kBoolDtype, sdk::kAllDtypes},
                               cpu_kernel<where_kernel>)});

}  // namespace

std::span<const tsr_kernel_entry> pointwise_kernel_entries() noexcept {
  return std::span<const tsr_kernel_entry>(kEntries.data(), kEntries.size());
}

}  // namespace tessera::cpu
