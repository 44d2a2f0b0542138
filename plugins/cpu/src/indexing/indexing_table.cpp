// indexing_table.cpp - kernel entries of the indexing op family (core/registry/defs/indexing.def).
// The kernels live in indexing/ (indexing_kernels.hpp); schemas match the
// registry exactly.
#include "../wrong_kernel.hpp"
#include "indexing_kernels.hpp"

namespace tessera::cpu {
namespace {

const tsr_kernel_entry kIndexing[] = {
    sdk::make_entry(sdk::schema::kGather, {sdk::kAllDtypes, sdk::kInt64Dtype},
                    cpu_kernel<gather_kernel>),
    // Assignment moves raw elements (every dtype); the combining codes compute.
    sdk::with_mask(
        sdk::with_codes(sdk::make_entry(sdk::schema::kScatter, {sdk::kAllDtypes, sdk::kInt64Dtype},
                                        cpu_kernel<scatter_kernel>),
                        {TSR_SCATTER_ASSIGN}),
        2, sdk::kAllDtypes),
    sdk::with_mask(
        sdk::with_codes(sdk::make_entry(sdk::schema::kScatter, {sdk::kRealDtypes, sdk::kInt64Dtype},
                                        cpu_kernel<scatter_kernel>),
                        {TSR_SCATTER_ADD, TSR_SCATTER_MUL, TSR_SCATTER_AMAX, TSR_SCATTER_AMIN}),
        2, sdk::kRealDtypes),
    sdk::with_mask(sdk::with_codes(sdk::make_entry(sdk::schema::kScatter,
                                                   {sdk::kComplexDtypes, sdk::kInt64Dtype},
                                                   cpu_kernel<scatter_kernel>),
                                   {TSR_SCATTER_ADD, TSR_SCATTER_MUL}),
                   2, sdk::kComplexDtypes),
    sdk::with_flags(
        sdk::make_entry(sdk::schema::kNonzero, {sdk::kAllDtypes}, cpu_kernel<nonzero_kernel>),
        TSR_KERNEL_TWO_PHASE, sdk::size_trampoline<nonzero_size>),
    sdk::make_entry(sdk::schema::kSort, {sdk::kRealDtypes}, cpu_kernel<sort_kernel>),
    sdk::with_mask(
        sdk::make_entry(sdk::schema::kSearchsorted, {sdk::kNumericDtypes, sdk::kNumericDtypes},
                        cpu_kernel<searchsorted_kernel>),
        2, sdk::kInt64Dtype),
};

}  // namespace

std::span<const tsr_kernel_entry> indexing_kernel_entries() noexcept { return kIndexing; }

}  // namespace tessera::cpu
