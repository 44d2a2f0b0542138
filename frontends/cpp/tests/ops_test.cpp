// Operators through the C++ frontend: arithmetic (tensor/tensor, tensor/scalar,
// in place, out=), type promotion, matmul/mm/bmm against a float64 reference
// computed here, sum/mean over dims, dtype round trips, item(), and the
// mapping of core errors to tessera::Error.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/tessera.hpp"

namespace {

using tessera::Dims;
using tessera::Tensor;

// Deterministic, non-trivial values in [-1, 1): a small LCG.
std::vector<double> pseudo_random(size_t n, uint32_t seed) {
  std::vector<double> values(n);
  uint32_t state = seed;
  for (auto& v : values) {
    state = state * 1664525u + 1013904223u;
    v = static_cast<double>(state >> 8) / static_cast<double>(1u << 24) * 2.0 - 1.0;
  }
  return values;
}

// float64 reference of (b, n, k) x (b, k, m), row-major.
std::vector<double> reference_bmm(const std::vector<double>& a, const std::vector<double>& b,
                                  int64_t batch, int64_t n, int64_t k, int64_t m) {
  std::vector<double> c(static_cast<size_t>(batch * n * m), 0.0);
  for (int64_t p = 0; p < batch; ++p) {
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < m; ++j) {
        double acc = 0;
        for (int64_t x = 0; x < k; ++x) acc += a[(p * n + i) * k + x] * b[(p * k + x) * m + j];
        c[(p * n + i) * m + j] = acc;
      }
    }
  }
  return c;
}

// Inputs rounded to float32 first, so the reference sees what the tensor holds.
std::vector<double> as_float32(std::vector<double> values) {
  for (auto& v : values) v = static_cast<double>(static_cast<float>(v));
  return values;
}

void expect_near_all(const std::vector<float>& actual, const std::vector<double>& expected,
                     double tolerance) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    EXPECT_NEAR(actual[i], expected[i], tolerance) << "at " << i;
  }
}

// ---------------------------------------------------------------------------
// Arithmetic
// ---------------------------------------------------------------------------

TEST(Arithmetic, TensorTensor) {
  const Tensor a = tessera::tensor({1.0, 2.0, 3.0});
  const Tensor b = tessera::tensor({4.0, 5.0, 6.0});
  EXPECT_EQ((a + b).to_vector<float>(), (std::vector<float>{5, 7, 9}));
  EXPECT_EQ((a - b).to_vector<float>(), (std::vector<float>{-3, -3, -3}));
  EXPECT_EQ((a * b).to_vector<float>(), (std::vector<float>{4, 10, 18}));
  EXPECT_EQ((b / a).to_vector<float>(), (std::vector<float>{4, 2.5f, 2}));
  EXPECT_EQ(a.add(b, 2).to_vector<float>(), (std::vector<float>{9, 12, 15}));
  EXPECT_EQ(a.sub(b, 0.5).to_vector<float>(), (std::vector<float>{-1, -0.5f, 0}));
  EXPECT_EQ((-a).to_vector<float>(), (std::vector<float>{-1, -2, -3}));
}

TEST(Arithmetic, TensorScalarAndScalarTensor) {
  const Tensor a = tessera::tensor({1.0, 2.0, 4.0});
  EXPECT_EQ((a + 1).to_vector<float>(), (std::vector<float>{2, 3, 5}));
  EXPECT_EQ((a - 0.5).to_vector<float>(), (std::vector<float>{0.5f, 1.5f, 3.5f}));
  EXPECT_EQ((a * 3).to_vector<float>(), (std::vector<float>{3, 6, 12}));
  EXPECT_EQ((a / 2).to_vector<float>(), (std::vector<float>{0.5f, 1, 2}));
  EXPECT_EQ((1 + a).to_vector<float>(), (std::vector<float>{2, 3, 5}));
  EXPECT_EQ((2 * a).to_vector<float>(), (std::vector<float>{2, 4, 8}));
  EXPECT_EQ((10 - a).to_vector<float>(), (std::vector<float>{9, 8, 6}));
  EXPECT_EQ((8 / a).to_vector<float>(), (std::vector<float>{8, 4, 2}));
  EXPECT_EQ((10 - a).sizes(), Dims({3}));
}

