// The shape family end to end (C++ frontend -> core -> CPU plugin): cat,
// stack, hstack, vstack, split/chunk/unbind, narrow, flip, roll, repeat,
// tile, flatten/unflatten, movedim/swapaxes, *_as, broadcast_to, diagonal,
// diag, tril/triu, and contiguous/clone with memory formats.
//
// These ops move values without arithmetic, so every comparison is exact; the
// expected values are hand-computed or written as index arithmetic on an
// iota input here (torch 1.13 printed the ones marked "torch").
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "tessera/tessera.hpp"

namespace {

using tessera::Dims;
using tessera::kBool;
using tessera::kFloat32;
using tessera::kFloat64;
using tessera::kInt32;
using tessera::kInt64;
using tessera::MemoryFormat;
using tessera::Tensor;

std::vector<double> f64(const Tensor& t) { return t.to_vector<double>(); }

std::vector<int64_t> dims_of(const Tensor& t) {
  Dims d = t.sizes();
  return std::vector<int64_t>(d.begin(), d.end());
}
std::vector<int64_t> strides_of(const Tensor& t) {
  Dims d = t.strides();
  return std::vector<int64_t>(d.begin(), d.end());
}

// 0, 1, 2, ... as `dtype` in `shape`.
Tensor iota(tessera::IntList shape, tessera::Dtype dtype = kFloat32) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<double> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0.0);
  return tessera::tensor(v, shape, dtype);
}

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

// ===========================================================================
// cat, stack, hstack, vstack
// ===========================================================================

TEST(Cat, AlongDimsWithNegativeDimAndNonContiguousInputs) {
  Tensor a = iota({2, 3});
  Tensor b = iota({2, 2}) + 10.0;
  Tensor c = tessera::cat({a, b}, -1);
  EXPECT_EQ(dims_of(c), (std::vector<int64_t>{2, 5}));
  EXPECT_EQ(f64(c), (std::vector<double>{0, 1, 2, 10, 11, 3, 4, 5, 12, 13}));
  Tensor r = tessera::cat({a, a.t().contiguous().t()}, 0);  // strided second input
  EXPECT_EQ(f64(r), (std::vector<double>{0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5}));
  Tensor t = tessera::cat({iota({3, 2}).t(), a}, 0);  // transposed view first
  EXPECT_EQ(f64(t), (std::vector<double>{0, 2, 4, 1, 3, 5, 0, 1, 2, 3, 4, 5}));
}

