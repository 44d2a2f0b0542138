// pooling.cpp - max_pool2d(_with_indices), avg_pool2d, _adaptive_avg_pool2d
// and adaptive_max_pool2d kernels for float32 and float64 (contracts in
// core/registry/defs/conv.def; other dtypes run the core's decompositions).
//
// Each (batch, channel) plane is one task. For each output row, a vertical
// pass combines the window's input rows into a row buffer (max with the row
// it came from, or sum) - contiguous and vectorisable - and a horizontal pass
// combines the window's columns of that buffer for every output column.
// Planes whose rows are not unit-stride are packed into a per-thread buffer
// first. Index order is PyTorch's: the first maximum in row-major window
// order, or the last NaN (PyTorch updates on `val > max || isnan(val)`);
// windows that hold only -inf report their first in-bounds element. avg
// divisors follow PyTorch: divisor_override, else with count_include_pad the
// window clipped to the padded input, else the in-bounds element count. A
// window with no in-bounds element (possible in ceil mode) gives 0.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "../parallel.hpp"
#include "conv_kernels.hpp"
#include "pool_windows.hpp"
#include "tessera/sdk/kernel_args.hpp"
#include "tessera/sdk/status.hpp"

namespace tessera::cpu {

namespace {

using conv_detail::require;
using namespace pool_detail;

struct pool_shape {
  int64_t n = 0, c = 0, h = 0, w = 0, oh = 0, ow = 0;
  int64_t xs[4] = {}, ys[4] = {}, is[4] = {};  // element strides: input, out, indices
};

pool_shape shape_of(const tsr_kernel_call& call, const tsr_tensor_desc& x, const tsr_tensor_desc& y,
                    const tsr_tensor_desc* idx) {
  require(call, x.ndim == 4 && y.ndim == 4, "self and out must be 4-d (N, C, H, W)");
  require(call, y.sizes[0] == x.sizes[0] && y.sizes[1] == x.sizes[1],
          "out must have self's batch and channels");
  sdk::check_dtype(call, y, "out", x.dtype);
  if (x.dtype != TSR_FLOAT32 && x.dtype != TSR_FLOAT64)
    sdk::throw_unsupported_dtype(call, "self", x.dtype, kPluginName);
  pool_shape s;
  s.n = x.sizes[0];
  s.c = x.sizes[1];
  s.h = x.sizes[2];
  s.w = x.sizes[3];
  s.oh = y.sizes[2];
  s.ow = y.sizes[3];
  require(call, s.h > 0 && s.w > 0 && s.oh > 0 && s.ow > 0, "spatial sizes must be positive");
  require(call, s.h <= std::numeric_limits<int32_t>::max(), "height must fit in int32");
  for (int i = 0; i < 4; ++i) {
    s.xs[i] = x.strides[i];
    s.ys[i] = y.strides[i];
  }
  if (idx) {
    sdk::check_dtype(call, *idx, "indices", TSR_INT64);
    bool same = idx->ndim == 4;
    for (int i = 0; same && i < 4; ++i) same = idx->sizes[i] == y.sizes[i];
    require(call, same, "indices must have out's shape");
    for (int i = 0; i < 4; ++i) s.is[i] = idx->strides[i];
  }
  return s;
}

// Per-thread buffers of the pooling loops (allocated once per thread range).
template <class T>
struct pool_workspace {
  std::vector<T> packed;          // a plane whose rows are not unit-stride
  std::vector<T> row;             // the vertical pass's result
  std::vector<int32_t> row_from;  // max pooling: the input row of each entry
  std::vector<T> sums;            // sum pooling: one output row's window sums
};

// Runs body(n, c, row, workspace) for every (n, c) plane, split between
// threads; row(h) points at input row h (unit stride).
template <class T, class Body>
void for_each_plane(const tsr_plugin_context& context, const tsr_tensor_desc& x,
                    const pool_shape& s, int64_t cost_per_plane, Body&& body) {
  const T* base = static_cast<const T*>(x.data);
  const bool unit_rows = s.xs[3] == 1 || s.w == 1;
  parallel_ranges(thread_count(context), s.n * s.c, cost_per_plane, [&](int64_t p0, int64_t p1) {
    pool_workspace<T> ws;
    ws.row.resize(static_cast<size_t>(s.w));
    ws.row_from.resize(static_cast<size_t>(s.w));
    for (int64_t plane = p0; plane < p1; ++plane) {
      const int64_t n = plane / s.c, c = plane % s.c;
      const T* start = base + n * s.xs[0] + c * s.xs[1];
      int64_t row_stride = s.xs[2];
      if (!unit_rows) {
        ws.packed.resize(static_cast<size_t>(s.h * s.w));
        for (int64_t h = 0; h < s.h; ++h)
          for (int64_t w = 0; w < s.w; ++w)
            ws.packed[h * s.w + w] = start[h * s.xs[2] + w * s.xs[3]];
        start = ws.packed.data();
        row_stride = s.w;
      }
      body(
          n, c, [start, row_stride](int64_t h) { return start + h * row_stride; }, ws);
    }
  });
}

template <class T>
inline bool is_nan(T v) {
  return v != v;
}

// max pooling over windows given per output row/column by rows(oh) and
// cols(ow) (taps). The vertical pass keeps, per column, the maximum over the
// window's rows and the row it came from; the horizontal pass picks among
// the window's columns with PyTorch's order (smaller row, then smaller
// column, for equal values; for NaNs the last in row-major order).
template <class T, bool kIndices, class Rows, class Cols>
void max_pool(const tsr_plugin_context& context, const tsr_tensor_desc& x, const pool_shape& s,
              T* y, int64_t* idx, Rows&& rows, Cols&& cols, int64_t cost) {
  for_each_plane<T>(
      context, x, s, s.oh * s.ow * cost,
      [&](int64_t n, int64_t c, auto row, pool_workspace<T>& ws) {
        T* const bv = ws.row.data();
        int32_t* const br = ws.row_from.data();
        const int64_t width = s.w;
        for (int64_t oh = 0; oh < s.oh; ++oh) {
          const taps th = rows(oh);
          if (th.count == 0) {  // only padding rows (the host's shape rules prevent it)
            std::fill(bv, bv + width, -std::numeric_limits<T>::infinity());
            if constexpr (kIndices) std::fill(br, br + width, int32_t{0});
          } else {
            const T* r0 = row(th.first);
            std::copy(r0, r0 + width, bv);
            if constexpr (kIndices) std::fill(br, br + width, static_cast<int32_t>(th.first));
          }
          for (int64_t i = 1; i < th.count; ++i) {
            const int64_t h = th.first + i * th.step;
            const T* r = row(h);
            const int32_t h32 = static_cast<int32_t>(h);
            // Branch-free (bitwise |) so the loop vectorises.
            for (int64_t w = 0; w < width; ++w) {
              const T v = r[w], m = bv[w];
              const bool take = (v > m) | (v != v);
              bv[w] = take ? v : m;
              if constexpr (kIndices) br[w] = take ? h32 : br[w];
            }
          }
          T* const yrow = y + n * s.ys[0] + c * s.ys[1] + oh * s.ys[2];
          for (int64_t ow = 0; ow < s.ow; ++ow) {
            const taps tw = cols(ow);
            if (tw.count == 0) {  // only padding columns (prevented by the host)
              yrow[ow * s.ys[3]] = -std::numeric_limits<T>::infinity();
              if constexpr (kIndices)
                idx[n * s.is[0] + c * s.is[1] + oh * s.is[2] + ow * s.is[3]] = 0;
              continue;
            }
            T m = bv[tw.first];
            if constexpr (!kIndices) {
              for (int64_t j = 1; j < tw.count; ++j) {
                const T v = bv[tw.first + j * tw.step];
                m = ((v > m) | (v != v)) ? v : m;
              }
              yrow[ow * s.ys[3]] = m;
            } else {
              int64_t mr = br[tw.first], mc = tw.first;
              for (int64_t j = 1; j < tw.count; ++j) {
                const int64_t w = tw.first + j * tw.step;
                const T v = bv[w];
                const int64_t r = br[w];
                const bool better = is_nan(v) ? (!is_nan(m) || r >= mr)
                                              : (!is_nan(m) && (v > m || (v == m && r < mr)));
                if (better) {
                  m = v;
                  mr = r;
                  mc = w;
                }
              }
              yrow[ow * s.ys[3]] = m;
              idx[n * s.is[0] + c * s.is[1] + oh * s.is[2] + ow * s.is[3]] = mr * s.w + mc;
            }
          }
        }
      });
}

template <bool kIndices>
void max_pool_kernel(const tsr_plugin_context& context, const tsr_kernel_call* raw_call) {
  const tsr_kernel_call& call = sdk::check_call(raw_call, 6, kIndices ? 2 : 1);
  const tsr_tensor_desc& x = sdk::tensor_arg(call, 0, "self");
  const tsr_tensor_desc& y = sdk::out_arg(call, 0);
  const tsr_tensor_desc* idx = kIndices ? &sdk::out_arg(call, 1) : nullptr;
  pool_axis ah, aw;
  read_axes(call, 1, true, ah, aw);
  (void)sdk::bool_arg(call, 5, "ceil_mode");  // the output size already reflects it
  const pool_shape s = shape_of(call, x, y, idx);
  check_windows(call, ah, s.h, s.oh);
  check_windows(call, aw, s.w, s.ow);
  const tap_table rows(fixed_windows{ah, s.h}, s.oh), cols(fixed_windows{aw, s.w}, s.ow);
  int64_t* ip = idx ? static_cast<int64_t*>(idx->data) : nullptr;
  if (x.dtype == TSR_FLOAT32)
    max_pool<float, kIndices>(context, x, s, static_cast<float*>(y.data), ip, rows, cols,
                              ah.kernel * aw.kernel);
  else
    max_pool<double, kIndices>(context, x, s, static_cast<double*>(y.data), ip, rows, cols,
                               ah.kernel * aw.kernel);
}

// Sum pooling: out = window sum / divisors[oh * ow_count + ow] (the same for
// every plane, computed once per call); 0 for a window without in-bounds
// elements. The divisions of a row run as one vectorisable loop.
template <class T, class Rows, class Cols>
void sum_pool(const tsr_plugin_context& context, const tsr_tensor_desc& x, const pool_shape& s,
              T* y, Rows&& rows, Cols&& cols, const std::vector<T>& divisors, int64_t cost) {
  for_each_plane<T>(context, x, s, s.oh * s.ow * cost,
                    [&](int64_t n, int64_t c, auto row, pool_workspace<T>& ws) {
                      T* const a = ws.row.data();
                      ws.sums.resize(static_cast<size_t>(s.ow));
                      T* const sums = ws.sums.data();
                      const int64_t width = s.w;
                      for (int64_t oh = 0; oh < s.oh; ++oh) {
                        const taps th = rows(oh);
                        std::fill(a, a + width, T(0));
                        for (int64_t i = 0; i < th.count; ++i) {
                          const T* r = row(th.first + i * th.step);
                          for (int64_t w = 0; w < width; ++w) a[w] += r[w];
                        }
                        for (int64_t ow = 0; ow < s.ow; ++ow) {
                          const taps tw = cols(ow);
                          T sum = T(0);
                          for (int64_t j = 0; j < tw.count; ++j) sum += a[tw.first + j * tw.step];
                          sums[ow] = sum;
                        }
                        const T* const div = divisors.data() + oh * s.ow;
                        T* const yrow = y + n * s.ys[0] + c * s.ys[1] + oh * s.ys[2];
                        if (s.ys[3] == 1) {
                          for (int64_t ow = 0; ow < s.ow; ++ow) yrow[ow] = sums[ow] / div[ow];
                        } else {
                          for (int64_t ow = 0; ow < s.ow; ++ow)
                            yrow[ow * s.ys[3]] = sums[ow] / div[ow];
                        }
                      }
                    });
}

// The divisor table of sum_pool: divisor(oh, ow), 1 for windows without
// in-bounds elements (their sum is 0).
template <class T, class Rows, class Cols, class Divisor>
std::vector<T> divisor_table(const pool_shape& s, Rows&& rows, Cols&& cols, Divisor&& divisor) {
  std::vector<T> d(static_cast<size_t>(s.oh * s.ow));
  for (int64_t oh = 0; oh < s.oh; ++oh)
    for (int64_t ow = 0; ow < s.ow; ++ow) {
      const bool empty = rows(oh).count == 0 || cols(ow).count == 0;
      d[oh * s.ow + ow] = empty ? T(1) : static_cast<T>(divisor(oh, ow));
    }
  return d;
}

// Global average pooling (output 1x1) of planes stored contiguously: one sum
// per plane with 8 independent partial sums (vectorisable without reassociation).
template <class T>
void global_average(const tsr_plugin_context& context, const T* x, const pool_shape& s, T* y) {
  const int64_t plane = s.h * s.w;
  parallel_ranges(thread_count(context), s.n * s.c, plane, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t n = p / s.c, c = p % s.c;
      const T* v = x + n * s.xs[0] + c * s.xs[1];
      T part[8] = {};
      int64_t i = 0;
      for (; i + 8 <= plane; i += 8)
        for (int k = 0; k < 8; ++k) part[k] += v[i + k];
      for (; i < plane; ++i) part[0] += v[i];
      const T sum =
          ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
      y[n * s.ys[0] + c * s.ys[1]] = sum / static_cast<T>(plane);
    }
  });
}

}  // namespace

