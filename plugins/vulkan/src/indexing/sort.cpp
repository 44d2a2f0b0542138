// sort.cpp - nonzero (two-phase), sort.stable and searchsorted.Tensor
// on the device, with the CPU plugin's semantics (plugins/cpu/src/indexing).
//
//  - sort.stable (shaders/indexing/sort.comp, sort_merge.comp): a stable merge sort of
//    every line along `dim`, for every real dtype, ascending or descending,
//    NaN above +inf as PyTorch has it. Lines of at most kTile elements are
//    sorted by one dispatch in shared memory (sort.comp), straight into values
//    and indices; longer lines are sorted in tiles of kTile into scratch
//    (key, position) pairs, then merged by log2(n / kTile) passes of one
//    invocation per element (sort_merge.comp), the last writing the outputs.
//    Scratch: 32 bytes per element, long lines only.
//  - nonzero (shaders/indexing/sort_nonzero.comp): the size phase counts the non-zero
//    elements per block, scans the block counts on the device and reads the
//    total back (the one synchronisation); the fill phase counts again,
//    scans, and writes each block's coordinates from its starting row, so
//    rows come out in row-major order.
//  - searchsorted.Tensor (shaders/indexing/sort_search.comp): a binary search per
//    value. The host has folded `side` into `right` and applied `sorter`.
#include <algorithm>
#include <cstring>

#include "kernel_util.hpp"
#include "stream.hpp"
#include "tessera/sdk/op_checks.hpp"

