// conv_kernels_test.cpp - the convolution and pooling kernels called directly
// (no core): float32 (oneDNN, and the loops for what oneDNN refuses) and
// float64 (loops) against a long double reference, with flipped, broadcast and
// non-unit-stride operands, PyTorch's NaN/tie index order for max pooling,
// and calls the kernels must refuse (wrong shapes, dtypes, argument tags)
// with a status instead of crashing. Tolerance: float32 k * 2^-24 * sum|x w|
// plus the output rounding; float64 the same with 2^-53.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
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

struct conv2d_case {
  int64_t n, c, h, w, o, kh, kw;
  int64_t stride, padding, dilation, output_padding, groups;
  bool transposed;
};

// out[n][oc][y][x], direct long double loops (scatter form for transposed).
void expect_conv(const conv2d_case& p, const host_tensor& x, const host_tensor& wt,
                 const host_tensor* bias, const host_tensor& out) {
  const tsr_dtype d = out.dtype();
  const int64_t oh = out.sizes()[2], ow = out.sizes()[3];
  const int64_t cg = p.c / p.groups, og = p.o / p.groups;
  std::vector<long double> acc(static_cast<size_t>(p.n * p.o * oh * ow), 0), mag(acc.size(), 0);
  auto at = [&](int64_t n, int64_t oc, int64_t y, int64_t xx) {
    return static_cast<size_t>(((n * p.o + oc) * oh + y) * ow + xx);
  };
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t ci = 0; ci < p.c; ++ci)
      for (int64_t oo = 0; oo < og; ++oo) {
        const int64_t g = ci / cg, oc = g * og + oo;
        for (int64_t a = 0; a < p.kh; ++a)
          for (int64_t b = 0; b < p.kw; ++b) {
            const long double wv =
                p.transposed ? wt.get({ci, oo, a, b}).re : wt.get({oc, ci - g * cg, a, b}).re;
            if (!p.transposed) {
              for (int64_t y = 0; y < oh; ++y)
                for (int64_t xx = 0; xx < ow; ++xx) {
                  const int64_t iy = y * p.stride - p.padding + a * p.dilation;
                  const int64_t ix = xx * p.stride - p.padding + b * p.dilation;
                  if (iy < 0 || iy >= p.h || ix < 0 || ix >= p.w) continue;
                  const long double xv = x.get({n, ci, iy, ix}).re;
                  acc[at(n, oc, y, xx)] += xv * wv;
                  mag[at(n, oc, y, xx)] += std::fabs(xv * wv);
                }
            } else {
              for (int64_t iy = 0; iy < p.h; ++iy)
                for (int64_t ix = 0; ix < p.w; ++ix) {
                  const int64_t y = iy * p.stride - p.padding + a * p.dilation;
                  const int64_t xx = ix * p.stride - p.padding + b * p.dilation;
                  if (y < 0 || y >= oh || xx < 0 || xx >= ow) continue;
                  const long double xv = x.get({n, ci, iy, ix}).re;
                  acc[at(n, oc, y, xx)] += xv * wv;
                  mag[at(n, oc, y, xx)] += std::fabs(xv * wv);
                }
            }
          }
      }
  const long double u = d == TSR_FLOAT64 ? std::ldexp(1.0L, -53) : std::ldexp(1.0L, -24);
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t oc = 0; oc < p.o; ++oc)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t xx = 0; xx < ow; ++xx) {
          long double e = acc[at(n, oc, y, xx)];
          if (bias) e += bias->get({oc}).re;
          const long double tol = (cg * p.kh * p.kw + 2) * u * (mag[at(n, oc, y, xx)] + 1) +
                                  unit_roundoff(d) * std::fabs(e);
          const ref_value got = out.get({n, oc, y, xx});
          ASSERT_TRUE(near_value(got, ref_value{e, 0}, tol))
              << name_of(d) << " at [" << n << "," << oc << "," << y << "," << xx << "] got "
              << to_string(got) << " expected " << static_cast<double>(e);
        }
}

status_ptr call_conv(const conv2d_case& p, const host_tensor& x, const host_tensor& w,
                     const host_tensor* bias, host_tensor& out) {
  std::vector<tsr_tensor_desc> outs = {out.desc()};
  const int64_t s = p.stride, pd = p.padding, dl = p.dilation, op = p.output_padding;
  return test_plugin::get().call(
      "convolution",
      {tensor_value(x), tensor_value(w), bias ? tensor_value(*bias) : none_value(),
       int_list_value({s, s}), int_list_value({pd, pd}), int_list_value({dl, dl}),
       bool_value(p.transposed), int_list_value({op, op}), int_value(p.groups)},
      outs);
}

