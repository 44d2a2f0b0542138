// pooling_backward.cpp - max_pool2d_with_indices_backward,
// adaptive_max_pool2d_backward, avg_pool2d_backward and
// _adaptive_avg_pool2d_backward kernels for float32 and float64 (contracts
// in core/registry/defs/conv.def; other dtypes run the core's decompositions).
//
// Each (batch, channel) plane of grad_input is one task, zeroed and then
// accumulated in output order, so results do not depend on the thread
// count. Max pooling adds each grad_output element at its saved index (an
// index outside the plane is refused after the sweep, naming one of them). Average pooling mirrors
// the forward's two passes: per output row, a horizontal pass spreads each grad_output / divisor
// over its window's columns into a row buffer, then a vertical pass adds that buffer to each of the
// window's input rows (contiguous, vectorisable). oneDNN's pooling backward does not fit: its max
// backward wants oneDNN's own workspace rather than PyTorch's indices, and its average modes have
// neither divisor_override nor ceil mode's clipped windows.
#include <algorithm>
#include <atomic>
#include <cstdint>
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

using conv_detail::int_list_arg;
using conv_detail::require;
using namespace pool_detail;

// Shapes and element strides of grad_output (gs), indices (is) and the
// contiguous grad_input (N, C, H, W).
struct backward_shape {
  int64_t n = 0, c = 0, h = 0, w = 0, oh = 0, ow = 0;
  int64_t gs[4] = {}, is[4] = {};
};

backward_shape shape_of(const tsr_kernel_call& call, const tsr_tensor_desc& g,
                        const tsr_tensor_desc& x, const tsr_tensor_desc& out,
                        const tsr_tensor_desc* idx) {
  require(call, g.ndim == 4 && x.ndim == 4 && out.ndim == 4,
          "grad_output, self and out must be 4-d (N, C, H, W)");
  if (x.dtype != TSR_FLOAT32 && x.dtype != TSR_FLOAT64)
    sdk::throw_unsupported_dtype(call, "self", x.dtype, kPluginName);
  sdk::check_dtype(call, g, "grad_output", x.dtype);
  sdk::check_dtype(call, out, "out", x.dtype);
  backward_shape s;
  s.n = x.sizes[0];
  s.c = x.sizes[1];
  s.h = x.sizes[2];
  s.w = x.sizes[3];
  s.oh = g.sizes[2];
  s.ow = g.sizes[3];
  require(call, g.sizes[0] == s.n && g.sizes[1] == s.c,
          "grad_output must have self's batch and channels");
  require(call, s.h > 0 && s.w > 0 && s.oh > 0 && s.ow > 0, "spatial sizes must be positive");
  bool same = true;
  int64_t stride = 1;
  for (int i = 3; i >= 0; --i) {
    same = same && out.sizes[i] == x.sizes[i] && (out.sizes[i] == 1 || out.strides[i] == stride);
    stride *= out.sizes[i];
  }
  require(call, same, "out must be contiguous with self's shape");
  for (int i = 0; i < 4; ++i) s.gs[i] = g.strides[i];
  if (idx) {
    sdk::check_dtype(call, *idx, "indices", TSR_INT64);
    bool shaped = idx->ndim == 4;
    for (int i = 0; shaped && i < 4; ++i) shaped = idx->sizes[i] == g.sizes[i];
    require(call, shaped, "indices must have grad_output's shape");
    for (int i = 0; i < 4; ++i) s.is[i] = idx->strides[i];
  }
  return s;
}

