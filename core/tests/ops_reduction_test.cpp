// The reduction op family end to end (C++ frontend -> core -> CPU plugin):
// reductions over dim lists, arg reductions, statistics, norms, scans and
// softmax against float64 references computed here (or a few torch 1.13
// constants, marked), on 0-d, empty, keepdim, negative and multiple dims,
// transposed and sliced inputs, NaN/inf, integer and 16-bit dtypes, out=
// forms, the meta device, and bad input (code + message naming op and
// argument).
//
// Tolerances (conformance/tolerances.hpp): float64 1e-12, float32 rtol 1.3e-6
// atol 1e-5, float16 1e-3, bfloat16 1.6e-2; accumulating/transcendental ops
// (sums over many elements, softmax, norms, logsumexp) use loose(): x16.
// Composites that need ops of the pointwise family (std, norm,
// logsumexp, nansum) skip, naming the op, while that family lacks them.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "../../conformance/tolerances.hpp"
#include "tessera/tessera.hpp"

namespace {

using tessera::Dtype;
using tessera::Tensor;
namespace conf = tessera::conformance;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Deterministic values in [-1, 1) (a small LCG).
std::vector<double> pseudo_random(size_t n, uint32_t seed) {
  std::vector<double> values(n);
  uint32_t state = seed;
  for (auto& v : values) {
    state = state * 1664525u + 1013904223u;
    v = static_cast<double>(state >> 8) / static_cast<double>(1u << 24) * 2.0 - 1.0;
  }
  return values;
}

// Values as a tensor of `dtype` (rounded by the conversion), and what it holds.
Tensor make(const std::vector<double>& values, tessera::IntList shape, Dtype dtype) {
  return tessera::tensor(values, shape).to(dtype);
}
std::vector<double> held(const Tensor& t) { return t.to_vector<double>(); }

conf::Tolerance tol(Dtype d, bool loose = false) {
  conf::Tolerance t = conf::tolerance(static_cast<tsr_dtype>(d));
  if (loose) {
    t.rtol *= conf::kAccumulatingFactor;
    t.atol *= conf::kAccumulatingFactor;
  }
  return t;
}

void expect_values(const std::vector<double>& actual, const std::vector<double>& expected,
                   conf::Tolerance t, const std::string& what = "") {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (size_t i = 0; i < actual.size(); ++i) {
    const double a = actual[i], e = expected[i];
    if (std::isnan(e)) {
      EXPECT_TRUE(std::isnan(a)) << what << " at " << i << ": got " << a << ", expected NaN";
    } else if (std::isinf(e)) {
      EXPECT_EQ(a, e) << what << " at " << i;
    } else {
      EXPECT_LE(std::fabs(a - e), t.atol + t.rtol * std::fabs(e))
          << what << " at " << i << ": got " << a << ", expected " << e;
    }
  }
}

std::vector<int64_t> sizes_of(const Tensor& t) {
  const auto d = t.sizes();
  return std::vector<int64_t>(d.begin(), d.end());
}

// Reference reduction of row-major `x` of `shape` over `dims` (bit mask):
// fold(acc, value) from `init`, then finish(acc, count). Output row-major
// over the kept dims.
std::vector<double> ref_reduce(const std::vector<double>& x, const std::vector<int64_t>& shape,
                               uint32_t mask, double init,
                               const std::function<double(double, double)>& fold,
                               const std::function<double(double, int64_t)>& finish) {
  const int nd = static_cast<int>(shape.size());
  int64_t outputs = 1, count = 1;
  for (int d = 0; d < nd; ++d) ((mask >> d) & 1u ? count : outputs) *= shape[d];
  std::vector<double> acc(static_cast<size_t>(outputs), init);
  std::vector<int64_t> idx(nd, 0);
  for (size_t i = 0; i < x.size(); ++i) {
    int64_t o = 0;
    for (int d = 0; d < nd; ++d)
      if (!((mask >> d) & 1u)) o = o * shape[d] + idx[d];
    acc[o] = fold(acc[o], x[i]);
    for (int d = nd - 1; d >= 0; --d) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  for (auto& a : acc) a = finish(a, count);
  return acc;
}

double add(double a, double b) { return a + b; }
double identity(double a, int64_t) { return a; }

bool has_op(const char* name) {
  const tsr_op* op = nullptr;
  tsr_status* s = tsr_op_find(tessera::default_runtime(), name, &op);
  if (s) tsr_status_free(s);
  return s == nullptr;
}

#define SKIP_WITHOUT(op_name) \
  if (!has_op(op_name))       \
  GTEST_SKIP() << "needs op '" << op_name << "' of another family, not registered yet"

// Runs `f`, expecting a tessera::Error with `code` whose message contains
// every one of `parts`.
template <class F>
void expect_error(F&& f, tsr_status_code code, std::initializer_list<const char*> parts) {
  try {
    f();
    ADD_FAILURE() << "no error thrown";
  } catch (const tessera::Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    for (const char* p : parts)
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos)
          << "message lacks '" << p << "': " << e.what();
  }
}

const std::vector<int64_t> kShape = {3, 4, 5};

// ---------------------------------------------------------------------------
// sum / mean / prod over dim lists
// ---------------------------------------------------------------------------

TEST(SumMeanProd, EveryDimSetMatchesTheReference) {
  const std::vector<double> x = pseudo_random(60, 1);
  const std::vector<std::vector<int64_t>> dim_sets = {{0},     {1},    {2},       {-1}, {0, 2},
                                                      {-1, 0}, {1, 2}, {0, 1, 2}, {}};
  for (Dtype d : {tessera::kFloat64, tessera::kFloat32}) {
    const Tensor t = make(x, kShape, d);
    const std::vector<double> h = held(t);
    for (const auto& dims : dim_sets) {
      uint32_t mask = dims.empty() ? 7u : 0u;
      for (int64_t k : dims) mask |= 1u << ((k + 3) % 3);
      for (bool keepdim : {false, true}) {
        const std::string what = "dims " + std::to_string(mask) + (keepdim ? " keepdim" : "");
        const Tensor s = tessera::sum(t, dims, keepdim);
        const Tensor m = tessera::mean(t, dims, keepdim);
        EXPECT_EQ(s.dtype(), d);
        std::vector<int64_t> expected_shape;
        for (int k = 0; k < 3; ++k) {
          if (!((mask >> k) & 1u))
            expected_shape.push_back(kShape[k]);
          else if (keepdim)
            expected_shape.push_back(1);
        }
        EXPECT_EQ(sizes_of(s), expected_shape) << what;
        EXPECT_EQ(sizes_of(m), expected_shape) << what;
        expect_values(held(s), ref_reduce(h, kShape, mask, 0, add, identity), tol(d), what);
        expect_values(held(m),
                      ref_reduce(h, kShape, mask, 0, add,
                                 [](double a, int64_t n) { return a / static_cast<double>(n); }),
                      tol(d), what);
      }
    }
    // prod over one dim (int dim), negative.
    const Tensor p = tessera::prod(t, -2, true);
    EXPECT_EQ(sizes_of(p), (std::vector<int64_t>{3, 1, 5}));
    expect_values(held(p),
                  ref_reduce(
                      h, kShape, 2u, 1.0, [](double a, double b) { return a * b; }, identity),
                  tol(d));
    expect_values(held(tessera::prod(t)),
                  ref_reduce(
                      h, kShape, 7u, 1.0, [](double a, double b) { return a * b; }, identity),
                  tol(d));
  }
}

TEST(SumMeanProd, TransposedAndSlicedInputsMatchTheReference) {
  const std::vector<double> x = pseudo_random(24 * 40, 2);
  const Tensor base = make(x, {24, 40}, tessera::kFloat32);
  // Transposed (40, 24) view, and a strided slice (12, 20) of it.
  const Tensor views[] = {base.t(), base.slice(0, 0, 24, 2).slice(1, 1, 40, 2).t()};
  for (const Tensor& v : views) {
    ASSERT_FALSE(v.is_contiguous());
    const std::vector<double> h = held(v);
    const std::vector<int64_t> shape = sizes_of(v);
    for (uint32_t mask : {1u, 2u, 3u}) {
      std::vector<int64_t> dims;
      for (int64_t k = 0; k < 2; ++k)
        if ((mask >> k) & 1u) dims.push_back(k);
      expect_values(held(tessera::sum(v, dims)), ref_reduce(h, shape, mask, 0, add, identity),
                    tol(tessera::kFloat32, true));
      expect_values(
          held(tessera::amax(v, dims)),
          ref_reduce(
              h, shape, mask, -kInf, [](double a, double b) { return std::max(a, b); }, identity),
          tol(tessera::kFloat32));
    }
  }
}

TEST(SumMeanProd, LargeParallelReductionsStayAccurate) {
  // Large enough to run on several threads, over the inner and the outer dim.
  const int64_t rows = 512, cols = 1024;
  const std::vector<double> x = pseudo_random(rows * cols, 3);
  const Tensor t = make(x, {rows, cols}, tessera::kFloat32);
  const std::vector<double> h = held(t);
  for (uint32_t mask : {1u, 2u, 3u}) {
    std::vector<int64_t> dims;
    for (int64_t k = 0; k < 2; ++k)
      if ((mask >> k) & 1u) dims.push_back(k);
    expect_values(held(tessera::sum(t, dims)), ref_reduce(h, {rows, cols}, mask, 0, add, identity),
                  tol(tessera::kFloat32, true));
  }
}

TEST(SumMeanProd, IntegerAndBoolInputsSumToInt64) {
  const Tensor i8 = tessera::tensor({100, 100, 100}).to(tessera::kInt8);
  const Tensor s = tessera::sum(i8);
  EXPECT_EQ(s.dtype(), tessera::kInt64);
  EXPECT_EQ(s.item<int64_t>(), 300);
  const Tensor b = tessera::tensor({1, 0, 1, 1}).to(tessera::kBool);
  EXPECT_EQ(tessera::sum(b).dtype(), tessera::kInt64);
  EXPECT_EQ(tessera::sum(b).item<int64_t>(), 3);
  const Tensor p = tessera::prod(tessera::tensor({2, 3, 7}).to(tessera::kInt16));
  EXPECT_EQ(p.dtype(), tessera::kInt64);
  EXPECT_EQ(p.item<int64_t>(), 42);
  // dtype= converts the input first (torch: sum([1.5, 2.5], dtype=int32) == 3).
  const Tensor cast_sum = tessera::sum(tessera::tensor({1.5, 2.5}), tessera::kInt32);
  EXPECT_EQ(cast_sum.dtype(), tessera::kInt32);
  EXPECT_EQ(cast_sum.item<int32_t>(), 3);
  // int64 wraps like PyTorch's.
  const Tensor big = tessera::tensor({INT64_MAX, int64_t{1}});
  EXPECT_EQ(tessera::sum(big).item<int64_t>(), INT64_MIN);
}

TEST(SumMeanProd, MeanOfIntegersNeedsAFloatingDtype) {
  const Tensor ints = tessera::tensor({1, 2, 4});
  expect_error([&] { (void)tessera::mean(ints); }, TSR_INVALID_ARGUMENT,
               {"mean", "could not infer output dtype", "int64"});
  expect_error([&] { (void)tessera::mean(ints, tessera::kInt32); }, TSR_INVALID_ARGUMENT,
               {"mean", "int32"});
  EXPECT_DOUBLE_EQ(tessera::mean(ints, tessera::kFloat64).item<double>(), 7.0 / 3.0);
}

TEST(SumMeanProd, EmptyReductionsGiveTheIdentity) {
  const Tensor e = tessera::zeros({3, 0});
  EXPECT_EQ(held(tessera::sum(e, {1})), (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(held(tessera::prod(e, 1)), (std::vector<double>{1, 1, 1}));
  EXPECT_TRUE(std::isnan(tessera::mean(e).item<double>()));
  EXPECT_EQ(sizes_of(tessera::sum(e, {0})), (std::vector<int64_t>{0}));
  EXPECT_EQ(tessera::sum(e).item<double>(), 0.0);
  EXPECT_EQ(tessera::any(e).item<bool>(), false);
  EXPECT_EQ(tessera::all(e).item<bool>(), true);
}

TEST(SumMeanProd, ZeroDimInputsReduceOverNothing) {
  const Tensor s = tessera::scalar_tensor(2.5);
  EXPECT_EQ(tessera::sum(s).item<double>(), 2.5);
  EXPECT_EQ(tessera::sum(s, {0}).item<double>(), 2.5);
  EXPECT_EQ(tessera::sum(s, {-1}, true).dim(), 0);
  EXPECT_EQ(tessera::amax(s, {0}).item<double>(), 2.5);
  EXPECT_EQ(tessera::prod(s, 0).item<double>(), 2.5);
  EXPECT_EQ(tessera::argmax(s, 0).item<int64_t>(), 0);
  EXPECT_EQ(tessera::argmax(s).item<int64_t>(), 0);
  EXPECT_EQ(tessera::cumsum(s, 0).item<double>(), 2.5);
  EXPECT_EQ(tessera::softmax(s, 0).item<double>(), 1.0);
  EXPECT_EQ(tessera::max_dim(s, 0).second.item<int64_t>(), 0);
}

TEST(SumMeanProd, HalfInputsAccumulateInFloat32) {
  // 4096 x 0.1 in float16: a float16 accumulator would stall at 256.
  const std::vector<double> x(4096, 0.1);
  for (Dtype d : {tessera::kFloat16, tessera::kBFloat16}) {
    const Tensor t = make(x, {4096}, d);
    const double each = held(t)[0];
    const Tensor s = tessera::sum(t);
    EXPECT_EQ(s.dtype(), d);
    expect_values(held(s), {each * 4096}, tol(d));
    expect_values(held(tessera::mean(t)), {each}, tol(d));
  }
}

TEST(SumMeanProd, OutFormsResizeAndTakeTheirDtype) {
  const Tensor t = tessera::tensor({1.5, 2.0, 3.0, 4.0}, {2, 2});
  Tensor out = tessera::empty({0}, tessera::kFloat64);
  tessera::sum_out(out, t, {0});
  EXPECT_EQ(sizes_of(out), (std::vector<int64_t>{2}));
  EXPECT_EQ(held(out), (std::vector<double>{4.5, 6.0}));
  EXPECT_EQ(out.dtype(), tessera::kFloat64);
  // Without dtype the sum runs in out's dtype (torch: [4, 6] into int64).
  Tensor iout = tessera::empty({0}, tessera::kInt64);
  tessera::sum_out(iout, t, {0});
  EXPECT_EQ(iout.to_vector<int64_t>(), (std::vector<int64_t>{4, 6}));
  Tensor mout = tessera::empty({5}, tessera::kFloat32);
  tessera::mean_out(mout, t, {1}, true);
  EXPECT_EQ(sizes_of(mout), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(held(mout), (std::vector<double>{1.75, 3.5}));
  // amax.out needs exactly the input's dtype.
  Tensor wrong = tessera::empty({0}, tessera::kFloat64);
  expect_error([&] { tessera::amax_out(wrong, t, {0}); }, TSR_INVALID_ARGUMENT,
               {"amax.out", "float32", "float64", "out"});
  Tensor right = tessera::empty({0}, tessera::kFloat32);
  tessera::amax_out(right, t, {0});
  EXPECT_EQ(held(right), (std::vector<double>{3.0, 4.0}));
}

TEST(SumMeanProd, BadDimsAreRefusedNamingOpAndArgument) {
  const Tensor t = tessera::ones({2, 3});
  expect_error([&] { (void)tessera::sum(t, {2}); }, TSR_OUT_OF_RANGE,
               {"sum.dim_IntList", "'dim'", "2", "[-2, 1]"});
  expect_error(
      [&] {
        (void)tessera::sum(t, {0, -2});
      },
      TSR_INVALID_ARGUMENT, {"sum.dim_IntList", "dim 0 appears multiple times"});
  expect_error([&] { (void)tessera::prod(t, -3); }, TSR_OUT_OF_RANGE, {"prod.dim_int", "-3"});
  expect_error([&] { (void)tessera::cumsum(t, 5); }, TSR_OUT_OF_RANGE, {"cumsum", "5"});
  expect_error([&] { (void)tessera::softmax(t, 2); }, TSR_OUT_OF_RANGE, {"softmax.int", "2"});
  expect_error([&] { (void)tessera::argmax(t, 2); }, TSR_OUT_OF_RANGE, {"argmax", "2"});
}

// ---------------------------------------------------------------------------
// Extremes: max, min, amax, amin, aminmax, argmax, argmin
// ---------------------------------------------------------------------------

TEST(Extremes, NaNPropagatesAndArgExtremesPickItsFirstIndex) {
  const Tensor t = tessera::tensor({1.0, kNaN, 3.0, kNaN, -2.0});
  EXPECT_TRUE(std::isnan(tessera::max(t).item<double>()));
  EXPECT_TRUE(std::isnan(tessera::amin(t).item<double>()));
  EXPECT_EQ(tessera::argmax(t).item<int64_t>(), 1);
  EXPECT_EQ(tessera::argmin(t).item<int64_t>(), 1);
  const auto [values, indices] = tessera::max_dim(t, 0);
  EXPECT_TRUE(std::isnan(values.item<double>()));
  EXPECT_EQ(indices.item<int64_t>(), 1);  // torch: max([1, nan, nan], 0) -> (nan, 1)
  const Tensor clean = tessera::tensor({1.0, 7.0, 3.0, 7.0, -2.0});
  EXPECT_EQ(tessera::argmax(clean).item<int64_t>(), 1);  // first of the ties
  EXPECT_EQ(tessera::argmin(clean).item<int64_t>(), 4);
  EXPECT_EQ(tessera::max(clean).item<double>(), 7.0);
  EXPECT_EQ(tessera::min(clean).item<double>(), -2.0);
}

TEST(Extremes, AlongDimsOfViewsMatchTheReference) {
  // Long contiguous rows (the two-pass argmax) and an outer dim (columns).
  const int64_t rows = 6, cols = 300;
  std::vector<double> x = pseudo_random(rows * cols, 4);
  x[2 * cols + 17] = kNaN;
  const Tensor t = make(x, {rows, cols}, tessera::kFloat32);
  const std::vector<double> h = held(t);
  for (const Tensor& v : {t, t.t()}) {
    const std::vector<int64_t> shape = sizes_of(v);
    const std::vector<double> hv = held(v);
    for (int64_t dim : {0, 1}) {
      const auto [values, indices] = tessera::max_dim(v, dim, true);
      const auto [mvals, midx] = tessera::min_dim(v, dim);
      const Tensor am = tessera::argmax(v, dim);
      const int64_t n = shape[dim], other = shape[1 - dim];
      std::vector<double> ev(other), em(other);
      std::vector<int64_t> ei(other), emi(other);
      for (int64_t o = 0; o < other; ++o) {
        double best = 0, worst = 0;
        int64_t bi = -1, wi = -1;
        for (int64_t k = 0; k < n; ++k) {
          const double val = dim == 0 ? hv[k * shape[1] + o] : hv[o * shape[1] + k];
          if (bi < 0 || (!std::isnan(best) && (val > best || std::isnan(val)))) {
            best = val;
            bi = k;
          }
          if (wi < 0 || (!std::isnan(worst) && (val < worst || std::isnan(val)))) {
            worst = val;
            wi = k;
          }
        }
        ev[o] = best;
        ei[o] = bi;
        em[o] = worst;
        emi[o] = wi;
      }
      std::vector<int64_t> keep_shape = shape;
      keep_shape[dim] = 1;
      EXPECT_EQ(sizes_of(values), keep_shape);
      expect_values(held(values), ev, tol(tessera::kFloat32));
      EXPECT_EQ(indices.to_vector<int64_t>(), ei);
      EXPECT_EQ(am.to_vector<int64_t>(), ei);
      expect_values(held(mvals), em, tol(tessera::kFloat32));
      EXPECT_EQ(midx.to_vector<int64_t>(), emi);
      EXPECT_EQ(tessera::argmin(v, dim).to_vector<int64_t>(), emi);
    }
  }
}

TEST(Extremes, IntegerBoolAndHalfInputs) {
  const Tensor i = tessera::tensor({3, -7, 9, 9}, {2, 2}).to(tessera::kInt32);
  EXPECT_EQ(tessera::amax(i, {0}).to_vector<int32_t>(), (std::vector<int32_t>{9, 9}));
  EXPECT_EQ(tessera::amax(i).dtype(), tessera::kInt32);
  EXPECT_EQ(tessera::amin(i, {1}).to_vector<int32_t>(), (std::vector<int32_t>{-7, 9}));
  EXPECT_EQ(tessera::argmax(i, 1).to_vector<int64_t>(), (std::vector<int64_t>{0, 0}));
  const Tensor b = tessera::tensor({0, 1, 0}).to(tessera::kBool);
  EXPECT_EQ(tessera::max(b).item<bool>(), true);
  EXPECT_EQ(tessera::min(b).item<bool>(), false);
  const Tensor h = make({0.5, -2.0, 8.0, kNaN}, {4}, tessera::kFloat16);
  EXPECT_TRUE(std::isnan(tessera::max(h).item<double>()));
  EXPECT_EQ(tessera::amax(h.slice(0, 0, 3)).item<double>(), 8.0);
  EXPECT_EQ(tessera::argmin(h.slice(0, 0, 3)).item<int64_t>(), 1);
}

TEST(Extremes, AminmaxAndArgmaxWithoutDimFlatten) {
  const Tensor t = tessera::tensor({1, 2, 3, 0}, {2, 2});
  const auto [mn, mx] = tessera::aminmax(t, 1);  // torch: (min=[1, 0], max=[2, 3])
  EXPECT_EQ(mn.to_vector<int64_t>(), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(mx.to_vector<int64_t>(), (std::vector<int64_t>{2, 3}));
  const auto [amn, amx] = tessera::aminmax(t);
  EXPECT_EQ(amn.item<int64_t>(), 0);
  EXPECT_EQ(amx.item<int64_t>(), 3);
  const Tensor m = tessera::tensor({1, 5, 7, 2}, {2, 2});
  EXPECT_EQ(tessera::argmax(m).item<int64_t>(), 2);  // flat index, torch: 2
  const Tensor kd = tessera::argmax(m, std::nullopt, true);
  EXPECT_EQ(sizes_of(kd), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(kd.to_vector<int64_t>(), (std::vector<int64_t>{2}));
  EXPECT_EQ(tessera::argmax(m, 1, true).to_vector<int64_t>(), (std::vector<int64_t>{1, 0}));
}

TEST(Extremes, EmptyReductionsAreErrorsNamingOpAndDim) {
  const Tensor e = tessera::zeros({2, 0});
  expect_error([&] { (void)tessera::amax(e, {1}); }, TSR_INVALID_ARGUMENT,
               {"amax", "Expected reduction dim 1 to have non-zero size"});
  expect_error([&] { (void)tessera::max_dim(e, 1); }, TSR_INVALID_ARGUMENT,
               {"max.dim", "reduction dim 1"});
  expect_error([&] { (void)tessera::argmax(e, -1); }, TSR_INVALID_ARGUMENT,
               {"argmax", "reduction dim 1"});
  expect_error([&] { (void)tessera::max(e); }, TSR_INVALID_ARGUMENT,
               {"'max'", "Expected reduction dim to be specified for input.numel() == 0"});
  expect_error([&] { (void)tessera::argmin(e); }, TSR_INVALID_ARGUMENT,
               {"argmin", "input.numel() == 0"});
  expect_error([&] { (void)tessera::aminmax(e); }, TSR_INVALID_ARGUMENT,
               {"aminmax", "empty dimension"});
  // Over the non-empty dim the result is simply empty.
  EXPECT_EQ(sizes_of(tessera::amax(e, {0})), (std::vector<int64_t>{0}));
}

TEST(Extremes, ComplexInputsAreRefused) {
  const Tensor c = tessera::zeros({3}, tessera::kComplex64);
  expect_error([&] { (void)tessera::amax(c); }, TSR_INVALID_ARGUMENT, {"amax", "complex64"});
  expect_error([&] { (void)tessera::argmax(c); }, TSR_INVALID_ARGUMENT, {"argmax", "complex"});
}

// ---------------------------------------------------------------------------
// any / all / count_nonzero
// ---------------------------------------------------------------------------

TEST(Logical, AnyAllGiveBoolAndKeepUint8) {
  const Tensor f = tessera::tensor({0.0, kNaN, 0.0, 0.0}, {2, 2});
  EXPECT_EQ(tessera::any(f).dtype(), tessera::kBool);
  EXPECT_EQ(tessera::any(f).item<bool>(), true);  // NaN is non-zero
  EXPECT_EQ(tessera::all(f).item<bool>(), false);
  EXPECT_EQ(tessera::any(f, 0).to_vector<bool>(), (std::vector<bool>{false, true}));
  EXPECT_EQ(tessera::all(f.t(), 1, true).to_vector<bool>(), (std::vector<bool>{false, false}));
  const Tensor u = tessera::tensor({1, 2}).to(tessera::kUInt8);
  EXPECT_EQ(tessera::any(u).dtype(), tessera::kUInt8);
  EXPECT_EQ(tessera::all(u, 0).dtype(), tessera::kUInt8);
  EXPECT_EQ(tessera::all(u).to_vector<uint8_t>(), (std::vector<uint8_t>{1}));
}

TEST(Logical, CountNonzeroCountsPerDim) {
  const Tensor t = tessera::tensor({0, 1, 2, 0}, {2, 2});  // torch: [1, 1] over dim 0
  EXPECT_EQ(tessera::count_nonzero(t, {0}).to_vector<int64_t>(), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(tessera::count_nonzero(t).item<int64_t>(), 2);
  EXPECT_EQ(tessera::count_nonzero(t).dtype(), tessera::kInt64);
}

// ---------------------------------------------------------------------------
// Statistics and norms
// ---------------------------------------------------------------------------

TEST(Statistics, VarMatchesTwoPassReferenceWithCorrections) {
  const std::vector<double> x = pseudo_random(60, 5);
  for (Dtype d : {tessera::kFloat64, tessera::kFloat32}) {
    const Tensor t = make(x, kShape, d);
    const std::vector<double> h = held(t);
    for (uint32_t mask : {1u, 4u, 5u, 7u}) {
      std::vector<int64_t> dims;
      for (int64_t k = 0; k < 3; ++k)
        if ((mask >> k) & 1u) dims.push_back(k);
      const std::vector<double> mean = ref_reduce(
          h, kShape, mask, 0, add, [](double a, int64_t n) { return a / static_cast<double>(n); });
      for (int64_t correction : {0, 1, 2}) {
        // sum (x - mean)^2 / (n - correction)
        int64_t n = 1;
        for (int k = 0; k < 3; ++k)
          if ((mask >> k) & 1u) n *= kShape[k];
        std::vector<double> sq(h.size());
        std::vector<int64_t> idx(3, 0);
        for (size_t i = 0; i < h.size(); ++i) {
          int64_t o = 0;
          for (int k = 0; k < 3; ++k)
            if (!((mask >> k) & 1u)) o = o * kShape[k] + idx[k];
          sq[i] = (h[i] - mean[o]) * (h[i] - mean[o]);
          for (int k = 2; k >= 0; --k) {
            if (++idx[k] < kShape[k]) break;
            idx[k] = 0;
          }
        }
        const std::vector<double> var =
            ref_reduce(sq, kShape, mask, 0, add,
                       [&](double a, int64_t) { return a / static_cast<double>(n - correction); });
        expect_values(held(tessera::var(t, dims, correction)), var, tol(d, true));
        const auto [v, m] = tessera::var_mean(t, dims, correction, true);
        expect_values(held(v), var, tol(d, true));
        expect_values(held(m), mean, tol(d, true));
      }
    }
  }
}

TEST(Statistics, CorrectionAtLeastNGivesInfOrNaN) {
  const Tensor two = tessera::tensor({1.0, 2.0});
  EXPECT_EQ(tessera::var(two, std::vector<int64_t>{0}, 2).item<double>(), kInf);  // torch: inf
  EXPECT_EQ(tessera::var(two, std::vector<int64_t>{0}, 3).item<double>(), kInf);  // torch: inf
  EXPECT_TRUE(std::isnan(tessera::var(tessera::tensor({1.0})).item<double>()));   // torch: nan
  EXPECT_TRUE(std::isnan(tessera::var(tessera::zeros({0})).item<double>()));
  // torch.var_mean([1., 2., 4.], 0, unbiased=False) == (1.5556, 2.3333)
  const auto [v, m] = tessera::var_mean(tessera::tensor({1.0, 2.0, 4.0}), std::nullopt, 0);
  EXPECT_NEAR(v.item<double>(), 14.0 / 9.0, 1e-6);
  EXPECT_NEAR(m.item<double>(), 7.0 / 3.0, 1e-6);
  expect_error(
      [&] {
        (void)tessera::var(tessera::tensor({1, 2}));
      },
      TSR_INVALID_ARGUMENT, {"var.correction", "floating point", "int64"});
}

TEST(Statistics, StdIsTheRootOfVar) {
  SKIP_WITHOUT("sqrt");
  const Tensor t = tessera::tensor({1.0, 2.0, 4.0});
  // torch.std_mean([1., 2, 4], 0) == (1.5275, 2.3333)
  EXPECT_NEAR(tessera::std_dev(t).item<double>(), std::sqrt(7.0 / 3.0), 1e-6);
  const auto [s, m] = tessera::std_mean(t, std::vector<int64_t>{0});
  EXPECT_NEAR(s.item<double>(), 1.5275252316519468, 1e-6);
  EXPECT_NEAR(m.item<double>(), 7.0 / 3.0, 1e-6);
}

TEST(Norms, EveryOrderMatchesTheReference) {
  SKIP_WITHOUT("abs");
  SKIP_WITHOUT("sqrt");
  SKIP_WITHOUT("pow.Tensor_Scalar");
  const std::vector<double> x = {3.0, -4.0, 0.0, 1.5, -0.5, 2.0};
  const Tensor t = make(x, {2, 3}, tessera::kFloat64);
  auto ref = [&](double p, uint32_t mask) {
    if (p == 0)
      return ref_reduce(
          x, {2, 3}, mask, 0, [](double a, double b) { return a + (b != 0); }, identity);
    if (std::isinf(p))
      return ref_reduce(
          x, {2, 3}, mask, p > 0 ? 0 : kInf,
          [&](double a, double b) {
            return p > 0 ? std::max(a, std::fabs(b)) : std::min(a, std::fabs(b));
          },
          identity);
    return ref_reduce(
        x, {2, 3}, mask, 0, [&](double a, double b) { return a + std::pow(std::fabs(b), p); },
        [&](double a, int64_t) { return std::pow(a, 1.0 / p); });
  };
  for (double p : {0.0, 1.0, 2.0, 3.0, 0.5, kInf, -kInf}) {
    expect_values(held(tessera::norm(t, p)), ref(p, 3u), tol(tessera::kFloat64, true));
    expect_values(held(tessera::norm(t, p, {1})), ref(p, 2u), tol(tessera::kFloat64, true));
    expect_values(held(tessera::linalg_vector_norm(t, p, std::vector<int64_t>{0})), ref(p, 1u),
                  tol(tessera::kFloat64, true));
  }
  // torch.norm([3., -4.]) == 5, torch.norm(x, 'fro') == 5
  EXPECT_NEAR(tessera::norm(tessera::tensor({3.0, -4.0})).item<double>(), 5.0, 1e-6);
  EXPECT_NEAR(tessera::frobenius_norm(tessera::tensor({3.0, -4.0})).item<double>(), 5.0, 1e-6);
  expect_error(
      [&] {
        (void)tessera::norm(tessera::tensor({3, 4}));
      },
      TSR_INVALID_ARGUMENT, {"norm.Scalar", "floating point", "int64"});
  expect_error([&] { (void)tessera::linalg_vector_norm(tessera::zeros({0}), kInf); },
               TSR_INVALID_ARGUMENT, {"linalg_vector_norm", "inf norm", "empty"});
  EXPECT_EQ(tessera::linalg_vector_norm(tessera::zeros({0}), 0).item<double>(), 0.0);
}

TEST(Logsumexp, IsStableAndExactForInfinities) {
  SKIP_WITHOUT("exp");
  SKIP_WITHOUT("log");
  SKIP_WITHOUT("nan_to_num");
  const std::vector<double> x = {1000.0, 1000.0, -3.0, 2.0};
  const Tensor t = make(x, {2, 2}, tessera::kFloat64);
  expect_values(held(tessera::logsumexp(t, {1})),
                {1000.0 + std::log(2.0), std::log(std::exp(-3.0) + std::exp(2.0))},
                tol(tessera::kFloat64, true));
  EXPECT_EQ(tessera::logsumexp(tessera::tensor({kInf, kInf}), {0}).item<double>(), kInf);
  EXPECT_EQ(tessera::logsumexp(tessera::tensor({-kInf, -kInf}), {0}).item<double>(), -kInf);
  EXPECT_EQ(tessera::logsumexp(tessera::zeros({0}), {0}).item<double>(), -kInf);
  EXPECT_TRUE(std::isnan(tessera::logsumexp(tessera::tensor({1.0, kNaN}), {0}).item<double>()));
  // Integers become float32 (torch: logsumexp([1, 2], 0) == 2.3133).
  const Tensor li = tessera::logsumexp(tessera::tensor({1, 2}), {0});
  EXPECT_EQ(li.dtype(), tessera::kFloat32);
  EXPECT_NEAR(li.item<double>(), 2.3132617, 1e-6);
}

TEST(Nansum, TreatsNaNAsZero) {
  SKIP_WITHOUT("nan_to_num");
  const Tensor t = tessera::tensor({1.0, kNaN, 2.0, kInf}, {2, 2});
  EXPECT_EQ(held(tessera::nansum(t, std::vector<int64_t>{1})), (std::vector<double>{1.0, kInf}));
  EXPECT_EQ(tessera::nansum(tessera::tensor({1, 2})).item<int64_t>(), 3);
}

// ---------------------------------------------------------------------------
// Scans
// ---------------------------------------------------------------------------

// Reference scan along `dim` of a row-major 2-d (rows, cols) array.
std::vector<double> ref_scan(const std::vector<double>& x, int64_t rows, int64_t cols, int dim,
                             const std::function<double(double, double)>& f) {
  std::vector<double> y(x.size());
  const int64_t n = dim == 0 ? rows : cols, other = dim == 0 ? cols : rows;
  for (int64_t o = 0; o < other; ++o) {
    double acc = 0;
    for (int64_t k = 0; k < n; ++k) {
      const int64_t i = dim == 0 ? k * cols + o : o * cols + k;
      acc = k == 0 ? x[i] : f(acc, x[i]);
      y[i] = acc;
    }
  }
  return y;
}

TEST(Scans, CumsumCumprodLogcumsumexpAlongEveryDim) {
  const int64_t rows = 7, cols = 33;
  std::vector<double> x = pseudo_random(rows * cols, 6);
  for (auto& v : x) v = 1.0 + 0.1 * v;  // products stay tame
  for (Dtype d : {tessera::kFloat64, tessera::kFloat32}) {
    const Tensor t = make(x, {rows, cols}, d);
    const std::vector<double> h = held(t);
    for (int dim : {0, 1, -1}) {
      const int rd = (dim + 2) % 2;
      expect_values(held(tessera::cumsum(t, dim)), ref_scan(h, rows, cols, rd, add), tol(d, true));
      expect_values(held(tessera::cumprod(t, dim)),
                    ref_scan(h, rows, cols, rd, [](double a, double b) { return a * b; }),
                    tol(d, true));
      expect_values(
          held(tessera::logcumsumexp(t, dim)),
          ref_scan(h, rows, cols, rd,
                   [](double a, double b) { return std::log(std::exp(a) + std::exp(b)); }),
          tol(d, true));
    }
    // A transposed view scans through strides.
    const Tensor v = t.t();
    const std::vector<double> hv = held(v);
    expect_values(held(tessera::cumsum(v, 1)), ref_scan(hv, cols, rows, 1, add), tol(d, true));
    expect_values(held(tessera::cumsum(v, 0)), ref_scan(hv, cols, rows, 0, add), tol(d, true));
  }
}

TEST(Scans, IntegerInputsPromoteAndDtypeConverts) {
  const Tensor i8 = tessera::tensor({100, 100, 100}).to(tessera::kInt8);
  const Tensor s = tessera::cumsum(i8, 0);
  EXPECT_EQ(s.dtype(), tessera::kInt64);
  EXPECT_EQ(s.to_vector<int64_t>(), (std::vector<int64_t>{100, 200, 300}));
  EXPECT_EQ(tessera::cumprod(tessera::tensor({1, 1}).to(tessera::kBool), 0).dtype(),
            tessera::kInt64);
  const Tensor f =
      tessera::cumprod(tessera::tensor({1, 2}).to(tessera::kInt8), 0, tessera::kFloat32);
  EXPECT_EQ(f.dtype(), tessera::kFloat32);
  EXPECT_EQ(held(f), (std::vector<double>{1.0, 2.0}));
  expect_error(
      [&] {
        (void)tessera::logcumsumexp(tessera::tensor({1, 2}), 0);
      },
      TSR_INVALID_ARGUMENT, {"logcumsumexp", "int64", "floating"});
}

TEST(Scans, LogcumsumexpHandlesInfinities) {
  // torch: logcumsumexp([-inf, -inf, 1, inf, 2]) == [-inf, -inf, 1, inf, inf]
  const Tensor t = tessera::tensor({-kInf, -kInf, 1.0, kInf, 2.0});
  expect_values(held(tessera::logcumsumexp(t, 0)), {-kInf, -kInf, 1.0, kInf, kInf},
                tol(tessera::kFloat32));
}

TEST(Scans, CummaxCumminFollowTorchIndices) {
  // torch: cummax([1, 1, 3, 3, 2]) -> values [1, 1, 3, 3, 3], indices [0, 1, 2, 3, 3]
  const auto [v, i] = tessera::cummax(tessera::tensor({1.0, 1.0, 3.0, 3.0, 2.0}), 0);
  EXPECT_EQ(held(v), (std::vector<double>{1, 1, 3, 3, 3}));
  EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3, 3}));
  // torch: cummax([1, nan, 3, nan, 2]) -> indices [0, 1, 1, 3, 3]
  const auto [nv, ni] = tessera::cummax(tessera::tensor({1.0, kNaN, 3.0, kNaN, 2.0}), 0);
  EXPECT_EQ(ni.to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 1, 3, 3}));
  EXPECT_TRUE(std::isnan(held(nv)[4]));
  // torch: cummin([1, 1, 0, 0, 2]) -> indices [0, 1, 2, 3, 3]
  const auto [mv, mi] = tessera::cummin(tessera::tensor({1, 1, 0, 0, 2}), 0);
  EXPECT_EQ(mv.to_vector<int64_t>(), (std::vector<int64_t>{1, 1, 0, 0, 0}));
  EXPECT_EQ(mi.to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3, 3}));
  // Along an outer dim, through a transposed view: same as per column.
  const std::vector<double> x = pseudo_random(6 * 9, 7);
  const Tensor t = make(x, {6, 9}, tessera::kFloat64);
  for (const Tensor& view : {t, t.t()}) {
    const std::vector<int64_t> shape = sizes_of(view);
    const std::vector<double> h = held(view);
    for (int dim : {0, 1}) {
      const auto [cv, ci] = tessera::cummax(view, dim);
      expect_values(
          held(cv),
          ref_scan(h, shape[0], shape[1], dim, [](double a, double b) { return std::max(a, b); }),
          tol(tessera::kFloat64));
      // The index points at the value.
      const std::vector<int64_t> idx = ci.to_vector<int64_t>();
      const std::vector<double> vals = held(cv);
      for (int64_t r = 0; r < shape[0]; ++r)
        for (int64_t c = 0; c < shape[1]; ++c) {
          const int64_t k = idx[r * shape[1] + c];
          const double at = dim == 0 ? h[k * shape[1] + c] : h[r * shape[1] + k];
          EXPECT_EQ(at, vals[r * shape[1] + c]);
        }
    }
  }
}