void max_pool2d_with_indices_kernel(const tsr_plugin_context& context,
                                    const tsr_kernel_call* call) {
  max_pool_kernel<true>(context, call);
}

void max_pool2d_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call) {
  max_pool_kernel<false>(context, call);
}

void avg_pool2d_kernel(const tsr_plugin_context& context, const tsr_kernel_call* raw_call) {
  const tsr_kernel_call& call = sdk::check_call(raw_call, 7, 1);
  const tsr_tensor_desc& x = sdk::tensor_arg(call, 0, "self");
  const tsr_tensor_desc& y = sdk::out_arg(call, 0);
  pool_axis ah, aw;
  read_axes(call, 1, false, ah, aw);
  (void)sdk::bool_arg(call, 4, "ceil_mode");
  const bool include_pad = sdk::bool_arg(call, 5, "count_include_pad");
  const std::optional<int64_t> override_arg = sdk::optional_int_arg(call, 6, "divisor_override");
  const bool has_override = override_arg.has_value();
  const int64_t override_value = override_arg.value_or(0);
  require(call, !has_override || override_value != 0, "divisor_override must not be 0");
  const pool_shape s = shape_of(call, x, y, nullptr);
  check_windows(call, ah, s.h, s.oh);
  check_windows(call, aw, s.w, s.ow);
  const tap_table rows(fixed_windows{ah, s.h}, s.oh), cols(fixed_windows{aw, s.w}, s.ow);
  auto divisor = [&](int64_t oh, int64_t ow) {
    return avg_window_divisor(ah, aw, s.h, s.w, oh, ow, include_pad, has_override, override_value);
  };
  if (x.dtype == TSR_FLOAT32)
    sum_pool<float>(context, x, s, static_cast<float*>(y.data), rows, cols,
                    divisor_table<float>(s, rows, cols, divisor), ah.kernel * aw.kernel);
  else
    sum_pool<double>(context, x, s, static_cast<double*>(y.data), rows, cols,
                     divisor_table<double>(s, rows, cols, divisor), ah.kernel * aw.kernel);
}

