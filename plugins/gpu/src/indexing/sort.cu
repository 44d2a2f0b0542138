// sort.cu - nonzero (two-phase), sort.stable and searchsorted.Tensor: the CPU
// plugin's indexing/nonzero.cpp, sort.cpp and searchsorted.cpp as functors.
//
//  - nonzero: self's row-major element range is cut into chunks; one work
//    item per chunk counts its non-zero elements into scratch, one work item
//    turns the counts into starting rows (an exclusive scan over at most
//    kMaxChunks counts), and one work item per chunk writes the coordinates
//    of its non-zero elements from its starting row. The size phase counts
//    the same way and reads the total back (the one host synchronisation the
//    two-phase protocol allows). The fill phase never synchronises: if self
//    changed between the phases, rows past the output are dropped instead of
//    failing as the CPU does (that check would need a read-back).
//  - sort.stable: one work item per line along `dim`: the keys (compute_t<T>,
//    uint8 for bool) and an index array go to scratch, a bottom-up merge sort
//    orders the indices (stable: ties keep their order), and the line's raw
//    elements and int64 indices are written in that order. Order as PyTorch:
//    NaN above +inf, so last ascending and first descending.
//  - searchsorted.Tensor: one work item per value, binary search over its
//    boundary list (lower bound, or upper bound when `right`), PyTorch's
//    comparisons so NaN lands after every boundary. The host resolves `side`
//    and applies `sorter` before the call (both arrive as None), as for the CPU.
#include <cstring>
#include <type_traits>

#include "dtypes.hpp"
#include "indexer.hpp"
#include "indexing/index_util.hpp"
#include "kernel_util.hpp"
#include "tessera/sdk/op_checks.hpp"