int64_t out_size(const conv2d_case& p, int64_t in, int64_t k) {
  const int64_t ext = p.dilation * (k - 1) + 1;
  return p.transposed ? (in - 1) * p.stride - 2 * p.padding + ext + p.output_padding
                      : (in + 2 * p.padding - ext) / p.stride + 1;
}

TEST(ConvolutionKernel, MatchesReferenceWithStridedOperands) {
  const std::vector<conv2d_case> cases = {
      {2, 3, 7, 6, 4, 3, 3, 1, 1, 1, 0, 1, false},
      {1, 4, 9, 8, 6, 3, 2, 2, 1, 2, 0, 2, false},
      {2, 4, 5, 5, 4, 3, 3, 1, 1, 1, 0, 4, false},
      {2, 3, 4, 5, 4, 3, 3, 2, 1, 1, 1, 1, true},
      // output_padding > padding: oneDNN refuses, the loops run.
      {1, 2, 3, 4, 2, 2, 2, 3, 0, 1, 2, 1, true},
      {1, 4, 3, 3, 6, 2, 3, 1, 0, 2, 0, 2, true},
  };
  for (tsr_dtype d : {TSR_FLOAT32, TSR_FLOAT64}) {
    uint64_t seed = 1;
    for (const conv2d_case& p : cases) {
      const std::vector<int64_t> ws = p.transposed
                                          ? std::vector<int64_t>{p.c, p.o / p.groups, p.kh, p.kw}
                                          : std::vector<int64_t>{p.o, p.c / p.groups, p.kh, p.kw};
      const int64_t oh = out_size(p, p.h, p.kh), ow = out_size(p, p.w, p.kw);
      // Layouts: contiguous; channels-last input with flipped (negative
      // stride) width; weights with a broadcast (stride 0) kernel row.
      for (int layout = 0; layout < 3; ++layout) {
        host_tensor x = layout == 1   ? host_tensor::permuted(d, {p.n, p.c, p.h, p.w}, {0, 2, 3, 1})
                        : layout == 2 ? host_tensor(d, {p.n, p.c, p.h, p.w},
                                                    {p.c * p.h * p.w, p.h * p.w, p.w, -1})
                                      : host_tensor(d, {p.n, p.c, p.h, p.w});
        fill_random(x, seed++);
        host_tensor w =
            layout == 2 ? host_tensor(d, ws, {ws[1] * ws[3], ws[3], 0, 1}) : host_tensor(d, ws);
        fill_random(w, seed++);
        host_tensor bias(d, {p.o});
        fill_random(bias, seed++);
        host_tensor out(d, {p.n, p.o, oh, ow});
        const host_tensor* b = layout == 0 ? nullptr : &bias;
        ASSERT_EQ(call_conv(p, x, w, b, out), nullptr) << "layout " << layout;
        expect_conv(p, x, w, b, out);
        if (::testing::Test::HasFatalFailure()) return;
        // A second call hits the primitive cache and must agree.
        host_tensor again(d, {p.n, p.o, oh, ow});
        ASSERT_EQ(call_conv(p, x, w, b, again), nullptr);
        expect_conv(p, x, w, b, again);
      }
    }
  }
}

TEST(ConvolutionKernel, RefusesMalformedCalls) {
  const conv2d_case p{1, 2, 5, 5, 3, 3, 3, 1, 0, 1, 0, 1, false};
  host_tensor x(TSR_FLOAT32, {1, 2, 5, 5}), w(TSR_FLOAT32, {3, 2, 3, 3});
  host_tensor wrong_out(TSR_FLOAT32, {1, 3, 4, 4});
  status_ptr s = call_conv(p, x, w, nullptr, wrong_out);
  EXPECT_EQ(code_of(s), TSR_INVALID_ARGUMENT);
  EXPECT_NE(message_of(s).find("spatial sizes"), std::string::npos) << message_of(s);
  host_tensor wrong_w(TSR_FLOAT32, {3, 1, 3, 3}), out(TSR_FLOAT32, {1, 3, 3, 3});
  EXPECT_EQ(code_of(call_conv(p, x, wrong_w, nullptr, out)), TSR_INVALID_ARGUMENT);
  host_tensor xi(TSR_INT32, {1, 2, 5, 5}), wi(TSR_INT32, {3, 2, 3, 3}), oi(TSR_INT32, {1, 3, 3, 3});
  EXPECT_EQ(code_of(call_conv(p, xi, wi, nullptr, oi)), TSR_UNIMPLEMENTED);
  host_tensor xd(TSR_FLOAT64, {1, 2, 5, 5});
  EXPECT_EQ(code_of(call_conv(p, xd, w, nullptr, out)), TSR_INVALID_ARGUMENT);
  std::vector<tsr_tensor_desc> outs = {out.desc()};
  EXPECT_EQ(
      code_of(test_plugin::get().call("convolution", {tensor_value(x), tensor_value(w)}, outs)),
      TSR_INVALID_ARGUMENT);
  // stride as an int instead of an int list.
  s = test_plugin::get().call(
      "convolution",
      {tensor_value(x), tensor_value(w), none_value(), int_value(1), int_list_value({0, 0}),
       int_list_value({1, 1}), bool_value(false), int_list_value({0, 0}), int_value(1)},
      outs);
  EXPECT_EQ(code_of(s), TSR_INVALID_ARGUMENT);
}

