// half_test.cpp - the plugin SDK's headers: float16/bfloat16 conversions
// (exhaustive over every 16-bit pattern, and against reference.hpp's rounding
// for float and double inputs), dtype traits and dispatch, the strided layout
// helpers, and guard()'s exception-to-status mapping.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "plugin_harness.hpp"
#include "tessera/sdk/dtype_traits.hpp"
#include "tessera/sdk/half.hpp"
#include "tessera/sdk/status.hpp"
#include "tessera/sdk/strided.hpp"

namespace cpu_test {
namespace {

using tessera::sdk::bfloat16;
using tessera::sdk::half;

uint32_t bits_of(float f) {
  uint32_t u = 0;
  std::memcpy(&u, &f, 4);
  return u;
}

float float_of(uint32_t u) {
  float f = 0;
  std::memcpy(&f, &u, 4);
  return f;
}

TEST(SdkHalf, EveryHalfPatternDecodesExactlyAndRoundTrips) {
  for (uint32_t b = 0; b < 65536; ++b) {
    const half h = half::from_bits(static_cast<uint16_t>(b));
    const float f = h;
    const long double expected = ref_half_value(static_cast<uint16_t>(b));
    if (std::isnan(expected)) {
      ASSERT_TRUE(std::isnan(f)) << b;
      EXPECT_TRUE(std::isnan(static_cast<float>(half(f))));
      EXPECT_EQ(half(f).bits & 0x8000u, b & 0x8000u);  // sign kept
    } else {
      ASSERT_EQ(static_cast<long double>(f), expected) << b;
      ASSERT_EQ(half(f).bits, b) << b;
      ASSERT_EQ(half(static_cast<double>(f)).bits, b) << b;
    }
  }
}

TEST(SdkHalf, EveryBfloat16PatternDecodesExactlyAndRoundTrips) {
  for (uint32_t b = 0; b < 65536; ++b) {
    const bfloat16 h = bfloat16::from_bits(static_cast<uint16_t>(b));
    const float f = h;
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(static_cast<float>(bfloat16(f)))) << b;
      continue;
    }
    ASSERT_EQ(static_cast<long double>(f), ref_bfloat16_value(static_cast<uint16_t>(b))) << b;
    ASSERT_EQ(bfloat16(f).bits, b) << b;
  }
}

TEST(SdkHalf, FloatToHalfRoundsToNearestEvenIncludingTiesAndSubnormals) {
  // Every midpoint between adjacent finite halves is a tie: it must go to the
  // even neighbour; one float ulp either side must go to the nearer one.
  for (uint32_t b = 0; b < 0x7c00; ++b) {
    const long double lo = ref_half_value(static_cast<uint16_t>(b));
    const long double hi =
        b + 1 == 0x7c00 ? 65536.0L : ref_half_value(static_cast<uint16_t>(b + 1));
    const float mid = static_cast<float>((lo + hi) / 2);  // exact in float
    ASSERT_EQ(static_cast<long double>(mid), (lo + hi) / 2);
    const uint16_t even = (b % 2 == 0) ? static_cast<uint16_t>(b) : static_cast<uint16_t>(b + 1);
    ASSERT_EQ(half(mid).bits, even) << b;
    ASSERT_EQ(half(-mid).bits, even | 0x8000) << b;
    ASSERT_EQ(half(std::nextafter(mid, 0.0f)).bits, b) << b;
    ASSERT_EQ(half(std::nextafter(mid, 1e9f)).bits, b + 1) << b;
  }
  EXPECT_EQ(half(65519.0f).bits, 0x7bffu);
  EXPECT_EQ(half(65520.0f).bits, 0x7c00u);
  EXPECT_EQ(half(1e-10f).bits, 0u);
  EXPECT_EQ(half(-0.0f).bits, 0x8000u);
  EXPECT_EQ(half(std::numeric_limits<float>::infinity()).bits, 0x7c00u);
}

TEST(SdkHalf, RandomFloatsAndDoublesMatchTheReferenceRounding) {
  std::mt19937_64 rng(42);
  for (int i = 0; i < 200000; ++i) {
    const float f = float_of(static_cast<uint32_t>(rng()));
    if (std::isnan(f)) continue;
    ASSERT_EQ(half(f).bits, ref_half_bits(f)) << f;
    ASSERT_EQ(bfloat16(f).bits, ref_bfloat16_bits(f)) << f;
    // Doubles near half/bfloat16 ties: no double rounding through float.
    uint64_t u = rng();
    double d = 0;
    std::memcpy(&d, &u, 8);
    if (std::isnan(d)) continue;
    d = std::ldexp(std::fmod(std::fabs(d), 2.0) + 1.0, static_cast<int>(rng() % 60) - 30);
    if (rng() & 1) d = -d;
    ASSERT_EQ(half(d).bits, ref_half_bits(d)) << d;
    ASSERT_EQ(bfloat16(d).bits, ref_bfloat16_bits(d)) << d;
  }
  // A double just above a bfloat16 tie that rounds to the tie as a float.
  const double tricky = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40);
  EXPECT_EQ(bfloat16(tricky).bits, ref_bfloat16_bits(tricky));
  EXPECT_EQ(bfloat16(tricky).bits, 0x3f81u);
}