void adaptive_avg_pool2d_kernel(const tsr_plugin_context& context,
                                const tsr_kernel_call* raw_call) {
  const tsr_kernel_call& call = sdk::check_call(raw_call, 2, 1);
  const tsr_tensor_desc& x = sdk::tensor_arg(call, 0, "self");
  const tsr_tensor_desc& y = sdk::out_arg(call, 0);
  int64_t os[2];
  int_list_arg(call, 1, "output_size", 2, os);
  const pool_shape s = shape_of(call, x, y, nullptr);
  require(call, os[0] == s.oh && os[1] == s.ow, "out's shape must be output_size");
  const tap_table rows(adaptive_windows{s.h, s.oh}, s.oh), cols(adaptive_windows{s.w, s.ow}, s.ow);
  auto divisor = [&](int64_t oh, int64_t ow) { return rows(oh).count * cols(ow).count; };
  if (s.oh == 1 && s.ow == 1 && (s.w == 1 || s.xs[3] == 1) && (s.h == 1 || s.xs[2] == s.w)) {
    if (x.dtype == TSR_FLOAT32)
      global_average(context, static_cast<const float*>(x.data), s, static_cast<float*>(y.data));
    else
      global_average(context, static_cast<const double*>(x.data), s, static_cast<double*>(y.data));
    return;
  }
  const int64_t cost = (s.h / s.oh + 1) * (s.w / s.ow + 1);
  if (x.dtype == TSR_FLOAT32)
    sum_pool<float>(context, x, s, static_cast<float*>(y.data), rows, cols,
                    divisor_table<float>(s, rows, cols, divisor), cost);
  else
    sum_pool<double>(context, x, s, static_cast<double*>(y.data), rows, cols,
                     divisor_table<double>(s, rows, cols, divisor), cost);
}