// ---------------------------------------------------------------------------
// Softmax
// ---------------------------------------------------------------------------

std::vector<double> ref_softmax(const std::vector<double>& x, int64_t rows, int64_t cols, int dim,
                                bool log) {
  std::vector<double> y(x.size());
  const int64_t n = dim == 0 ? rows : cols, other = dim == 0 ? cols : rows;
  for (int64_t o = 0; o < other; ++o) {
    auto at = [&](int64_t k) { return dim == 0 ? k * cols + o : o * cols + k; };
    double m = -kInf;
    for (int64_t k = 0; k < n; ++k) m = std::max(m, x[at(k)]);
    double s = 0;
    for (int64_t k = 0; k < n; ++k) s += std::exp(x[at(k)] - m);
    for (int64_t k = 0; k < n; ++k)
      y[at(k)] = log ? x[at(k)] - m - std::log(s) : std::exp(x[at(k)] - m) / s;
  }
  return y;
}

TEST(Softmax, InnerAndOuterDimsMatchTheReference) {
  const int64_t rows = 37, cols = 300;
  std::vector<double> x = pseudo_random(rows * cols, 8);
  for (auto& v : x) v *= 20.0;
  for (Dtype d : {tessera::kFloat32, tessera::kFloat64}) {
    const Tensor t = make(x, {rows, cols}, d);
    const std::vector<double> h = held(t);
    for (int dim : {0, 1}) {
      for (bool log : {false, true}) {
        const Tensor y = log ? tessera::log_softmax(t, dim) : tessera::softmax(t, dim);
        EXPECT_EQ(y.dtype(), d);
        expect_values(held(y), ref_softmax(h, rows, cols, dim, log), tol(d, true),
                      std::string(log ? "log_softmax" : "softmax") + " dim " + std::to_string(dim));
      }
    }
    // A transposed view (strided lines) and a sliced one.
    const Tensor v = t.t();
    expect_values(held(tessera::softmax(v, 1)), held(tessera::softmax(t, 0).t()), tol(d, true));
    const Tensor s = t.slice(1, 0, cols, 3);
    const std::vector<double> hs = held(s);
    expect_values(held(tessera::log_softmax(s, -1)), ref_softmax(hs, rows, sizes_of(s)[1], 1, true),
                  tol(d, true));
  }
}

