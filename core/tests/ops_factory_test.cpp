// Factory ops end to end through the C++ frontend and the CPU plugin: empty
// (memory formats, strides), zeros/ones/full (dtype inference, overflow
// checks), *_like forms, scalar_tensor, eye, arange (PyTorch's sizes and
// accumulation types), linspace, logspace and the _iota_ primitive itself, on
// the CPU and the meta device, against float64 references computed here or
// torch 1.13 outputs quoted in comments. Every factory result is a fresh
// tensor at version 0.
//
// Tolerances (conformance/tolerances.hpp): float32 rtol 1.3e-6 atol 1e-5,
// float64 1e-12; integer results compare exactly.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "../../conformance/tolerances.hpp"
#include "tessera/tessera.hpp"

namespace {

using tessera::Dims;
using tessera::Tensor;

template <class F>
void expect_error(F&& f, tsr_status_code code, std::initializer_list<const char*> fragments) {
  try {
    f();
    ADD_FAILURE() << "no error thrown";
  } catch (const tessera::Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    for (const char* fragment : fragments)
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
          << "message lacks '" << fragment << "': " << e.what();
  }
}

void expect_close(const std::vector<double>& actual, const std::vector<double>& expected,
                  tsr_dtype dtype) {
  ASSERT_EQ(actual.size(), expected.size());
  const auto tol = tessera::conformance::tolerance(dtype);
  for (size_t i = 0; i < actual.size(); ++i)
    EXPECT_LE(std::fabs(actual[i] - expected[i]), tol.atol + tol.rtol * std::fabs(expected[i]))
        << "at " << i << ": " << actual[i] << " vs " << expected[i];
}

tsr_value none() { return tessera::detail::none(); }
tsr_value ints(const std::vector<int64_t>& v) {
  return tessera::detail::value(tessera::IntList(v));
}
tsr_value dtype_value(tessera::Dtype d) {
  return tessera::detail::value(std::optional<tessera::Dtype>(d));
}

// ---------------------------------------------------------------------------
// empty, zeros, ones, full and the *_like forms
// ---------------------------------------------------------------------------

TEST(Factories, ZerosOnesFullFillEveryDtype) {
  for (tessera::Dtype d : {tessera::kBool, tessera::kUInt8, tessera::kInt8, tessera::kInt16,
                           tessera::kInt32, tessera::kInt64, tessera::kFloat16, tessera::kBFloat16,
                           tessera::kFloat32, tessera::kFloat64}) {
    SCOPED_TRACE(tsr_dtype_name(tessera::to_c(d)));
    const Tensor z = tessera::zeros({2, 3}, d);
    EXPECT_EQ(z.dtype(), d);
    EXPECT_EQ(z.to_vector<double>(), std::vector<double>(6, 0.0));
    EXPECT_EQ(tessera::ones({4}, d).to_vector<double>(), std::vector<double>(4, 1.0));
    EXPECT_EQ(tessera::full({3}, d == tessera::kBool ? 1 : 7, d).to_vector<double>(),
              std::vector<double>(3, d == tessera::kBool ? 1.0 : 7.0));
  }
  EXPECT_EQ(tessera::zeros({2, 3}).dtype(), tessera::kFloat32);
  EXPECT_EQ(tessera::zeros({}).dim(), 0);
  EXPECT_EQ(tessera::zeros({0, 3}).numel(), 0);
  EXPECT_EQ(tessera::zeros({2}).version(), 0u);
}

TEST(Factories, FullInfersItsDtypeFromTheValue) {
  // torch.full((2,), 7).dtype == int64; 2.5 -> float32; True -> bool; 1j -> complex64.
  EXPECT_EQ(tessera::full({2}, 7).dtype(), tessera::kInt64);
  EXPECT_EQ(tessera::full({2}, 2.5).dtype(), tessera::kFloat32);
  EXPECT_EQ(tessera::full({2}, true).dtype(), tessera::kBool);
  EXPECT_EQ(tessera::full({2}, std::complex<double>(0, 1)).dtype(), tessera::kComplex64);
  // torch.full((2,), 2.5, dtype=torch.int64) truncates: [2, 2].
  EXPECT_EQ(tessera::full({2}, 2.5, tessera::kInt64).to_vector<int64_t>(),
            (std::vector<int64_t>{2, 2}));
  // -1 wraps into uint8 as in PyTorch (255).
  EXPECT_EQ(tessera::full({1}, -1, tessera::kUInt8).to_vector<int64_t>(),
            (std::vector<int64_t>{255}));
}

TEST(Factories, FullRefusesValuesTheDtypeCannotHold) {
  expect_error([] { (void)tessera::full({2}, 300, tessera::kUInt8); }, TSR_INVALID_ARGUMENT,
               {"full", "fill_value", "cannot be converted to type uint8 without overflow"});
  expect_error([] { (void)tessera::full({2}, 1e10, tessera::kFloat16); }, TSR_INVALID_ARGUMENT,
               {"full", "float16"});
  expect_error([] { (void)tessera::full({2}, 255.5, tessera::kUInt8); }, TSR_INVALID_ARGUMENT,
               {"full", "uint8"});
  expect_error([] { (void)tessera::full({2}, std::complex<double>(0, 1), tessera::kFloat32); },
               TSR_INVALID_ARGUMENT, {"full", "float32"});
  expect_error([] { (void)tessera::full_like(tessera::zeros({2}, tessera::kUInt8), 300); },
               TSR_INVALID_ARGUMENT, {"full_like", "uint8"});
  // inf is representable in float16.
  EXPECT_TRUE(std::isinf(tessera::full({1}, INFINITY, tessera::kFloat16).item<float>()));
}

TEST(Factories, EmptyHonoursMemoryFormatsAndStrides) {
  const Tensor cl = tessera::empty({2, 3, 4, 5}, tessera::MemoryFormat::ChannelsLast);
  EXPECT_EQ(cl.strides(), Dims({60, 1, 15, 3}));  // torch: (60, 1, 15, 3)
  const Tensor c3 = tessera::empty({2, 3, 4, 5, 6}, tessera::MemoryFormat::ChannelsLast3d);
  EXPECT_TRUE(c3.is_contiguous(tessera::MemoryFormat::ChannelsLast3d));
  expect_error(
      [] {
        (void)tessera::empty({2, 3}, tessera::MemoryFormat::ChannelsLast);
      },
      TSR_INVALID_ARGUMENT, {"empty.memory_format", "required rank 4"});
  expect_error(
      [] {
        (void)tessera::empty({2, 3}, tessera::MemoryFormat::Preserve);
      },
      TSR_INVALID_ARGUMENT, {"empty.memory_format", "Preserve"});
  expect_error(
      [] {
        (void)tessera::zeros({2, -1});
      },
      TSR_INVALID_ARGUMENT, {"zeros", "size", "negative dimension -1", "[2, -1]"});

  const Tensor s = tessera::call_op("empty_strided", {ints({2, 3}), ints({1, 2})});
  EXPECT_EQ(s.strides(), Dims({1, 2}));
  const Tensor zero_stride = tessera::call_op("empty_strided", {ints({2, 3}), ints({0, 1})});
  EXPECT_EQ(zero_stride.strides(), Dims({0, 1}));
  expect_error(
      [] {
        (void)tessera::call_op("empty_strided", {ints({2, 3}), ints({1})});
      },
      TSR_INVALID_ARGUMENT, {"empty_strided", "sizes (2)", "strides (1)"});
  expect_error(
      [] {
        (void)tessera::call_op("empty_strided", {ints({2, 3}), ints({-1, 1})});
      },
      TSR_INVALID_ARGUMENT, {"empty_strided", "negative stride"});
}

TEST(Factories, LikeFormsPreserveLayoutDtypeAndDevice) {
  // torch.empty_like(torch.zeros(2,3,4).permute(2,0,1)).stride() == (1, 12, 4)
  const Tensor permuted = tessera::zeros({2, 3, 4}, tessera::kFloat64).permute({2, 0, 1});
  const Tensor e = tessera::call_op("empty_like", {tessera::detail::value(permuted)});
  EXPECT_EQ(e.strides(), Dims({1, 12, 4}));
  EXPECT_EQ(e.dtype(), tessera::kFloat64);
  const Tensor f = tessera::full_like(permuted, 3);
  EXPECT_EQ(f.strides(), Dims({1, 12, 4}));
  EXPECT_EQ(f.to_vector<double>(), std::vector<double>(24, 3.0));
  EXPECT_EQ(tessera::full_like(permuted, 2.5, tessera::kInt32).to_vector<int32_t>(),
            std::vector<int32_t>(24, 2));
  const Tensor contiguous_like = tessera::call_op(
      "empty_like", {tessera::detail::value(permuted), none(), none(), none(), none(),
                     tessera::detail::value(tessera::MemoryFormat::Contiguous)});
  EXPECT_TRUE(contiguous_like.is_contiguous());
  const Tensor meta_like = tessera::call_op(
      "empty_like",
      {tessera::detail::value(permuted), none(), none(), tessera::detail::value(tessera::kMeta)});
  EXPECT_EQ(meta_like.device(), tessera::kMeta);
}

TEST(Factories, ScalarTensorDefaultsToTheDefaultFloat) {
  // torch.scalar_tensor(1) is tensor(1.), float32.
  const Tensor s = tessera::call_op("scalar_tensor", {tessera::detail::value(tessera::Scalar(1))});
  EXPECT_EQ(s.dtype(), tessera::kFloat32);
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.item<float>(), 1.0f);
  const Tensor i = tessera::call_op(
      "scalar_tensor", {tessera::detail::value(tessera::Scalar(2)), dtype_value(tessera::kInt64)});
  EXPECT_EQ(i.item<int64_t>(), 2);
}