void adaptive_max_pool2d_kernel(const tsr_plugin_context& context,
                                const tsr_kernel_call* raw_call) {
  const tsr_kernel_call& call = sdk::check_call(raw_call, 2, 2);
  const tsr_tensor_desc& x = sdk::tensor_arg(call, 0, "self");
  const tsr_tensor_desc& y = sdk::out_arg(call, 0);
  const tsr_tensor_desc& idx = sdk::out_arg(call, 1);
  int64_t os[2];
  int_list_arg(call, 1, "output_size", 2, os);
  const pool_shape s = shape_of(call, x, y, &idx);
  require(call, os[0] == s.oh && os[1] == s.ow, "out's shape must be output_size");
  const tap_table rows(adaptive_windows{s.h, s.oh}, s.oh), cols(adaptive_windows{s.w, s.ow}, s.ow);
  const int64_t cost = (s.h / s.oh + 1) * (s.w / s.ow + 1);
  int64_t* ip = static_cast<int64_t*>(idx.data);
  if (x.dtype == TSR_FLOAT32)
    max_pool<float, true>(context, x, s, static_cast<float*>(y.data), ip, rows, cols, cost);
  else
    max_pool<double, true>(context, x, s, static_cast<double*>(y.data), ip, rows, cols, cost);
}

}  // namespace tessera::cpu
