// reduction_table.cpp - kernel entries of the reduction op family
// (core/registry/defs/reduction.def): the _reduce, _arg_reduce and _scan
// primitives with every code of opcodes.h, and fused kernels of the fusable
// composites cummax, cummin, _softmax, _log_softmax and their backward ops.
#include <iterator>

#include "../wrong_kernel.hpp"
#include "reduction_kernels.hpp"
#include "tessera/sdk/primitives.hpp"

namespace tessera::cpu {
namespace {

constexpr tsr_kernel_entry kEntries[] = {
    // Every dtype; the kernel refuses MEAN of integers and AMAX/AMIN of complex.
    sdk::with_codes(
        sdk::make_entry(sdk::schema::kReduce, {sdk::kAllDtypes}, cpu_kernel<reduce_kernel>),
        sdk::kReduceCodes),
    sdk::with_codes(
        sdk::make_entry(sdk::schema::kArgReduce, {sdk::kRealDtypes}, cpu_kernel<arg_reduce_kernel>),
        sdk::kArgReduceCodes),
    // LOGCUMSUMEXP floating only, CUMMAX/CUMMIN real only: the kernel refuses the rest.
    sdk::with_codes(sdk::make_entry(sdk::schema::kScan, {sdk::kAllDtypes}, cpu_kernel<scan_kernel>),
                    sdk::kScanCodes),
    sdk::make_entry(sdk::schema::kCummax, {sdk::kRealDtypes}, cpu_kernel<cummax_kernel>),
    sdk::make_entry(sdk::schema::kCummin, {sdk::kRealDtypes}, cpu_kernel<cummin_kernel>),
    sdk::make_entry(sdk::schema::kSoftmax, {sdk::kFloatingDtypes}, cpu_kernel<softmax_kernel>),
    sdk::make_entry(sdk::schema::kLogSoftmax, {sdk::kFloatingDtypes},
                    cpu_kernel<log_softmax_kernel>),
    sdk::make_entry(sdk::schema::kSoftmaxBackwardData, {sdk::kFloatingDtypes, sdk::kFloatingDtypes},
                    cpu_kernel<softmax_backward_kernel>),
    sdk::make_entry(sdk::schema::kLogSoftmaxBackwardData,
                    {sdk::kFloatingDtypes, sdk::kFloatingDtypes},
                    cpu_kernel<log_softmax_backward_kernel>),
};

}  // namespace

std::span<const tsr_kernel_entry> reduction_kernel_entries() noexcept {
  return std::span<const tsr_kernel_entry>(kEntries, std::size(kEntries));
}

}  // namespace tessera::cpu