TEST(SdkHalf, BfloatNanStaysQuietNan) {
  EXPECT_TRUE(std::isnan(static_cast<float>(bfloat16(float_of(0x7f800001u)))));
  EXPECT_EQ(bfloat16(float_of(0xff800000u)).bits, 0xff80u);
  EXPECT_TRUE(std::isnan(static_cast<float>(half(std::numeric_limits<double>::quiet_NaN()))));
  EXPECT_NE(bits_of(1.0f), 0u);
}

TEST(SdkDtypeTraits, SizesNamesAndDispatchCoverEveryDtype) {
  using namespace tessera::sdk;
  for (tsr_dtype d : all_dtypes()) {
    EXPECT_EQ(element_size(d), size_of(d));
    EXPECT_STREQ(dtype_name(d), name_of(d));
    const size_t dispatched = dispatch_dtype(d, [](auto tag) {
      using T = typename decltype(tag)::type;
      EXPECT_EQ(dtype_of<T>, static_cast<tsr_dtype>(dtype_of<T>));
      return sizeof(T);
    });
    EXPECT_EQ(dispatched, size_of(d));
    const int32_t round_trip = dispatch_dtype(
        d, [](auto tag) { return static_cast<int32_t>(dtype_of<typename decltype(tag)::type>); });
    EXPECT_EQ(round_trip, d);
  }
  static_assert(std::is_same_v<type_of_t<TSR_BFLOAT16>, bfloat16>);
  static_assert(dtype_of<std::complex<double>> == TSR_COMPLEX128);
  EXPECT_EQ(element_size(99), 0u);
  EXPECT_THROW(dispatch_dtype(99, [](auto) { return 0; }), std::invalid_argument);
}

TEST(SdkStrided, CoalescesContiguousDimsAndDropsSizeOne) {
  using namespace tessera::sdk;
  host_tensor a(TSR_FLOAT32, {2, 3, 1, 4});
  host_tensor b(TSR_FLOAT64, {2, 3, 1, 4});
  const tsr_tensor_desc* two[2] = {&a.desc(), &b.desc()};
  const auto layout = make_layout(two);
  ASSERT_EQ(layout.ndim, 1);
  EXPECT_EQ(layout.sizes[0], 24);
  EXPECT_EQ(layout.strides[0][0], 4);
  EXPECT_EQ(layout.strides[1][0], 8);
  EXPECT_TRUE(all_contiguous(two));
  // A broadcast row stays two dims; a transposed operand blocks merging.
  host_tensor row(TSR_FLOAT32, {3, 4}, {0, 1});
  host_tensor full(TSR_FLOAT32, {3, 4});
  const tsr_tensor_desc* rb[2] = {&full.desc(), &row.desc()};
  EXPECT_EQ(make_layout(rb).ndim, 2);
  EXPECT_FALSE(all_contiguous(rb));
  host_tensor t = host_tensor::permuted(TSR_FLOAT32, {3, 4}, {1, 0});
  EXPECT_FALSE(is_contiguous(t.desc()));
  host_tensor empty(TSR_FLOAT32, {3, 0, 2});
  const tsr_tensor_desc* e[1] = {&empty.desc()};
  EXPECT_EQ(make_layout(e).numel(), 0);
}

TEST(SdkStrided, RunsVisitEveryElementOnceFromAnyStartingPoint) {
  using namespace tessera::sdk;
  host_tensor t(TSR_INT32, {3, 4, 5}, {-20, 1, 4});  // permuted and flipped
  int64_t k = 0;
  for_each_index(t.sizes(), [&](const auto& i) {
    t.set(i, ref_value{static_cast<long double>(k++), 0});
  });
  const tsr_tensor_desc* one[1] = {&t.desc()};
  const auto layout = make_layout(one);
  char* const base[1] = {static_cast<char*>(t.desc().data)};
  for (int64_t begin : {0, 1, 7, 59}) {
    std::vector<int32_t> seen;
    for_each_run(layout, base, begin, 60, [&](char* const(&p)[1], int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        seen.push_back(*reinterpret_cast<int32_t*>(p[0] + i * layout.inner_stride(0)));
      }
    });
    ASSERT_EQ(static_cast<int64_t>(seen.size()), 60 - begin);
    for (size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i], begin + static_cast<int64_t>(i));
  }
}

TEST(SdkStatus, GuardMapsExceptionsToStatusCodes) {
  using namespace tessera::sdk;
  const tsr_host_api* host = &test_host();
  EXPECT_EQ(status_ptr(guard(host, [] {})), nullptr);
  status_ptr s(guard(host, [] { throw_status(TSR_NOT_FOUND, "no %s", "thing"); }));
  EXPECT_EQ(code_of(s), TSR_NOT_FOUND);
  EXPECT_EQ(message_of(s), "no thing");
  EXPECT_EQ(code_of(status_ptr(guard(host, []() -> tsr_status* { throw std::bad_alloc(); }))),
            TSR_RESOURCE_EXHAUSTED);
  EXPECT_EQ(code_of(status_ptr(guard(host, [] { throw std::runtime_error("x"); }))), TSR_INTERNAL);
  EXPECT_EQ(code_of(status_ptr(guard(host, [] { throw 3; }))), TSR_INTERNAL);
  const std::string long_message(1000, 'x');
  status_ptr formatted(status_maker(host).makef(TSR_INTERNAL, "%s!", long_message.c_str()));
  EXPECT_EQ(message_of(formatted), long_message + "!");
}

}  // namespace
}  // namespace cpu_test