// grad_input planes: zero, then grad_output added at the flat indices.
template <class T>
void scatter_planes(const tsr_plugin_context& context, const tsr_kernel_call& call,
                    const backward_shape& s, const T* g, const int64_t* idx, T* out) {
  const int64_t plane = s.h * s.w;
  std::atomic<bool> any_bad{false};
  std::atomic<int64_t> bad{0};
  parallel_ranges(thread_count(context), s.n * s.c, s.oh * s.ow + plane / 8,
                  [&](int64_t p0, int64_t p1) {
                    for (int64_t p = p0; p < p1; ++p) {
                      const int64_t n = p / s.c, c = p % s.c;
                      T* gi = out + p * plane;
                      std::fill(gi, gi + plane, T(0));
                      const T* gp = g + n * s.gs[0] + c * s.gs[1];
                      const int64_t* ip = idx + n * s.is[0] + c * s.is[1];
                      for (int64_t oh = 0; oh < s.oh; ++oh) {
                        const T* grow = gp + oh * s.gs[2];
                        const int64_t* irow = ip + oh * s.is[2];
                        for (int64_t ow = 0; ow < s.ow; ++ow) {
                          const int64_t k = irow[ow * s.is[3]];
                          if (k < 0 || k >= plane) [[unlikely]] {
                            if (!any_bad.exchange(true)) bad.store(k);
                            continue;
                          }
                          gi[k] += grow[ow * s.gs[3]];
                        }
                      }
                    }
                  });
  if (any_bad.load())
    sdk::throw_status(TSR_INVALID_ARGUMENT,
                      "%s: indices holds %lld, outside the input plane of %lld elements; pass "
                      "the indices the forward returned",
                      sdk::op_name(call), static_cast<long long>(bad.load()),
                      static_cast<long long>(plane));
}

template <class T>
void max_backward(const tsr_plugin_context& context, const tsr_kernel_call& call,
                  const tsr_tensor_desc& g, const tsr_tensor_desc& x, const tsr_tensor_desc& idx,
                  const tsr_tensor_desc& out) {
  const backward_shape s = shape_of(call, g, x, out, &idx);
  scatter_planes<T>(context, call, s, static_cast<const T*>(g.data),
                    static_cast<const int64_t*>(idx.data), static_cast<T*>(out.data));
}

template <class Fn>
void by_dtype(const tsr_tensor_desc& x, Fn&& fn) {
  if (x.dtype == TSR_FLOAT32)
    fn(float{});
  else
    fn(double{});
}

// Sum pooling backward over windows rows(oh) x cols(ow): grad_output(oh, ow)
// / divisors[oh * ow_count + ow] added to each in-bounds element of the
// window.
template <class T>
void spread_planes(const tsr_plugin_context& context, const backward_shape& s, const T* g, T* out,
                   const tap_table& rows, const tap_table& cols, const std::vector<T>& divisors,
                   int64_t cost) {
  const int64_t plane = s.h * s.w;
  parallel_ranges(thread_count(context), s.n * s.c, s.oh * s.ow * cost + plane / 8,
                  [&](int64_t p0, int64_t p1) {
                    std::vector<T> buffer(static_cast<size_t>(s.w));
                    T* const r = buffer.data();
                    for (int64_t p = p0; p < p1; ++p) {
                      const int64_t n = p / s.c, c = p % s.c;
                      T* gi = out + p * plane;
                      std::fill(gi, gi + plane, T(0));
                      const T* gp = g + n * s.gs[0] + c * s.gs[1];
                      for (int64_t oh = 0; oh < s.oh; ++oh) {
                        const taps th = rows(oh);
                        if (th.count == 0) continue;
                        std::fill(r, r + s.w, T(0));
                        const T* grow = gp + oh * s.gs[2];
                        const T* div = divisors.data() + oh * s.ow;
                        for (int64_t ow = 0; ow < s.ow; ++ow) {
                          const taps tw = cols(ow);
                          const T d = grow[ow * s.gs[3]] / div[ow];
                          for (int64_t j = 0; j < tw.count; ++j) r[tw.first + j * tw.step] += d;
                        }
                        for (int64_t i = 0; i < th.count; ++i) {
                          T* dst = gi + (th.first + i * th.step) * s.w;
                          for (int64_t w = 0; w < s.w; ++w) dst[w] += r[w];
                        }
                      }
                    }
                  });
}

}  // namespace

void max_pool2d_with_indices_backward_kernel(const tsr_plugin_context& context,
                                             const tsr_kernel_call* raw_call) {
  const tsr_kernel_call& call = sdk::check_call(raw_call, 8, 1);
  const tsr_tensor_desc& g = sdk::tensor_arg(call, 0, "grad_output");
  const tsr_tensor_desc& x = sdk::tensor_arg(call, 1, "self");
  const tsr_tensor_desc& idx = sdk::tensor_arg(call, 7, "indices");
  const tsr_tensor_desc& out = sdk::out_arg(call, 0);
  pool_axis ah, aw;
  read_axes(call, 2, true, ah, aw);
  (void)sdk::bool_arg(call, 6, "ceil_mode");  // grad_output's size already reflects it
  require(call, g.ndim == 4 && x.ndim == 4, "grad_output and self must be 4-d (N, C, H, W)");
  check_windows(call, ah, x.sizes[2], g.sizes[2]);
  check_windows(call, aw, x.sizes[3], g.sizes[3]);
  by_dtype(x, [&](auto t) { max_backward<decltype(t)>(context, call, g, x, idx, out); });
}