TEST(Softmax, NaNAndInfinityRowsFollowTorch) {
  // torch: softmax([inf, 1]) == [nan, nan]; softmax([-inf, -inf]) == [nan, nan];
  // softmax([nan, 1]) == [nan, nan]; softmax([-inf, 0]) == [0, 1].
  const Tensor t = tessera::tensor({kInf, 1.0, -kInf, -kInf, kNaN, 1.0, -kInf, 0.0}, {4, 2});
  const std::vector<double> y = held(tessera::softmax(t, 1));
  for (int i = 0; i < 6; ++i) EXPECT_TRUE(std::isnan(y[i])) << i;
  EXPECT_EQ(y[6], 0.0);
  EXPECT_EQ(y[7], 1.0);
  const std::vector<double> ly = held(tessera::log_softmax(t, 1));
  EXPECT_EQ(ly[6], -kInf);
  EXPECT_EQ(ly[7], 0.0);
}

TEST(Softmax, DtypeArgumentHalfInputsAndErrors) {
  const Tensor i = tessera::tensor({1, 2});
  expect_error([&] { (void)tessera::softmax(i, 0); }, TSR_INVALID_ARGUMENT,
               {"softmax.int", "int64", "dtype"});
  // torch: softmax([1, 2], 0, dtype=float64) == [0.2689, 0.7311]
  const Tensor d = tessera::softmax(i, 0, tessera::kFloat64);
  EXPECT_EQ(d.dtype(), tessera::kFloat64);
  expect_values(held(d), {1.0 / (1.0 + std::exp(1.0)), 1.0 / (1.0 + std::exp(-1.0))},
                tol(tessera::kFloat64, true));
  const std::vector<double> x = pseudo_random(64, 9);
  for (Dtype h : {tessera::kFloat16, tessera::kBFloat16}) {
    const Tensor t = make(x, {8, 8}, h);
    const Tensor y = tessera::softmax(t, 1);
    EXPECT_EQ(y.dtype(), h);
    expect_values(held(y), ref_softmax(held(t), 8, 8, 1, false), tol(h, true));
    // half_to_float through the primitive.
    const Tensor f =
        tessera::call_op("_softmax", {tessera::detail::value(t), tessera::detail::value(int64_t{1}),
                                      tessera::detail::value(true)});
    EXPECT_EQ(f.dtype(), tessera::kFloat32);
    expect_values(held(f), ref_softmax(held(t), 8, 8, 1, false), tol(tessera::kFloat32, true));
  }
  EXPECT_EQ(sizes_of(tessera::softmax(tessera::zeros({0, 3}), 1)), (std::vector<int64_t>{0, 3}));
}