TEST(Cat, PromotesDtypesAndSkipsLegacyEmptyTensors) {
  Tensor i = tessera::tensor({1, 2});           // int64
  Tensor f = tessera::tensor({0.5}, kFloat64);  // float64
  Tensor e = tessera::empty({0}, kInt32);       // legacy empty
  Tensor c = tessera::cat({i, e, f});
  EXPECT_EQ(c.dtype(), kFloat64);
  EXPECT_EQ(f64(c), (std::vector<double>{1, 2, 0.5}));
  // torch: cat([empty(0), ones(2, 3)], 1) is (2, 3); only empties give (0,).
  EXPECT_EQ(dims_of(tessera::cat({tessera::empty({0}), iota({2, 3})}, 1)),
            (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(dims_of(tessera::cat({tessera::empty({0}), tessera::empty({0})})),
            (std::vector<int64_t>{0}));
  // torch: cat([empty(0, float64), ones(2, int32)]).dtype is float64.
  EXPECT_EQ(tessera::cat({tessera::empty({0}, kFloat64), tessera::ones({2}, kInt32)}).dtype(),
            kFloat64);
}

TEST(Cat, ErrorsUsePyTorchWording) {
  Tensor a = iota({2, 3});
  expect_error([&] { tessera::cat({}); }, TSR_INVALID_ARGUMENT,
               {"cat", "expected a non-empty list of Tensors"});
  expect_error(
      [&] {
        tessera::cat({a, tessera::ones({3, 3})}, 1);
      },
      TSR_INVALID_ARGUMENT,
      {"Sizes of tensors must match except in dimension 1. Expected size 2 but got "
       "size 3 for tensor number 1 in the list."});
  expect_error(
      [&] {
        tessera::cat({a, tessera::ones({3})});
      },
      TSR_INVALID_ARGUMENT, {"Tensors must have same number of dimensions: got 2 and 1"});
  expect_error([&] { tessera::cat({tessera::scalar_tensor(1.0)}); }, TSR_INVALID_ARGUMENT,
               {"zero-dimensional tensor (at position 0) cannot be concatenated"});
  expect_error([&] { tessera::cat({a, a}, 2); }, TSR_OUT_OF_RANGE, {"dim"});
}

TEST(Cat, OutVariantResizesAndCasts) {
  Tensor out = tessera::empty({0}, kFloat64);
  tessera::cat_out(out, {tessera::tensor({1, 2}), tessera::tensor({3})});
  EXPECT_EQ(dims_of(out), (std::vector<int64_t>{3}));
  EXPECT_EQ(f64(out), (std::vector<double>{1, 2, 3}));
  Tensor bad = tessera::empty({3}, kInt64);
  expect_error([&] { tessera::cat_out(bad, {tessera::tensor({1.5})}); }, TSR_INVALID_ARGUMENT,
               {"can't be cast"});
}

TEST(Cat, MetaDevice) {
  auto meta = tessera::TensorOptions(kFloat32).device(tessera::kMeta);
  Tensor c = tessera::cat({tessera::empty({2, 3}, meta), tessera::empty({4, 3}, meta)});
  EXPECT_EQ(dims_of(c), (std::vector<int64_t>{6, 3}));
  EXPECT_EQ(c.device().type(), tessera::DeviceType::Meta);
}

TEST(Stack, NewDimAnywhere) {
  Tensor a = iota({2}), b = iota({2}) + 5.0;
  EXPECT_EQ(dims_of(tessera::stack({a, b})), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(f64(tessera::stack({a, b}, 1)), (std::vector<double>{0, 5, 1, 6}));
  EXPECT_EQ(f64(tessera::stack({a, b}, -1)), (std::vector<double>{0, 5, 1, 6}));
  expect_error([&] { tessera::stack({}); }, TSR_INVALID_ARGUMENT,
               {"stack expects a non-empty TensorList"});
  expect_error(
      [&] {
        tessera::stack({iota({2, 3}), iota({3})});
      },
      TSR_INVALID_ARGUMENT,
      {"stack expects each tensor to be equal size, but got [2, 3] at entry 0 and [3] "
       "at entry 1"});
}

TEST(Stack, HorizontalAndVertical) {
  // torch: hstack([tensor(1), ones(2)]) -> [1, 1, 1]; vstack of two 0-d -> (2, 1)
  EXPECT_EQ(f64(tessera::hstack({tessera::scalar_tensor(1.0), tessera::ones({2})})),
            (std::vector<double>{1, 1, 1}));
  EXPECT_EQ(dims_of(tessera::hstack({iota({2, 1}), iota({2, 2})})), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(dims_of(tessera::vstack({tessera::scalar_tensor(1.0), tessera::scalar_tensor(2.0)})),
            (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(f64(tessera::vstack({iota({3}), iota({2, 3})})),
            (std::vector<double>{0, 1, 2, 0, 1, 2, 3, 4, 5}));
}

// ===========================================================================
// split, chunk, unbind, narrow (views)
// ===========================================================================

TEST(Split, PiecesAreViewsOfTheInput) {
  Tensor x = iota({5, 2});
  std::vector<Tensor> p = tessera::split(x, 2);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(dims_of(p[2]), (std::vector<int64_t>{1, 2}));
  EXPECT_TRUE(p[1].is_same_storage(x));
  EXPECT_EQ(f64(p[1]), (std::vector<double>{4, 5, 6, 7}));
  std::vector<Tensor> q = tessera::split_with_sizes(x, {1, 4});
  EXPECT_EQ(f64(q[0]), (std::vector<double>{0, 1}));
  EXPECT_EQ(dims_of(q[1]), (std::vector<int64_t>{4, 2}));
  std::vector<Tensor> cols = tessera::split(x, 1, -1);
  EXPECT_EQ(f64(cols[1]), (std::vector<double>{1, 3, 5, 7, 9}));
  expect_error(
      [&] {
        tessera::split_with_sizes(x, {1, 1});
      },
      TSR_INVALID_ARGUMENT, {"split_with_sizes expects split_sizes to sum exactly to 5"});
}

TEST(Split, ChunkAndUnbind) {
  Tensor x = iota({5});
  std::vector<Tensor> c = tessera::chunk(x, 3);  // sizes 2, 2, 1
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(f64(c[2]), (std::vector<double>{4}));
  EXPECT_EQ(tessera::chunk(iota({2}), 4).size(), 2u);  // fewer when they run out
  expect_error([&] { tessera::chunk(x, 0); }, TSR_INVALID_ARGUMENT, {"greater than 0"});
  std::vector<Tensor> u = tessera::unbind(iota({2, 3}), 1);
  ASSERT_EQ(u.size(), 3u);
  EXPECT_EQ(f64(u[2]), (std::vector<double>{2, 5}));
}

TEST(Narrow, NegativeStartAndErrors) {
  Tensor x = iota({2, 5});
  Tensor n = tessera::narrow(x, 1, -3, 2);
  EXPECT_TRUE(n.is_same_storage(x));
  EXPECT_EQ(f64(n), (std::vector<double>{2, 3, 7, 8}));
  expect_error([&] { tessera::narrow(x, 1, 4, 2); }, TSR_OUT_OF_RANGE,
               {"narrow", "start (4) + length (2) exceeds dimension size (5)."});
  expect_error([&] { tessera::narrow(x, 1, -6, 1); }, TSR_OUT_OF_RANGE, {"'start'"});
  expect_error([&] { tessera::narrow(x, 1, 0, -1); }, TSR_INVALID_ARGUMENT, {"'length'"});
  expect_error([&] { tessera::narrow(tessera::scalar_tensor(1.0), 0, 0, 1); }, TSR_INVALID_ARGUMENT,
               {"0-dim"});
}

// ===========================================================================
// flip, roll, repeat, tile
// ===========================================================================

TEST(Flip, DimsOfContiguousAndStridedInputs) {
  Tensor x = iota({2, 3});
  EXPECT_EQ(f64(tessera::flip(x, {0})), (std::vector<double>{3, 4, 5, 0, 1, 2}));
  EXPECT_EQ(f64(tessera::flip(x, {-1})), (std::vector<double>{2, 1, 0, 5, 4, 3}));
  EXPECT_EQ(f64(tessera::flip(x, {0, 1})), (std::vector<double>{5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(f64(tessera::flip(x.t(), {1})), (std::vector<double>{3, 0, 4, 1, 5, 2}));
  EXPECT_EQ(f64(tessera::flip(x, {})), f64(x));
  EXPECT_EQ(f64(tessera::flip(tessera::scalar_tensor(3.0), {0})), (std::vector<double>{3}));
  EXPECT_EQ(tessera::flip(tessera::empty({0, 2}), {0}).numel(), 0);
  Tensor f = tessera::flip(iota({4}, kInt64), {0});
  EXPECT_EQ(f.dtype(), kInt64);
  expect_error(
      [&] {
        tessera::flip(x, {0, 0});
      },
      TSR_INVALID_ARGUMENT, {"dim 0 appears multiple times in the list of dims"});
}

TEST(Roll, WithAndWithoutDims) {
  Tensor x = iota({2, 3});
  // torch: roll(arange(6).reshape(2,3), 1) -> [[5,0,1],[2,3,4]]
  EXPECT_EQ(f64(tessera::roll(x, {1})), (std::vector<double>{5, 0, 1, 2, 3, 4}));
  // torch: roll(..., -4, 1) -> [[1,2,0],[4,5,3]]
  EXPECT_EQ(f64(tessera::roll(x, {-4}, {1})), (std::vector<double>{1, 2, 0, 4, 5, 3}));
  // torch: roll(arange(12).reshape(3,4), (1,-1), (0,1))
  EXPECT_EQ(f64(tessera::roll(iota({3, 4}), {1, -1}, {0, 1})),
            (std::vector<double>{9, 10, 11, 8, 1, 2, 3, 0, 5, 6, 7, 4}));
  EXPECT_EQ(f64(tessera::roll(x.t(), {1}, {0})), (std::vector<double>{2, 5, 0, 3, 1, 4}));
  EXPECT_EQ(f64(tessera::roll(x, {3}, {1})), f64(x));
  expect_error(
      [&] {
        tessera::roll(x, {1}, {0, 1});
      },
      TSR_INVALID_ARGUMENT, {"shifts and dimensions must align. shifts: 1, dims:2"});
}

TEST(Repeat, MatchesIndexArithmetic) {
  // torch: arange(6).reshape(2,3).repeat(2,1,2)
  Tensor r = tessera::repeat(iota({2, 3}), {2, 1, 2});
  EXPECT_EQ(dims_of(r), (std::vector<int64_t>{2, 2, 6}));
  std::vector<double> want;
  for (int a = 0; a < 2; ++a)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 6; ++j) want.push_back(i * 3 + j % 3);
  EXPECT_EQ(f64(r), want);
  // A strided input and a size-1 dim.
  EXPECT_EQ(f64(tessera::repeat(iota({3, 1}).t(), {2, 1})),
            (std::vector<double>{0, 1, 2, 0, 1, 2}));
  expect_error(
      [&] {
        tessera::repeat(iota({2, 3}), {2});
      },
      TSR_INVALID_ARGUMENT, {"can not be smaller than number of dimensions of tensor"});
}

TEST(Repeat, ManyRepeatedDimsTakeTheOneDimPath) {
  // 5 dims all repeated: 10 split dims exceed TSR_MAX_DIMS (8).
  Tensor x = iota({2, 2, 2, 2, 2});
  Tensor r = tessera::repeat(x, {2, 2, 2, 2, 2});
  EXPECT_EQ(dims_of(r), (std::vector<int64_t>{4, 4, 4, 4, 4}));
  std::vector<double> got = f64(r);
  size_t k = 0;
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b)
      for (int c = 0; c < 4; ++c)
        for (int d = 0; d < 4; ++d)
          for (int e = 0; e < 4; ++e, ++k)
            ASSERT_EQ(got[k], 16 * (a % 2) + 8 * (b % 2) + 4 * (c % 2) + 2 * (d % 2) + (e % 2));
}

TEST(Tile, PadsRepeatsOnTheLeft) {
  // torch: ones(2,3).tile((2,)).shape == (2, 6)
  EXPECT_EQ(dims_of(tessera::tile(iota({2, 3}), {2})), (std::vector<int64_t>{2, 6}));
  EXPECT_EQ(f64(tessera::tile(iota({2}), {2, 2})), (std::vector<double>{0, 1, 0, 1, 0, 1, 0, 1}));
}

// ===========================================================================
// flatten, unflatten, movedim, swapaxes, *_as, broadcast_to
// ===========================================================================

TEST(Flatten, RangesAndErrors) {
  Tensor x = iota({2, 3, 4});
  EXPECT_EQ(dims_of(tessera::flatten(x)), (std::vector<int64_t>{24}));
  EXPECT_EQ(dims_of(tessera::flatten(x, 1)), (std::vector<int64_t>{2, 12}));
  EXPECT_EQ(dims_of(tessera::flatten(x, 0, -2)), (std::vector<int64_t>{6, 4}));
  EXPECT_TRUE(tessera::flatten(x, 1).is_same_storage(x));
  EXPECT_EQ(dims_of(tessera::flatten(tessera::scalar_tensor(1.0))), (std::vector<int64_t>{1}));
  // A transposed input cannot be viewed: reshape copies.
  EXPECT_EQ(f64(tessera::flatten(iota({2, 3}).t())), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  expect_error([&] { tessera::flatten(x, 2, 1); }, TSR_INVALID_ARGUMENT,
               {"start_dim", "cannot come after end_dim"});
}

TEST(Unflatten, InfersAndChecks) {
  Tensor x = iota({2, 6});
  EXPECT_EQ(dims_of(tessera::unflatten(x, 1, {2, -1})), (std::vector<int64_t>{2, 2, 3}));
  EXPECT_EQ(dims_of(tessera::unflatten(x, -1, {3, 2})), (std::vector<int64_t>{2, 3, 2}));
  // torch: ones(2,3).t().unflatten(1,(2,1)).stride() == (1, 3, 3)
  EXPECT_EQ(strides_of(tessera::unflatten(tessera::ones({2, 3}).t(), 1, {2, 1})),
            (std::vector<int64_t>{1, 3, 3}));
  expect_error(
      [&] {
        tessera::unflatten(x, 1, {2, 2});
      },
      TSR_INVALID_ARGUMENT, {"Provided sizes [2, 2] don't multiply up to the size of dim 1 (6)"});
  expect_error(
      [&] {
        tessera::unflatten(x, 1, {-1, -1});
      },
      TSR_INVALID_ARGUMENT, {"only one dimension can be inferred"});
}

TEST(Movedim, PermutationsAndErrors) {
  Tensor x = iota({2, 3, 4});
  Tensor m = tessera::movedim(x, 0, -1);
  EXPECT_EQ(dims_of(m), (std::vector<int64_t>{3, 4, 2}));
  EXPECT_EQ(strides_of(m), (std::vector<int64_t>{4, 1, 12}));
  Tensor m2 = tessera::movedim(x, {0, 1}, {2, 0});
  EXPECT_EQ(dims_of(m2), (std::vector<int64_t>{3, 4, 2}));
  EXPECT_EQ(dims_of(tessera::moveaxis(x, {2}, {0})), (std::vector<int64_t>{4, 2, 3}));
  EXPECT_EQ(dims_of(tessera::swapaxes(x, 0, 2)), (std::vector<int64_t>{4, 3, 2}));
  EXPECT_EQ(dims_of(tessera::swapdims(x, -1, 1)), (std::vector<int64_t>{2, 4, 3}));
  expect_error(
      [&] {
        tessera::movedim(x, {0, 1}, {0});
      },
      TSR_INVALID_ARGUMENT, {"should contain the same number of dims as destination"});
  expect_error(
      [&] {
        tessera::movedim(x, {0, 0}, {0, 1});
      },
      TSR_INVALID_ARGUMENT, {"repeated dim in `source`"});
}

TEST(AsOps, ExpandViewReshapeBroadcast) {
  Tensor x = iota({3, 1});
  Tensor e = tessera::expand_as(x, iota({3, 4}));
  EXPECT_EQ(strides_of(e), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(dims_of(tessera::view_as(iota({6}), iota({2, 3}))), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(f64(tessera::reshape_as(iota({2, 3}).t(), iota({6}))),
            (std::vector<double>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(dims_of(tessera::broadcast_to(iota({3}), {2, 3})), (std::vector<int64_t>{2, 3}));
  expect_error(
      [&] {
        tessera::broadcast_to(iota({3}), {2, 4});
      },
      TSR_INVALID_ARGUMENT, {"must match the existing size"});
}

// ===========================================================================
// diagonal, diag, tril, triu
// ===========================================================================

TEST(Diagonal, OffsetsAndDims) {
  Tensor x = iota({3, 4});
  Tensor d = tessera::diagonal(x);
  EXPECT_TRUE(d.is_same_storage(x));
  EXPECT_EQ(f64(d), (std::vector<double>{0, 5, 10}));
  EXPECT_EQ(f64(tessera::diagonal(x, 1)), (std::vector<double>{1, 6, 11}));
  EXPECT_EQ(f64(tessera::diagonal(x, -2)), (std::vector<double>{8}));
  EXPECT_EQ(tessera::diagonal(x, 5).numel(), 0);
  // torch: arange(24).reshape(2,3,4).diagonal(1, 2, 0) -> [[12],[16],[20]]
  Tensor d3 = tessera::diagonal(iota({2, 3, 4}), 1, 2, 0);
  EXPECT_EQ(dims_of(d3), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(f64(d3), (std::vector<double>{12, 16, 20}));
  expect_error([&] { tessera::diagonal(x, 0, 1, -1); }, TSR_INVALID_ARGUMENT,
               {"diagonal dimensions cannot be identical"});
}

TEST(Diag, VectorToMatrixAndBack) {
  // torch: diag(tensor([1,2]), -1) -> [[0,0,0],[1,0,0],[0,2,0]]
  Tensor m = tessera::diag(tessera::tensor({1, 2}), -1);
  EXPECT_EQ(m.dtype(), kInt64);
  EXPECT_EQ(f64(m), (std::vector<double>{0, 0, 0, 1, 0, 0, 0, 2, 0}));
  // torch: diag(arange(9).reshape(3,3), 1) -> [1, 5]; (…, -2) -> [6]
  EXPECT_EQ(f64(tessera::diag(iota({3, 3}), 1)), (std::vector<double>{1, 5}));
  EXPECT_EQ(f64(tessera::diag(iota({3, 3}), -2)), (std::vector<double>{6}));
  expect_error(
      [&] {
        tessera::diag(iota({2, 2, 2}));
      },
      TSR_INVALID_ARGUMENT, {"diag", "matrix or a vector expected"});
}

TEST(Triangle, LowerUpperAndInPlace) {
  Tensor x = iota({3, 4}) + 1.0;
  EXPECT_EQ(f64(tessera::tril(x)), (std::vector<double>{1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0}));
  EXPECT_EQ(f64(tessera::triu(x, 1)), (std::vector<double>{0, 2, 3, 4, 0, 0, 7, 8, 0, 0, 0, 12}));
  EXPECT_EQ(f64(tessera::tril(x, -1)), (std::vector<double>{0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0}));
  // Batched and in place.
  Tensor b = iota({2, 2, 2}) + 1.0;
  tessera::triu_(b);
  EXPECT_EQ(f64(b), (std::vector<double>{1, 2, 0, 4, 5, 6, 0, 8}));
  expect_error([&] { tessera::tril(iota({3})); }, TSR_INVALID_ARGUMENT,
               {"tril", "at least 2 dimensions"});
}

// ===========================================================================
// contiguous and clone with memory formats
// ===========================================================================

TEST(MemoryFormat, ChannelsLastStrides) {
  Tensor x = iota({2, 3, 4, 5});
  Tensor cl = x.contiguous(MemoryFormat::ChannelsLast);
  EXPECT_EQ(strides_of(cl), (std::vector<int64_t>{60, 1, 15, 3}));
  EXPECT_TRUE(cl.is_contiguous(MemoryFormat::ChannelsLast));
  EXPECT_EQ(f64(cl), f64(x));
  Tensor c3 = iota({2, 3, 2, 2, 2}).clone(MemoryFormat::ChannelsLast3d);
  EXPECT_EQ(strides_of(c3), (std::vector<int64_t>{24, 1, 12, 6, 3}));
  expect_error([&] { iota({3}).contiguous(MemoryFormat::ChannelsLast); }, TSR_INVALID_ARGUMENT,
               {"required rank 4 tensor to use channels_last format"});
}

TEST(MemoryFormat, PreserveKeepsDenseLayouts) {
  Tensor x = iota({2, 3}).t();  // dense, transposed
  Tensor c = x.clone(MemoryFormat::Preserve);
  EXPECT_EQ(strides_of(c), (std::vector<int64_t>{1, 3}));  // torch: (1, 3)
  EXPECT_EQ(f64(c), f64(x));
  // torch: a channels-last tensor sliced along H is no longer dense; preserve
  // picks channels_last strides for the copy: (30, 1, 15, 3) for (2,3,2,5).
  Tensor cl = iota({2, 3, 4, 5}).contiguous(MemoryFormat::ChannelsLast);
  Tensor sliced = cl.slice(2, 0, 4, 2);
  EXPECT_EQ(strides_of(sliced.clone()), (std::vector<int64_t>{30, 1, 15, 3}));
  // A strided non-channels-last tensor becomes row-major.
  EXPECT_EQ(strides_of(iota({4, 6}).slice(1, 0, 6, 2).clone()), (std::vector<int64_t>{3, 1}));
}

// PyTorch 2.15 reports stride * step even when the slice keeps 0 or 1
// elements: arange(10)[0:1:5].stride() == (5,), arange(10)[3:3:2].stride()
// == (2,), arange(12).view(3, 4)[:, 1:2:3].stride() == (4, 3).
TEST(Slice, StrideIsStrideTimesStepForShortSlices) {
  EXPECT_EQ(strides_of(iota({10}).slice(0, 0, 1, 5)), (std::vector<int64_t>{5}));
  EXPECT_EQ(strides_of(iota({10}).slice(0, 3, 3, 2)), (std::vector<int64_t>{2}));
  EXPECT_EQ(strides_of(iota({3, 4}).slice(1, 1, 2, 3)), (std::vector<int64_t>{4, 3}));
}

TEST(MemoryFormat, ContiguousRefusesPreserve) {
  expect_error(
      [&] {
        tessera::call_op("contiguous", {tessera::detail::value(iota({2, 3}).t()),
                                        tessera::detail::value(MemoryFormat::Preserve)});
      },
      TSR_INVALID_ARGUMENT, {"preserve memory format is unsupported by the contiguous operator"});
}

}  // namespace