TEST(Arithmetic, TypePromotionFollowsPyTorch) {
  const Tensor i64 = tessera::tensor({1, 2});
  const Tensor i32 = tessera::tensor({1, 2}, tessera::kInt32);
  const Tensor f32 = tessera::tensor({1.0, 2.0});
  const Tensor f64 = tessera::tensor({1.0, 2.0}, tessera::kFloat64);
  EXPECT_EQ((i64 + i32).dtype(), tessera::kInt64);
  EXPECT_EQ((i64 + f32).dtype(), tessera::kFloat32);
  EXPECT_EQ((f32 + f64).dtype(), tessera::kFloat64);
  // Scalars do not raise a tensor's dtype within its category.
  EXPECT_EQ((i32 + 1).dtype(), tessera::kInt32);
  EXPECT_EQ((i32 * 1.5).dtype(), tessera::kFloat32);
  EXPECT_EQ((f32 * 2.0).dtype(), tessera::kFloat32);
  // True division of integers gives the default float dtype.
  EXPECT_EQ((i64 / i64).dtype(), tessera::kFloat32);
  EXPECT_EQ((i64 / i64).to_vector<float>(), (std::vector<float>{1, 1}));
  EXPECT_EQ((1 / i64).to_vector<float>(), (std::vector<float>{1, 0.5f}));
  EXPECT_EQ((3 - i32).dtype(), tessera::kInt32);
  EXPECT_EQ(tessera::promote_types(tessera::kInt64, tessera::kFloat16), tessera::kFloat16);
}

TEST(Arithmetic, BoolAddIsLogicalOrAndMulIsLogicalAnd) {
  const Tensor a = tessera::tensor({true, true, false, false});
  const Tensor b = tessera::tensor({true, false, true, false});
  EXPECT_EQ((a + b).to_vector<bool>(), (std::vector<bool>{true, true, true, false}));
  EXPECT_EQ((a * b).to_vector<bool>(), (std::vector<bool>{true, false, false, false}));
}

TEST(Arithmetic, InPlaceOpsWriteSelfAndBumpVersion) {
  Tensor a = tessera::tensor({1.0, 2.0});
  const Tensor b = tessera::tensor({3.0, 4.0});
  const uint64_t v0 = a.version();
  Tensor& same = a.add_(b);
  EXPECT_EQ(&same, &a);
  EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{4, 6}));
  EXPECT_EQ(a.version(), v0 + 1);
  a.sub_(1).mul_(b).div_(2);
  EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{4.5f, 10}));
  a.add_(b, -1);
  EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{1.5f, 6}));
  a.sub_(b, 0.5).mul_(2).div_(b);
  EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{0, 2}));
  a += 1;
  a *= b;
  a -= b;
  a /= 2;
  EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{0, 4}));
  EXPECT_EQ(a.version(), v0 + 12);
}

TEST(Arithmetic, InPlaceOnViewWritesBase) {
  Tensor base = tessera::zeros({2, 3});
  base.select(1, 1).add_(5);
  EXPECT_EQ(base.to_vector<float>(), (std::vector<float>{0, 5, 0, 0, 5, 0}));
}

TEST(Arithmetic, InPlaceCannotChangeShapeOrUnsafeDtype) {
  Tensor small = tessera::zeros({3});
  EXPECT_THROW(small.add_(tessera::zeros({2, 3})), tessera::Error);
  Tensor ints = tessera::zeros({2}, tessera::kInt64);
  EXPECT_THROW(ints.add_(tessera::tensor({0.5, 0.5})), tessera::Error);
}

