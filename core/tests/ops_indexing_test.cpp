// The indexing family end to end (C++ frontend -> core -> CPU plugin):
// gather/scatter (all overloads), index_select, take_along_dim, advanced
// indexing (index, index_put_), masks, nonzero (the two-phase kernel), sort,
// argsort, topk, kthvalue, searchsorted/bucketize and unique.
//
// References are independent: loops over float64 host copies written here,
// hand-computed values, or constants printed by PyTorch 1.13 (marked "torch").
// Indexing moves values without arithmetic, so comparisons are exact except
// for the reductions of scatter_reduce (float32 rtol 1.3e-6, atol 1e-5;
// float64 1e-12; float16 1e-3; bfloat16 8e-3).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "tessera/tessera.hpp"

namespace {

using tessera::Dims;
using tessera::IndexList;
using tessera::kBFloat16;
using tessera::kBool;
using tessera::kFloat16;
using tessera::kFloat32;
using tessera::kFloat64;
using tessera::kInt32;
using tessera::kInt64;
using tessera::kUInt8;
using tessera::Tensor;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

std::vector<double> f64(const Tensor& t) { return t.to_vector<double>(); }
std::vector<int64_t> i64(const Tensor& t) { return t.to_vector<int64_t>(); }

std::vector<int64_t> dims_of(const Tensor& t) {
  Dims d = t.sizes();
  return std::vector<int64_t>(d.begin(), d.end());
}

Tensor longs(std::initializer_list<int64_t> v, tessera::IntList shape) {
  return tessera::tensor(std::vector<int64_t>(v), shape);
}
Tensor longs(std::initializer_list<int64_t> v) { return tessera::tensor(std::vector<int64_t>(v)); }
Tensor doubles(std::vector<double> v, tessera::IntList shape, tessera::Dtype dtype = kFloat32) {
  return tessera::tensor(v, shape, dtype);
}

// 0, 1, 2, ... as `dtype` in `shape`.
Tensor iota(tessera::IntList shape, tessera::Dtype dtype = kFloat32) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<double> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0.0);
  return tessera::tensor(v, shape, dtype);
}

// Deterministic pseudo-random values (an LCG) in [0, 1).
std::vector<double> uniform(size_t n, uint32_t seed) {
  std::vector<double> v(n);
  uint32_t s = seed;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<double>(s >> 8) / static_cast<double>(1u << 24);
  }
  return v;
}

void expect_same(const std::vector<double>& actual, const std::vector<double>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(actual[i])) << "at " << i;
    } else {
      EXPECT_EQ(actual[i], expected[i]) << "at " << i;
    }
  }
}

// Runs f, expecting a tessera::Error with `code` whose message contains every
// fragment.
void expect_error(const std::function<void()>& f, tsr_status_code code,
                  std::initializer_list<const char*> fragments) {
  try {
    f();
    ADD_FAILURE() << "no error";
  } catch (const tessera::Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    for (const char* s : fragments) {
      EXPECT_NE(std::string(e.what()).find(s), std::string::npos)
          << "message '" << e.what() << "' lacks '" << s << "'";
    }
  }
}

const tessera::Dtype kAllDtypes[] = {kBool,    tessera::kUInt8, tessera::kInt8, tessera::kInt16,
                                     kInt32,   kInt64,          kFloat16,       kBFloat16,
                                     kFloat32, kFloat64};

// ===========================================================================
// gather
// ===========================================================================

TEST(Gather, AlongEachDimMatchesHandComputed) {
  Tensor x = iota({2, 3});  // [[0,1,2],[3,4,5]]
  Tensor i0 = longs({1, 0, 1, 0, 0, 1}, {2, 3});
  EXPECT_EQ(f64(tessera::gather(x, 0, i0)), (std::vector<double>{3, 1, 5, 0, 1, 5}));
  Tensor i1 = longs({2, 2, 0, 1}, {2, 2});
  EXPECT_EQ(f64(tessera::gather(x, 1, i1)), (std::vector<double>{2, 2, 3, 4}));
  EXPECT_EQ(f64(tessera::gather(x, -1, i1)), (std::vector<double>{2, 2, 3, 4}));
  EXPECT_EQ(dims_of(tessera::gather(x, 1, i1)), (std::vector<int64_t>{2, 2}));
}

TEST(Gather, NonContiguousSelfAndExpandedIndex) {
  Tensor x = iota({3, 4}).t();  // (4, 3), strides (1, 4)
  // A stride-0 index: column [2, 0, 1, 2] repeated over 3 columns.
  Tensor idx = longs({2, 0, 1, 2}, {4, 1}).expand({4, 3});
  ASSERT_EQ(idx.stride(1), 0);
  Tensor got = tessera::gather(x, 1, idx);
  // x[r][c] = 4c + r; out[r][c] = x[r][idx[r]].
  std::vector<double> want;
  for (int64_t r = 0; r < 4; ++r) {
    int64_t k = std::vector<int64_t>{2, 0, 1, 2}[static_cast<size_t>(r)];
    for (int64_t c = 0; c < 3; ++c) want.push_back(static_cast<double>(4 * k + r));
  }
  EXPECT_EQ(f64(got), want);
}

TEST(Gather, Int32IndexIsConverted) {
  Tensor x = iota({4});
  Tensor idx = longs({3, 0, 3}).to(kInt32);
  EXPECT_EQ(f64(tessera::gather(x, 0, idx)), (std::vector<double>{3, 0, 3}));
}

TEST(Gather, ZeroDimAndEmpty) {
  Tensor s = tessera::scalar_tensor(5.0);
  Tensor r = tessera::gather(s, 0, tessera::scalar_tensor(0, kInt64));
  EXPECT_EQ(r.dim(), 0);
  EXPECT_EQ(r.item<double>(), 5.0);
  EXPECT_EQ(f64(tessera::gather(s, 0, longs({0, 0}))), (std::vector<double>{5, 5}));
  Tensor e = tessera::gather(iota({2, 3}), 1, tessera::empty({0, 4}, kInt64));
  EXPECT_EQ(dims_of(e), (std::vector<int64_t>{0, 4}));
}