// ---------------------------------------------------------------------------
// Meta device: shapes and dtypes only
// ---------------------------------------------------------------------------

TEST(Meta, ReductionsComputeShapesWithoutData) {
  const Tensor m = tessera::empty({4, 5, 6}, tessera::TensorOptions(tessera::kMeta));
  EXPECT_EQ(sizes_of(tessera::sum(m, {0, -1})), (std::vector<int64_t>{5}));
  EXPECT_EQ(sizes_of(tessera::mean(m, {1}, true)), (std::vector<int64_t>{4, 1, 6}));
  EXPECT_EQ(sizes_of(tessera::amax(m, {2})), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(tessera::argmax(m, 1).dtype(), tessera::kInt64);
  EXPECT_EQ(sizes_of(tessera::argmax(m)), (std::vector<int64_t>{}));
  const auto [v, i] = tessera::max_dim(m, 0, true);
  EXPECT_EQ(sizes_of(v), (std::vector<int64_t>{1, 5, 6}));
  EXPECT_EQ(i.dtype(), tessera::kInt64);
  EXPECT_EQ(sizes_of(tessera::cumsum(m, 1)), (std::vector<int64_t>{4, 5, 6}));
  EXPECT_EQ(sizes_of(tessera::cummax(m, 1).second), (std::vector<int64_t>{4, 5, 6}));
  EXPECT_EQ(sizes_of(tessera::softmax(m, 1)), (std::vector<int64_t>{4, 5, 6}));
  EXPECT_EQ(sizes_of(tessera::var(m, std::vector<int64_t>{1})), (std::vector<int64_t>{4, 6}));
  EXPECT_EQ(tessera::any(m, 0).dtype(), tessera::kBool);
  EXPECT_TRUE(tessera::sum(m).device().is_meta());
}

}  // namespace
