// nonzero.cpp - nonzero(self) -> [n, ndim] int64, a two-phase kernel
// (plugin.h, Note [Two-phase kernels]).
//
//   phase 1 (nonzero_size): counts the non-zero elements of self: out is
//     [count, self.ndim];
//   phase 2 (nonzero_kernel): splits self's row-major element range into one
//     chunk per thread, counts each chunk, turns the counts into starting rows
//     (an exclusive prefix sum), and lets every chunk write the coordinates of
//     its non-zero elements from its starting row, in row-major order.
// The CPU runs both phases synchronously, so phase 1 needs no synchronisation
// of its own. If self changed between the phases (a race in the caller), the
// counts disagree and phase 2 fails instead of writing past the output.
// "Non-zero" is x != 0: NaN counts, -0.0 does not; complex: either part.
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "../convert.hpp"
#include "../parallel.hpp"
#include "indexing_kernels.hpp"
#include "tessera/sdk/dtype_traits.hpp"
#include "tessera/sdk/status.hpp"
#include "tessera/sdk/strided.hpp"

namespace tessera::cpu {
namespace {

template <class T>
inline bool is_nonzero(const char* p) noexcept {
  if constexpr (std::is_same_v<T, bool>) {
    unsigned char byte;
    std::memcpy(&byte, p, 1);
    return byte != 0;
  } else {
    T v;
    std::memcpy(&v, p, sizeof(T));
    if constexpr (is_complex_v<T>) {
      return v.real() != 0 || v.imag() != 0;
    } else if constexpr (is_reduced_float_v<T>) {
      return static_cast<float>(v) != 0.0f;
    } else {
      return v != T(0);
    }
  }
}

// Walks elements [begin, end) of `self` in row-major order, calling
// f(address, coords) for each; coords has self.ndim entries.
template <class F>
void walk(const tsr_tensor_desc& self, size_t esize, int64_t begin, int64_t end, F&& f) {
  if (begin >= end) return;
  const int nd = self.ndim;
  int64_t coords[TSR_MAX_DIMS] = {};
  const char* p = static_cast<const char*>(self.data);
  int64_t rest = begin;
  for (int d = nd - 1; d >= 0; --d) {
    coords[d] = rest % self.sizes[d];
    rest /= self.sizes[d];
    p += coords[d] * self.strides[d] * static_cast<int64_t>(esize);
  }
  if (nd == 0) {
    f(p, coords);
    return;
  }
  const int inner = nd - 1;
  const int64_t inner_stride = self.strides[inner] * static_cast<int64_t>(esize);
  int64_t remaining = end - begin;
  for (;;) {
    const int64_t n = std::min(self.sizes[inner] - coords[inner], remaining);
    const int64_t start = coords[inner];
    for (int64_t i = 0; i < n; ++i) {
      coords[inner] = start + i;
      f(p + i * inner_stride, coords);
    }
    remaining -= n;
    if (remaining <= 0) return;
    p += (n - 1) * inner_stride;  // at the run's last element
    p -= coords[inner] * inner_stride;
    coords[inner] = 0;
    for (int d = inner - 1; d >= 0; --d) {
      const int64_t step = self.strides[d] * static_cast<int64_t>(esize);
      p += step;
      if (++coords[d] < self.sizes[d]) break;
      p -= coords[d] * step;
      coords[d] = 0;
    }
  }
}

// The number of chunks (threads) to split `numel` elements into.
int chunk_count(const tsr_plugin_context& context, int64_t numel) {
  if (numel < kParallelMinElements || omp_in_parallel()) return 1;
  return static_cast<int>(
      std::min<int64_t>(thread_count(context), numel / (kParallelMinElements / 2)));
}

template <class T>
int64_t count_range(const tsr_tensor_desc& self, int64_t begin, int64_t end) {
  int64_t count = 0;
  if (sdk::is_contiguous(self)) {
    const char* p = static_cast<const char*>(self.data);
    for (int64_t i = begin; i < end; ++i) count += is_nonzero<T>(p + i * sizeof(T)) ? 1 : 0;
    return count;
  }
  walk(self, sizeof(T), begin, end,
       [&](const char* p, const int64_t*) { count += is_nonzero<T>(p) ? 1 : 0; });
  return count;
}

// Non-zero counts of each of `chunks` equal parts of self.
template <class T>
std::vector<int64_t> count_chunks(const tsr_tensor_desc& self, int chunks) {
  const int64_t n = sdk::numel(self);
  std::vector<int64_t> counts(static_cast<size_t>(chunks), 0);
  if (chunks == 1) {
    counts[0] = count_range<T>(self, 0, n);
    return counts;
  }
#pragma omp parallel for schedule(static, 1) num_threads(chunks)
  for (int c = 0; c < chunks; ++c) {
    counts[static_cast<size_t>(c)] = count_range<T>(self, n * c / chunks, n * (c + 1) / chunks);
  }
  return counts;
}

template <class T>
void fill_range(const tsr_tensor_desc& self, const tsr_tensor_desc& out, int64_t begin, int64_t end,
                int64_t row) {
  const int nd = self.ndim;
  const int64_t row_stride = out.strides[0] * static_cast<int64_t>(sizeof(int64_t));
  const int64_t col_stride = nd > 0 ? out.strides[1] * static_cast<int64_t>(sizeof(int64_t)) : 0;
  char* base = static_cast<char*>(out.data);
  walk(self, sizeof(T), begin, end, [&](const char* p, const int64_t* coords) {
    if (!is_nonzero<T>(p)) return;
    char* dst = base + row * row_stride;
    for (int d = 0; d < nd; ++d) std::memcpy(dst + d * col_stride, &coords[d], sizeof(int64_t));
    ++row;
  });
}

const tsr_tensor_desc& self_of(const tsr_kernel_call& call) {
  return sdk::tensor_arg(call, 0, "self");
}

}  // namespace

void nonzero_size(const tsr_plugin_context& context, const tsr_kernel_call* c, int32_t* out_ndims,
                  int64_t* out_sizes) {
  const tsr_kernel_call& call = sdk::check_call(c, 1, 1);
  const tsr_tensor_desc& self = self_of(call);
  if (out_ndims == nullptr || out_sizes == nullptr) {
    sdk::throw_status(TSR_INVALID_ARGUMENT, "%s: size_fn called with NULL out_ndims or out_sizes",
                      sdk::op_name(call));
  }
  const int chunks = chunk_count(context, sdk::numel(self));
  int64_t total = 0;
  sdk::dispatch_dtype(self.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t n : count_chunks<T>(self, chunks)) total += n;
  });
  out_ndims[0] = 2;
  out_sizes[0] = total;
  out_sizes[1] = self.ndim;
}