TEST(Factories, OptionsRefuseLayoutsAndPinnedMemory) {
  tsr_value pin{};
  pin.tag = TSR_VALUE_BOOL;
  pin.u.b = 1;
  expect_error(
      [&] {
        (void)tessera::call_op("zeros", {ints({2}), none(), none(), none(), pin});
      },
      TSR_INVALID_ARGUMENT, {"zeros", "pin_memory", "True"});
  tsr_value no_pin{};
  no_pin.tag = TSR_VALUE_BOOL;
  EXPECT_EQ(tessera::call_op("zeros", {ints({2}), none(), none(), none(), no_pin}).numel(), 2);
  tsr_value bad_device{};
  bad_device.tag = TSR_VALUE_DEVICE;
  bad_device.u.device = tsr_device{TSR_DEVICE_CPU, 9};
  expect_error(
      [&] {
        (void)tessera::call_op("ones", {ints({2}), none(), none(), bad_device});
      },
      TSR_NOT_FOUND, {"device", "cpu:9"});
}

TEST(Factories, MetaDeviceGetsShapesOnly) {
  const tessera::TensorOptions meta(tessera::kMeta);
  EXPECT_EQ(tessera::zeros({2, 3}, meta).sizes(), Dims({2, 3}));
  EXPECT_EQ(tessera::full({4}, 1.5, meta).dtype(), tessera::kFloat32);
  EXPECT_EQ(tessera::eye(3, meta).sizes(), Dims({3, 3}));
  EXPECT_EQ(tessera::arange(0, 10, 3, meta).sizes(), Dims({4}));
  EXPECT_EQ(tessera::linspace(0, 1, 5, meta).sizes(), Dims({5}));
  EXPECT_EQ(tessera::logspace(0, 1, 6, 10.0, meta).sizes(), Dims({6}));
}