void adaptive_max_pool2d_backward_kernel(const tsr_plugin_context& context,
                                         const tsr_kernel_call* raw_call) {
  const tsr_kernel_call& call = sdk::check_call(raw_call, 3, 1);
  const tsr_tensor_desc& g = sdk::tensor_arg(call, 0, "grad_output");
  const tsr_tensor_desc& x = sdk::tensor_arg(call, 1, "self");
  const tsr_tensor_desc& idx = sdk::tensor_arg(call, 2, "indices");
  const tsr_tensor_desc& out = sdk::out_arg(call, 0);
  by_dtype(x, [&](auto t) { max_backward<decltype(t)>(context, call, g, x, idx, out); });
}

void avg_pool2d_backward_kernel(const tsr_plugin_context& context,
                                const tsr_kernel_call* raw_call) {
  const tsr_kernel_call& call = sdk::check_call(raw_call, 8, 1);
  const tsr_tensor_desc& g = sdk::tensor_arg(call, 0, "grad_output");
  const tsr_tensor_desc& x = sdk::tensor_arg(call, 1, "self");
  const tsr_tensor_desc& out = sdk::out_arg(call, 0);
  pool_axis ah, aw;
  read_axes(call, 2, false, ah, aw);
  (void)sdk::bool_arg(call, 5, "ceil_mode");
  const bool include_pad = sdk::bool_arg(call, 6, "count_include_pad");
  const std::optional<int64_t> override_arg = sdk::optional_int_arg(call, 7, "divisor_override");
  const bool has_override = override_arg.has_value();
  const int64_t override_value = override_arg.value_or(0);
  require(call, !has_override || override_value != 0, "divisor_override must not be 0");
  const backward_shape s = shape_of(call, g, x, out, nullptr);
  check_windows(call, ah, s.h, s.oh);
  check_windows(call, aw, s.w, s.ow);
  const tap_table rows(fixed_windows{ah, s.h}, s.oh), cols(fixed_windows{aw, s.w}, s.ow);
  by_dtype(x, [&](auto t) {
    using T = decltype(t);
    std::vector<T> divisors(static_cast<size_t>(s.oh * s.ow));
    for (int64_t oh = 0; oh < s.oh; ++oh)
      for (int64_t ow = 0; ow < s.ow; ++ow)
        divisors[oh * s.ow + ow] = static_cast<T>(avg_window_divisor(
            ah, aw, s.h, s.w, oh, ow, include_pad, has_override, override_value));
    spread_planes<T>(context, s, static_cast<const T*>(g.data), static_cast<T*>(out.data), rows,
                     cols, divisors, ah.kernel * aw.kernel);
  });
}

void adaptive_avg_pool2d_backward_kernel(const tsr_plugin_context& context,
                                         const tsr_kernel_call* raw_call) {
  const tsr_kernel_call& call = sdk::check_call(raw_call, 2, 1);
  const tsr_tensor_desc& g = sdk::tensor_arg(call, 0, "grad_output");
  const tsr_tensor_desc& x = sdk::tensor_arg(call, 1, "self");
  const tsr_tensor_desc& out = sdk::out_arg(call, 0);
  const backward_shape s = shape_of(call, g, x, out, nullptr);
  const tap_table rows(adaptive_windows{s.h, s.oh}, s.oh), cols(adaptive_windows{s.w, s.ow}, s.ow);
  by_dtype(x, [&](auto t) {
    using T = decltype(t);
    std::vector<T> divisors(static_cast<size_t>(s.oh * s.ow));
    for (int64_t oh = 0; oh < s.oh; ++oh)
      for (int64_t ow = 0; ow < s.ow; ++ow)
        divisors[oh * s.ow + ow] = static_cast<T>(rows(oh).count * cols(ow).count);
    spread_planes<T>(context, s, static_cast<const T*>(g.data), static_cast<T*>(out.data), rows,
                     cols, divisors, (s.h / s.oh + 1) * (s.w / s.ow + 1));
  });
}

}  // namespace tessera::cpu
