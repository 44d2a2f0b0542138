// pointwise_table.cpp - kernel entries of the pointwise op family
// (core/registry/defs/pointwise.def): _unary and _binary split by the dtypes each
// group of function codes is defined for (the SDK's code sets, the same
// domains the core applies, so coverage reports say exactly which code runs
// on which dtype), and where.self for every dtype.
#include <iterator>

#include "../wrong_kernel.hpp"
#include "pointwise_kernels.hpp"
#include "tessera/sdk/kernel_entry.hpp"
#include "tessera/sdk/primitives.hpp"

namespace tessera::cpu {
namespace {

using sdk::kFloatingDtypes;
using sdk::kIntegralAndBoolDtypes;
using sdk::kIntegralDtypes;
using sdk::make_entry;
namespace schema = sdk::schema;

constexpr tsr_kernel_entry kEntries[] = {
    make_entry(schema::kUnary, {kFloatingDtypes}, cpu_kernel<unary_kernel>,
               sdk::kUnaryFloatingCodes),
    make_entry(schema::kUnary, {kIntegralDtypes}, cpu_kernel<unary_kernel>,
               sdk::kUnaryIntegerCodes),
    make_entry(schema::kUnary, {kIntegralAndBoolDtypes}, cpu_kernel<unary_kernel>,
               sdk::kUnaryIntegerAndBoolCodes),
    make_entry(schema::kBinary, {kFloatingDtypes, kFloatingDtypes}, cpu_kernel<binary_code_kernel>,
               sdk::kBinaryFloatingCodes),
    make_entry(schema::kBinary, {kIntegralDtypes, kIntegralDtypes}, cpu_kernel<binary_code_kernel>,
               sdk::kBinaryIntegerCodes),
    make_entry(schema::kBinary, {kIntegralAndBoolDtypes, kIntegralAndBoolDtypes},
               cpu_kernel<binary_code_kernel>, sdk::kBinaryIntegerAndBoolCodes),
    make_entry(schema::kWhere, {sdk::kBoolDtype, sdk::kAllDtypes}, cpu_kernel<where_kernel>),
};

}  // namespace

std::span<const tsr_kernel_entry> pointwise_kernel_entries() noexcept {
  return std::span<const tsr_kernel_entry>(kEntries, std::size(kEntries));
}

}  // namespace tessera::cpu