// ---------------------------------------------------------------------------
// eye
// ---------------------------------------------------------------------------

TEST(Eye, HasOnesOnTheDiagonal) {
  for (auto [n, m] : {std::pair<int64_t, int64_t>{3, 3}, {2, 4}, {4, 2}, {1, 1}, {0, 3}}) {
    const Tensor e = tessera::eye(n, m, tessera::kFloat64);
    EXPECT_EQ(e.sizes(), Dims({n, m}));
    EXPECT_EQ(e.strides(), Dims({m, 1}));
    std::vector<double> expected(static_cast<size_t>(n * m), 0.0);
    for (int64_t i = 0; i < std::min(n, m); ++i) expected[static_cast<size_t>(i * m + i)] = 1.0;
    EXPECT_EQ(e.to_vector<double>(), expected);
  }
  EXPECT_EQ(tessera::eye(2, tessera::kBool).to_vector<bool>(),
            (std::vector<bool>{true, false, false, true}));
  EXPECT_EQ(tessera::eye(3).dtype(), tessera::kFloat32);
  EXPECT_EQ(tessera::eye(0).sizes(), Dims({0, 0}));
  expect_error([] { (void)tessera::eye(-1); }, TSR_INVALID_ARGUMENT,
               {"eye", "n must be greater or equal to 0, got -1"});
  expect_error([] { (void)tessera::eye(2, -1); }, TSR_INVALID_ARGUMENT,
               {"eye.m", "m must be greater or equal to 0, got -1"});
}