namespace tessera::gpu {
namespace {

// The Exec of a call outside run_kernel (the size phase); the same lookup.
Exec exec_of(tsr_plugin_context& context, const tsr_kernel_call& call) {
  Device& d = device_at(context, call.device, call.op_name);
  Exec exec;
  exec.device = d.index;
  exec.info = &d.info;
  exec.stream = stream_or_default(d, call.stream).native;
  return exec;
}

// A 0-d descriptor's sizes as one element of a 1-d tensor.
struct Dims {
  int ndim = 0;
  int64_t sizes[TSR_MAX_DIMS] = {};
  int64_t strides[TSR_MAX_DIMS] = {};
};
Dims dims_of(const tsr_tensor_desc& d) {
  Dims s;
  s.ndim = d.ndim > 0 ? d.ndim : 1;
  s.sizes[0] = 1;
  for (int k = 0; k < d.ndim; ++k) {
    s.sizes[k] = d.sizes[k];
    s.strides[k] = d.strides[k];
  }
  return s;
}

// ---- nonzero ------------------------------------------------------------------

constexpr int64_t kMinChunk = 1024;
constexpr int64_t kMaxChunks = 8192;  // the scan is one work item

int64_t chunk_size(int64_t n) {
  const int64_t by_count = (n + kMaxChunks - 1) / kMaxChunks;
  return by_count > kMinChunk ? by_count : kMinChunk;
}

// x != 0: NaN counts, -0.0 does not; bool by its byte.
template <class T>
TSR_HD inline bool is_nonzero(const char* p) {
  if constexpr (std::is_same_v<T, bool>) {
    return *reinterpret_cast<const uint8_t*>(p) != 0;
  } else if constexpr (is_reduced_float_v<T>) {
    return static_cast<float>(*reinterpret_cast<const T*>(p)) != 0.0f;
  } else {
    return *reinterpret_cast<const T*>(p) != T(0);
  }
}

template <class T>
struct NonzeroCountOp {
  const char* self;
  Indexer<1> ix;
  int64_t n, chunk;
  int64_t* counts;
  TSR_HD void operator()(int64_t c) const {
    const int64_t begin = c * chunk;
    const int64_t end = begin + chunk < n ? begin + chunk : n;
    int64_t count = 0;
    for (int64_t i = begin; i < end; ++i) count += is_nonzero<T>(self + ix.offset(0, i)) ? 1 : 0;
    counts[c] = count;
  }
};

// counts -> exclusive prefix sums; counts[chunks] = the total.
struct ExclusiveScanOp {
  int64_t* counts;
  int64_t chunks;
  TSR_HD void operator()(int64_t) const {
    int64_t total = 0;
    for (int64_t c = 0; c < chunks; ++c) {
      const int64_t count = counts[c];
      counts[c] = total;
      total += count;
    }
    counts[chunks] = total;
  }
};

template <class T>
struct NonzeroWriteOp {
  const char* self;
  Indexer<1> ix;
  int64_t n, chunk;
  const int64_t* starts;
  char* out;
  int64_t rows, row_stride, col_stride;  // out: rows, byte strides
  int ndim;
  int64_t sizes[TSR_MAX_DIMS];
  TSR_HD void operator()(int64_t c) const {
    const int64_t begin = c * chunk;
    const int64_t end = begin + chunk < n ? begin + chunk : n;
    int64_t row = starts[c];
    for (int64_t i = begin; i < end && row < rows; ++i) {
      if (!is_nonzero<T>(self + ix.offset(0, i))) continue;
      char* dst = out + row * row_stride;
      int64_t rest = i;
      for (int d = ndim - 1; d >= 0; --d) {
        *reinterpret_cast<int64_t*>(dst + d * col_stride) = rest % sizes[d];
        rest /= sizes[d];
      }
      ++row;
    }
  }
};

// Counts per chunk into scratch and scans them on the device; returns the
// scratch array (chunks + 1 entries, the last the total).
int64_t* count_nonzero(const Exec& exec, const tsr_kernel_call& call, const tsr_tensor_desc& self,
                       const Indexer<1>& ix, int64_t chunk, int64_t chunks) {
  auto* counts =
      static_cast<int64_t*>(scratch(call, static_cast<size_t>(chunks + 1) * sizeof(int64_t)));
  if (chunks == 0) {
    memset_async(exec.device, counts, 0, sizeof(int64_t), exec.stream);
    return counts;
  }
  TSR_GPU_DISPATCH(self.dtype, "nonzero", T, {
    parallel_for(exec, chunks, NonzeroCountOp<T>{data_of(self), ix, ix.numel, chunk, counts},
                 "nonzero");
  });
  parallel_for(exec, 1, ExclusiveScanOp{counts, chunks}, "nonzero scan");
  return counts;
}

Indexer<1> self_indexer(const tsr_tensor_desc& self) {
  const tsr_tensor_desc* descs[1] = {&self};
  return make_indexer<1>(descs);
}

tsr_status* nonzero_size(tsr_plugin_context* context, const tsr_kernel_call* call,
                         int32_t* out_ndims, int64_t* out_sizes) noexcept {
  const tsr_host_api* host = context != nullptr ? context->host : nullptr;
  if (host == nullptr) return nullptr;
  return sdk::guard(host, [&] {
    if (call == nullptr || out_ndims == nullptr || out_sizes == nullptr)
      sdk::throw_status(TSR_INVALID_ARGUMENT,
                        "%s plugin nonzero: size_fn called with a NULL call, out_ndims or "
                        "out_sizes",
                        flavour_name());
    const Exec exec = exec_of(*context, *call);
    const tsr_tensor_desc& self = tensor_arg(*call, 0, "self");
    const Indexer<1> ix = self_indexer(self);
    const int64_t n = sdk::numel(self);
    const int64_t chunk = chunk_size(n);
    const int64_t chunks = (n + chunk - 1) / chunk;
    const int64_t* counts = count_nonzero(exec, *call, self, ix, chunk, chunks);
    int64_t total = 0;
    read_back(exec, &total, counts + chunks, sizeof total);
    out_ndims[0] = 2;
    out_sizes[0] = total;
    out_sizes[1] = self.ndim;
  });
}

tsr_status* nonzero_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) noexcept {
  return run_kernel(context, call, [&](const Exec& exec) {
    const tsr_tensor_desc& self = tensor_arg(*call, 0, "self");
    tsr_tensor_desc& out = out_arg(*call, 0);
    if (out.dtype != TSR_INT64 || out.ndim != 2 || out.sizes[1] != self.ndim)
      sdk::throw_status(TSR_INVALID_ARGUMENT,
                        "%s: out must be int64 [n, %d] (self has %d dims) but has %d dims",
                        call->op_name, static_cast<int>(self.ndim), static_cast<int>(self.ndim),
                        static_cast<int>(out.ndim));
    const int64_t n = sdk::numel(self);
    if (out.sizes[0] == 0 || self.ndim == 0 || n == 0) return;
    const Indexer<1> ix = self_indexer(self);
    const int64_t chunk = chunk_size(n);
    const int64_t chunks = (n + chunk - 1) / chunk;
    const int64_t* starts = count_nonzero(exec, *call, self, ix, chunk, chunks);
    TSR_GPU_DISPATCH(self.dtype, "nonzero", T, {
      NonzeroWriteOp<T> op{data_of(self),
                           ix,
                           n,
                           chunk,
                           starts,
                           data_of(out),
                           out.sizes[0],
                           out.strides[0] * static_cast<int64_t>(sizeof(int64_t)),
                           out.strides[1] * static_cast<int64_t>(sizeof(int64_t)),
                           self.ndim,
                           {}};
      for (int d = 0; d < self.ndim; ++d) op.sizes[d] = self.sizes[d];
      parallel_for(exec, chunks, op, "nonzero");
    });
  });
}

// ---- sort.stable ----------------------------------------------------------------

template <class T>
using key_t = std::conditional_t<std::is_same_v<T, bool>, uint8_t, compute_t<T>>;

template <class K>
TSR_HD inline bool is_nan_key(K k) {
  if constexpr (std::is_floating_point_v<K>) {
    return k != k;
  } else {
    (void)k;
    return false;
  }
}

// Whether key x goes strictly before key y.
template <class K>
TSR_HD inline bool sorts_before(K x, K y, bool descending) {
  if (descending) return is_nan_key(x) ? !is_nan_key(y) : x > y;
  return is_nan_key(y) ? !is_nan_key(x) : x < y;
}

template <class T>
struct SortOp {
  using K = key_t<T>;
  const char* self;
  char* values;
  char* indices;
  Indexer<3> lines;  // self, values, indices over the dims other than `dim`
  int64_t n;         // line length
  int64_t self_stride, values_stride, indices_stride;  // bytes along `dim`
  K* keys;                                             // scratch: n per line
  int64_t* order_a;                                    // scratch: n per line
  int64_t* order_b;                                    // scratch: n per line
  bool descending;
  TSR_HD void operator()(int64_t line) const {
    int64_t off[3];
    lines.offsets(line, off);
    K* k = keys + line * n;
    int64_t* src = order_a + line * n;
    int64_t* dst = order_b + line * n;
    for (int64_t i = 0; i < n; ++i) {
      k[i] = static_cast<K>(*reinterpret_cast<const T*>(self + off[0] + i * self_stride));
      src[i] = i;
    }
    // Bottom-up merge sort of the indices by key; a right element moves
    // ahead of a left one only when strictly before it (stable).
    for (int64_t width = 1; width < n; width *= 2) {
      for (int64_t lo = 0; lo < n; lo += 2 * width) {
        const int64_t mid = lo + width < n ? lo + width : n;
        const int64_t hi = mid + width < n ? mid + width : n;
        int64_t l = lo, r = mid, o = lo;
        while (l < mid && r < hi) {
          if (sorts_before(k[src[r]], k[src[l]], descending))
            dst[o++] = src[r++];
          else
            dst[o++] = src[l++];
        }
        while (l < mid) dst[o++] = src[l++];
        while (r < hi) dst[o++] = src[r++];
      }
      int64_t* t = src;
      src = dst;
      dst = t;
    }
    for (int64_t i = 0; i < n; ++i) {
      const int64_t j = src[i];
      *reinterpret_cast<T*>(values + off[1] + i * values_stride) =
          *reinterpret_cast<const T*>(self + off[0] + j * self_stride);
      *reinterpret_cast<int64_t*>(indices + off[2] + i * indices_stride) = j;
    }
  }
};

tsr_status* sort_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) noexcept {
  return run_kernel(context, call, [&](const Exec& exec) {
    const tsr_tensor_desc& self_desc = tensor_arg(*call, 0, "self");
    int64_t dim = int_arg(*call, 2, "dim");
    const bool descending = bool_arg(*call, 3, "descending");
    tsr_tensor_desc& values_desc = out_arg(*call, 0);
    tsr_tensor_desc& indices_desc = out_arg(*call, 1);
    const int64_t rank = self_desc.ndim > 0 ? self_desc.ndim : 1;
    if (dim < -rank || dim >= rank)
      sdk::throw_status(TSR_INVALID_ARGUMENT, "%s: dim %lld is out of range for %lld dims",
                        call->op_name, static_cast<long long>(dim), static_cast<long long>(rank));
    if (dim < 0) dim += rank;
    if (values_desc.dtype != self_desc.dtype || indices_desc.dtype != TSR_INT64)
      sdk::throw_status(TSR_INVALID_ARGUMENT,
                        "%s: values must have self's dtype and indices must be int64",
                        call->op_name);
    if (sdk::numel(self_desc) == 0) return;
    const Dims self = dims_of(self_desc), values = dims_of(values_desc),
               indices = dims_of(indices_desc);
    const size_t esize = sdk::element_size(self_desc.dtype);
    const sdk::dim_lines<3> l =
        sdk::lines_along<3>(static_cast<int>(dim), self.ndim, self.sizes,
                            {self.strides, values.strides, indices.strides});
    const Indexer<3> lines = indexer_of(l, {esize, esize, sizeof(int64_t)});
    const int64_t n = self.sizes[dim];
    const auto total = static_cast<size_t>(lines.numel * n);
    TSR_GPU_DISPATCH(self_desc.dtype, "sort.stable", T, {
      using K = key_t<T>;
      auto* keys = static_cast<K*>(scratch(*call, total * sizeof(K)));
      auto* order = static_cast<int64_t*>(scratch(*call, 2 * total * sizeof(int64_t)));
      parallel_for(exec, lines.numel,
                   SortOp<T>{data_of(self_desc), data_of(values_desc), data_of(indices_desc), lines,
                             n, self.strides[dim] * static_cast<int64_t>(esize),
                             values.strides[dim] * static_cast<int64_t>(esize),
                             indices.strides[dim] * static_cast<int64_t>(sizeof(int64_t)), keys,
                             order, order + total, descending},
                   "sort.stable");
    });
  });
}

