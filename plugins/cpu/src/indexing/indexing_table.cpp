// indexing_table.cpp - kernel entries of the indexing op family (core/ops/defs/indexing.def).
// The kernels live in indexing/ (indexing_kernels.hpp); schemas match the
// registry exactly.
#include "indexing/indexing_kernels.hpp"
#include "kernel_entry.hpp"

namespace tessera::cpu {
namespace {

constexpr uint64_t kInt64 = TSR_DTYPE_BIT(TSR_INT64);
constexpr uint64_t kComplex = TSR_DTYPE_BIT(TSR_COMPLEX64) | TSR_DTYPE_BIT(TSR_COMPLEX128);
constexpr uint64_t kReal = kAll & ~kComplex;

template <void (*Size)(const tsr_plugin_context&, const tsr_kernel_call*, int32_t*, int64_t*)>
tsr_status* size_trampoline(tsr_plugin_context* context, const tsr_kernel_call* call,
                            int32_t* out_ndims, int64_t* out_sizes) noexcept {
  const tsr_host_api* host = context != nullptr ? context->host : query_host();
  return sdk::guard(host, [&] {
    if (context == nullptr) {
      sdk::throw_status(TSR_INVALID_ARGUMENT, "cpu size_fn called with a NULL plugin context");
    }
    Size(*context, call, out_ndims, out_sizes);
  });
}

constexpr const char* kScatterSchema =
    "_scatter_(Tensor(a!) self, int dim, Tensor index, Tensor src, int op) -> Tensor(a!)";

const tsr_kernel_entry kIndexing[] = {
    entry("gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor", kAll,
          kInt64, trampoline<gather_kernel>),
    // Assignment moves raw elements (every dtype); the combining codes compute.
    with_mask(with_codes(entry(kScatterSchema, kAll, kInt64, trampoline<scatter_kernel>),
                         {TSR_SCATTER_ASSIGN}),
              2, kAll),
    with_mask(with_codes(entry(kScatterSchema, kReal, kInt64, trampoline<scatter_kernel>),
                         {TSR_SCATTER_ADD, TSR_SCATTER_MUL, TSR_SCATTER_AMAX, TSR_SCATTER_AMIN}),
              2, kReal),
    with_mask(with_codes(entry(kScatterSchema, kComplex, kInt64, trampoline<scatter_kernel>),
                         {TSR_SCATTER_ADD, TSR_SCATTER_MUL}),
              2, kComplex),
    with_flags(entry("nonzero(Tensor self) -> Tensor", kAll, 0, trampoline<nonzero_kernel>),
               TSR_KERNEL_TWO_PHASE, size_trampoline<nonzero_size>),
    entry("sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) -> "
          "(Tensor values, Tensor indices)",
          kReal, 0, trampoline<sort_kernel>),
    with_mask(entry("searchsorted.Tensor(Tensor sorted_sequence, Tensor self, *, bool "
                    "out_int32=False, bool right=False, str? side=None, Tensor? sorter=None) -> "
                    "Tensor",
                    kReal & ~TSR_DTYPE_BIT(TSR_BOOL), kReal & ~TSR_DTYPE_BIT(TSR_BOOL),
                    trampoline<searchsorted_kernel>),
              2, kInt64),
};

}  // namespace

std::span<const tsr_kernel_entry> indexing_kernel_entries() noexcept { return kIndexing; }

}  // namespace tessera::cpu