void nonzero_kernel(const tsr_plugin_context& context, const tsr_kernel_call* c) {
  const tsr_kernel_call& call = sdk::check_call(c, 1, 1);
  const tsr_tensor_desc& self = self_of(call);
  const tsr_tensor_desc& out = sdk::out_arg(call, 0);
  sdk::check_dtype(call, out, "out", TSR_INT64);
  if (out.ndim != 2 || out.sizes[1] != self.ndim) {
    sdk::throw_status(TSR_INVALID_ARGUMENT,
                      "%s: out must be [n, %d] (self has %d dims) but has %d dims",
                      sdk::op_name(call), static_cast<int>(self.ndim), static_cast<int>(self.ndim),
                      static_cast<int>(out.ndim));
  }
  const int64_t n = sdk::numel(self);
  const int chunks = chunk_count(context, n);
  sdk::dispatch_dtype(self.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::vector<int64_t> starts = count_chunks<T>(self, chunks);
    int64_t total = 0;
    for (int64_t& s : starts) {
      const int64_t count = s;
      s = total;
      total += count;
    }
    if (total != out.sizes[0]) {
      sdk::throw_status(TSR_FAILED_PRECONDITION,
                        "%s: self has %lld non-zero elements but the output has %lld rows; self "
                        "was modified between the size and fill phases",
                        sdk::op_name(call), static_cast<long long>(total),
                        static_cast<long long>(out.sizes[0]));
    }
    if (total == 0 || self.ndim == 0) return;
    if (chunks == 1) {
      fill_range<T>(self, out, 0, n, 0);
      return;
    }
#pragma omp parallel for schedule(static, 1) num_threads(chunks)
    for (int ch = 0; ch < chunks; ++ch) {
      fill_range<T>(self, out, n * ch / chunks, n * (ch + 1) / chunks,
                    starts[static_cast<size_t>(ch)]);
    }
  });
}

}  // namespace tessera::cpu