namespace tessera::vulkan {
namespace {

const uint32_t kSortSpirv[] = {
#include "sort.spv.inc"
};
const Shader kSort{"sort", kSortSpirv, sizeof kSortSpirv};
const uint32_t kSortMergeSpirv[] = {
#include "sort_merge.spv.inc"
};
const Shader kSortMerge{"sort_merge", kSortMergeSpirv, sizeof kSortMergeSpirv};
const uint32_t kNonzeroSpirv[] = {
#include "sort_nonzero.spv.inc"
};
const Shader kNonzero{"sort_nonzero", kNonzeroSpirv, sizeof kNonzeroSpirv};
const uint32_t kSearchSpirv[] = {
#include "sort_search.spv.inc"
};
const Shader kSearch{"sort_search", kSearchSpirv, sizeof kSearchSpirv, 0, true};

constexpr uint64_t kSearchDtypes = kNumericDtypes;

// UNIMPLEMENTED unless `d`'s dtype is in `allowed`.
void require_dtype_in(const tsr_kernel_call& call, const tsr_tensor_desc& d, const char* name,
                      uint64_t allowed) {
  if (((allowed >> d.dtype) & 1) == 0) sdk::throw_unsupported_dtype(call, name, d.dtype, "vulkan");
}

// ---- sort.stable ------------------------------------------------------------------

// The parameter block of sort.comp and sort_merge.comp (their Args; std430,
// 416 bytes).
struct SortParams {
  int64_t total = 0;  // lines * n
  int64_t n = 0;      // line length
  int64_t width = 0;  // MERGE: sorted run length read
  int64_t lines = 0;
  int32_t pad_ = 0;
  int32_t descending = 0;
  int32_t direct = 0;      // write values / indices
  int32_t lines_ndim = 0;  // dims of `sizes`
  int64_t sizes[8] = {};   // the line dims (every dim but `dim`)
  int64_t along[4] = {};   // stride along dim: self, values, indices
  uint64_t keys_in = 0, idx_in = 0, keys_out = 0, idx_out = 0;
  OperandParams t[3];  // self, values, indices
};
static_assert(offsetof(SortParams, descending) == 36);
static_assert(offsetof(SortParams, sizes) == 48);
static_assert(offsetof(SortParams, along) == 112);
static_assert(offsetof(SortParams, keys_in) == 144);
static_assert(offsetof(SortParams, t) == 176);
static_assert(sizeof(SortParams) == 416);

constexpr int64_t kTile = 512;  // sort.comp's TILE

void sort_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) {
  const tsr_tensor_desc& self = tensor_arg(*call, 0, "self");
  (void)sdk::optional_bool_arg(*call, 1, "stable");
  int64_t dim = int_arg(*call, 2, "dim");
  const bool descending = bool_arg(*call, 3, "descending");
  const tsr_tensor_desc& values = out_arg(*call, 0);
  const tsr_tensor_desc& indices = out_arg(*call, 1);
  require_dtype_in(*call, self, "self", kRealDtypes);
  sdk::check_dtype(*call, values, "values", self.dtype);
  sdk::check_dtype(*call, indices, "indices", TSR_INT64);
  sdk::check_same_sizes(*call, values, "values", self, "self");
  sdk::check_same_sizes(*call, indices, "indices", self, "self");
  const int64_t rank = self.ndim > 0 ? self.ndim : 1;
  if (dim < -rank || dim >= rank)
    sdk::throw_status(TSR_INVALID_ARGUMENT,
                      "vulkan plugin %s: dim %lld is out of range for %lld dims; use "
                      "-%lld..%lld",
                      call->op_name, static_cast<long long>(dim), static_cast<long long>(rank),
                      static_cast<long long>(rank), static_cast<long long>(rank - 1));
  if (dim < 0) dim += rank;
  const int64_t total = sdk::numel(self);
  if (total == 0) return;

  SortParams p;
  p.total = total;
  p.descending = descending ? 1 : 0;
  p.t[0] = operand(self, 0);
  p.t[1] = operand(values, 0);
  p.t[2] = operand(indices, 0);
  p.n = 1;
  int k = 0;
  for (int d = 0; d < self.ndim; ++d) {
    if (d == dim) {
      p.n = self.sizes[d];
      p.along[0] = self.strides[d];
      p.along[1] = values.strides[d];
      p.along[2] = indices.strides[d];
      continue;
    }
    p.sizes[k] = self.sizes[d];
    p.t[0].strides[k] = self.strides[d];
    p.t[1].strides[k] = values.strides[d];
    p.t[2].strides[k] = indices.strides[d];
    ++k;
  }
  p.lines_ndim = k;
  p.lines = total / p.n;
  const int64_t n = p.n;
  Kernels& kernels = kernels_of(context, *call);

  // LOCAL: tiles of kTile (whole lines when n < kTile).
  const int64_t tiles =
      n < kTile ? (p.lines + kTile / n - 1) / (kTile / n) : p.lines * ((n + kTile - 1) / kTile);
  p.direct = n <= kTile ? 1 : 0;
  Allocation* keys[2] = {nullptr, nullptr};
  Allocation* idx[2] = {nullptr, nullptr};
  if (!p.direct) {
    const size_t bytes = static_cast<size_t>(total) * 8;
    for (int b = 0; b < 2; ++b) {
      keys[b] = &scratch(*call, bytes, "the sort keys");
      idx[b] = &scratch(*call, bytes, "the sort positions");
    }
    p.keys_out = keys[0]->address();
    p.idx_out = idx[0]->address();
  }
  kernels.dispatch(call->stream, kSort, &p, sizeof p,
                   static_cast<uint64_t>(tiles) * Kernels::kWorkgroup);
  // MERGE passes: runs of kTile, 2 kTile, ... until one run covers a line.
  int cur = 0;
  for (int64_t w = kTile; w < n; w *= 2) {
    p.width = w;
    p.direct = 2 * w >= n ? 1 : 0;
    p.keys_in = keys[cur]->address();
    p.idx_in = idx[cur]->address();
    p.keys_out = keys[1 - cur]->address();
    p.idx_out = idx[1 - cur]->address();
    kernels.dispatch(call->stream, kSortMerge, &p, sizeof p, static_cast<uint64_t>(total));
    cur = 1 - cur;
  }
}

// ---- nonzero --------------------------------------------------------------------

// sort_nonzero.comp's parameter block (std430, 272 bytes).
struct NonzeroParams {
  int64_t numel = 0;
  int64_t per_invocation = 1;
  int64_t blocks = 0;
  int32_t ndim = 0;
  int32_t mode = 0;
  int64_t sizes[8] = {};
  uint64_t counts = 0;  // uint64 [blocks + 1]
  int64_t out_rows = 0;
  OperandParams self;
  OperandParams out;  // the shader calls it dst
};
static_assert(offsetof(NonzeroParams, sizes) == 32);
static_assert(offsetof(NonzeroParams, counts) == 96);
static_assert(offsetof(NonzeroParams, self) == 112);
static_assert(sizeof(NonzeroParams) == 272);

enum NonzeroMode : int32_t { kCount = 0, kScan = 1, kFill = 2 };
// At most this many blocks (workgroups): SCAN's one workgroup stays short, and
// on lavapipe, where a workgroup that uses barriers runs as coroutines whose
// setup costs more than a few hundred elements, few big blocks are far faster
// (1M elements: 0.6 s with 64 blocks against 5 s with 4096). A workgroup per
// block: workgroups looping over many blocks, barriers inside the loop, have
// given wrong counts on lavapipe, so every block gets its own workgroup.
constexpr int64_t kMaxBlocks = 256;

// Parameters for self and a counts array in fresh scratch memory; runs COUNT
// and SCAN, leaving block starting rows and the total in the counts array.
// Returns it (numel > 0).
Allocation& count_and_scan(tsr_plugin_context* context, const tsr_kernel_call& call,
                           const tsr_tensor_desc& self, NonzeroParams& p) {
  require_dtype_in(call, self, "self", kRealDtypes);
  p.numel = sdk::numel(self);
  p.ndim = self.ndim;
  for (int d = 0; d < self.ndim; ++d) p.sizes[d] = self.sizes[d];
  const int64_t wg = Kernels::kWorkgroup;
  p.per_invocation = std::max<int64_t>(1, (p.numel + wg * kMaxBlocks - 1) / (wg * kMaxBlocks));
  p.blocks = (p.numel + wg * p.per_invocation - 1) / (wg * p.per_invocation);
  p.self = operand(self, self.ndim);
  Allocation& counts =
      scratch(call, static_cast<size_t>(p.blocks + 1) * sizeof(uint64_t), "the block counts");
  p.counts = counts.address();
  Kernels& kernels = kernels_of(context, call);
  p.mode = kCount;
  kernels.dispatch(call.stream, kNonzero, &p, sizeof p, static_cast<uint64_t>(p.blocks * wg));
  p.mode = kScan;
  kernels.dispatch(call.stream, kNonzero, &p, sizeof p, static_cast<uint64_t>(wg));
  return counts;
}

void nonzero_size(tsr_plugin_context* context, const tsr_kernel_call* call, int32_t* out_ndims,
                  int64_t* out_sizes) {
  const tsr_tensor_desc& self = tensor_arg(*call, 0, "self");
  if (out_ndims == nullptr || out_sizes == nullptr)
    sdk::throw_status(TSR_INVALID_ARGUMENT,
                      "vulkan plugin %s: size_fn called with NULL out_ndims or out_sizes",
                      call->op_name);
  int64_t total = 0;
  if (sdk::numel(self) > 0) {
    NonzeroParams p;
    Allocation& counts = count_and_scan(context, *call, self, p);
    Device& d = device_at(*context, call->device, call->op_name);
    uint64_t value = 0;
    read_back(d, stream_of(d, *call), counts, static_cast<uint64_t>(p.blocks) * 8, &value,
              sizeof value);
    check_validation(*context);
    total = static_cast<int64_t>(value);
  }
  out_ndims[0] = 2;
  out_sizes[0] = total;
  out_sizes[1] = self.ndim;
}

void nonzero_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) {
  const tsr_tensor_desc& self = tensor_arg(*call, 0, "self");
  const tsr_tensor_desc& out = out_arg(*call, 0);
  if (out.dtype != TSR_INT64 || out.ndim != 2 || out.sizes[1] != self.ndim)
    sdk::throw_status(TSR_INVALID_ARGUMENT,
                      "vulkan plugin %s: out must be int64 [n, %d] (self has %d dims); it has "
                      "dtype %d and %d dims",
                      call->op_name, static_cast<int>(self.ndim), static_cast<int>(self.ndim),
                      static_cast<int>(out.dtype), static_cast<int>(out.ndim));
  if (sdk::numel(self) == 0 || out.sizes[0] == 0 || self.ndim == 0) return;
  NonzeroParams p;
  count_and_scan(context, *call, self, p);
  p.out_rows = out.sizes[0];
  p.out = operand(out, 2);
  p.mode = kFill;
  kernels_of(context, *call)
      .dispatch(call->stream, kNonzero, &p, sizeof p,
                static_cast<uint64_t>(p.blocks) * Kernels::kWorkgroup);
}

