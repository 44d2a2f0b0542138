// pool_backward_kernels_test.cpp - the pooling backward kernels called
// directly (no core), float32 and float64, against long double loops written
// from PyTorch's definitions: grad_output (non-unit-stride, flipped rows)
// scattered at given indices (repeated ones add up) or spread over each
// window divided by its divisor (overlapping windows, ceil mode's clipped
// window, count_include_pad, divisor_override, adaptive windows); and calls
// the kernels must refuse with a status (an index outside the plane, a
// non-contiguous out, mismatched dtypes).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "../plugin_harness.hpp"

namespace cpu_test {
namespace {

tsr_value int_value(int64_t i) {
  tsr_value v{};
  v.tag = TSR_VALUE_INT;
  v.u.i = i;
  return v;
}

void fill_random(host_tensor& t, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for_each_index(t.sizes(), [&](const std::vector<int64_t>& i) { t.set(i, ref_value{u(rng), 0}); });
}

void expect_plane_values(const host_tensor& got, const std::vector<long double>& want,
                         const char* what) {
  const tsr_dtype d = got.dtype();
  size_t k = 0;
  for_each_index(got.sizes(), [&](const std::vector<int64_t>& i) {
    const long double e = want[k++];
    const long double tol = 16 * unit_roundoff(d) * (std::fabs(e) + 1);
    EXPECT_TRUE(near_value(got.get(i), ref_value{e, 0}, tol))
        << what << " " << name_of(d) << " element " << k - 1 << " got " << to_string(got.get(i))
        << " expected " << static_cast<double>(e);
  });
}

// grad_output (N, C, Ho, Wo) with rows 2 * Wo apart and flipped columns.
host_tensor strided_grad(tsr_dtype d, int64_t n, int64_t c, int64_t oh, int64_t ow, uint64_t seed) {
  host_tensor g(d, {n, c, oh, ow}, {c * oh * 2 * ow, oh * 2 * ow, 2 * ow, -1});
  fill_random(g, seed);
  return g;
}

TEST(PoolingBackwardKernels, MaxScattersAtIndicesAndRepeatedOnesAdd) {
  for (tsr_dtype d : {TSR_FLOAT32, TSR_FLOAT64}) {
    const int64_t n = 2, c = 3, h = 5, w = 4, oh = 3, ow = 2;
    host_tensor g = strided_grad(d, n, c, oh, ow, 7);
    host_tensor x(d, {n, c, h, w}), out(d, {n, c, h, w});
    // Indices in every plane, with repeats (overlapping windows share maxima).
    host_tensor idx(TSR_INT64, {n, c, oh, ow});
    std::mt19937_64 rng(8);
    for_each_index(idx.sizes(), [&](const std::vector<int64_t>& i) {
      idx.set(i, ref_value{static_cast<long double>(rng() % 5), 0});  // 0..4: repeats
    });
    std::vector<long double> want(static_cast<size_t>(n * c * h * w), 0);
    for_each_index(g.sizes(), [&](const std::vector<int64_t>& i) {
      const int64_t plane = i[0] * c + i[1];
      want[static_cast<size_t>(plane * h * w + static_cast<int64_t>(idx.get(i).re))] += g.get(i).re;
    });
    std::vector<tsr_tensor_desc> outs = {out.desc()};
    // kernel 3, stride 2, padding 1: the windows this grad_output's size implies.
    ASSERT_EQ(
        test_plugin::get().call(
            "max_pool2d_with_indices_backward",
            {tensor_value(g), tensor_value(x), int_list_value({3, 3}), int_list_value({2, 2}),
             int_list_value({1, 1}), int_list_value({1, 1}), bool_value(false), tensor_value(idx)},
            outs),
        nullptr);
    expect_plane_values(out, want, "max_pool2d_with_indices_backward");
    host_tensor out2(d, {n, c, h, w});
    std::vector<tsr_tensor_desc> outs2 = {out2.desc()};
    ASSERT_EQ(test_plugin::get().call("adaptive_max_pool2d_backward",
                                      {tensor_value(g), tensor_value(x), tensor_value(idx)}, outs2),
              nullptr);
    expect_plane_values(out2, want, "adaptive_max_pool2d_backward");
  }
}

struct avg_case {
  int64_t h, w, k, s, p;
  bool ceil_mode, include_pad;
  int64_t divisor;  // 0: None
};

int64_t pool_out(int64_t in, int64_t k, int64_t s, int64_t p, bool ceil_mode) {
  int64_t o = (in + 2 * p - k + (ceil_mode ? s - 1 : 0)) / s + 1;
  if (ceil_mode && (o - 1) * s >= in + p) --o;
  return o;
}

TEST(PoolingBackwardKernels, AvgSpreadsOverWindowsWithPyTorchDivisors) {
  const std::vector<avg_case> cases = {
      {7, 6, 3, 2, 1, false, true, 0},  // overlapping, padding counted
      {7, 6, 3, 2, 1, true, false, 0},  // ceil mode, padding not counted
      {6, 6, 3, 1, 1, false, true, 5},  // stride 1, divisor_override
      {5, 5, 2, 2, 1, true, true, 0},   // ceil's window clipped to the padded input
  };
  for (tsr_dtype d : {TSR_FLOAT32, TSR_FLOAT64})
    for (const avg_case& a : cases) {
      const int64_t n = 2, c = 2;
      const int64_t oh = pool_out(a.h, a.k, a.s, a.p, a.ceil_mode);
      const int64_t ow = pool_out(a.w, a.k, a.s, a.p, a.ceil_mode);
      host_tensor g = strided_grad(d, n, c, oh, ow, 9);
      host_tensor x(d, {n, c, a.h, a.w}), out(d, {n, c, a.h, a.w});
      std::vector<long double> want(static_cast<size_t>(n * c * a.h * a.w), 0);
      for_each_index(g.sizes(), [&](const std::vector<int64_t>& i) {
        int64_t hs = i[2] * a.s - a.p, ws = i[3] * a.s - a.p;
        int64_t he = std::min(hs + a.k, a.h + a.p), we = std::min(ws + a.k, a.w + a.p);
        const int64_t pool = (he - hs) * (we - ws);
        hs = std::max<int64_t>(hs, 0);
        ws = std::max<int64_t>(ws, 0);
        he = std::min(he, a.h);
        we = std::min(we, a.w);
        const int64_t div = a.divisor ? a.divisor : a.include_pad ? pool : (he - hs) * (we - ws);
        for (int64_t y = hs; y < he; ++y)
          for (int64_t xx = ws; xx < we; ++xx)
            want[static_cast<size_t>(((i[0] * c + i[1]) * a.h + y) * a.w + xx)] +=
                g.get(i).re / div;
      });
      std::vector<tsr_tensor_desc> outs = {out.desc()};
      ASSERT_EQ(
          test_plugin::get().call(
              "avg_pool2d_backward",
              {tensor_value(g), tensor_value(x), int_list_value({a.k, a.k}),
               int_list_value({a.s, a.s}), int_list_value({a.p, a.p}), bool_value(a.ceil_mode),
               bool_value(a.include_pad), a.divisor ? int_value(a.divisor) : none_value()},
              outs),
          nullptr);
      expect_plane_values(out, want, "avg_pool2d_backward");
    }
}

TEST(PoolingBackwardKernels, AdaptiveAvgSpreadsOverAdaptiveWindows) {
  for (tsr_dtype d : {TSR_FLOAT32, TSR_FLOAT64}) {
    const int64_t n = 1, c = 2, h = 7, w = 5, oh = 3, ow = 4;  // overlapping windows
    host_tensor g = strided_grad(d, n, c, oh, ow, 10);
    host_tensor x(d, {n, c, h, w}), out(d, {n, c, h, w});
    std::vector<long double> want(static_cast<size_t>(n * c * h * w), 0);
    for_each_index(g.sizes(), [&](const std::vector<int64_t>& i) {
      const int64_t hs = i[2] * h / oh, he = ((i[2] + 1) * h + oh - 1) / oh;
      const int64_t ws = i[3] * w / ow, we = ((i[3] + 1) * w + ow - 1) / ow;
      for (int64_t y = hs; y < he; ++y)
        for (int64_t xx = ws; xx < we; ++xx)
          want[static_cast<size_t>(((i[0] * c + i[1]) * h + y) * w + xx)] +=
              g.get(i).re / ((he - hs) * (we - ws));
    });
    std::vector<tsr_tensor_desc> outs = {out.desc()};
    ASSERT_EQ(test_plugin::get().call("_adaptive_avg_pool2d_backward",
                                      {tensor_value(g), tensor_value(x)}, outs),
              nullptr);
    expect_plane_values(out, want, "_adaptive_avg_pool2d_backward");
  }
}

TEST(PoolingBackwardKernels, RefuseMalformedCalls) {
  host_tensor g(TSR_FLOAT32, {1, 1, 2, 2}), x(TSR_FLOAT32, {1, 1, 3, 3}),
      out(TSR_FLOAT32, {1, 1, 3, 3});
  host_tensor idx(TSR_INT64, {1, 1, 2, 2});
  idx.set({0, 0, 1, 1}, ref_value{9, 0});  // outside the 3x3 plane
  std::vector<tsr_tensor_desc> outs = {out.desc()};
  auto max_call = [&](const host_tensor& gg, const host_tensor& ii,
                      std::vector<tsr_tensor_desc>& o) {
    return test_plugin::get().call(
        "max_pool2d_with_indices_backward",
        {tensor_value(gg), tensor_value(x), int_list_value({2, 2}), int_list_value({1, 1}),
         int_list_value({0, 0}), int_list_value({1, 1}), bool_value(false), tensor_value(ii)},
        o);
  };
  EXPECT_EQ(code_of(max_call(g, idx, outs)), TSR_INVALID_ARGUMENT);
  host_tensor ok_idx(TSR_INT64, {1, 1, 2, 2});
  host_tensor flipped(TSR_FLOAT32, {1, 1, 3, 3}, {9, 9, 3, -1});
  std::vector<tsr_tensor_desc> bad_out = {flipped.desc()};
  EXPECT_EQ(code_of(max_call(g, ok_idx, bad_out)), TSR_INVALID_ARGUMENT);
  host_tensor g64(TSR_FLOAT64, {1, 1, 2, 2});
  EXPECT_NE(max_call(g64, ok_idx, outs), nullptr);
  EXPECT_EQ(code_of(test_plugin::get().call(
                "avg_pool2d_backward",
                {tensor_value(g), tensor_value(x), int_list_value({2, 2}), int_list_value({1, 1}),
                 int_list_value({0, 0}), bool_value(false), bool_value(true), int_value(0)},
                outs)),
            TSR_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace cpu_test