// PyTorch's max pooling order: first maximum in row-major order, last NaN.
TEST(PoolingKernels, MaxPoolIndicesFollowPyTorchOrder) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (tsr_dtype d : {TSR_FLOAT32, TSR_FLOAT64}) {
    // One 3x3 window (kernel 3, stride 3) per case.
    const std::vector<std::vector<double>> planes = {
        {1, 5, 2, 5, 0, 5, 1, 1, 1},      // ties: (0,1) first
        {0, 0, 0, 0, 0, 7, 7, 0, 0},      // (1,2) before (2,0)
        {1, nan, 2, 3, nan, 9, 0, 0, 1},  // last NaN: (1,1)
        {nan, 1, 1, 1, 1, 1, 1, 1, nan},  // last NaN: (2,2)
    };
    const std::vector<int64_t> want = {1, 5, 4, 8};
    for (size_t i = 0; i < planes.size(); ++i) {
      // Rows of stride 5 (not contiguous) and a flipped width.
      host_tensor x(d, {1, 1, 3, 3}, {15, 15, 5, -1});
      for (int64_t h = 0; h < 3; ++h)
        for (int64_t w = 0; w < 3; ++w) x.set({0, 0, h, w}, ref_value{planes[i][h * 3 + w], 0});
      host_tensor v(d, {1, 1, 1, 1}), idx(TSR_INT64, {1, 1, 1, 1});
      std::vector<tsr_tensor_desc> outs = {v.desc(), idx.desc()};
      ASSERT_EQ(test_plugin::get().call(
                    "max_pool2d_with_indices",
                    {tensor_value(x), int_list_value({3, 3}), int_list_value({3, 3}),
                     int_list_value({0, 0}), int_list_value({1, 1}), bool_value(false)},
                    outs),
                nullptr);
      EXPECT_EQ(static_cast<int64_t>(idx.get({0, 0, 0, 0}).re), want[i]) << "case " << i;
    }
  }
}

TEST(PoolingKernels, RefuseMalformedCalls) {
  host_tensor x(TSR_FLOAT32, {1, 1, 4, 4}), v(TSR_FLOAT32, {1, 1, 2, 2});
  host_tensor idx32(TSR_INT32, {1, 1, 2, 2});
  std::vector<tsr_tensor_desc> outs = {v.desc(), idx32.desc()};
  EXPECT_EQ(code_of(test_plugin::get().call(
                "max_pool2d_with_indices",
                {tensor_value(x), int_list_value({2, 2}), int_list_value({2, 2}),
                 int_list_value({0, 0}), int_list_value({1, 1}), bool_value(false)},
                outs)),
            TSR_INVALID_ARGUMENT);
  host_tensor xi(TSR_INT64, {1, 1, 4, 4}), vi(TSR_INT64, {1, 1, 2, 2});
  std::vector<tsr_tensor_desc> one = {vi.desc()};
  EXPECT_EQ(code_of(test_plugin::get().call(
                "avg_pool2d",
                {tensor_value(xi), int_list_value({2, 2}), int_list_value({2, 2}),
                 int_list_value({0, 0}), bool_value(false), bool_value(true), none_value()},
                one)),
            TSR_UNIMPLEMENTED);
  std::vector<tsr_tensor_desc> avg = {v.desc()};
  EXPECT_EQ(code_of(test_plugin::get().call(
                "avg_pool2d",
                {tensor_value(x), int_list_value({2, 2}), int_list_value({2, 2}),
                 int_list_value({0, 0}), bool_value(false), bool_value(true), int_value(0)},
                avg)),
            TSR_INVALID_ARGUMENT);
  EXPECT_EQ(code_of(test_plugin::get().call("_adaptive_avg_pool2d",
                                            {tensor_value(x), int_list_value({3, 3})}, avg)),
            TSR_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace cpu_test
