// gpu_host_logic_test.cpp - the shared GPU kernels' host-side logic, on the
// CPU: launch configuration (grid sizing, the 32-bit index switch), N-d
// strided addressing (Indexer, its dim coalescing) and element conversion,
// each against an independent reference (plain arithmetic written here).
// The kernel bodies themselves run through the gpuemu conformance suite.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "dtypes.hpp"
#include "indexer.hpp"
#include "launch.hpp"

namespace tessera::gpu {
namespace {

DeviceInfo h200() {
  DeviceInfo d;
  d.multiprocessors = 132;
  d.warp_size = 32;
  d.max_threads_per_block = 1024;
  d.max_grid_x = 2147483647;
  return d;
}

TEST(LaunchConfig, CoversSmallWorkWithOneBlockPerThreadsItems) {
  const LaunchConfig c = launch_config(1000, h200());
  EXPECT_EQ(c.threads, 256);
  EXPECT_EQ(c.blocks, 4);  // ceil(1000 / 256)
  EXPECT_EQ(launch_config(1, h200()).blocks, 1);
  EXPECT_EQ(launch_config(0, h200()).blocks, 0);
  EXPECT_EQ(launch_config(-5, h200()).blocks, 0);
}

TEST(LaunchConfig, CapsLargeWorkAtWavesPerMultiprocessor) {
  const LaunchConfig c = launch_config(int64_t{1} << 40, h200());
  EXPECT_EQ(c.blocks, 132 * 8);  // the grid-stride loop covers the rest
  // Every item is visited exactly once by the grid-stride loop's arithmetic.
  const int64_t n = 1'000'003;
  const LaunchConfig d = launch_config(n, h200());
  const int64_t stride = d.blocks * d.threads;
  int64_t visits = 0;
  for (int64_t t = 0; t < stride; ++t)
    for (int64_t i = t; i < n; i += stride) ++visits;
  EXPECT_EQ(visits, n);
}

TEST(LaunchConfig, ThreadsAreWholeWarpsWithinTheDeviceLimit) {
  DeviceInfo cdna = h200();
  cdna.warp_size = 64;
  cdna.max_threads_per_block = 1024;
  EXPECT_EQ(launch_config(10'000, cdna, 100).threads, 64);  // rounded down to a warp
  EXPECT_EQ(launch_config(10'000, cdna, 4096).threads, 1024);
  DeviceInfo tiny = h200();
  tiny.max_grid_x = 3;
  EXPECT_EQ(launch_config(int64_t{1} << 30, tiny).blocks, 3);
}

TEST(LaunchConfig, SwitchesTo64BitIndicesBeforeInt32Overflows) {
  const int64_t big = int64_t{INT32_MAX} - 10;
  const LaunchConfig c = launch_config(big, h200());
  // i + stride must stay representable: the last index plus a whole grid.
  EXPECT_FALSE(fits_int32(big, c));
  EXPECT_TRUE(fits_int32(int64_t{INT32_MAX} - c.blocks * c.threads, c));
  EXPECT_TRUE(fits_int32(1 << 20, launch_config(1 << 20, h200())));
}

tsr_tensor_desc desc(tsr_dtype dtype, std::vector<int64_t> sizes, std::vector<int64_t> strides) {
  tsr_tensor_desc d{};
  d.dtype = dtype;
  d.ndim = static_cast<int32_t>(sizes.size());
  for (size_t k = 0; k < sizes.size(); ++k) {
    d.sizes[k] = sizes[k];
    d.strides[k] = strides[k];
  }
  return d;
}

// The byte offset of row-major element `i` of `d`, the slow obvious way.
int64_t reference_offset(const tsr_tensor_desc& d, int64_t i) {
  int64_t off = 0;
  for (int k = d.ndim - 1; k >= 0; --k) {
    off += (i % d.sizes[k]) * d.strides[k];
    i /= d.sizes[k];
  }
  return off * static_cast<int64_t>(sdk::element_size(d.dtype));
}

TEST(Indexer, ContiguousTensorsOfAnyRankBecomeOneDim) {
  const tsr_tensor_desc a = desc(TSR_FLOAT32, {2, 3, 4}, {12, 4, 1});
  const tsr_tensor_desc b = desc(TSR_FLOAT64, {2, 3, 4}, {12, 4, 1});
  const tsr_tensor_desc* descs[2] = {&a, &b};
  const Indexer<2> ix = make_indexer<2>(descs);
  EXPECT_EQ(ix.ndim, 1);
  EXPECT_EQ(ix.numel, 24);
  EXPECT_EQ(ix.strides[0][0], 4);
  EXPECT_EQ(ix.strides[1][0], 8);
  EXPECT_TRUE(ix.contiguous({4, 8}));
}

TEST(Indexer, OffsetsMatchTheReferenceForPermutedBroadcastAndFlippedOperands) {
  // out [3, 4, 5] contiguous; a transposed view; b broadcast along dim 1;
  // c with a negative stride (flip) and a size-1 dim.
  const tsr_tensor_desc out = desc(TSR_FLOAT32, {3, 4, 5}, {20, 5, 1});
  const tsr_tensor_desc a = desc(TSR_FLOAT32, {3, 4, 5}, {1, 15, 3});
  const tsr_tensor_desc b = desc(TSR_INT64, {3, 4, 5}, {5, 0, 1});
  const tsr_tensor_desc c = desc(TSR_FLOAT16, {3, 4, 5}, {-20, 5, 1});
  const tsr_tensor_desc* descs[4] = {&out, &a, &b, &c};
  const Indexer<4> ix = make_indexer<4>(descs);
  EXPECT_EQ(ix.numel, 60);
  EXPECT_FALSE(ix.contiguous({4, 4, 8, 2}));
  for (int64_t i = 0; i < ix.numel; ++i) {
    int64_t off[4];
    ix.offsets(i, off);
    for (int k = 0; k < 4; ++k) {
      EXPECT_EQ(off[k], reference_offset(*descs[k], i)) << "operand " << k << " element " << i;
      EXPECT_EQ(ix.offset(k, i), off[k]);
    }
  }
}

TEST(Indexer, CoalescesOnlyDimsEveryOperandWalksAsOne) {
  // A [4, 6] slice of an [4, 8] buffer: rows are 8 apart, so the dims stay
  // apart for it, while a contiguous partner alone would merge.
  const tsr_tensor_desc out = desc(TSR_FLOAT32, {4, 6}, {6, 1});
  const tsr_tensor_desc sliced = desc(TSR_FLOAT32, {4, 6}, {8, 1});
  const tsr_tensor_desc* descs[2] = {&out, &sliced};
  const Indexer<2> ix = make_indexer<2>(descs);
  EXPECT_EQ(ix.ndim, 2);
  for (int64_t i = 0; i < ix.numel; ++i) EXPECT_EQ(ix.offset(1, i), reference_offset(sliced, i));
}

TEST(Indexer, EmptyAndZeroDimTensors) {
  const tsr_tensor_desc empty = desc(TSR_FLOAT32, {3, 0, 2}, {0, 2, 1});
  const tsr_tensor_desc* e[1] = {&empty};
  EXPECT_EQ(make_indexer<1>(e).numel, 0);
  const tsr_tensor_desc scalar = desc(TSR_FLOAT32, {}, {});
  const tsr_tensor_desc* s[1] = {&scalar};
  const Indexer<1> ix = make_indexer<1>(s);
  EXPECT_EQ(ix.numel, 1);
  EXPECT_EQ(ix.offset(0, 0), 0);
}

TEST(Convert, FloatToIntegerTruncatesSaturatesAndMapsNanToZero) {
  EXPECT_EQ((convert<int32_t, float>(2.9f)), 2);
  EXPECT_EQ((convert<int32_t, float>(-2.9f)), -2);
  EXPECT_EQ((convert<int8_t, double>(1000.0)), 127);
  EXPECT_EQ((convert<int8_t, double>(-1000.0)), -128);
  EXPECT_EQ((convert<uint8_t, float>(-1.0f)), 0);
  EXPECT_EQ((convert<int64_t, double>(1e300)), std::numeric_limits<int64_t>::max());
  EXPECT_EQ((convert<int32_t, float>(std::nanf(""))), 0);
  EXPECT_EQ((convert<int16_t, half>(half(-3.75f))), -3);
}

TEST(Convert, IntegersWrapAndEverythingToBoolIsNonZero) {
  EXPECT_EQ((convert<int8_t, int32_t>(300)), 44);  // 300 mod 256
  EXPECT_EQ((convert<uint8_t, int64_t>(-1)), 255);
  EXPECT_TRUE((convert<bool, float>(std::nanf(""))));
  EXPECT_TRUE((convert<bool, double>(-0.5)));
  EXPECT_FALSE((convert<bool, float>(-0.0f)));
  EXPECT_FALSE((convert<bool, bfloat16>(bfloat16(0.0f))));
  EXPECT_EQ((convert<int32_t, bool>(true)), 1);
}

// The nearest binary16 value to an integer, ties to even, by exhaustive
// search over the finite halves (independent of the conversion code).
double nearest_half(double x) {
  double best = 0, best_err = INFINITY;
  for (uint32_t bits = 0; bits < 0x7c00u; ++bits) {
    for (double sign : {1.0, -1.0}) {
      const double h = sign * static_cast<double>(
                                  static_cast<float>(half::from_bits(static_cast<uint16_t>(bits))));
      const double err = std::fabs(h - x);
      const bool even = (bits & 1u) == 0;
      if (err < best_err || (err == best_err && even)) {
        best = h;
        best_err = err;
      }
    }
  }
  // Past the largest half (65504) by half an ulp or more: overflow to inf.
  return std::fabs(x) >= 65520.0 ? std::copysign(INFINITY, x) : best;
}

TEST(Convert, Int64ToHalfRoundsOnceFromTheExactValue) {
  // 2049 is a tie between 2048 and 2050 (ties to even: 2048); 2051 -> 2052;
  // a large int64 just above a tie must round up, which rounding through a
  // double first can get wrong.
  for (int64_t v : {int64_t{2049}, int64_t{2051}, int64_t{-2049}, int64_t{65519}, int64_t{65520},
                    int64_t{4097}, int64_t{-4099}}) {
    EXPECT_EQ(static_cast<double>(static_cast<float>(convert<half, int64_t>(v))),
              nearest_half(static_cast<double>(v)))
        << v;
  }
  // 2^60 + 2^52 + 1: just above the bfloat16 tie at 2^60 + 2^52 (bfloat16's
  // ulp there is 2^53), which a plain int64 -> double conversion (rounding to
  // 2^60 + 2^52) would turn into a tie and round to even (down, to 2^60).
  const int64_t v = (int64_t{1} << 60) + (int64_t{1} << 52) + 1;
  const float r = static_cast<float>(convert<bfloat16, int64_t>(v));
  EXPECT_EQ(static_cast<double>(r), std::ldexp(1.0, 60) + std::ldexp(1.0, 53));
}

TEST(Convert, DoubleToHalfDoesNotRoundTwice) {
  // Just above the half tie 1 + 2^-11 by less than float's precision: a
  // double -> float -> half path would land on the tie and round to 1.
  const double x = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  EXPECT_EQ(static_cast<double>(static_cast<float>(convert<half, double>(x))),
            1.0 + std::ldexp(1.0, -10));
}

}  // namespace
}  // namespace tessera::gpu