// ---------------------------------------------------------------------------
// arange
// ---------------------------------------------------------------------------

TEST(Arange, SizesAndValuesFollowPyTorch) {
  EXPECT_EQ(tessera::arange(5).to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(tessera::arange(5).dtype(), tessera::kInt64);
  // torch.arange(10, 0, -3) == [10, 7, 4, 1]
  EXPECT_EQ(tessera::arange(10, 0, -3).to_vector<int64_t>(), (std::vector<int64_t>{10, 7, 4, 1}));
  // torch.arange(0, 1, 0.1) has 10 elements; to 1.0000001, 11.
  EXPECT_EQ(tessera::arange(0, 1, 0.1).numel(), 10);
  EXPECT_EQ(tessera::arange(0, 1.0000001, 0.1).numel(), 11);
  EXPECT_EQ(tessera::arange(0, 1, 0.1).dtype(), tessera::kFloat32);
  // Integer dtypes take the length from the bounds as given and fill from the
  // truncated start (PyTorch 2.15): arange(-1.5, 2.5, dtype=int64) == [-1, 0, 1, 2];
  // arange(0.5, 3, dtype=int32) == [0, 1, 2].
  EXPECT_EQ(tessera::arange(-1.5, 2.5, 1, tessera::kInt64).to_vector<int64_t>(),
            (std::vector<int64_t>{-1, 0, 1, 2}));
  EXPECT_EQ(tessera::arange(0.5, 3, 1, tessera::kInt32).to_vector<int32_t>(),
            (std::vector<int32_t>{0, 1, 2}));
  // arange(300, dtype=uint8) wraps after 255, as PyTorch's does.
  const auto wrapped = tessera::arange(300, tessera::kUInt8).to_vector<int64_t>();
  ASSERT_EQ(wrapped.size(), 300u);
  EXPECT_EQ(wrapped[255], 255);
  EXPECT_EQ(wrapped[256], 0);
  EXPECT_EQ(tessera::arange(0).numel(), 0);
  EXPECT_EQ(tessera::arange(5).version(), 0u);
}

TEST(Arange, FloatingValuesAreStartPlusIStep) {
  for (tessera::Dtype d : {tessera::kFloat32, tessera::kFloat64}) {
    const Tensor t = tessera::arange(-2.25, 7.5, 0.37, d);
    const int64_t n = static_cast<int64_t>(std::ceil((7.5 + 2.25) / 0.37));
    ASSERT_EQ(t.numel(), n);
    std::vector<double> expected;
    for (int64_t i = 0; i < n; ++i) {
      const double v = -2.25 + static_cast<double>(i) * 0.37;
      expected.push_back(d == tessera::kFloat32 ? static_cast<double>(static_cast<float>(v)) : v);
    }
    expect_close(t.to_vector<double>(), expected, tessera::to_c(d));
  }
  const auto half = tessera::arange(0, 4, 0.5, tessera::kFloat16).to_vector<float>();
  EXPECT_EQ(half, (std::vector<float>{0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5}));
}

// Integer dtypes with fractional start/end/step: the checks and the length
// ceil((end - start) / step) in double before any cast, then
// trunc(start) + i * trunc(step) wrapped to the dtype. Every expected value is
// PyTorch 2.15's torch.arange(start, end, step, dtype=...).tolist().
TEST(Arange, IntegerDtypesTakeTheLengthInDoubleBeforeTruncating) {
  using tessera::kInt16;
  using tessera::kInt32;
  using tessera::kInt64;
  using tessera::kInt8;
  using tessera::kUInt8;
  auto i64 = [](const Tensor& t) { return t.to_vector<int64_t>(); };
  using V = std::vector<int64_t>;
  EXPECT_EQ(i64(tessera::arange(0, -8.000001, -4.0, kInt64)), (V{0, -4, -8}));
  EXPECT_EQ(i64(tessera::arange(0, -8.000001, -4.0, kInt32)), (V{0, -4, -8}));
  EXPECT_EQ(i64(tessera::arange(0, -8.000001, -4.0, kUInt8)), (V{0, 252, 248}));
  // |step| < 1 truncates to 0: every element is trunc(start).
  EXPECT_EQ(i64(tessera::arange(0, -8, -0.5, kInt64)), V(16, 0));
  EXPECT_EQ(i64(tessera::arange(0, 10, 0.5, kInt64)), V(20, 0));
  EXPECT_EQ(i64(tessera::arange(-1.5, 2.5, 0.7, kInt16)), V(6, -1));
  EXPECT_EQ(i64(tessera::arange(-1.5, 2.5, 0.7, kUInt8)), V(6, 255));
  EXPECT_EQ(i64(tessera::arange(0.9, 0.95, 0.01, kInt64)), V(5, 0));
  EXPECT_EQ(i64(tessera::arange(2.9, -3.2, -1.1, kInt64)), (V{2, 1, 0, -1, -2, -3}));
  EXPECT_EQ(i64(tessera::arange(2.9, -3.2, -1.1, kUInt8)), (V{2, 1, 0, 255, 254, 253}));
  EXPECT_EQ(i64(tessera::arange(0, 10, 2.5, kInt64)), (V{0, 2, 4, 6}));
  EXPECT_EQ(i64(tessera::arange(0.1, 5, 2, kInt32)), (V{0, 2, 4}));
  EXPECT_EQ(i64(tessera::arange(0.9, 5.9, 1, kInt64)), (V{0, 1, 2, 3, 4}));
  EXPECT_EQ(i64(tessera::arange(-0.9, 3, 1, kInt64)), (V{0, 1, 2, 3}));
  EXPECT_EQ(i64(tessera::arange(1.5, 1.7, 0.5, kInt8)), (V{1}));
  EXPECT_EQ(i64(tessera::arange(0, 300, 100.5, kInt8)), (V{0, 100, -56}));
  EXPECT_EQ(i64(tessera::arange(0, 70000, 30000, kInt16)), (V{0, 30000, -5536}));
  EXPECT_EQ(i64(tessera::arange(0.0, 3e9, 1.5e9, kInt32)), (V{0, 1500000000}));
  // The end is never cast: only start and step must fit int64.
  EXPECT_EQ(i64(tessera::arange(0.0, 1e19, 5e18, kInt64)), (V{0, 5000000000000000000}));
  // int64 with integer bounds and step counts exactly; a floating step counts in
  // double, where 2^53 + 3 is 2^53 + 4; int32 always counts in double.
  const int64_t p53 = int64_t{1} << 53;
  EXPECT_EQ(i64(tessera::arange(p53, p53 + 3, 1, kInt64)), (V{p53, p53 + 1, p53 + 2}));
  EXPECT_EQ(i64(tessera::arange(p53, p53 + 3, 1.0, kInt64)), (V{p53, p53 + 1, p53 + 2, p53 + 3}));
  EXPECT_EQ(i64(tessera::arange(p53, p53 + 3, 1, kInt32)), (V{0, 1, 2, 3}));
  const int64_t lowest = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(i64(tessera::arange(lowest, lowest + 3, 1)), (V{lowest, lowest + 1, lowest + 2}));
  // A floating dtype takes the same length.
  EXPECT_EQ(tessera::arange(0, -8.000001, -4.0, tessera::kFloat32).to_vector<double>(),
            (std::vector<double>{0, -4, -8}));
}

TEST(Arange, RefusesBadRanges) {
  expect_error([] { (void)tessera::arange(0, 5, 0); }, TSR_INVALID_ARGUMENT,
               {"arange.start_step", "step must be nonzero"});
  expect_error([] { (void)tessera::arange(0, 10, 0.0, tessera::kInt64); }, TSR_INVALID_ARGUMENT,
               {"step must be nonzero"});
  expect_error([] { (void)tessera::arange(0, 10, -0.0); }, TSR_INVALID_ARGUMENT,
               {"step must be nonzero"});
  expect_error([] { (void)tessera::arange(5, 0, 1); }, TSR_INVALID_ARGUMENT,
               {"upper bound and lower bound inconsistent with step sign"});
  // The sign check is on the values given, not the truncated ones (PyTorch 2.15).
  expect_error([] { (void)tessera::arange(0.5, 0.2, 0.5, tessera::kInt64); }, TSR_INVALID_ARGUMENT,
               {"upper bound and lower bound inconsistent with step sign"});
  expect_error([] { (void)tessera::arange(0.2, 0.5, -0.3, tessera::kInt64); }, TSR_INVALID_ARGUMENT,
               {"upper bound and lower bound inconsistent with step sign"});
  expect_error([] { (void)tessera::arange(0, 5, INFINITY); }, TSR_INVALID_ARGUMENT,
               {"step must be finite but got inf"});
  expect_error([] { (void)tessera::arange(0, 5, NAN, tessera::kInt64); }, TSR_INVALID_ARGUMENT,
               {"step must be finite but got nan"});
  expect_error([] { (void)tessera::arange(0, 3, 1e-310, tessera::kInt64); }, TSR_INVALID_ARGUMENT,
               {"invalid size, possible overflow?"});
  expect_error([] { (void)tessera::arange(1e19, 1.1e19, 1e17, tessera::kInt64); },
               TSR_INVALID_ARGUMENT, {"'start'", "cannot be converted to int64 without overflow"});
  expect_error([] { (void)tessera::arange(0, 5, 1e19, tessera::kInt64); }, TSR_INVALID_ARGUMENT,
               {"'step'", "cannot be converted to int64 without overflow"});
  expect_error([] { (void)tessera::arange(0, NAN); }, TSR_INVALID_ARGUMENT,
               {"unsupported range: 0 -> nan"});
  expect_error([] { (void)tessera::arange(0, INFINITY); }, TSR_INVALID_ARGUMENT,
               {"unsupported range: 0 -> inf"});
  expect_error([] { (void)tessera::arange(0, 1e20, 1, tessera::kFloat32); }, TSR_INVALID_ARGUMENT,
               {"invalid size, possible overflow?"});
  expect_error([] { (void)tessera::arange(5, tessera::kBool); }, TSR_INVALID_ARGUMENT,
               {"arange", "dtype", "bool"});
  expect_error([] { (void)tessera::arange(std::complex<double>(0, 1)); }, TSR_INVALID_ARGUMENT,
               {"arange", "end", "complex"});
}

// ---------------------------------------------------------------------------
// linspace, logspace
// ---------------------------------------------------------------------------

// PyTorch's symmetric linspace in float64.
std::vector<double> reference_linspace(double start, double end, int64_t steps) {
  std::vector<double> v(static_cast<size_t>(steps));
  if (steps == 1) v[0] = start;
  if (steps <= 1) return v;
  const double step = (end - start) / static_cast<double>(steps - 1);
  for (int64_t i = 0; i < steps; ++i)
    v[static_cast<size_t>(i)] = i < steps / 2 ? start + step * static_cast<double>(i)
                                              : end - step * static_cast<double>(steps - i - 1);
  return v;
}

TEST(Linspace, MatchesTheReferenceAndHitsBothEnds) {
  for (tessera::Dtype d : {tessera::kFloat32, tessera::kFloat64}) {
    for (int64_t steps : {2, 5, 7, 100, 1001}) {
      const Tensor t = tessera::linspace(-1.25, 3.5, steps, d);
      EXPECT_EQ(t.dtype(), d);
      auto expected = reference_linspace(-1.25, 3.5, steps);
      if (d == tessera::kFloat32)
        for (double& x : expected) x = static_cast<double>(static_cast<float>(x));
      const auto v = t.to_vector<double>();
      expect_close(v, expected, tessera::to_c(d));
      EXPECT_EQ(v.front(), -1.25);
      EXPECT_EQ(v.back(), 3.5);
    }
  }
  // torch.linspace(-1, 1, 5) == [-1, -0.5, 0, 0.5, 1]
  EXPECT_EQ(tessera::linspace(-1, 1, 5).to_vector<float>(),
            (std::vector<float>{-1, -0.5, 0, 0.5, 1}));
  EXPECT_EQ(tessera::linspace(0, 1, 0).numel(), 0);
  EXPECT_EQ(tessera::linspace(-1, 1, 1).to_vector<float>(), (std::vector<float>{-1}));
}

TEST(Linspace, IntegerDtypesTruncateLikePyTorch) {
  // torch.linspace(0, 10, 4, dtype=int64) == [0, 3, 6, 10];
  // torch.linspace(0, 1, 5, dtype=int32) == [0, 0, 0, 0, 1];
  // torch.linspace(3, -3, 4, dtype=int64) == [3, 1, -1, -3];
  // torch.linspace(0, 10, 5, dtype=uint8) == [0, 2, 5, 7, 10].
  EXPECT_EQ(tessera::linspace(0, 10, 4, tessera::kInt64).to_vector<int64_t>(),
            (std::vector<int64_t>{0, 3, 6, 10}));
  EXPECT_EQ(tessera::linspace(0, 1, 5, tessera::kInt32).to_vector<int32_t>(),
            (std::vector<int32_t>{0, 0, 0, 0, 1}));
  EXPECT_EQ(tessera::linspace(3, -3, 4, tessera::kInt64).to_vector<int64_t>(),
            (std::vector<int64_t>{3, 1, -1, -3}));
  EXPECT_EQ(tessera::linspace(0, 10, 5, tessera::kUInt8).to_vector<int64_t>(),
            (std::vector<int64_t>{0, 2, 5, 7, 10}));
}

TEST(Linspace, RefusesBadArguments) {
  expect_error([] { (void)tessera::linspace(0, 1, -1); }, TSR_INVALID_ARGUMENT,
               {"linspace", "number of steps must be non-negative"});
  expect_error([] { (void)tessera::linspace(0, 1, 3, tessera::kBool); }, TSR_INVALID_ARGUMENT,
               {"linspace", "dtype", "bool"});
  expect_error([] { (void)tessera::logspace(0, 1, -2); }, TSR_INVALID_ARGUMENT,
               {"logspace", "number of steps must be non-negative"});
}

TEST(Logspace, IsBaseToTheLinspace) {
  // torch.logspace(-2, 2, 5) == [0.01, 0.1, 1, 10, 100] (float32)
  const auto v = tessera::logspace(-2, 2, 5).to_vector<double>();
  std::vector<double> expected;
  for (double e : reference_linspace(-2, 2, 5))
    expected.push_back(static_cast<double>(static_cast<float>(std::pow(10.0, e))));
  expect_close(v, expected, TSR_FLOAT32);
  // torch.logspace(0, 10, 11, base=2, dtype=int32) == [1, 2, 4, ..., 1024]
  std::vector<int32_t> powers;
  for (int i = 0; i <= 10; ++i) powers.push_back(1 << i);
  EXPECT_EQ(tessera::logspace(0, 10, 11, 2.0, tessera::kInt32).to_vector<int32_t>(), powers);
  // torch.logspace(0, 2, 3, base=-2) == [1, -2, 4]
  EXPECT_EQ(tessera::logspace(0, 2, 3, -2.0, tessera::kFloat64).to_vector<double>(),
            (std::vector<double>{1, -2, 4}));
  const auto wide = tessera::logspace(-3.5, 4.25, 37, 3.0, tessera::kFloat64).to_vector<double>();
  std::vector<double> wide_expected;
  for (double e : reference_linspace(-3.5, 4.25, 37)) wide_expected.push_back(std::pow(3.0, e));
  expect_close(wide, wide_expected, TSR_FLOAT64);
}

// ---------------------------------------------------------------------------
// The _iota_ primitive
// ---------------------------------------------------------------------------

TEST(Iota, FillsRowMajorOrderThroughAnyStrides) {
  Tensor base = tessera::zeros({3, 4}, tessera::kInt64);
  Tensor t = base.t();  // (4, 3) with strides (1, 4)
  const uint64_t v0 = base.version();
  (void)tessera::call_op("_iota_",
                         {tessera::detail::value(t), tessera::detail::value(tessera::Scalar(10)),
                          tessera::detail::value(tessera::Scalar(2))});
  EXPECT_EQ(base.version(), v0 + 1);
  std::vector<int64_t> expected;
  for (int64_t i = 0; i < 12; ++i) expected.push_back(10 + 2 * i);
  EXPECT_EQ(t.contiguous().to_vector<int64_t>(), expected);

  // A strided slice of a float64 tensor, with the symmetric `end` form.
  Tensor big = tessera::zeros({10}, tessera::kFloat64);
  Tensor every_other = big.slice(0, 0, 10, 2);
  (void)tessera::call_op(
      "_iota_", {tessera::detail::value(every_other), tessera::detail::value(tessera::Scalar(0.0)),
                 tessera::detail::value(tessera::Scalar(0.25)),
                 tessera::detail::value(tessera::Scalar(1.0))});
  EXPECT_EQ(big.to_vector<double>(), (std::vector<double>{0, 0, 0.25, 0, 0.5, 0, 0.75, 0, 1, 0}));
}

TEST(Iota, WorksOnEmptyAndZeroDimTensorsAndLargeOnes) {
  Tensor scalar = tessera::zeros({}, tessera::kFloat32);
  (void)tessera::call_op(
      "_iota_", {tessera::detail::value(scalar), tessera::detail::value(tessera::Scalar(4.5)),
                 tessera::detail::value(tessera::Scalar(1))});
  EXPECT_EQ(scalar.item<float>(), 4.5f);
  Tensor empty = tessera::zeros({0});
  (void)tessera::call_op("_iota_",
                         {tessera::detail::value(empty), tessera::detail::value(tessera::Scalar(0)),
                          tessera::detail::value(tessera::Scalar(1))});
  // Above the parallel threshold: every thread's range starts at its own index.
  const int64_t n = (int64_t{1} << 18) + 5;
  const auto big = tessera::arange(n).to_vector<int64_t>();
  for (int64_t i = 0; i < n; i += 4099) ASSERT_EQ(big[static_cast<size_t>(i)], i);
  EXPECT_EQ(big.back(), n - 1);
}

TEST(Iota, RefusesBoolAndOverlappingTargets) {
  Tensor b = tessera::zeros({3}, tessera::kBool);
  expect_error(
      [&] {
        (void)tessera::call_op(
            "_iota_", {tessera::detail::value(b), tessera::detail::value(tessera::Scalar(0)),
                       tessera::detail::value(tessera::Scalar(1))});
      },
      TSR_INVALID_ARGUMENT, {"_iota_", "bool"});
  Tensor e = tessera::zeros({1}).expand({3});
  expect_error(
      [&] {
        (void)tessera::call_op(
            "_iota_", {tessera::detail::value(e), tessera::detail::value(tessera::Scalar(0)),
                       tessera::detail::value(tessera::Scalar(1))});
      },
      TSR_INVALID_ARGUMENT, {"_iota_", "more than one element"});
}

}  // namespace
