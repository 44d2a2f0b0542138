// pool_windows.hpp - the pooling windows shared by the pooling kernels
// (pooling.cpp) and their backward kernels (pooling_backward.cpp): per
// axis, each output's in-bounds input taps, for fixed windows (kernel,
// stride, padding, dilation) and adaptive ones.
#ifndef TESSERA_PLUGINS_CPU_CONV_POOL_WINDOWS_HPP_
#define TESSERA_PLUGINS_CPU_CONV_POOL_WINDOWS_HPP_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "conv_kernels.hpp"
#include "tessera/sdk/kernel_args.hpp"

namespace tessera::cpu::pool_detail {

using conv_detail::int_list_arg;
using conv_detail::require;

// The windows of max/avg pooling along one axis: window o covers
// start(o) + j * dilation for j < kernel, clipped to [0, in).
struct pool_axis {
  int64_t kernel = 1, stride = 1, padding = 0, dilation = 1;
};

// The in-bounds taps of one window along an axis: first, first + step, ...
// (count of them; 0 when the window lies entirely in the padding).
struct taps {
  int64_t first = 0, step = 1, count = 0;
};

// The windows of max/avg pooling along one axis of size `in`: window o has
// taps start + j * dilation (j < kernel), start = o * stride - padding.
struct fixed_windows {
  pool_axis a;
  int64_t in;
  taps operator()(int64_t o) const {
    const int64_t start = o * a.stride - a.padding;
    const int64_t j0 = start < 0 ? (-start + a.dilation - 1) / a.dilation : 0;
    const int64_t j1 =
        std::min<int64_t>(a.kernel, start >= in ? 0 : (in - start + a.dilation - 1) / a.dilation);
    return taps{start + j0 * a.dilation, a.dilation, std::max<int64_t>(j1 - j0, 0)};
  }
};

// Adaptive windows: [floor(o * in / out), ceil((o + 1) * in / out)).
struct adaptive_windows {
  int64_t in, out;
  int64_t begin(int64_t o) const { return (o * in) / out; }
  int64_t end(int64_t o) const { return ((o + 1) * in + out - 1) / out; }
  taps operator()(int64_t o) const { return taps{begin(o), 1, end(o) - begin(o)}; }
};

// Every window's taps, computed once per call (the windows are the same for
// every plane, and computing them costs integer divisions).
struct tap_table {
  std::vector<taps> t;
  template <class Windows>
  tap_table(const Windows& windows, int64_t count) {
    t.reserve(static_cast<size_t>(count));
    for (int64_t o = 0; o < count; ++o) t.push_back(windows(o));
  }
  taps operator()(int64_t o) const { return t[static_cast<size_t>(o)]; }
};

// Reads (kernel_size, stride, padding[, dilation]) of a pool, kernel_size
// being argument `first`.
inline void read_axes(const tsr_kernel_call& call, int first, bool has_dilation, pool_axis& ah,
                      pool_axis& aw) {
  int64_t k[2], st[2], pd[2], dl[2] = {1, 1};
  int_list_arg(call, first, "kernel_size", 2, k);
  int_list_arg(call, first + 1, "stride", 2, st);
  int_list_arg(call, first + 2, "padding", 2, pd);
  if (has_dilation) int_list_arg(call, first + 3, "dilation", 2, dl);
  ah = {k[0], st[0], pd[0], dl[0]};
  aw = {k[1], st[1], pd[1], dl[1]};
  for (const pool_axis* a : {&ah, &aw})
    require(call, a->kernel > 0 && a->stride > 0 && a->dilation > 0 && a->padding >= 0,
            "kernel_size, stride and dilation must be > 0 and padding >= 0");
}

inline void check_windows(const tsr_kernel_call& call, const pool_axis& a, int64_t in,
                          int64_t out) {
  // Every window must start inside the input or its left padding.
  require(call, (out - 1) * a.stride - a.padding < in && a.padding * 2 <= a.kernel,
          "out's spatial sizes do not match the pooling windows");
}

// PyTorch's avg_pool2d divisor of output (oh, ow) over an h x w input:
// divisor_override when given, else with count_include_pad the window
// clipped to the padded input, else its in-bounds element count (at least 1;
// a window without in-bounds elements sums to 0 whatever it is divided by).
inline int64_t avg_window_divisor(const pool_axis& ah, const pool_axis& aw, int64_t h, int64_t w,
                                  int64_t oh, int64_t ow, bool include_pad, bool has_override,
                                  int64_t override_value) {
  if (has_override) return override_value;
  int64_t hs = oh * ah.stride - ah.padding, ws = ow * aw.stride - aw.padding;
  int64_t he = std::min(hs + ah.kernel, h + ah.padding);
  int64_t we = std::min(ws + aw.kernel, w + aw.padding);
  if (include_pad) return (he - hs) * (we - ws);
  hs = std::max<int64_t>(hs, 0);
  ws = std::max<int64_t>(ws, 0);
  he = std::min(he, h);
  we = std::min(we, w);
  return std::max<int64_t>(std::max<int64_t>(he - hs, 0) * std::max<int64_t>(we - ws, 0), 1);
}

}  // namespace tessera::cpu::pool_detail

#endif  // TESSERA_PLUGINS_CPU_CONV_POOL_WINDOWS_HPP_