TEST(Arithmetic, OutVariantsWriteIntoPreallocatedOutput) {
  const Tensor a = tessera::tensor({1.0, 2.0});
  const Tensor b = tessera::tensor({10.0, 20.0});
  Tensor out = tessera::empty({2});
  Tensor& result = tessera::add_out(out, a, b);
  EXPECT_EQ(&result, &out);
  EXPECT_EQ(out.to_vector<float>(), (std::vector<float>{11, 22}));
  const tsr_tensor* handle = out.get();
  tessera::sub_out(out, a, b);
  EXPECT_EQ(out.to_vector<float>(), (std::vector<float>{-9, -18}));
  tessera::mul_out(out, a, b);
  EXPECT_EQ(out.to_vector<float>(), (std::vector<float>{10, 40}));
  tessera::div_out(out, b, a);
  EXPECT_EQ(out.to_vector<float>(), (std::vector<float>{10, 10}));
  EXPECT_EQ(out.get(), handle);
}

TEST(Arithmetic, BroadcastingPairs) {
  const Tensor a = tessera::arange(6, tessera::kFloat32).reshape({2, 3});
  const Tensor row = tessera::tensor({10.0, 20.0, 30.0});
  EXPECT_EQ((a + row).to_vector<float>(), (std::vector<float>{10, 21, 32, 13, 24, 35}));
  const Tensor col = tessera::tensor({100.0, 200.0}, {2, 1});
  EXPECT_EQ((a * col).to_vector<float>(), (std::vector<float>{0, 100, 200, 600, 800, 1000}));
  EXPECT_THROW(a + tessera::zeros({2}), tessera::Error);
}

TEST(Arithmetic, NonContiguousInputs) {
  const Tensor a = tessera::arange(6, tessera::kFloat32).reshape({2, 3});
  const Tensor sum = a.t() + a.t();
  EXPECT_EQ(sum.sizes(), Dims({3, 2}));
  EXPECT_EQ(sum.to_vector<float>(), (std::vector<float>{0, 6, 2, 8, 4, 10}));
}

// ---------------------------------------------------------------------------
// Matmul against a float64 reference
// ---------------------------------------------------------------------------

TEST(Matmul, MmMatchesFloat64Reference) {
  const int64_t n = 5, k = 7, m = 3;
  const auto a = as_float32(pseudo_random(n * k, 1));
  const auto b = as_float32(pseudo_random(k * m, 2));
  const Tensor ta = tessera::tensor(a, {n, k});
  const Tensor tb = tessera::tensor(b, {k, m});
  const Tensor c = ta.mm(tb);
  EXPECT_EQ(c.sizes(), Dims({n, m}));
  EXPECT_EQ(c.dtype(), tessera::kFloat32);
  expect_near_all(c.to_vector<float>(), reference_bmm(a, b, 1, n, k, m), 1e-5);
  expect_near_all(tessera::matmul(ta, tb).to_vector<float>(), reference_bmm(a, b, 1, n, k, m),
                  1e-5);
}

TEST(Matmul, MmOfTransposedOperands) {
  const int64_t n = 4, k = 6, m = 5;
  const auto a = as_float32(pseudo_random(n * k, 3));
  const auto b = as_float32(pseudo_random(k * m, 4));
  // Store a as (k, n) and b as (m, k), then multiply their transposes.
  std::vector<double> at(a.size()), bt(b.size());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t x = 0; x < k; ++x) at[x * n + i] = a[i * k + x];
  for (int64_t x = 0; x < k; ++x)
    for (int64_t j = 0; j < m; ++j) bt[j * k + x] = b[x * m + j];
  const Tensor c = tessera::tensor(at, {k, n}).t().mm(tessera::tensor(bt, {m, k}).t());
  expect_near_all(c.to_vector<float>(), reference_bmm(a, b, 1, n, k, m), 1e-5);
}

