// searchsorted.cpp - searchsorted.Tensor(sorted_sequence, self, *, out_int32,
// right, side, sorter) by binary search.
//
// The host resolves `side` into `right` and applies `sorter` before the call
// (both arrive as None) and gives both inputs one dtype. sorted_sequence is
// either 1-d (one boundary list for every value) or has self's dims with the
// same leading sizes (one boundary list per row of self's last dim). For each
// value v the result is, over the boundary list b of length n:
//   right = false: the first i with !(b[i] < v)  (lower bound)
//   right = true:  the first i with !(b[i] <= v) (upper bound)
// with PyTorch's comparisons (written as !(b >= v) / !(b > v), so a NaN value
// lands after every boundary). out is int32 or int64, shaped like self.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "../convert.hpp"
#include "../parallel.hpp"
#include "indexing_kernels.hpp"
#include "tessera/sdk/dtype_traits.hpp"
#include "tessera/sdk/op_checks.hpp"
#include "tessera/sdk/status.hpp"
#include "tessera/sdk/strided.hpp"

namespace tessera::cpu {
namespace {

template <class T>
using cmp_t = std::conditional_t<std::is_same_v<T, bool>, uint8_t, compute_t<T>>;

template <class T>
inline cmp_t<T> load(const char* p) noexcept {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return static_cast<cmp_t<T>>(v);
}

template <class T, bool Right>
inline int64_t search(const char* b, int64_t n, int64_t stride, cmp_t<T> v) noexcept {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    const cmp_t<T> m = load<T>(b + mid * stride);
    const bool go_right = Right ? !(m > v) : !(m >= v);
    if (go_right) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

template <class T, class O, bool Right>
void search_rows(const sdk::strided_layout<3>& rows, char* const (&base)[3], int64_t begin,
                 int64_t end, int64_t row_len, int64_t self_stride, int64_t out_stride, int64_t n,
                 int64_t b_stride) {
  sdk::for_each_run(rows, base, begin, end, [&](char* const(&p)[3], int64_t count) {
    for (int64_t r = 0; r < count; ++r) {
      const char* s = p[0] + r * rows.inner_stride(0);
      char* o = p[1] + r * rows.inner_stride(1);
      const char* b = p[2] + r * rows.inner_stride(2);
      for (int64_t j = 0; j < row_len; ++j) {
        const O result =
            static_cast<O>(search<T, Right>(b, n, b_stride, load<T>(s + j * self_stride)));
        std::memcpy(o + j * out_stride, &result, sizeof(O));
      }
    }
  });
}

}  // namespace

void searchsorted_kernel(const tsr_plugin_context& context, const tsr_kernel_call* c) {
  const tsr_kernel_call& call = sdk::check_call(c, 6, 1);
  const sdk::searchsorted_args args = sdk::read_searchsorted(call);
  const tsr_tensor_desc& seq = args.sorted_sequence;
  const tsr_tensor_desc& self = args.self;
  tsr_tensor_desc& out = args.out;
  const bool out_int32 = args.out_int32, right = args.right, per_row = args.per_row;
  if (sdk::is_complex_dtype(self.dtype))
    sdk::throw_unsupported_dtype(call, "self", self.dtype, kPluginName);
  if (sdk::numel(self) == 0) return;

  // Rows: self's leading dims (a 0-d self is one row of one value).
  const size_t esize = sdk::element_size(self.dtype);
  const size_t osize = out_int32 ? sizeof(int32_t) : sizeof(int64_t);
  const int lead = self.ndim > 0 ? self.ndim - 1 : 0;
  int64_t seq_strides[TSR_MAX_DIMS] = {};
  if (per_row) std::copy(seq.strides, seq.strides + lead, seq_strides);
  const int64_t* strides[3] = {self.strides, out.strides, seq_strides};
  const size_t elem_sizes[3] = {esize, osize, esize};
  const auto rows = sdk::make_layout<3>(lead, self.sizes, strides, elem_sizes);
  char* const base[3] = {static_cast<char*>(self.data), static_cast<char*>(out.data),
                         static_cast<char*>(seq.data)};
  const int64_t row_len = self.ndim > 0 ? self.sizes[self.ndim - 1] : 1;
  const int64_t self_stride = self.ndim > 0 ? self.strides[self.ndim - 1] * int64_t(esize) : 0;
  const int64_t out_stride = self.ndim > 0 ? out.strides[self.ndim - 1] * int64_t(osize) : 0;
  const int64_t n = seq.sizes[seq.ndim - 1];
  const int64_t b_stride = seq.strides[seq.ndim - 1] * static_cast<int64_t>(esize);
  const int64_t row_count = rows.numel();
  const int64_t row_cost =
      row_len * (1 + static_cast<int64_t>(std::log2(static_cast<double>(n) + 1)));

  sdk::dispatch_dtype(self.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!is_complex_v<T>) {
      auto run = [&](auto out_tag, auto right_tag) {
        using O = typename decltype(out_tag)::type;
        constexpr bool R = decltype(right_tag)::value;
        auto body = [&](int64_t begin, int64_t end) {
          search_rows<T, O, R>(rows, base, begin, end, row_len, self_stride, out_stride, n,
                               b_stride);
        };
        if (row_count * row_cost < kParallelMinElements) {
          body(0, row_count);
        } else if (row_count > 1) {
          parallel_ranges(thread_count(context), row_count, row_cost, body);
        } else {
          // One long row: split its values between threads.
          parallel_ranges(thread_count(context), row_len, row_cost / std::max<int64_t>(row_len, 1),
                          [&](int64_t b, int64_t e) {
                            const char* s = base[0] + b * self_stride;
                            char* o = base[1] + b * out_stride;
                            for (int64_t j = 0; j < e - b; ++j) {
                              const O result = static_cast<O>(
                                  search<T, R>(base[2], n, b_stride, load<T>(s + j * self_stride)));
                              std::memcpy(o + j * out_stride, &result, sizeof(O));
                            }
                          });
        }
      };
      if (out_int32) {
        right ? run(sdk::dtype_tag<int32_t>{}, std::true_type{})
              : run(sdk::dtype_tag<int32_t>{}, std::false_type{});
      } else {
        right ? run(sdk::dtype_tag<int64_t>{}, std::true_type{})
              : run(sdk::dtype_tag<int64_t>{}, std::false_type{});
      }
    }
  });
}

}  // namespace tessera::cpu