TEST(Gather, EveryDtype) {
  Tensor idx = longs({2, 0, 1, 1, 2, 0}, {2, 3});
  for (tessera::Dtype dt : kAllDtypes) {
    Tensor x = iota({2, 3}, kFloat64).to(dt);
    std::vector<double> xv = f64(x), want;
    std::vector<int64_t> iv = i64(idx);
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t c = 0; c < 3; ++c)
        want.push_back(xv[static_cast<size_t>(r * 3 + iv[r * 3 + c])]);
    Tensor got = tessera::gather(x, 1, idx);
    EXPECT_EQ(got.dtype(), dt);
    EXPECT_EQ(f64(got), want) << dt;
  }
}

TEST(Gather, LargeRandomMatchesReference) {
  const int64_t rows = 300, cols = 400;
  std::vector<double> xv = uniform(static_cast<size_t>(rows * cols), 7);
  std::vector<double> r = uniform(static_cast<size_t>(rows * cols), 9);
  std::vector<int64_t> iv(r.size());
  for (size_t i = 0; i < r.size(); ++i) iv[i] = static_cast<int64_t>(r[i] * rows);
  Tensor x = tessera::tensor(xv, {rows, cols}, kFloat64);
  Tensor idx = tessera::tensor(iv, {rows, cols});
  std::vector<double> want(xv.size());
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      want[static_cast<size_t>(i * cols + j)] =
          xv[static_cast<size_t>(iv[i * cols + j] * cols + j)];
  EXPECT_EQ(f64(tessera::gather(x, 0, idx)), want);
}

TEST(Gather, OutOfRangeIndexIsAnErrorNamingTheOp) {
  Tensor x = iota({2, 3});
  expect_error(
      [&] {
        tessera::gather(x, 0, longs({7}, {1, 1}));
      },
      TSR_OUT_OF_RANGE, {"gather", "index 7 is out of bounds for dimension 0 with size 2"});
  expect_error(
      [&] {
        tessera::gather(x, 1, longs({0, -1}, {1, 2}));
      },
      TSR_OUT_OF_RANGE, {"index -1 is out of bounds for dimension 1 with size 3"});
  // Empty self along dim: every index is out of range.
  expect_error(
      [&] {
        tessera::gather(tessera::empty({2, 0}), 1, longs({0, 0}, {2, 1}));
      },
      TSR_OUT_OF_RANGE, {"index 0 is out of bounds for dimension 1 with size 0"});
}

TEST(Gather, BadArgumentsAreNamed) {
  Tensor x = iota({2, 3});
  expect_error(
      [&] {
        tessera::gather(x, 0, doubles({1}, {1, 1}));
      },
      TSR_INVALID_ARGUMENT, {"gather", "'index'", "int64"});
  expect_error([&] { tessera::gather(x, 0, longs({1})); }, TSR_INVALID_ARGUMENT,
               {"'index'", "same number of dimensions"});
  expect_error(
      [&] {
        tessera::gather(x, 1, tessera::zeros({3, 1}, kInt64));
      },
      TSR_INVALID_ARGUMENT, {"size does not match at dimension 0"});
  expect_error([&] { tessera::gather(x, 2, longs({0}, {1, 1})); }, TSR_OUT_OF_RANGE, {"dim"});
}