TEST(Matmul, BmmMatchesFloat64Reference) {
  const int64_t batch = 3, n = 4, k = 5, m = 2;
  const auto a = as_float32(pseudo_random(batch * n * k, 5));
  const auto b = as_float32(pseudo_random(batch * k * m, 6));
  const Tensor c = tessera::tensor(a, {batch, n, k}).bmm(tessera::tensor(b, {batch, k, m}));
  EXPECT_EQ(c.sizes(), Dims({batch, n, m}));
  expect_near_all(c.to_vector<float>(), reference_bmm(a, b, batch, n, k, m), 1e-5);
}

TEST(Matmul, Float64MatmulIsExactToFloat64Tolerance) {
  const int64_t n = 6, k = 9, m = 4;
  const auto a = pseudo_random(n * k, 7);
  const auto b = pseudo_random(k * m, 8);
  const Tensor c = tessera::matmul(tessera::tensor(a, {n, k}, tessera::kFloat64),
                                   tessera::tensor(b, {k, m}, tessera::kFloat64));
  EXPECT_EQ(c.dtype(), tessera::kFloat64);
  const auto expected = reference_bmm(a, b, 1, n, k, m);
  const auto actual = c.to_vector<double>();
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) EXPECT_NEAR(actual[i], expected[i], 1e-12);
}

TEST(Matmul, MatmulHandlesVectorsAndBatches) {
  const auto a = as_float32(pseudo_random(3 * 4, 9));
  const auto v = as_float32(pseudo_random(4, 10));
  const Tensor mv = tessera::matmul(tessera::tensor(a, {3, 4}), tessera::tensor(v, {4}));
  EXPECT_EQ(mv.sizes(), Dims({3}));
  expect_near_all(mv.to_vector<float>(), reference_bmm(a, v, 1, 3, 4, 1), 1e-5);
  const Tensor dot = tessera::matmul(tessera::tensor(v, {4}), tessera::tensor(v, {4}));
  EXPECT_EQ(dot.dim(), 0);
  EXPECT_NEAR(dot.item<double>(), reference_bmm(v, v, 1, 1, 4, 1)[0], 1e-5);
  const auto batched = as_float32(pseudo_random(2 * 3 * 4, 11));
  const Tensor bm =
      tessera::matmul(tessera::tensor(batched, {2, 3, 4}), tessera::tensor(a, {4, 3}));
  EXPECT_EQ(bm.sizes(), Dims({2, 3, 3}));
}

TEST(Matmul, ShapeMismatchIsAnError) {
  try {
    tessera::mm(tessera::zeros({2, 3}), tessera::zeros({4, 5}));
    FAIL() << "mm accepted (2,3) x (4,5)";
  } catch (const tessera::Error& error) {
    EXPECT_NE(error.code(), TSR_OK);
    EXPECT_FALSE(std::string(error.what()).empty());
  }
}

// ---------------------------------------------------------------------------
// Reductions
// ---------------------------------------------------------------------------

TEST(Reduction, SumAndMeanOfEverything) {
  const Tensor a = tessera::arange(12, tessera::kFloat32).reshape({3, 4});
  const Tensor total = a.sum();
  EXPECT_EQ(total.dim(), 0);
  EXPECT_EQ(total.item<float>(), 66.0f);
  EXPECT_EQ(a.mean().item<float>(), 5.5f);
  EXPECT_EQ(tessera::sum(a).item<double>(), 66.0);
}

TEST(Reduction, SumOverDims) {
  const Tensor a = tessera::arange(24, tessera::kFloat32).reshape({2, 3, 4});
  // Expected sums computed here from a[i][j][l] = 12i + 4j + l.
  std::vector<float> over_middle;
  for (int i = 0; i < 2; ++i)
    for (int l = 0; l < 4; ++l) over_middle.push_back(static_cast<float>(3 * 12 * i + 12 + 3 * l));
  const Tensor s1 = a.sum(1);
  EXPECT_EQ(s1.sizes(), Dims({2, 4}));
  EXPECT_EQ(s1.to_vector<float>(), over_middle);
  const Tensor s1k = a.sum(1, true);
  EXPECT_EQ(s1k.sizes(), Dims({2, 1, 4}));
  EXPECT_EQ(s1k.to_vector<float>(), over_middle);
  const Tensor s_last_two = a.sum({-1, -2});
  EXPECT_EQ(s_last_two.sizes(), Dims({2}));
  EXPECT_EQ(s_last_two.to_vector<float>(), (std::vector<float>{66, 210}));
  EXPECT_EQ(a.sum({0, 1, 2}).item<float>(), 276.0f);
}

