// copy_fill_test.cpp - copy_ over all 144 dtype pairs (edge values included)
// and any strides, and fill_.Scalar, against reference.hpp's rules.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "../plugin_harness.hpp"

namespace cpu_test {
namespace {

// Values representable in `d` that exercise rounding, saturation, NaN, signs.
std::vector<ref_value> edge_values(tsr_dtype d) {
  std::vector<ref_value> out;
  auto add = [&](long double re, long double im = 0) {
    ref_value v{re, is_complex(d) ? im : 0};
    // Store what dtype d can hold (encode/decode round trip).
    unsigned char bytes[16] = {};
    encode(d, bytes, v);
    out.push_back(decode(d, bytes));
  };
  if (d == TSR_BOOL) {
    add(0);
    add(1);
    return out;
  }
  if (is_integer(d)) {
    for (long double v : {0.0L,
                          1.0L,
                          -1.0L,
                          2.0L,
                          100.0L,
                          -100.0L,
                          127.0L,
                          128.0L,
                          255.0L,
                          256.0L,
                          -128.0L,
                          -129.0L,
                          32767.0L,
                          32768.0L,
                          -32769.0L,
                          65535.0L,
                          65536.0L,
                          2147483647.0L,
                          -2147483648.0L,
                          4294967296.0L + 7,
                          9007199254740993.0L,                           // 2^53 + 1
                          1152921504606846976.0L + 4503599627370497.0L,  // 2^60 + 2^52 + 1
                          9223372036854775807.0L,
                          -9223372036854775808.0L}) {
      add(v);
    }
    return out;
  }
  const long double inf = std::numeric_limits<long double>::infinity();
  const long double nan = std::numeric_limits<long double>::quiet_NaN();
  const long double reals[] = {0.0L,
                               -0.0L,
                               0.5L,
                               -0.5L,
                               0.99L,
                               -0.99L,
                               1.5L,
                               -1.5L,
                               2.5L,
                               -2.5L,
                               127.9L,
                               128.0L,
                               255.5L,
                               256.0L,
                               -128.5L,
                               -129.0L,
                               32767.5L,
                               65504.0L,
                               65519.0L,
                               65520.0L,
                               1e10L,
                               -1e10L,
                               2147483648.0L,
                               -2147483649.0L,
                               9.2e18L,
                               9223372036854775808.0L,
                               -9223372036854775808.0L,
                               1e19L,
                               -1e19L,
                               1e30L,
                               3e38L,
                               1e300L,
                               -1e300L,
                               1e-5L,
                               6e-8L,
                               3e-8L,
                               1e-40L,
                               1e-310L,
                               3.14159265358979L,
                               inf,
                               -inf,
                               nan};
  for (long double r : reals) add(r, is_complex(d) ? -r / 3 : 0);
  if (is_complex(d)) {
    add(0, 3);  // bool true, real 0
    add(nan, 1);
    add(-7.9L, 1e10L);
    add(inf, -inf);
  }
  return out;
}

status_ptr copy(host_tensor& dst, const host_tensor& src) {
  std::vector<tsr_tensor_desc> outs = {dst.desc()};
  return test_plugin::get().call("copy_", {tensor_value(dst), tensor_value(src), bool_value(false)},
                                 outs);
}

class CopyAllPairs : public ::testing::TestWithParam<std::tuple<tsr_dtype, tsr_dtype>> {};

TEST_P(CopyAllPairs, ConvertsEdgeValuesByTheCopyRules) {
  const auto [from, to] = GetParam();
  const std::vector<ref_value> values = edge_values(from);
  const int64_t n = static_cast<int64_t>(values.size());
  host_tensor src(from, {n});
  for (int64_t i = 0; i < n; ++i) src.set({i}, values[i]);
  host_tensor dst(to, {n});
  ASSERT_EQ(copy(dst, src), nullptr);
  for (int64_t i = 0; i < n; ++i) {
    const ref_value expected = ref_convert(values[i], from, to);
    const ref_value got = dst.get({i});
    EXPECT_TRUE(same_value(got, expected))
        << name_of(from) << " " << to_string(values[i]) << " -> " << name_of(to) << ": got "
        << to_string(got) << ", expected " << to_string(expected);
  }
}

TEST_P(CopyAllPairs, StridedAndBroadcastSourcesIntoStridedDestinations) {
  const auto [from, to] = GetParam();
  std::mt19937_64 rng(17 + from * 31 + to);
  std::uniform_int_distribution<int> small(-100, 100);
  // src: a transposed 2-d view; dst: every other column of a wider tensor.
  host_tensor src = host_tensor::permuted(from, {5, 7}, {1, 0});
  for_each_index(src.sizes(), [&](const std::vector<int64_t>& i) {
    src.set(i, ref_value{static_cast<long double>(small(rng)) / 2, is_complex(from) ? 1.0L : 0.0L});
  });
  host_tensor dst(to, {5, 7}, {14, 2});
  ASSERT_EQ(copy(dst, src), nullptr);
  for_each_index(src.sizes(), [&](const std::vector<int64_t>& i) {
    ASSERT_TRUE(same_value(dst.get(i), ref_convert(src.get(i), from, to)));
  });
  // A broadcast row (stride 0 on dim 0) and a flipped column (negative stride).
  host_tensor row(from, {5, 7}, {0, 1});
  host_tensor flipped(from, {5, 7}, {-7, 1});
  for (int64_t j = 0; j < 7; ++j) row.set({0, j}, ref_value{static_cast<long double>(j) - 3, 0});
  for_each_index(flipped.sizes(), [&](const std::vector<int64_t>& i) {
    flipped.set(i, ref_value{static_cast<long double>(small(rng)), 0});
  });
  for (const host_tensor* s : {&row, &flipped}) {
    host_tensor out(to, {5, 7});
    ASSERT_EQ(copy(out, *s), nullptr);
    for_each_index(out.sizes(), [&](const std::vector<int64_t>& i) {
      ASSERT_TRUE(same_value(out.get(i), ref_convert(s->get(i), from, to)));
    });
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, CopyAllPairs,
                         ::testing::Combine(::testing::ValuesIn(all_dtypes()),
                                            ::testing::ValuesIn(all_dtypes())),
                         [](const auto& info) {
                           return std::string(name_of(std::get<0>(info.param))) + "_to_" +
                                  name_of(std::get<1>(info.param));
                         });

TEST(Copy, LargeContiguousAndStridedCopiesGoParallelAndStayExact) {
  const int64_t n = 1 << 18;
  host_tensor src(TSR_FLOAT32, {n});
  for (int64_t i = 0; i < n; ++i) src.set({i}, ref_value{static_cast<long double>(i) * 0.25L, 0});
  host_tensor same(TSR_FLOAT32, {n});
  ASSERT_EQ(copy(same, src), nullptr);
  host_tensor half(TSR_FLOAT16, {n});
  ASSERT_EQ(copy(half, src), nullptr);
  host_tensor strided(TSR_FLOAT64, {n / 512, 512}, {1, n / 512});  // column-major
  host_tensor src2d = src;
  src2d.desc().ndim = 2;
  src2d.desc().sizes[0] = n / 512;
  src2d.desc().sizes[1] = 512;
  src2d.desc().strides[0] = 512;
  src2d.desc().strides[1] = 1;
  ASSERT_EQ(copy(strided, src2d), nullptr);
  for (int64_t i = 0; i < n; i += 97) {
    ASSERT_TRUE(same_value(same.get({i}), src.get({i})));
    ASSERT_TRUE(same_value(half.get({i}), ref_convert(src.get({i}), TSR_FLOAT32, TSR_FLOAT16)));
    ASSERT_TRUE(same_value(strided.get({i / 512, i % 512}), src.get({i})));
  }
}

TEST(Copy, EveryFloat16PatternWidensExactlyAndEveryTieNarrowsToEven) {
  // Exercises the bulk (F16C where available) conversion paths of copy_.
  const int64_t n = 65536;
  host_tensor halves(TSR_FLOAT16, {n});
  for (int64_t i = 0; i < n; ++i)
    static_cast<uint16_t*>(halves.desc().data)[i] = static_cast<uint16_t>(i);
  host_tensor widened(TSR_FLOAT32, {n});
  ASSERT_EQ(copy(widened, halves), nullptr);
  host_tensor as_double(TSR_FLOAT64, {n});
  ASSERT_EQ(copy(as_double, halves), nullptr);
  for (int64_t i = 0; i < n; ++i) {
    const ref_value expected{ref_half_value(static_cast<uint16_t>(i)), 0};
    ASSERT_TRUE(same_value(widened.get({i}), expected)) << i;
    ASSERT_TRUE(same_value(as_double.get({i}), expected)) << i;
  }
  // Midpoints between neighbouring finite halves, and one float ulp around them.
  host_tensor floats(TSR_FLOAT32, {3 * 0x7c00});
  float* f = static_cast<float*>(floats.desc().data);
  for (int64_t b = 0; b < 0x7c00; ++b) {
    const long double lo = ref_half_value(static_cast<uint16_t>(b));
    const long double hi =
        b + 1 == 0x7c00 ? 65536.0L : ref_half_value(static_cast<uint16_t>(b + 1));
    const float mid = static_cast<float>((lo + hi) / 2);
    f[3 * b] = mid;
    f[3 * b + 1] = std::nextafter(mid, 0.0f);
    f[3 * b + 2] = -std::nextafter(mid, 1e9f);
  }
  host_tensor narrowed(TSR_FLOAT16, {3 * 0x7c00});
  ASSERT_EQ(copy(narrowed, floats), nullptr);
  for (int64_t i = 0; i < 3 * 0x7c00; ++i) {
    ASSERT_EQ(static_cast<uint16_t*>(narrowed.desc().data)[i], ref_half_bits(f[i])) << f[i];
  }
}

TEST(Copy, InPlaceCopyOfItselfIsANoOp) {
  host_tensor t(TSR_INT32, {3, 4});
  for_each_index(t.sizes(), [&](const auto& i) {
    t.set(i, ref_value{static_cast<long double>(i[0] * 10 + i[1]), 0});
  });
  ASSERT_EQ(copy(t, t), nullptr);
  for_each_index(t.sizes(), [&](const auto& i) { EXPECT_EQ(t.get(i).re, i[0] * 10 + i[1]); });
}

TEST(Copy, ZeroDimAndEmptyTensors) {
  host_tensor scalar_src(TSR_FLOAT64, {});
  scalar_src.set({}, ref_value{-2.75L, 0});
  host_tensor scalar_dst(TSR_INT16, {});
  ASSERT_EQ(copy(scalar_dst, scalar_src), nullptr);
  EXPECT_EQ(scalar_dst.get({}).re, -2);
  host_tensor empty_src(TSR_FLOAT32, {0, 3});
  host_tensor empty_dst(TSR_INT8, {0, 3});
  empty_src.desc().data = nullptr;
  empty_dst.desc().data = nullptr;
  EXPECT_EQ(copy(empty_dst, empty_src), nullptr);
}

TEST(Fill, EveryDtypeAndScalarKindWithStrides) {
  const tsr_scalar scalars[] = {bool_scalar(true),      int_scalar(-3),
                                int_scalar(300),        float_scalar(2.75),
                                float_scalar(-1e10),    float_scalar(std::nan("")),
                                complex_scalar(1.5, -2)};
  for (tsr_dtype d : all_dtypes()) {
    for (const tsr_scalar& s : scalars) {
      host_tensor t(d, {4, 3}, {1, 8});  // strided, with gaps
      std::vector<tsr_tensor_desc> outs = {t.desc()};
      ASSERT_EQ(test_plugin::get().call("fill_.Scalar", {tensor_value(t), scalar_value(s)}, outs),
                nullptr);
      ref_value value;
      tsr_dtype kind = TSR_FLOAT64;
      switch (s.kind) {
        case TSR_BOOL:
          value.re = s.v.i, kind = TSR_BOOL;
          break;
        case TSR_INT64:
          value.re = s.v.i, kind = TSR_INT64;
          break;
        case TSR_FLOAT64:
          value.re = s.v.f;
          break;
        default:
          value = ref_value{s.v.c.re, s.v.c.im}, kind = TSR_COMPLEX128;
          break;
      }
      const ref_value expected = ref_convert(value, kind, d);
      for_each_index(t.sizes(), [&](const auto& i) {
        ASSERT_TRUE(same_value(t.get(i), expected))
            << name_of(d) << " fill " << to_string(value) << " got " << to_string(t.get(i));
      });
    }
  }
}

TEST(Fill, LargeFillsAreComplete) {
  host_tensor t(TSR_INT64, {1 << 17});
  std::vector<tsr_tensor_desc> outs = {t.desc()};
  ASSERT_EQ(test_plugin::get().call("fill_.Scalar", {tensor_value(t), scalar_value(int_scalar(-5))},
                                    outs),
            nullptr);
  for (int64_t i = 0; i < t.numel(); ++i) ASSERT_EQ(t.get({i}).re, -5) << i;
}

}  // namespace
}  // namespace cpu_test