// ---- searchsorted.Tensor --------------------------------------------------------

template <class T, class O>
struct SearchOp {
  using C = compute_t<T>;
  const char* seq;
  const char* self;
  char* out;
  Indexer<2> values;  // self, out over self's shape
  Indexer<1> rows;    // sorted_sequence's row over self's leading dims (stride 0 when 1-d)
  int64_t row_len, n, b_stride;
  bool right;
  TSR_HD void operator()(int64_t i) const {
    int64_t off[2];
    values.offsets(i, off);
    const char* b = seq + rows.offset(0, i / row_len);
    const C v = static_cast<C>(*reinterpret_cast<const T*>(self + off[0]));
    int64_t lo = 0, hi = n;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      const C m = static_cast<C>(*reinterpret_cast<const T*>(b + mid * b_stride));
      const bool go_right = right ? !(m > v) : !(m >= v);
      if (go_right)
        lo = mid + 1;
      else
        hi = mid;
    }
    *reinterpret_cast<O*>(out + off[1]) = static_cast<O>(lo);
  }
};

tsr_status* searchsorted_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) noexcept {
  return run_kernel(context, call, [&](const Exec& exec) {
    const sdk::searchsorted_args args = sdk::read_searchsorted(*call);
    const tsr_tensor_desc& seq = args.sorted_sequence;
    const tsr_tensor_desc& self_desc = args.self;
    tsr_tensor_desc& out = args.out;
    const bool out_int32 = args.out_int32, right = args.right, per_row = args.per_row;
    if (sdk::numel(self_desc) == 0) return;
    const Dims self = dims_of(self_desc), o = dims_of(out);
    const size_t esize = sdk::element_size(self_desc.dtype);
    const size_t osize = out_int32 ? sizeof(int32_t) : sizeof(int64_t);
    const int64_t* value_strides[2] = {self.strides, o.strides};
    const size_t value_esizes[2] = {esize, osize};
    const Indexer<2> values = indexer_of<2>(self.ndim, self.sizes, value_strides, value_esizes);
    // Rows: self's leading dims (a 0-d self is one row of one value).
    const int lead = self_desc.ndim > 0 ? self_desc.ndim - 1 : 0;
    int64_t seq_strides[TSR_MAX_DIMS] = {};
    if (per_row)
      for (int d = 0; d < lead; ++d) seq_strides[d] = seq.strides[d];
    const int64_t* row_strides[1] = {seq_strides};
    const size_t row_esizes[1] = {esize};
    const Indexer<1> rows = indexer_of<1>(lead, self.sizes, row_strides, row_esizes);
    const int64_t row_len = self_desc.ndim > 0 ? self_desc.sizes[self_desc.ndim - 1] : 1;
    const int64_t n = seq.sizes[seq.ndim - 1];
    const int64_t b_stride = seq.strides[seq.ndim - 1] * static_cast<int64_t>(esize);
    TSR_GPU_DISPATCH(self_desc.dtype, "searchsorted", T, {
      if constexpr (!std::is_same_v<T, bool>) {
        if (out_int32)
          parallel_for(exec, values.numel,
                       SearchOp<T, int32_t>{data_of(seq), data_of(self_desc), data_of(out), values,
                                            rows, row_len, n, b_stride, right},
                       "searchsorted");
        else
          parallel_for(exec, values.numel,
                       SearchOp<T, int64_t>{data_of(seq), data_of(self_desc), data_of(out), values,
                                            rows, row_len, n, b_stride, right},
                       "searchsorted");
      } else {
        unsupported_dtype(call->op_name, self_desc.dtype);
      }
    });
  });
}

}  // namespace

void add_sort_kernels(KernelList& out) {
  out.push_back(make_entry(sdk::schema::kNonzero, {kRealDtypes}, nonzero_kernel, {},
                           TSR_KERNEL_TWO_PHASE, nonzero_size));
  out.push_back(make_entry(sdk::schema::kSort, {kRealDtypes}, sort_kernel));
  out.push_back(make_entry(sdk::schema::kSearchsorted,
                           {kNumericDtypes, kNumericDtypes, sdk::kInt64Dtype},
                           searchsorted_kernel));
}

}  // namespace tessera::gpu