TEST(Reduction, MeanOverDims) {
  const Tensor a = tessera::arange(6, tessera::kFloat32).reshape({2, 3});
  EXPECT_EQ(a.mean(0).to_vector<float>(), (std::vector<float>{1.5f, 2.5f, 3.5f}));
  EXPECT_EQ(a.mean(1, true).sizes(), Dims({2, 1}));
  EXPECT_EQ(a.mean(-1).to_vector<float>(), (std::vector<float>{1, 4}));
  EXPECT_EQ(tessera::mean(a, {0, 1}).item<float>(), 2.5f);
}

TEST(Reduction, IntegerAndBoolSumsProduceInt64) {
  EXPECT_EQ(tessera::tensor({1, 2, 3}, tessera::kInt32).sum().dtype(), tessera::kInt64);
  const Tensor flags = tessera::tensor({true, false, true});
  EXPECT_EQ(flags.sum().dtype(), tessera::kInt64);
  EXPECT_EQ(flags.sum().item<int64_t>(), 2);
}

TEST(Reduction, DtypeArgumentSelectsAccumulationAndResult) {
  const Tensor ints = tessera::tensor({1, 2, 4});
  EXPECT_EQ(ints.sum(tessera::kFloat64).dtype(), tessera::kFloat64);
  EXPECT_EQ(ints.sum({0}, false, tessera::kFloat64).item<double>(), 7.0);
  EXPECT_EQ(ints.mean(tessera::kFloat32).item<float>(), 7.0f / 3.0f);
  EXPECT_EQ(ints.mean({0}, false, tessera::kFloat64).item<double>(), 7.0 / 3.0);
}

TEST(Reduction, MeanOfIntegersIsRejected) {
  EXPECT_THROW(tessera::tensor({1, 2}).mean(), tessera::Error);
}

TEST(Reduction, OutOfRangeDimIsAnError) {
  EXPECT_THROW(tessera::zeros({2, 2}).sum(2), tessera::Error);
}

// ---------------------------------------------------------------------------
// Conversions and item()
// ---------------------------------------------------------------------------

TEST(Conversion, Float32ToFloat64AndBackIsExact) {
  const auto values = as_float32(pseudo_random(16, 12));
  const Tensor f32 = tessera::tensor(values);
  const Tensor f64 = f32.to(tessera::kFloat64);
  EXPECT_EQ(f64.dtype(), tessera::kFloat64);
  EXPECT_EQ(f64.to_vector<double>(), values);
  EXPECT_EQ(f64.to(tessera::kFloat32).to_vector<float>(), f32.to_vector<float>());
}

TEST(Conversion, IntegersSurviveFloatRoundTrip) {
  const Tensor ints = tessera::tensor({-3, 0, 7, 1 << 20});
  EXPECT_EQ(ints.to(tessera::kFloat32).to(tessera::kInt64).to_vector<int64_t>(),
            (std::vector<int64_t>{-3, 0, 7, 1 << 20}));
  EXPECT_EQ(ints.to(tessera::kInt16).to(tessera::kInt64).to_vector<int64_t>(),
            (std::vector<int64_t>{-3, 0, 7, 0}));  // 2^20 wraps to 0 in int16
}

TEST(Conversion, FloatToIntTruncatesTowardZero) {
  const Tensor f = tessera::tensor({-1.7, -0.5, 0.5, 2.9});
  EXPECT_EQ(f.to(tessera::kInt32).to_vector<int32_t>(), (std::vector<int32_t>{-1, 0, 0, 2}));
}