// ---- searchsorted.Tensor --------------------------------------------------------------

// sort_search.comp's parameter block (std430, 336 bytes).
struct SearchParams {
  int64_t numel = 0;
  int64_t n = 0;
  int64_t seq_along = 0;
  int32_t ndim = 0;
  int32_t right = 0;
  int64_t sizes[8] = {};
  OperandParams self;
  OperandParams out;  // the shader calls it result
  OperandParams seq;
};
static_assert(offsetof(SearchParams, sizes) == 32);
static_assert(offsetof(SearchParams, self) == 96);
static_assert(sizeof(SearchParams) == 336);

void searchsorted_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) {
  const sdk::searchsorted_args args = sdk::read_searchsorted<sdk::memory::buffer>(*call);
  const tsr_tensor_desc& seq = args.sorted_sequence;
  const tsr_tensor_desc& self = args.self;
  const tsr_tensor_desc& out = args.out;
  const bool right = args.right, per_row = args.per_row;  // out's dtype: checked
  require_dtype_in(*call, self, "self", kSearchDtypes);
  SearchParams p;
  p.numel = sdk::numel(self);
  if (p.numel == 0) return;
  p.n = seq.sizes[seq.ndim - 1];
  p.seq_along = seq.strides[seq.ndim - 1];
  p.right = right ? 1 : 0;
  p.ndim = self.ndim > 0 ? self.ndim : 1;
  p.sizes[0] = 1;
  for (int d = 0; d < self.ndim; ++d) p.sizes[d] = self.sizes[d];
  p.self = operand(self, self.ndim);
  p.out = operand(out, out.ndim);
  p.seq = operand(seq, per_row ? seq.ndim - 1 : 0);
  kernels_of(context, *call)
      .dispatch(call->stream, kSearch, &p, sizeof p, static_cast<uint64_t>(p.numel));
}

}  // namespace

void add_sort_kernels(KernelList& out) {
  out.push_back(make_entry(sdk::schema::kNonzero, {kRealDtypes}, sdk::trampoline<nonzero_kernel>,
                           {}, TSR_KERNEL_TWO_PHASE, sdk::size_trampoline<nonzero_size>));
  out.push_back(make_entry(sdk::schema::kSort, {kRealDtypes}, sdk::trampoline<sort_kernel>));
  out.push_back(make_entry(sdk::schema::kSearchsorted,
                           {kSearchDtypes, kSearchDtypes, sdk::kInt64Dtype},
                           sdk::trampoline<searchsorted_kernel>));
}

}  // namespace tessera::vulkan
