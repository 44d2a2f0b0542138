// sort.cpp - sort.stable(self, *, stable, dim, descending) -> (values, indices).
//
// Every line along `dim` is sorted independently: its keys are loaded into a
// per-thread buffer (in compute_t<T>: float for float16/bfloat16), an index
// array 0..n-1 is ordered with std::stable_sort, and the line's values (raw
// elements, so NaN payloads and -0.0 survive) and int64 indices are written in
// that order. The sort is always stable, which every `stable` value accepts.
// Order (PyTorch's): NaN is greater than +inf, so it goes last ascending and
// first descending; equal keys keep their original order in both directions.
// Lines are split between threads (parallel.hpp) when there are several.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <numeric>
#include <optional>
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
using key_t = std::conditional_t<std::is_same_v<T, bool>, uint8_t, compute_t<T>>;

template <class K>
inline bool is_nan_key(K k) noexcept {
  if constexpr (std::is_floating_point_v<K>) {
    return std::isnan(k);
  } else {
    (void)k;
    return false;
  }
}

template <class T>
inline key_t<T> load_key(const char* p) noexcept {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return static_cast<key_t<T>>(v);
}

struct line_pointers {
  const char* self;
  char* values;
  char* indices;
};

template <class T>
void sort_line(const line_pointers& p, int64_t n, int64_t self_stride, int64_t values_stride,
               int64_t indices_stride, bool descending, std::vector<key_t<T>>& keys,
               std::vector<int64_t>& order) {
  using K = key_t<T>;
  keys.resize(static_cast<size_t>(n));
  order.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    keys[static_cast<size_t>(i)] = load_key<T>(p.self + i * self_stride);
  std::iota(order.begin(), order.end(), int64_t{0});
  const K* k = keys.data();
  if (descending) {
    std::stable_sort(order.begin(), order.end(), [k](int64_t a, int64_t b) {
      const K x = k[a], y = k[b];
      return is_nan_key(x) ? !is_nan_key(y) : x > y;
    });
  } else {
    std::stable_sort(order.begin(), order.end(), [k](int64_t a, int64_t b) {
      const K x = k[a], y = k[b];
      return is_nan_key(y) ? !is_nan_key(x) : x < y;
    });
  }
  for (int64_t i = 0; i < n; ++i) {
    const int64_t j = order[static_cast<size_t>(i)];
    std::memcpy(p.values + i * values_stride, p.self + j * self_stride, sizeof(T));
    std::memcpy(p.indices + i * indices_stride, &j, sizeof(int64_t));
  }
}

}  // namespace

void sort_kernel(const tsr_plugin_context& context, const tsr_kernel_call* c) {
  const tsr_kernel_call& call = sdk::check_call(c, 4, 2);
  const tsr_tensor_desc& self = sdk::tensor_arg(call, 0, "self");
  (void)sdk::optional_bool_arg(call, 1, "stable");
  const int64_t dim = sdk::int_arg(call, 2, "dim");
  const bool descending = sdk::bool_arg(call, 3, "descending");
  tsr_tensor_desc& values = sdk::out_arg(call, 0);
  tsr_tensor_desc& indices = sdk::out_arg(call, 1);
  check_dim(call, dim, self.ndim, "dim");
  sdk::check_dtype(call, values, "values", self.dtype);
  sdk::check_dtype(call, indices, "indices", TSR_INT64);
  sdk::check_same_sizes(call, values, "values", self, "self");
  sdk::check_same_sizes(call, indices, "indices", self, "self");
  if (sdk::is_complex_dtype(self.dtype))
    sdk::throw_unsupported_dtype(call, "self", self.dtype, kPluginName);
  if (sdk::numel(self) == 0) return;

  // The lines: every dim but `dim`, for the three operands.
  const size_t esize = sdk::element_size(self.dtype);
  const sdk::dim_lines<3> l = sdk::lines_along<3>(static_cast<int>(dim), self.ndim, self.sizes,
                                                  {self.strides, values.strides, indices.strides});
  const auto lines = sdk::make_layout(l, {esize, esize, sizeof(int64_t)});
  char* const base[3] = {static_cast<char*>(self.data), static_cast<char*>(values.data),
                         static_cast<char*>(indices.data)};
  const int64_t n = self.sizes[dim];
  const int64_t self_stride = self.strides[dim] * static_cast<int64_t>(esize);
  const int64_t values_stride = values.strides[dim] * static_cast<int64_t>(esize);
  const int64_t indices_stride = indices.strides[dim] * static_cast<int64_t>(sizeof(int64_t));
  const int64_t line_cost = n * (1 + static_cast<int64_t>(std::log2(static_cast<double>(n) + 1)));

  sdk::dispatch_dtype(self.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!is_complex_v<T>) {
      std::atomic<bool> out_of_memory{false};
      auto body = [&](int64_t begin, int64_t end) {
        // The buffers are the only allocation; bad_alloc must not leave an
        // OpenMP region, so it is caught here and reported after the loop.
        try {
          std::vector<key_t<T>> keys;
          std::vector<int64_t> order;
          keys.reserve(static_cast<size_t>(n));
          order.reserve(static_cast<size_t>(n));
          sdk::for_each_run(lines, base, begin, end, [&](char* const(&p)[3], int64_t count) {
            for (int64_t i = 0; i < count; ++i) {
              const line_pointers line{p[0] + i * lines.inner_stride(0),
                                       p[1] + i * lines.inner_stride(1),
                                       p[2] + i * lines.inner_stride(2)};
              sort_line<T>(line, n, self_stride, values_stride, indices_stride, descending, keys,
                           order);
            }
          });
        } catch (...) {
          out_of_memory.store(true, std::memory_order_relaxed);
        }
      };
      const int64_t count = lines.numel();
      if (count * line_cost < kParallelMinElements) {
        body(0, count);
      } else {
        parallel_ranges(thread_count(context), count, line_cost, body);
      }
      if (out_of_memory.load(std::memory_order_relaxed)) {
        sdk::throw_status(TSR_RESOURCE_EXHAUSTED,
                          "%s: out of host memory for the sort buffers of lines of %lld elements",
                          sdk::op_name(call), static_cast<long long>(n));
      }
    }
  });
}

}  // namespace tessera::cpu