TEST(Conversion, AnythingToBoolIsNonZero) {
  const Tensor f = tessera::tensor({0.0, -2.0, 0.25});
  EXPECT_EQ(f.to(tessera::kBool).to_vector<bool>(), (std::vector<bool>{false, true, true}));
  EXPECT_EQ(f.to(tessera::kBool).to(tessera::kFloat32).to_vector<float>(),
            (std::vector<float>{0, 1, 1}));
}

TEST(Conversion, HalfPrecisionRoundTripOfRepresentableValues) {
  const Tensor f = tessera::tensor({0.5, -2.0, 1024.0});
  EXPECT_EQ(f.to(tessera::kFloat16).to(tessera::kFloat32).to_vector<float>(),
            (std::vector<float>{0.5f, -2.0f, 1024.0f}));
  EXPECT_EQ(f.to(tessera::kBFloat16).to(tessera::kFloat32).to_vector<float>(),
            (std::vector<float>{0.5f, -2.0f, 1024.0f}));
}

TEST(Conversion, ItemReturnsTheRightScalarKind) {
  EXPECT_TRUE(tessera::scalar_tensor(2).item().is_integral());
  EXPECT_EQ(tessera::scalar_tensor(2).item<int64_t>(), 2);
  EXPECT_TRUE(tessera::scalar_tensor(2.5).item().is_floating_point());
  EXPECT_EQ(tessera::scalar_tensor(2.5).item<float>(), 2.5f);
  EXPECT_TRUE(tessera::scalar_tensor(true).item().is_bool());
  EXPECT_TRUE(tessera::scalar_tensor(true).item<bool>());
  EXPECT_EQ(tessera::tensor({7.0}).item<int>(), 7);  // one element, any dims
}

TEST(Conversion, ToVectorConvertsTheDtype) {
  EXPECT_EQ(tessera::tensor({1.5, 2.5}).to_vector<double>(), (std::vector<double>{1.5, 2.5}));
  EXPECT_EQ(tessera::tensor({1, 2}).to_vector<float>(), (std::vector<float>{1, 2}));
}

// ---------------------------------------------------------------------------
// Error mapping
// ---------------------------------------------------------------------------

TEST(ErrorMapping, UnknownOperatorIsNotFoundAndNamesIt) {
  try {
    tessera::detail::find_op("no_such_op.Tensor");
    FAIL() << "found an op that does not exist";
  } catch (const tessera::Error& error) {
    EXPECT_EQ(error.code(), TSR_NOT_FOUND);
    EXPECT_NE(std::string(error.what()).find("no_such_op"), std::string::npos) << error.what();
  }
}

TEST(ErrorMapping, BadViewIsAnErrorWithAMessage) {
  try {
    tessera::zeros({2, 3}).view({4});
    FAIL() << "view (2,3) -> (4) accepted";
  } catch (const tessera::Error& error) {
    EXPECT_EQ(error.code(), TSR_INVALID_ARGUMENT) << error.code_name() << ": " << error.what();
    EXPECT_FALSE(std::string(error.what()).empty());
  }
}

TEST(ErrorMapping, OutOfRangeDimUsesOutOfRange) {
  try {
    tessera::zeros({2, 3}).transpose(0, 5);
    FAIL() << "transpose(0, 5) of a 2-d tensor accepted";
  } catch (const tessera::Error& error) {
    EXPECT_EQ(error.code(), TSR_OUT_OF_RANGE) << error.code_name() << ": " << error.what();
  }
}

TEST(ErrorMapping, ErrorsLeaveOperandsUsable) {
  Tensor a = tessera::ones({2});
  EXPECT_THROW(a.add_(tessera::ones({3})), tessera::Error);
  EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{1, 1}));
  EXPECT_EQ((a + a).to_vector<float>(), (std::vector<float>{2, 2}));
}

}  // namespace
