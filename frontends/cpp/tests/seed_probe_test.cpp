// The tensor probe (views, strides, copies, versions) through the C++ frontend: every fact of the
// seed's table and observations is its own assertion, and values are checked
// against expectations computed here (base holds 0..11 row-major).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/tessera.hpp"

namespace {

using tessera::Dims;
using tessera::Tensor;
using tessera::indexing::None;
using tessera::indexing::Slice;

constexpr const char* kOverlapMessage =
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location";

// base[r][c] = 4r + c, as torch.arange(12).reshape(3, 4).
float base_value(int64_t r, int64_t c) { return static_cast<float>(4 * r + c); }

class SeedProbe : public ::testing::Test {
 protected:
  // The seed's program, line by line.
  Tensor base = tessera::arange(12, tessera::kFloat32).reshape({3, 4});
  Tensor columns = base.index({Slice(), Slice(None, None, 2)});
  Tensor transposed = base.t();
  Tensor flattened = transposed.reshape(-1);
  Tensor cloned = columns.clone();
  Tensor detached = base.detach();
};

// --- base | (3, 4) | (4, 1) | yes | yes -------------------------------------
TEST_F(SeedProbe, BaseShape) { EXPECT_EQ(base.sizes(), Dims({3, 4})); }
TEST_F(SeedProbe, BaseStride) { EXPECT_EQ(base.strides(), Dims({4, 1})); }
TEST_F(SeedProbe, BaseIsContiguous) { EXPECT_TRUE(base.is_contiguous()); }
TEST_F(SeedProbe, BaseSharesBaseStorage) { EXPECT_TRUE(base.is_same_storage(base)); }
TEST_F(SeedProbe, BaseHoldsZeroToEleven) {
  const auto values = base.to_vector<float>();
  ASSERT_EQ(values.size(), 12u);
  for (int64_t i = 0; i < 12; ++i) EXPECT_EQ(values[i], static_cast<float>(i)) << "at " << i;
}
TEST_F(SeedProbe, BaseIsFloat32) { EXPECT_EQ(base.dtype(), tessera::kFloat32); }

// --- columns = base[:, ::2] | (3, 2) | (4, 2) | no | yes -------------------
TEST_F(SeedProbe, ColumnsShape) { EXPECT_EQ(columns.sizes(), Dims({3, 2})); }
TEST_F(SeedProbe, ColumnsStride) { EXPECT_EQ(columns.strides(), Dims({4, 2})); }
TEST_F(SeedProbe, ColumnsIsNotContiguous) { EXPECT_FALSE(columns.is_contiguous()); }
TEST_F(SeedProbe, ColumnsSharesBaseStorage) { EXPECT_TRUE(columns.is_same_storage(base)); }
TEST_F(SeedProbe, ColumnsValues) {
  const auto values = columns.to_vector<float>();
  ASSERT_EQ(values.size(), 6u);
  for (int64_t r = 0; r < 3; ++r) {
    for (int64_t c = 0; c < 2; ++c) EXPECT_EQ(values[2 * r + c], base_value(r, 2 * c));
  }
}

// --- transposed = base.t() | (4, 3) | (1, 4) | no | yes ---------------------
TEST_F(SeedProbe, TransposedShape) { EXPECT_EQ(transposed.sizes(), Dims({4, 3})); }
TEST_F(SeedProbe, TransposedStride) { EXPECT_EQ(transposed.strides(), Dims({1, 4})); }
TEST_F(SeedProbe, TransposedIsNotContiguous) { EXPECT_FALSE(transposed.is_contiguous()); }
TEST_F(SeedProbe, TransposedSharesBaseStorage) { EXPECT_TRUE(transposed.is_same_storage(base)); }
TEST_F(SeedProbe, TransposedValues) {
  const auto values = transposed.to_vector<float>();
  ASSERT_EQ(values.size(), 12u);
  for (int64_t r = 0; r < 4; ++r) {
    for (int64_t c = 0; c < 3; ++c) EXPECT_EQ(values[3 * r + c], base_value(c, r));
  }
}

// --- flattened = transposed.reshape(-1) | (12,) | (1,) | yes | no -----------
TEST_F(SeedProbe, FlattenedShape) { EXPECT_EQ(flattened.sizes(), Dims({12})); }
TEST_F(SeedProbe, FlattenedStride) { EXPECT_EQ(flattened.strides(), Dims({1})); }
TEST_F(SeedProbe, FlattenedIsContiguous) { EXPECT_TRUE(flattened.is_contiguous()); }
TEST_F(SeedProbe, FlattenedDoesNotShareBaseStorageBecauseReshapeCopied) {
  EXPECT_FALSE(flattened.is_same_storage(base));
}
TEST_F(SeedProbe, FlattenedValuesAreTheTransposeInRowMajorOrder) {
  const auto values = flattened.to_vector<float>();
  ASSERT_EQ(values.size(), 12u);
  for (int64_t i = 0; i < 12; ++i) EXPECT_EQ(values[i], base_value(i % 3, i / 3)) << "at " << i;
}

// --- cloned = columns.clone() | (3, 2) | (2, 1) | yes | no ------------------
TEST_F(SeedProbe, ClonedShape) { EXPECT_EQ(cloned.sizes(), Dims({3, 2})); }
TEST_F(SeedProbe, ClonedStride) { EXPECT_EQ(cloned.strides(), Dims({2, 1})); }
TEST_F(SeedProbe, ClonedIsContiguous) { EXPECT_TRUE(cloned.is_contiguous()); }
TEST_F(SeedProbe, ClonedDoesNotShareBaseStorage) { EXPECT_FALSE(cloned.is_same_storage(base)); }
TEST_F(SeedProbe, ClonedValuesEqualColumns) {
  EXPECT_EQ(cloned.to_vector<float>(), columns.to_vector<float>());
}

// --- detached = base.detach() | (3, 4) | (4, 1) | yes | yes -----------------
TEST_F(SeedProbe, DetachedShape) { EXPECT_EQ(detached.sizes(), Dims({3, 4})); }
TEST_F(SeedProbe, DetachedStride) { EXPECT_EQ(detached.strides(), Dims({4, 1})); }
TEST_F(SeedProbe, DetachedIsContiguous) { EXPECT_TRUE(detached.is_contiguous()); }
TEST_F(SeedProbe, DetachedSharesBaseStorage) { EXPECT_TRUE(detached.is_same_storage(base)); }

// --- observations ------------------------------------------------------------
TEST(SeedObservation, ExpandedTensorHasStrideZero) {
  const Tensor expanded = tessera::tensor({1.0}).expand({4});
  EXPECT_EQ(expanded.sizes(), Dims({4}));
  EXPECT_EQ(expanded.strides(), Dims({0}));
}

TEST(SeedObservation, ExpandedTensorRejectsInPlaceWrite) {
  Tensor expanded = tessera::tensor({1.0}).expand({4});
  try {
    expanded.add_(1);
    FAIL() << "add_ on an expanded tensor was accepted";
  } catch (const tessera::Error& error) {
    EXPECT_NE(std::string(error.what()).find(kOverlapMessage), std::string::npos)
        << "message was: " << error.what();
    EXPECT_NE(error.code(), TSR_OK);
  }
  // The rejected write left the data alone.
  EXPECT_EQ(expanded.to_vector<float>(), std::vector<float>(4, 1.0f));
}

TEST_F(SeedProbe, VersionCounterStartsAtZero) {
  EXPECT_EQ(base.version(), 0u);
  EXPECT_EQ(detached.version(), 0u);
}

TEST_F(SeedProbe, MutatingDetachedChangesBase) {
  detached[0][0].fill_(99);
  EXPECT_EQ(base[0][0].item<float>(), 99.0f);
  EXPECT_EQ(base.index({0, 0}).item<float>(), 99.0f);
}

TEST_F(SeedProbe, MutatingDetachedBumpsSharedVersionFromZeroToOne) {
  ASSERT_EQ(base.version(), 0u);
  detached[0][0].fill_(99);
  EXPECT_EQ(base.version(), 1u);
  EXPECT_EQ(detached.version(), 1u);
}

TEST_F(SeedProbe, MutatingDetachedLeavesOtherElementsAndCopiesAlone) {
  detached[0][0].fill_(99);
  const auto values = base.to_vector<float>();
  for (int64_t i = 1; i < 12; ++i) EXPECT_EQ(values[i], static_cast<float>(i)) << "at " << i;
  EXPECT_EQ(cloned[0][0].item<float>(), 0.0f);
  EXPECT_EQ(flattened[0].item<float>(), 0.0f);
}

TEST(SeedObservation, IntegerDataGivesInt64) {
  EXPECT_EQ(tessera::tensor({1, 2, 3}).dtype(), tessera::kInt64);
  EXPECT_EQ(tessera::arange(12).dtype(), tessera::kInt64);
}

TEST(SeedObservation, FloatDataGivesFloat32) {
  EXPECT_EQ(tessera::tensor({1.0, 2.0}).dtype(), tessera::kFloat32);
  EXPECT_EQ(tessera::tensor({1.5f}).dtype(), tessera::kFloat32);
}

TEST(SeedObservation, DefaultDtypeIsFloat32) {
  EXPECT_EQ(tessera::empty({2}).dtype(), tessera::kFloat32);
  EXPECT_EQ(tessera::zeros({2, 2}).dtype(), tessera::kFloat32);
}

TEST(SeedObservation, EverySecondRowAndColumnOfA4x5TensorHasStrides10And2) {
  const Tensor x = tessera::arange(20).reshape({4, 5});
  const Tensor strided = x.index({Slice(None, None, 2), Slice(None, None, 2)});
  EXPECT_EQ(strided.sizes(), Dims({2, 3}));
  EXPECT_EQ(strided.strides(), Dims({10, 2}));
  EXPECT_EQ(strided.to_vector<int64_t>(), (std::vector<int64_t>{0, 2, 4, 10, 12, 14}));
}

TEST(SeedObservation, A2x3x4TensorHasStrides12_4_1) {
  EXPECT_EQ(tessera::empty({2, 3, 4}).strides(), Dims({12, 4, 1}));
}

TEST(SeedObservation, BroadcastingRowAndColumnGives3x3) {
  const Tensor row = tessera::tensor({1.0, 2.0, 3.0});                // (3,)
  const Tensor column = tessera::tensor({10.0, 20.0, 30.0}, {3, 1});  // (3, 1)
  const Tensor sum = row + column;
  EXPECT_EQ(sum.sizes(), Dims({3, 3}));
  const auto values = sum.to_vector<float>();
  ASSERT_EQ(values.size(), 9u);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      EXPECT_EQ(values[3 * i + j], static_cast<float>(10 * (i + 1) + (j + 1)));
    }
  }
}

}  // namespace