TEST(Gather, OutVariantResizes) {
  Tensor out = tessera::empty({0});
  tessera::gather_out(out, iota({2, 3}), 1, longs({2, 1}, {1, 2}));
  EXPECT_EQ(dims_of(out), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(f64(out), (std::vector<double>{2, 1}));
}

TEST(Gather, MetaDeviceGivesShapes) {
  Tensor x = tessera::empty({4, 5}, tessera::TensorOptions(kFloat32).device(tessera::kMeta));
  Tensor idx = tessera::empty({2, 5}, tessera::TensorOptions(kInt64).device(tessera::kMeta));
  Tensor r = tessera::gather(x, 0, idx);
  EXPECT_EQ(dims_of(r), (std::vector<int64_t>{2, 5}));
  EXPECT_EQ(r.device().type(), tessera::DeviceType::Meta);
}

// ===========================================================================
// scatter
// ===========================================================================

TEST(Scatter, SrcAndValueAlongDims) {
  Tensor x = tessera::zeros({2, 3});
  Tensor idx = longs({1, 0, 1}, {1, 3});
  Tensor src = doubles({7, 8, 9}, {1, 3});
  // dim 0: x[idx[0][j]][j] = src[0][j]
  EXPECT_EQ(f64(tessera::scatter(x, 0, idx, src)), (std::vector<double>{0, 8, 0, 7, 0, 9}));
  EXPECT_EQ(f64(x), std::vector<double>(6, 0.0));  // the functional form copies
  EXPECT_EQ(f64(tessera::scatter(x, 1, longs({2, 0}, {1, 2}), tessera::Scalar(5.0))),
            (std::vector<double>{5, 0, 5, 0, 0, 0}));
  // src larger than index: only index's extent is read.
  EXPECT_EQ(f64(tessera::scatter(x, 1, longs({1}, {1, 1}), iota({2, 3}) + 1.0)),
            (std::vector<double>{0, 1, 0, 0, 0, 0}));
}

TEST(Scatter, InPlaceReturnsSelfAndBumpsVersion) {
  Tensor x = tessera::zeros({3});
  uint64_t v = x.version();
  Tensor& r = tessera::scatter_(x, 0, longs({2}), doubles({4}, {1}));
  EXPECT_TRUE(r.is_same(x));
  EXPECT_GT(x.version(), v);
  EXPECT_EQ(f64(x), (std::vector<double>{0, 0, 4}));
  tessera::scatter_(x, 0, longs({0, 0}), tessera::Scalar(2.0));
  EXPECT_EQ(f64(x), (std::vector<double>{2, 0, 4}));
}

TEST(Scatter, NonContiguousSelf) {
  Tensor x = tessera::zeros({3, 2}).t();  // (2, 3), strides (1, 2)
  tessera::scatter_(x, 1, longs({2, 0}, {2, 1}), doubles({1, 2}, {2, 1}));
  EXPECT_EQ(f64(x), (std::vector<double>{0, 0, 1, 2, 0, 0}));
}

TEST(Scatter, AddWithDuplicatesIsExactInParallel) {
  // 1024 x 512 updates into 64 x 512: heavy duplicates, above the threshold
  // at which the kernel splits lines between threads.
  const int64_t n = 1024, m = 512, rows = 64;
  std::vector<double> sv = uniform(static_cast<size_t>(n * m), 3);
  std::vector<double> r = uniform(static_cast<size_t>(n * m), 5);
  std::vector<int64_t> iv(r.size());
  for (size_t i = 0; i < r.size(); ++i) iv[i] = static_cast<int64_t>(r[i] * rows);
  std::vector<double> want(static_cast<size_t>(rows * m), 0.0);
  for (int64_t j = 0; j < m; ++j)
    for (int64_t i = 0; i < n; ++i)
      want[static_cast<size_t>(iv[i * m + j] * m + j)] += sv[static_cast<size_t>(i * m + j)];
  Tensor got =
      tessera::scatter_add(tessera::zeros({rows, m}, kFloat64), 0, tessera::tensor(iv, {n, m}),
                           tessera::tensor(sv, {n, m}, kFloat64));
  EXPECT_EQ(f64(got), want);  // same order of additions: bit-exact
  // int64 counts through scatter_add_ with a broadcast (stride-0) source.
  Tensor counts = tessera::zeros({rows, m}, kInt64);
  tessera::scatter_add_(counts, 0, tessera::tensor(iv, {n, m}),
                        tessera::ones({1, 1}, kInt64).expand({n, m}));
  std::vector<int64_t> cw(static_cast<size_t>(rows * m), 0);
  for (int64_t i = 0; i < n * m; ++i) ++cw[static_cast<size_t>(iv[i] * m + i % m)];
  EXPECT_EQ(i64(counts), cw);
}

TEST(Scatter, AddEveryDtype) {
  for (tessera::Dtype dt : kAllDtypes) {
    Tensor x = tessera::zeros({4}, dt);
    tessera::scatter_add_(x, 0, longs({1, 1, 3}), tessera::ones({3}, dt));
    std::vector<double> want =
        dt == kBool ? std::vector<double>{0, 1, 0, 1} : std::vector<double>{0, 2, 0, 1};
    EXPECT_EQ(f64(x), want) << dt;
  }
}

TEST(Scatter, ReduceAddAndMultiply) {
  Tensor x = doubles({1, 2, 3}, {3});
  EXPECT_EQ(f64(tessera::scatter(x, 0, longs({0, 0, 2}), doubles({2, 5, 4}, {3}), "multiply")),
            (std::vector<double>{10, 2, 12}));
  EXPECT_EQ(f64(tessera::scatter(x, 0, longs({0, 0, 2}), doubles({2, 5, 4}, {3}), "add")),
            (std::vector<double>{8, 2, 7}));
  expect_error([&] { tessera::scatter(x, 0, longs({0}), doubles({1}, {1}), "max"); },
               TSR_INVALID_ARGUMENT, {"'reduce'", "add or multiply"});
}

TEST(Scatter, ErrorsNameOpAndArgument) {
  Tensor x = tessera::zeros({3});
  expect_error([&] { tessera::scatter(x, 0, longs({5}), doubles({1}, {1})); }, TSR_OUT_OF_RANGE,
               {"scatter", "index 5 is out of bounds for dimension 0 with size 3"});
  expect_error([&] { tessera::scatter(x, 0, longs({1}), doubles({1}, {1}, kFloat64)); },
               TSR_INVALID_ARGUMENT, {"'src'", "dtype"});
  expect_error(
      [&] {
        tessera::scatter(x, 0, longs({0, 1}), doubles({1}, {1}));
      },
      TSR_INVALID_ARGUMENT, {"'src'"});
  // A source that aliases self.
  expect_error([&] { tessera::scatter_(x, 0, longs({0}), x); }, TSR_INVALID_ARGUMENT,
               {"single memory location"});
}

struct ReduceCase {
  const char* reduce;
  bool include_self;
};

TEST(ScatterReduce, EveryReductionMatchesReference) {
  const std::vector<double> self = {5, 7, 1, 3};
  const std::vector<int64_t> index = {0, 0, 2, 2, 2, 1};
  const std::vector<double> src = {2, 4, -1, 6, 0.5, 3};
  for (const char* reduce : {"sum", "prod", "mean", "amax", "amin"}) {
    for (bool include_self : {true, false}) {
      std::vector<double> want(self.size());
      for (size_t p = 0; p < self.size(); ++p) {
        std::vector<double> vals;
        if (include_self) vals.push_back(self[p]);
        for (size_t i = 0; i < index.size(); ++i)
          if (index[i] == static_cast<int64_t>(p)) vals.push_back(src[i]);
        bool touched = std::count(index.begin(), index.end(), static_cast<int64_t>(p)) > 0;
        if (!touched) {
          want[p] = self[p];
          continue;
        }
        std::string r(reduce);
        double acc = r == "prod" ? 1 : 0;
        if (r == "amax") acc = -kInf;
        if (r == "amin") acc = kInf;
        for (double v : vals) {
          if (r == "sum" || r == "mean") acc += v;
          if (r == "prod") acc *= v;
          if (r == "amax") acc = std::max(acc, v);
          if (r == "amin") acc = std::min(acc, v);
        }
        if (r == "mean") acc /= static_cast<double>(vals.size());
        want[p] = acc;
      }
      Tensor got =
          tessera::scatter_reduce(tessera::tensor(self, {4}, kFloat64), 0, tessera::tensor(index),
                                  tessera::tensor(src, {6}, kFloat64), reduce, include_self);
      std::vector<double> g = f64(got);
      for (size_t p = 0; p < want.size(); ++p)
        EXPECT_NEAR(g[p], want[p], 1e-12)
            << reduce << " include_self=" << include_self << " at " << p;
    }
  }
}

TEST(ScatterReduce, IntegerMeanFloorsAndNaNPropagates) {
  // torch: tensor([5,7,1]).scatter_reduce(0, [0,0], [-2,-4], 'mean') -> [-1, 7, 1]
  EXPECT_EQ(
      i64(tessera::scatter_reduce(longs({5, 7, 1}), 0, longs({0, 0}), longs({-2, -4}), "mean")),
      (std::vector<int64_t>{-1, 7, 1}));
  // torch: [5.,7,1] amax with [-2, nan] at 0 -> [nan, 7, 1]
  expect_same(f64(tessera::scatter_reduce(doubles({5, 7, 1}, {3}), 0, longs({0, 0}),
                                          doubles({-2, kNaN}, {2}), "amax")),
              {kNaN, 7, 1});
  Tensor x = doubles({5, 7, 1}, {3});
  tessera::scatter_reduce_(x, 0, longs({0, 0, 2}), doubles({2, 4, 9}, {3}), "mean", false);
  EXPECT_EQ(f64(x), (std::vector<double>{3, 7, 9}));  // torch
  expect_error([&] { tessera::scatter_reduce(x, 0, longs({0}), doubles({1}, {1}), "median"); },
               TSR_INVALID_ARGUMENT, {"'reduce'", "sum, prod, mean, amax or amin"});
}

// ===========================================================================
// index_select, take_along_dim
// ===========================================================================

TEST(IndexSelect, RowsColumnsAndNegativeDim) {
  Tensor x = iota({3, 4});
  EXPECT_EQ(f64(tessera::index_select(x, 0, longs({2, 0}))),
            (std::vector<double>{8, 9, 10, 11, 0, 1, 2, 3}));
  Tensor cols = tessera::index_select(x, -1, longs({3, 3, 1}));
  EXPECT_EQ(dims_of(cols), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(f64(cols), (std::vector<double>{3, 3, 1, 7, 7, 5, 11, 11, 9}));
  // Transposed self, int32 index, 0-d index.
  EXPECT_EQ(f64(tessera::index_select(x.t(), 0, longs({1}).to(kInt32))),
            (std::vector<double>{1, 5, 9}));
  EXPECT_EQ(dims_of(tessera::index_select(x, 1, tessera::scalar_tensor(2, kInt64))),
            (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(dims_of(tessera::index_select(x, 0, tessera::empty({0}, kInt64))),
            (std::vector<int64_t>{0, 4}));
}

// A 0-d self gives a 0-d result for a 0-d or one-element index, and refuses
// any other count (PyTorch 2.15: torch.index_select(torch.tensor(5.), 0,
// torch.tensor([0])) has shape (); an index of 2 or 0 values raises "Index to
// scalar can have only 1 value").
TEST(IndexSelect, ZeroDimSelfGivesZeroDimResult) {
  const Tensor s = tessera::scalar_tensor(5.0, kFloat32);
  for (int64_t dim : {0, -1}) {
    for (const Tensor& index : {tessera::scalar_tensor(0, kInt64), longs({0})}) {
      const Tensor r = tessera::index_select(s, dim, index);
      EXPECT_EQ(r.dim(), 0) << "dim " << dim << ", index of " << index.dim() << " dims";
      EXPECT_EQ(f64(r), (std::vector<double>{5}));
    }
  }
  Tensor out = tessera::empty({3});
  tessera::index_select_out(out, s, 0, longs({0}));
  EXPECT_EQ(out.dim(), 0);
  EXPECT_EQ(f64(out), (std::vector<double>{5}));
  expect_error(
      [&] {
        tessera::index_select(s, 0, longs({0, 0}));
      },
      TSR_INVALID_ARGUMENT,
      {"index_select", "Index to scalar can have only 1 value, got 2 value(s)"});
  expect_error([&] { tessera::index_select(s, 0, tessera::empty({0}, kInt64)); },
               TSR_INVALID_ARGUMENT, {"Index to scalar can have only 1 value, got 0 value(s)"});
  expect_error([&] { tessera::index_select(s, 0, longs({1})); }, TSR_OUT_OF_RANGE,
               {"index_select"});
  // The gradient of the 0-d result flows back to the 0-d self (d/ds 3 * s = 3).
  Tensor leaf = tessera::scalar_tensor(5.0, tessera::kFloat64);
  leaf.requires_grad_();
  (tessera::index_select(leaf, 0, longs({0})) * 3.0).backward();
  ASSERT_TRUE(leaf.grad().defined());
  EXPECT_EQ(leaf.grad().dim(), 0);
  EXPECT_EQ(f64(leaf.grad()), (std::vector<double>{3}));
}

TEST(IndexSelect, ErrorsAndOut) {
  Tensor x = iota({3});
  expect_error([&] { tessera::index_select(x, 0, longs({3})); }, TSR_OUT_OF_RANGE,
               {"index_select", "index 3 is out of bounds for dimension 0 with size 3"});
  expect_error([&] { tessera::index_select(x, 0, longs({-1})); }, TSR_OUT_OF_RANGE,
               {"index -1 is out of bounds"});
  expect_error(
      [&] {
        tessera::index_select(x, 0, longs({1}, {1, 1}));
      },
      TSR_INVALID_ARGUMENT, {"'index'", "vector"});
  Tensor out = tessera::empty({0});
  tessera::index_select_out(out, x, 0, longs({2, 2}));
  EXPECT_EQ(f64(out), (std::vector<double>{2, 2}));
}

TEST(TakeAlongDim, WithAndWithoutDim) {
  Tensor x = doubles({10, 30, 20, 60, 40, 50}, {2, 3});
  Tensor idx = longs({1, 0, 2, 2}, {2, 2});
  EXPECT_EQ(f64(tessera::take_along_dim(x, idx, 1)), (std::vector<double>{30, 10, 50, 50}));
  EXPECT_EQ(f64(tessera::take_along_dim(x, idx)), (std::vector<double>{30, 10, 20, 20}));
  // Broadcast of the non-dim sizes: indices (1, 2) against self (2, 3).
  EXPECT_EQ(f64(tessera::take_along_dim(x, longs({2, 0}, {1, 2}), 1)),
            (std::vector<double>{20, 10, 50, 60}));
  expect_error([&] { tessera::take_along_dim(x, longs({1}), 1); }, TSR_INVALID_ARGUMENT,
               {"take_along_dim", "same number of dimensions"});
}

// ===========================================================================
// index.Tensor and index_put_
// ===========================================================================

TEST(Index, SingleIntegerIndexWithNegatives) {
  Tensor x = iota({4, 2});
  Tensor r = tessera::index(x, {longs({3, -1, 0, -4})});
  EXPECT_EQ(dims_of(r), (std::vector<int64_t>{4, 2}));
  EXPECT_EQ(f64(r), (std::vector<double>{6, 7, 6, 7, 0, 1, 0, 1}));
  // x[:, idx] with a 2-d index: the result puts idx's dims in place of dim 1.
  Tensor c = tessera::index(x, {std::nullopt, longs({1, 0, 1, 1}, {2, 2})});
  EXPECT_EQ(dims_of(c), (std::vector<int64_t>{4, 2, 2}));
  EXPECT_EQ(f64(c)[0], 1);
  EXPECT_EQ(f64(c)[14], 7);
}

TEST(Index, AdjacentAndSeparatedAdvancedDims) {
  Tensor x = iota({2, 3, 4});
  // torch: x[[1,0], :, [[3],[0]]] -> (2, 2, 3) [[[15,19,23],[3,7,11]],[[12,16,20],[0,4,8]]]
  Tensor a = tessera::index(x, {longs({1, 0}), std::nullopt, longs({3, 0}, {2, 1})});
  EXPECT_EQ(dims_of(a), (std::vector<int64_t>{2, 2, 3}));
  EXPECT_EQ(f64(a), (std::vector<double>{15, 19, 23, 3, 7, 11, 12, 16, 20, 0, 4, 8}));
  // torch: x[:, [[2],[0]], [1,3]] -> (2, 2, 2) [[[9,11],[1,3]],[[21,23],[13,15]]]
  Tensor b = tessera::index(x, {std::nullopt, longs({2, 0}, {2, 1}), longs({1, 3})});
  EXPECT_EQ(dims_of(b), (std::vector<int64_t>{2, 2, 2}));
  EXPECT_EQ(f64(b), (std::vector<double>{9, 11, 1, 3, 21, 23, 13, 15}));
  // Non-contiguous self: the same through a transposed copy.
  Tensor xt = iota({4, 3, 2}).permute({2, 1, 0});
  Tensor bt = tessera::index(xt, {std::nullopt, longs({2, 0}, {2, 1}), longs({1, 3})});
  Tensor bc = tessera::index(xt.contiguous(), {std::nullopt, longs({2, 0}, {2, 1}), longs({1, 3})});
  EXPECT_EQ(f64(bt), f64(bc));
}

TEST(Index, BoolMasksGoThroughNonzero) {
  Tensor x = iota({2, 3});
  Tensor mask = tessera::tensor(std::vector<int64_t>{1, 0, 1, 0, 1, 1}, {2, 3}).to(kBool);
  EXPECT_EQ(f64(tessera::index(x, {mask})), (std::vector<double>{0, 2, 4, 5}));
  Tensor cols = tessera::tensor(std::vector<int64_t>{0, 1, 1}).to(kBool);
  Tensor r = tessera::index(x, {std::nullopt, cols});
  EXPECT_EQ(dims_of(r), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(f64(r), (std::vector<double>{1, 2, 4, 5}));
  // Empty selection and 0-d masks (torch: x[True] is (1, 2, 3), x[False] (0, 2, 3)).
  EXPECT_EQ(dims_of(tessera::index(x, {tessera::zeros({2, 3}, kBool)})), (std::vector<int64_t>{0}));
  EXPECT_EQ(dims_of(tessera::index(x, {tessera::ones({}, kBool)})),
            (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(dims_of(tessera::index(x, {tessera::zeros({}, kBool)})),
            (std::vector<int64_t>{0, 2, 3}));
}

TEST(Index, ErrorsNameOpArgumentAndValue) {
  Tensor x = tessera::zeros({3, 4});
  expect_error(
      [&] { tessera::index(x, {longs({5})}); }, TSR_OUT_OF_RANGE,
      {"index.Tensor", "'indices'", "index 5 is out of bounds for dimension 0 with size 3"});
  expect_error([&] { tessera::index(x, {longs({-5})}); }, TSR_OUT_OF_RANGE,
               {"index -5 is out of bounds for dimension 0 with size 3"});
  expect_error(
      [&] {
        tessera::index(x, {std::nullopt, longs({0, 4})});
      },
      TSR_OUT_OF_RANGE, {"entry 1", "index 4 is out of bounds for dimension 1 with size 4"});
  // Combined indices: 0 * 4 + 5 would be in range of the flattened tensor.
  expect_error(
      [&] {
        tessera::index(x, {longs({0}), longs({5})});
      },
      TSR_OUT_OF_RANGE, {"entry 1: index 5 is out of bounds for dimension 1 with size 4"});
  expect_error(
      [&] {
        tessera::index_put_(x, {longs({-4}), longs({1})}, tessera::scalar_tensor(1.f));
      },
      TSR_OUT_OF_RANGE, {"entry 0: index -4 is out of bounds for dimension 0 with size 3"});
  expect_error(
      [&] {
        tessera::index(x, {longs({0}), longs({0}), longs({0})});
      },
      TSR_OUT_OF_RANGE, {"too many indices for tensor of dimension 2"});
  expect_error([&] { tessera::index(x, {tessera::ones({2}, kBool)}); }, TSR_OUT_OF_RANGE,
               {"shape of the mask [2] at index 0 does not match"});
  expect_error([&] { tessera::index(x, {doubles({1}, {1})}); }, TSR_OUT_OF_RANGE,
               {"long, int, byte or bool"});
  expect_error(
      [&] {
        tessera::index(x, {longs({0, 1}), longs({0, 1, 2})});
      },
      TSR_OUT_OF_RANGE, {"could not be broadcast together with shapes [2], [3]"});
}

TEST(IndexPut, AssignAccumulateAndMasks) {
  Tensor x = tessera::zeros({3, 2});
  tessera::index_put_(x, {longs({2, 0})}, doubles({1, 2, 3, 4}, {2, 2}));
  EXPECT_EQ(f64(x), (std::vector<double>{3, 4, 0, 0, 1, 2}));
  // Duplicates accumulate; values broadcast over the result (2, 2) from (2,).
  Tensor y = tessera::zeros({3, 2});
  tessera::index_put_(y, {longs({1, 1})}, doubles({1, 10}, {2}), true);
  EXPECT_EQ(f64(y), (std::vector<double>{0, 0, 2, 20, 0, 0}));
  // Two indexed dims with negatives; the functional form leaves self alone.
  Tensor z = tessera::index_put(y, {longs({-1, 0}), longs({1, -2})}, doubles({7, 8}, {2}));
  EXPECT_EQ(f64(z), (std::vector<double>{8, 0, 2, 20, 0, 7}));
  EXPECT_EQ(f64(y)[5], 0);
  // A bool mask with a 0-d value.
  Tensor m = tessera::tensor(std::vector<int64_t>{1, 0, 0, 1, 1, 0}, {3, 2}).to(kBool);
  tessera::index_put_(y, {m}, tessera::scalar_tensor(-1.0));
  EXPECT_EQ(f64(y), (std::vector<double>{-1, 0, 2, -1, -1, 0}));
}

TEST(IndexPut, NonViewableSelfIsWrittenThrough) {
  // Indexed dims 0 and 2 of a permuted tensor cannot be merged into one view.
  Tensor base = tessera::zeros({4, 3, 2});
  Tensor x = base.permute({2, 1, 0});  // (2, 3, 4)
  tessera::index_put_(x, {longs({1}), std::nullopt, longs({3})}, doubles({5, 6, 7}, {1, 3}));
  std::vector<double> b = f64(base);  // x[1, j, 3] = base[3, j, 1]
  for (int64_t j = 0; j < 3; ++j) EXPECT_EQ(b[static_cast<size_t>(3 * 6 + j * 2 + 1)], 5 + j);
  EXPECT_EQ(std::accumulate(b.begin(), b.end(), 0.0), 18.0);
}

TEST(IndexPut, Errors) {
  Tensor x = tessera::zeros({2, 3});
  expect_error([&] { tessera::index_put_(x, {longs({5})}, tessera::scalar_tensor(1.0)); },
               TSR_OUT_OF_RANGE,
               {"index_put_", "index 5 is out of bounds for dimension 0 with size 2"});
  expect_error(
      [&] { tessera::index_put_(x, {longs({1})}, tessera::ones({2})); }, TSR_INVALID_ARGUMENT,
      {"value tensor of shape [2] cannot be broadcast to indexing result of shape [1, 3]"});
  expect_error([&] { tessera::index_put_(x, {longs({1})}, tessera::ones({3}, kFloat64)); },
               TSR_INVALID_ARGUMENT, {"dtypes match"});
}

// ===========================================================================
// masks and nonzero
// ===========================================================================

TEST(MaskedSelect, BroadcastAndEmpty) {
  Tensor x = iota({2, 3});
  Tensor m = tessera::tensor(std::vector<int64_t>{1, 0, 1}).to(kBool);
  EXPECT_EQ(f64(tessera::masked_select(x, m)), (std::vector<double>{0, 2, 3, 5}));
  // The mask broadcasts self too: (3,) values, (2, 3) mask.
  Tensor m2 = tessera::tensor(std::vector<int64_t>{0, 1, 0, 1, 1, 0}, {2, 3}).to(kBool);
  EXPECT_EQ(f64(tessera::masked_select(doubles({7, 8, 9}, {3}), m2)),
            (std::vector<double>{8, 7, 8}));
  EXPECT_EQ(dims_of(tessera::masked_select(x, tessera::zeros({3}, kBool))),
            (std::vector<int64_t>{0}));
  expect_error([&] { tessera::masked_select(x, tessera::ones({3})); }, TSR_INVALID_ARGUMENT,
               {"masked_select", "'mask'", "BoolTensor"});
}

TEST(MaskedScatter, FillsInRowMajorOrder) {
  Tensor x = tessera::zeros({2, 3});
  Tensor m = tessera::tensor(std::vector<int64_t>{0, 1, 1}).to(kBool);
  tessera::masked_scatter_(x, m, doubles({1, 2, 3, 4, 5}, {5}));
  EXPECT_EQ(f64(x), (std::vector<double>{0, 1, 2, 0, 3, 4}));
  expect_error(
      [&] {
        tessera::masked_scatter_(x, m, doubles({1, 2, 3}, {3}));
      },
      TSR_INVALID_ARGUMENT, {"Number of elements of source < number of ones in mask"});
  Tensor y = tessera::masked_scatter(tessera::zeros({3}), m, doubles({9, 8}, {2}));
  EXPECT_EQ(f64(y), (std::vector<double>{0, 9, 8}));
}

TEST(Nonzero, CoordinatesInRowMajorOrder) {
  Tensor x = doubles({0, 1.5, 0, kNaN, -0.0, 2}, {2, 3});
  Tensor nz = tessera::nonzero(x);
  EXPECT_EQ(nz.dtype(), kInt64);
  EXPECT_EQ(dims_of(nz), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(i64(nz), (std::vector<int64_t>{0, 1, 1, 0, 1, 2}));
  // Transposed input: coordinates of the view.
  EXPECT_EQ(i64(tessera::nonzero(x.t())), (std::vector<int64_t>{0, 1, 1, 0, 2, 1}));
  EXPECT_EQ(i64(tessera::argwhere(x)), i64(nz));
  // 0-d and empty.
  EXPECT_EQ(dims_of(tessera::nonzero(tessera::scalar_tensor(2.0))), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(dims_of(tessera::nonzero(tessera::scalar_tensor(0.0))), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(dims_of(tessera::nonzero(tessera::empty({0, 3}))), (std::vector<int64_t>{0, 2}));
}

TEST(Nonzero, EveryDtypeAndLargeParallelInput) {
  for (tessera::Dtype dt : kAllDtypes) {
    Tensor x = longs({0, 3, 0, 1}).to(dt);
    EXPECT_EQ(i64(tessera::nonzero(x)), (std::vector<int64_t>{1, 3})) << dt;
  }
  // 300 x 700 (above the parallel threshold), about a third non-zero.
  const int64_t rows = 300, cols = 700;
  std::vector<double> v = uniform(static_cast<size_t>(rows * cols), 11);
  for (double& e : v) e = e < 0.33 ? 1.0 : 0.0;
  std::vector<int64_t> want;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      if (v[static_cast<size_t>(i * cols + j)] != 0) {
        want.push_back(i);
        want.push_back(j);
      }
  EXPECT_EQ(i64(tessera::nonzero(tessera::tensor(v, {rows, cols}))), want);
}

TEST(Nonzero, MetaDeviceIsRefused) {
  Tensor x = tessera::empty({3}, tessera::TensorOptions(kFloat32).device(tessera::kMeta));
  expect_error([&] { tessera::nonzero(x); }, TSR_UNIMPLEMENTED, {"nonzero", "meta"});
}

// ===========================================================================
// sort, argsort, topk, kthvalue
// ===========================================================================

TEST(Sort, AscendingDescendingWithNaNAndTies) {
  Tensor x = doubles({3, kNaN, 1, 3, -kInf, 2}, {6});
  auto [v, i] = tessera::sort(x);
  expect_same(f64(v), {-kInf, 1, 2, 3, 3, kNaN});
  EXPECT_EQ(i64(i), (std::vector<int64_t>{4, 2, 5, 0, 3, 1}));  // ties keep order
  auto [dv, di] = tessera::sort(x, 0, true);
  expect_same(f64(dv), {kNaN, 3, 3, 2, 1, -kInf});
  EXPECT_EQ(i64(di), (std::vector<int64_t>{1, 0, 3, 5, 2, 4}));  // stable descending
  auto [sv, si] = tessera::sort(x, true, -1, false);
  EXPECT_EQ(i64(si), i64(i));
  EXPECT_EQ(i64(tessera::argsort(x, 0, true)), i64(di));
}

TEST(Sort, AlongDimsOfNonContiguousInput) {
  Tensor x = doubles({5, 1, 4, 2, 3, 0}, {2, 3}).t();  // (3, 2): [[5,2],[1,3],[4,0]]
  auto [v0, i0] = tessera::sort(x, 0);
  EXPECT_EQ(f64(v0), (std::vector<double>{1, 0, 4, 2, 5, 3}));
  EXPECT_EQ(i64(i0), (std::vector<int64_t>{1, 2, 2, 0, 0, 1}));
  auto [v1, i1] = tessera::sort(x, 1, true);
  EXPECT_EQ(f64(v1), (std::vector<double>{5, 2, 3, 1, 4, 0}));
  auto [s, si] = tessera::sort(tessera::scalar_tensor(4.0));
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(si.item<int64_t>(), 0);
  auto [e, ei] = tessera::sort(tessera::empty({0, 3}), 0);
  EXPECT_EQ(dims_of(e), (std::vector<int64_t>{0, 3}));
}

TEST(Sort, EveryDtypeAndLongRowsMatchStableSort) {
  for (tessera::Dtype dt : kAllDtypes) {
    Tensor x = longs({3, 0, 2, 0, 1}).to(dt);
    auto [v, i] = tessera::sort(x);
    std::vector<double> xv = f64(x);
    std::vector<int64_t> order(xv.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return xv[static_cast<size_t>(a)] < xv[static_cast<size_t>(b)];
    });
    EXPECT_EQ(i64(i), order) << dt;
  }
  const int64_t rows = 64, cols = 2000;
  std::vector<double> v = uniform(static_cast<size_t>(rows * cols), 17);
  for (double& e : v) e = std::floor(e * 100);  // many ties
  auto [sv, si] = tessera::sort(tessera::tensor(v, {rows, cols}, kFloat64), 1, true);
  std::vector<int64_t> got = i64(si);
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<int64_t> order(static_cast<size_t>(cols));
    std::iota(order.begin(), order.end(), 0);
    const double* row = v.data() + r * cols;
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return row[a] > row[b]; });
    ASSERT_TRUE(std::equal(order.begin(), order.end(), got.begin() + r * cols)) << "row " << r;
  }
}

TEST(TopK, LargestSmallestAndErrors) {
  Tensor x = doubles({3, kNaN, 2, 9}, {4});
  auto [v, i] = tessera::topk(x, 2);
  expect_same(f64(v), {kNaN, 9});  // torch: NaN counts as the largest
  EXPECT_EQ(i64(i), (std::vector<int64_t>{1, 3}));
  auto [sv, si] = tessera::topk(longs({3, 1, 2}), 2, -1, false);
  EXPECT_EQ(i64(sv), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(i64(si), (std::vector<int64_t>{1, 2}));
  auto [zv, zi] = tessera::topk(iota({2, 3}), 0, 1);
  EXPECT_EQ(dims_of(zv), (std::vector<int64_t>{2, 0}));
  expect_error([&] { tessera::topk(x, 5); }, TSR_OUT_OF_RANGE, {"topk", "'k'", "out of range"});
}

TEST(KthValue, KeepdimAndErrors) {
  Tensor x = doubles({3, 1, 2, 6, 5, 4}, {2, 3});
  auto [v, i] = tessera::kthvalue(x, 2);
  EXPECT_EQ(f64(v), (std::vector<double>{2, 5}));
  EXPECT_EQ(i64(i), (std::vector<int64_t>{2, 1}));
  auto [kv, ki] = tessera::kthvalue(x, 1, 0, true);
  EXPECT_EQ(dims_of(kv), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(f64(kv), (std::vector<double>{3, 1, 2}));
  expect_error([&] { tessera::kthvalue(x, 4); }, TSR_OUT_OF_RANGE, {"kthvalue", "out of range"});
  expect_error([&] { tessera::kthvalue(x, 0); }, TSR_OUT_OF_RANGE, {"'k'"});
}

// ===========================================================================
// searchsorted, bucketize
// ===========================================================================

TEST(SearchSorted, LeftRightSideAndNaN) {
  Tensor b = doubles({1, 2, 2, 3}, {4});
  Tensor v = doubles({2, 0, 5, kNaN, 2.5}, {5});
  EXPECT_EQ(i64(tessera::searchsorted(b, v)), (std::vector<int64_t>{1, 0, 4, 4, 3}));
  EXPECT_EQ(i64(tessera::searchsorted(b, v, false, true)), (std::vector<int64_t>{3, 0, 4, 4, 3}));
  EXPECT_EQ(i64(tessera::searchsorted(b, v, false, false, "right")),
            (std::vector<int64_t>{3, 0, 4, 4, 3}));
  Tensor r32 = tessera::searchsorted(b, v, true);
  EXPECT_EQ(r32.dtype(), kInt32);
  // torch: searchsorted([1,2,nan], [nan, 2, 5]) -> [3, 1, 3]
  EXPECT_EQ(i64(tessera::searchsorted(doubles({1, 2, kNaN}, {3}), doubles({kNaN, 2, 5}, {3}))),
            (std::vector<int64_t>{3, 1, 3}));
  // Integer values against float boundaries (promoted), and a Scalar.
  EXPECT_EQ(i64(tessera::searchsorted(b, longs({2}))), (std::vector<int64_t>{1}));
  Tensor s = tessera::searchsorted(b, tessera::Scalar(2.5));
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.item<int64_t>(), 3);
}

TEST(SearchSorted, PerRowBoundariesSorterAndErrors) {
  // torch: searchsorted([[1,3,5],[2,4,6]], [[3,6],[1,7]], right=True) -> [[2,3],[0,3]]
  Tensor b = doubles({1, 3, 5, 2, 4, 6}, {2, 3});
  EXPECT_EQ(i64(tessera::searchsorted(b, doubles({3, 6, 1, 7}, {2, 2}), false, true)),
            (std::vector<int64_t>{2, 3, 0, 3}));
  // An unsorted sequence with its argsort.
  Tensor u = doubles({3, 1, 2}, {3});
  EXPECT_EQ(i64(tessera::searchsorted(u, doubles({2.5, 0}, {2}), false, false, nullptr,
                                      longs({1, 2, 0}))),
            (std::vector<int64_t>{2, 0}));
  expect_error(
      [&] {
        tessera::searchsorted(b, doubles({1, 2, 3}, {3, 1}));
      },
      TSR_INVALID_ARGUMENT,
      {"searchsorted", "boundaries tensor [2, 3] and input value tensor [3, 1]"});
  expect_error([&] { tessera::searchsorted(u, doubles({1}, {1}), false, true, "left"); },
               TSR_INVALID_ARGUMENT, {"side and right can't be set to opposites"});
  expect_error([&] { tessera::searchsorted(u, doubles({1}, {1}), false, false, "middle"); },
               TSR_INVALID_ARGUMENT, {"'side'"});
  expect_error(
      [&] {
        tessera::searchsorted(u, doubles({1}, {1}), false, false, nullptr, longs({0, 1}));
      },
      TSR_INVALID_ARGUMENT, {"boundary and sorter must have the same size"});
}

TEST(Bucketize, MatchesSearchSorted) {
  Tensor bounds = doubles({1, 3, 5}, {3});
  Tensor v = doubles({0, 1, 4, 6, 3}, {5});
  EXPECT_EQ(i64(tessera::bucketize(v, bounds)), (std::vector<int64_t>{0, 0, 2, 3, 1}));
  EXPECT_EQ(i64(tessera::bucketize(v, bounds, false, true)), (std::vector<int64_t>{0, 1, 2, 3, 2}));
  expect_error(
      [&] {
        tessera::bucketize(v, doubles({1, 2}, {1, 2}));
      },
      TSR_INVALID_ARGUMENT, {"'boundaries'", "1 dimension"});
}

// ===========================================================================
// unique
// ===========================================================================

TEST(Unique, SortedWithInverseAndCounts) {
  // torch: unique([3,1,2,3,1], return_inverse, return_counts) -> [1,2,3], [2,0,1,2,0], [2,1,2]
  auto [u, inv, cnt] = tessera::unique(longs({3, 1, 2, 3, 1}), true, true, true);
  EXPECT_EQ(i64(u), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(i64(inv), (std::vector<int64_t>{2, 0, 1, 2, 0}));
  EXPECT_EQ(i64(cnt), (std::vector<int64_t>{2, 1, 2}));
  // 2-d input: inverse has self's shape; not-requested results are empty.
  auto [u2, inv2, cnt2] = tessera::unique(longs({3, 1, 3, 2}, {2, 2}), true, true, false);
  EXPECT_EQ(dims_of(inv2), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(i64(inv2), (std::vector<int64_t>{2, 0, 2, 1}));
  EXPECT_EQ(cnt2.numel(), 0);
  // NaNs are distinct values; empty and 0-d inputs.
  auto [un, in_, cn] = tessera::unique(doubles({kNaN, 1, kNaN, 1}, {4}), true, true, true);
  expect_same(f64(un), {1, kNaN, kNaN});
  EXPECT_EQ(i64(cn), (std::vector<int64_t>{2, 1, 1}));
  EXPECT_EQ(i64(in_), (std::vector<int64_t>{1, 0, 2, 0}));
  auto [ue, ie, ce] = tessera::unique(tessera::empty({0}), true, true, true);
  EXPECT_EQ(ue.numel(), 0);
  auto [us, is, cs] = tessera::unique(tessera::scalar_tensor(3.0), true, true, true);
  EXPECT_EQ(f64(us), (std::vector<double>{3}));
  EXPECT_EQ(is.dim(), 0);
}

TEST(Unique, ConsecutiveFlatAndAlongDim) {
  // torch: unique_consecutive([1,1,2,2,3,1,1,2]) -> [1,2,3,1,2], [0,0,1,1,2,3,3,4], [2,2,1,2,1]
  auto [u, inv, cnt] = tessera::unique_consecutive(longs({1, 1, 2, 2, 3, 1, 1, 2}), true, true);
  EXPECT_EQ(i64(u), (std::vector<int64_t>{1, 2, 3, 1, 2}));
  EXPECT_EQ(i64(inv), (std::vector<int64_t>{0, 0, 1, 1, 2, 3, 3, 4}));
  EXPECT_EQ(i64(cnt), (std::vector<int64_t>{2, 2, 1, 2, 1}));
  // torch: [[1,2],[1,2],[3,4],[1,2]] along dim 0 -> rows [1,2],[3,4],[1,2]; [0,0,1,2]; [2,1,1]
  auto [ud, id, cd] =
      tessera::unique_consecutive(longs({1, 2, 1, 2, 3, 4, 1, 2}, {4, 2}), true, true, 0);
  EXPECT_EQ(i64(ud), (std::vector<int64_t>{1, 2, 3, 4, 1, 2}));
  EXPECT_EQ(i64(id), (std::vector<int64_t>{0, 0, 1, 2}));
  EXPECT_EQ(i64(cd), (std::vector<int64_t>{2, 1, 1}));
}

}  // namespace
