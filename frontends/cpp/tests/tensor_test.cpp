// The C++ frontend's Tensor: ownership, factories and dtype inference,
// metadata, views, copies, printing, devices, and how errors map to
// tessera::Error.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "tessera/tessera.hpp"

namespace {

using tessera::Dims;
using tessera::Tensor;
using tessera::indexing::Ellipsis;
using tessera::indexing::None;
using tessera::indexing::Slice;

// ---------------------------------------------------------------------------
// Ownership
// ---------------------------------------------------------------------------

TEST(TensorOwnership, DefaultConstructedIsUndefined) {
  const Tensor t;
  EXPECT_FALSE(t.defined());
  EXPECT_EQ(t.get(), nullptr);
}

TEST(TensorOwnership, CopySharesTheTensorObject) {
  Tensor a = tessera::zeros({2});
  Tensor b = a;
  EXPECT_TRUE(b.is_same(a));
  b.add_(1);
  EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{1, 1}));
}

TEST(TensorOwnership, MoveLeavesSourceUndefined) {
  Tensor a = tessera::zeros({2});
  tsr_tensor* handle = a.get();
  Tensor b = std::move(a);
  EXPECT_FALSE(a.defined());  // NOLINT(bugprone-use-after-move): the contract under test
  EXPECT_EQ(b.get(), handle);
  Tensor c;
  c = std::move(b);
  EXPECT_EQ(c.get(), handle);
}

TEST(TensorOwnership, ViewKeepsStorageAliveAfterBaseIsGone) {
  Tensor view;
  {
    const Tensor base = tessera::arange(6, tessera::kFloat32);
    view = base.slice(0, 2, 4);
  }
  EXPECT_EQ(view.to_vector<float>(), (std::vector<float>{2, 3}));
}

TEST(TensorOwnership, ReleaseAndAdoptRoundTrip) {
  Tensor a = tessera::ones({3});
  tsr_tensor* raw = a.release();
  EXPECT_FALSE(a.defined());
  const Tensor b = Tensor::adopt(raw);
  EXPECT_EQ(b.numel(), 3);
  const Tensor c = Tensor::borrow(b.get());
  EXPECT_TRUE(c.is_same(b));
}

// ---------------------------------------------------------------------------
// Factories and dtype inference
// ---------------------------------------------------------------------------

TEST(TensorFactory, ZerosOnesFullHoldTheirValues) {
  EXPECT_EQ(tessera::zeros({2, 2}).to_vector<float>(), std::vector<float>(4, 0.0f));
  EXPECT_EQ(tessera::ones({3}, tessera::kInt32).to_vector<int32_t>(),
            (std::vector<int32_t>{1, 1, 1}));
  const Tensor seven = tessera::full({2, 3}, 7);
  EXPECT_EQ(seven.dtype(), tessera::kInt64);
  EXPECT_EQ(seven.to_vector<int64_t>(), std::vector<int64_t>(6, 7));
  EXPECT_EQ(tessera::full({1}, 2.5).dtype(), tessera::kFloat32);
  EXPECT_EQ(tessera::full({1}, true).dtype(), tessera::kBool);
  EXPECT_EQ(tessera::full({2}, 2.5, tessera::kFloat64).to_vector<double>(),
            (std::vector<double>{2.5, 2.5}));
}

TEST(TensorFactory, EmptyHasRequestedShapeDtypeAndDevice) {
  const Tensor t = tessera::empty({2, 3}, tessera::dtype(tessera::kInt16).device(tessera::kCPU));
  EXPECT_EQ(t.sizes(), Dims({2, 3}));
  EXPECT_EQ(t.dtype(), tessera::kInt16);
  EXPECT_EQ(t.device(), tessera::kCPU);
  EXPECT_EQ(t.numel(), 6);
  EXPECT_EQ(t.dim(), 2);
  EXPECT_EQ(t.element_size(), 2u);
  EXPECT_EQ(t.nbytes(), 12u);
}

TEST(TensorFactory, EmptyStridedKeepsStrides) {
  const Tensor t = tessera::empty_strided({2, 3}, {1, 2});
  EXPECT_EQ(t.strides(), Dims({1, 2}));
  EXPECT_FALSE(t.is_contiguous());
}

TEST(TensorFactory, ScalarTensorIsZeroDimensional) {
  const Tensor s = tessera::scalar_tensor(3.5);
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.numel(), 1);
  EXPECT_EQ(s.sizes(), Dims());
  EXPECT_EQ(s.item<double>(), 3.5);
}

TEST(TensorFactory, TensorLiteralInference) {
  EXPECT_EQ(tessera::tensor({1, 2}).dtype(), tessera::kInt64);
  EXPECT_EQ(tessera::tensor({int8_t{1}}).dtype(), tessera::kInt64);
  EXPECT_EQ(tessera::tensor({1.0, 2.0}).dtype(), tessera::kFloat32);
  EXPECT_EQ(tessera::tensor({true, false}).dtype(), tessera::kBool);
  EXPECT_EQ(tessera::tensor({1.5}, tessera::kFloat64).to_vector<double>(),
            (std::vector<double>{1.5}));
  EXPECT_EQ(tessera::tensor({1, 2}, tessera::kFloat32).to_vector<float>(),
            (std::vector<float>{1, 2}));
}

TEST(TensorFactory, Float64DataAskedAsFloat64KeepsItsPrecision) {
  const double third = 1.0 / 3.0;
  EXPECT_EQ(tessera::tensor({third}, tessera::kFloat64).item<double>(), third);
}

TEST(TensorFactory, TensorFromVectorAndShape) {
  const std::vector<double> values = {1, 2, 3, 4, 5, 6};
  const Tensor t = tessera::tensor(values, {2, 3});
  EXPECT_EQ(t.sizes(), Dims({2, 3}));
  EXPECT_EQ(t.dtype(), tessera::kFloat32);
  EXPECT_EQ(t.to_vector<double>(), values);
}

TEST(TensorFactory, TensorWithWrongValueCountThrows) {
  EXPECT_THROW(tessera::tensor(std::vector<int>{1, 2, 3}, {2, 2}), tessera::Error);
}

TEST(TensorFactory, ArangeMatchesTorchArange) {
  EXPECT_EQ(tessera::arange(5).to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(tessera::arange(2, 11, 3).to_vector<int64_t>(), (std::vector<int64_t>{2, 5, 8}));
  EXPECT_EQ(tessera::arange(5, 0, -2).to_vector<int64_t>(), (std::vector<int64_t>{5, 3, 1}));
  const Tensor halves = tessera::arange(0.0, 2.0, 0.5);
  EXPECT_EQ(halves.dtype(), tessera::kFloat32);
  EXPECT_EQ(halves.to_vector<float>(), (std::vector<float>{0, 0.5f, 1, 1.5f}));
  EXPECT_EQ(tessera::arange(3, tessera::kFloat64).to_vector<double>(),
            (std::vector<double>{0, 1, 2}));
  EXPECT_EQ(tessera::arange(0).numel(), 0);
  EXPECT_THROW(tessera::arange(0, 5, 0), tessera::Error);
  EXPECT_THROW(tessera::arange(5, 0, 1), tessera::Error);
}

TEST(TensorFactory, FromBlobSharesCallerMemoryAndRunsDeleter) {
  std::vector<float> memory = {1, 2, 3, 4, 5, 6};
  bool deleted = false;
  {
    Tensor t =
        tessera::from_blob(memory.data(), {2, 3}, [&](void* p) { deleted = p == memory.data(); });
    EXPECT_EQ(t.data_ptr<float>(), memory.data());
    t.mul_(2);
    EXPECT_EQ(memory[5], 12.0f);
  }
  EXPECT_TRUE(deleted);
}

TEST(TensorFactory, FromBlobWithStrides) {
  std::vector<int32_t> memory = {0, 1, 2, 3, 4, 5};
  const Tensor t = tessera::from_blob(memory.data(), {3, 2}, {1, 3}, tessera::kInt32);
  EXPECT_EQ(t.to_vector<int32_t>(), (std::vector<int32_t>{0, 3, 1, 4, 2, 5}));
}

// ---------------------------------------------------------------------------
// Metadata and views
// ---------------------------------------------------------------------------

TEST(TensorView, ViewSharesStorageAndVersion) {
  Tensor base = tessera::zeros({2, 3});
  Tensor v = base.view({3, 2});
  EXPECT_TRUE(v.is_same_storage(base));
  v.add_(1);
  EXPECT_EQ(base.version(), 1u);
  EXPECT_EQ(base.to_vector<float>(), std::vector<float>(6, 1.0f));
}

TEST(TensorView, ViewOfNonContiguousTensorFailsWhereReshapeCopies) {
  const Tensor transposed = tessera::zeros({2, 3}).t();
  EXPECT_THROW(transposed.view({6}), tessera::Error);
  EXPECT_EQ(transposed.reshape({6}).sizes(), Dims({6}));
}

TEST(TensorView, ViewInfersMinusOne) {
  EXPECT_EQ(tessera::zeros({2, 6}).view({-1, 4}).sizes(), Dims({3, 4}));
}

TEST(TensorView, PermuteTransposeAndNegativeDims) {
  const Tensor t = tessera::empty({2, 3, 4});
  EXPECT_EQ(t.permute({2, 0, 1}).sizes(), Dims({4, 2, 3}));
  EXPECT_EQ(t.permute({2, 0, 1}).strides(), Dims({1, 12, 4}));
  EXPECT_EQ(t.transpose(0, -1).sizes(), Dims({4, 3, 2}));
  EXPECT_EQ(t.size(-1), 4);
  EXPECT_EQ(t.stride(0), 12);
  EXPECT_THROW(t.size(3), tessera::Error);
}

TEST(TensorView, SliceSelectAndIndex) {
  const Tensor x = tessera::arange(20).reshape({4, 5});
  EXPECT_EQ(x.slice(1, 1, 4).to_vector<int64_t>(),
            (std::vector<int64_t>{1, 2, 3, 6, 7, 8, 11, 12, 13, 16, 17, 18}));
  EXPECT_EQ(x.slice(0, -2).to_vector<int64_t>(),
            (std::vector<int64_t>{10, 11, 12, 13, 14, 15, 16, 17, 18, 19}));
  EXPECT_EQ(x.select(1, -1).to_vector<int64_t>(), (std::vector<int64_t>{4, 9, 14, 19}));
  EXPECT_EQ(x[2].to_vector<int64_t>(), (std::vector<int64_t>{10, 11, 12, 13, 14}));
  EXPECT_EQ(x.index({1, 3}).item<int64_t>(), 8);
  EXPECT_EQ(x.index({Ellipsis, 0}).to_vector<int64_t>(), (std::vector<int64_t>{0, 5, 10, 15}));
  EXPECT_EQ(x.index({Slice(1, None, 2), Slice(None, 2)}).to_vector<int64_t>(),
            (std::vector<int64_t>{5, 6, 15, 16}));
  EXPECT_EQ(x.narrow(1, 3, 2).sizes(), Dims({4, 2}));
  EXPECT_EQ(x.slice(1, 1, 3).storage_offset(), 1);
}

TEST(TensorView, ExpandSqueezeUnsqueeze) {
  const Tensor col = tessera::tensor({1.0, 2.0}, {2, 1});
  const Tensor expanded = col.expand({2, 3});
  EXPECT_EQ(expanded.strides(), Dims({1, 0}));
  EXPECT_EQ(expanded.to_vector<float>(), (std::vector<float>{1, 1, 1, 2, 2, 2}));
  EXPECT_EQ(col.expand({-1, 4}).sizes(), Dims({2, 4}));
  EXPECT_EQ(col.expand_as(tessera::empty({5, 2, 3})).sizes(), Dims({5, 2, 3}));
  EXPECT_EQ(col.squeeze().sizes(), Dims({2}));
  EXPECT_EQ(col.squeeze(1).sizes(), Dims({2}));
  EXPECT_EQ(col.squeeze(0).sizes(), Dims({2, 1}));
  EXPECT_EQ(col.unsqueeze(0).sizes(), Dims({1, 2, 1}));
  EXPECT_EQ(col.unsqueeze(-1).sizes(), Dims({2, 1, 1}));
}

TEST(TensorView, AsStridedAndDetach) {
  const Tensor base = tessera::arange(6, tessera::kFloat32);
  const Tensor windows = base.as_strided({2, 3}, {2, 1}, 1);
  EXPECT_EQ(windows.to_vector<float>(), (std::vector<float>{1, 2, 3, 3, 4, 5}));
  EXPECT_EQ(windows.storage_offset(), 1);
  EXPECT_THROW(base.as_strided({2, 3}, {1}), tessera::Error);
  const Tensor d = base.detach();
  EXPECT_TRUE(d.is_same_storage(base));
  EXPECT_FALSE(d.is_same(base));
}

TEST(TensorView, ContiguousReturnsSelfWhenAlreadyContiguous) {
  const Tensor a = tessera::zeros({2, 3});
  EXPECT_TRUE(a.contiguous().is_same(a));
  const Tensor t = a.t();
  const Tensor c = t.contiguous();
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_FALSE(c.is_same_storage(a));
  EXPECT_EQ(c.strides(), Dims({2, 1}));
}

TEST(TensorView, TOfOneDimensionalTensorIsItself) {
  const Tensor v = tessera::arange(3);
  EXPECT_EQ(v.t().sizes(), Dims({3}));
  EXPECT_THROW(tessera::empty({2, 2, 2}).t(), tessera::Error);
}

TEST(TensorView, ChannelsLastContiguity) {
  const Tensor nhwc = tessera::empty({2, 3, 4, 5}).permute({0, 2, 3, 1});  // (2, 4, 5, 3)
  const Tensor nchw_view = nhwc.permute({0, 3, 1, 2});                     // back to NCHW sizes
  EXPECT_TRUE(nchw_view.is_contiguous(tessera::MemoryFormat::Contiguous));
  const Tensor cl = tessera::empty_strided({2, 3, 4, 5}, {60, 1, 15, 3});
  EXPECT_TRUE(cl.is_contiguous(tessera::MemoryFormat::ChannelsLast));
  EXPECT_FALSE(cl.is_contiguous(tessera::MemoryFormat::Contiguous));
}

// ---------------------------------------------------------------------------
// Copies and conversion
// ---------------------------------------------------------------------------

TEST(TensorCopy, CopyBroadcastsConvertsAndBumpsVersion) {
  Tensor dst = tessera::zeros({2, 3}, tessera::kFloat64);
  const uint64_t before = dst.version();
  dst.copy_(tessera::tensor({1, 2, 3}));
  EXPECT_EQ(dst.to_vector<double>(), (std::vector<double>{1, 2, 3, 1, 2, 3}));
  EXPECT_GT(dst.version(), before);
}

TEST(TensorCopy, FillAndZero) {
  Tensor t = tessera::empty({3}, tessera::kInt32);
  t.fill_(5);
  EXPECT_EQ(t.to_vector<int32_t>(), (std::vector<int32_t>{5, 5, 5}));
  t.zero_();
  EXPECT_EQ(t.to_vector<int32_t>(), (std::vector<int32_t>{0, 0, 0}));
}

TEST(TensorCopy, CloneOwnsItsStorage) {
  Tensor a = tessera::ones({2});
  const Tensor b = a.clone();
  a.fill_(3);
  EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{1, 1}));
  EXPECT_FALSE(b.is_same_storage(a));
}

TEST(TensorCopy, ToSameDeviceReturnsSelf) {
  const Tensor a = tessera::ones({2});
  EXPECT_TRUE(a.to(tessera::kCPU).is_same(a));
  EXPECT_TRUE(a.to(tessera::kFloat32).is_same(a));
}

TEST(TensorCopy, CopyToAndFromHost) {
  Tensor t = tessera::empty({2, 2}, tessera::kInt64);
  const int64_t in[4] = {4, 3, 2, 1};
  t.copy_from_host(in, sizeof in);
  int64_t out[4] = {};
  t.t().copy_to_host(out, sizeof out);
  EXPECT_EQ(out[0], 4);
  EXPECT_EQ(out[1], 2);
  EXPECT_EQ(out[2], 3);
  EXPECT_EQ(out[3], 1);
}

TEST(TensorCopy, ItemOfManyElementsThrows) {
  EXPECT_THROW(tessera::ones({2}).item<float>(), tessera::Error);
}

TEST(TensorCopy, DataPtrOfWrongTypeThrows) {
  EXPECT_THROW(tessera::ones({2}).data_ptr<double>(), tessera::Error);
  EXPECT_NE(tessera::ones({2}).data_ptr<float>(), nullptr);
}

// ---------------------------------------------------------------------------
// Printing
// ---------------------------------------------------------------------------

TEST(TensorPrint, IntegralFloatsPrintLikePyTorch) {
  EXPECT_EQ(tessera::arange(4, tessera::kFloat32).reshape({2, 2}).str(),
            "tensor([[0., 1.],\n        [2., 3.]])");
}

TEST(TensorPrint, FractionsIntegersBoolsScalarsAndDtypes) {
  EXPECT_EQ(tessera::tensor({0.5, 1.25}).str(), "tensor([0.5000, 1.2500])");
  EXPECT_EQ(tessera::tensor({1, 20, 3}).str(), "tensor([ 1, 20,  3])");
  EXPECT_EQ(tessera::tensor({true, false}).str(), "tensor([ True, False])");
  EXPECT_EQ(tessera::scalar_tensor(2.0).str(), "tensor(2.)");
  EXPECT_EQ(tessera::tensor({1, 2}, tessera::kInt32).str(), "tensor([1, 2], dtype=int32)");
  EXPECT_EQ(tessera::empty({0}).str(), "tensor([])");
  EXPECT_EQ(Tensor().str(), "tensor(undefined)");
}

TEST(TensorPrint, ThreeDimensionsSeparateBlocksWithBlankLines) {
  EXPECT_EQ(tessera::arange(8).reshape({2, 2, 2}).str(),
            "tensor([[[0, 1],\n         [2, 3]],\n\n        [[4, 5],\n         [6, 7]]])");
}

TEST(TensorPrint, LargeTensorsAreSummarized) {
  const std::string text = tessera::arange(2000).str();
  EXPECT_EQ(text, "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])");
}

// ---------------------------------------------------------------------------
// Devices and runtime
// ---------------------------------------------------------------------------

TEST(Device, ParseAndFormat) {
  EXPECT_EQ(tessera::Device("cpu:0"), tessera::kCPU);
  EXPECT_EQ(tessera::Device("cpu"), tessera::kCPU);
  EXPECT_EQ(tessera::Device("cpu:0").str(), "cpu:0");
  EXPECT_EQ(tessera::Device("meta").str(), "meta:0");
  EXPECT_TRUE(tessera::kCPU.is_cpu());
}

TEST(Device, UnknownDeviceIsNotFound) {
  try {
    tessera::Device device("nosuchdevice:0");
    FAIL() << "parsed " << device;
  } catch (const tessera::Error& error) {
    EXPECT_EQ(error.code(), TSR_NOT_FOUND);
    EXPECT_STREQ(error.code_name(), "NOT_FOUND");
  }
  EXPECT_FALSE(tessera::has_device("nosuchdevice:0"));
  EXPECT_TRUE(tessera::has_device("cpu:0"));
}

TEST(Device, ListingHasCpuAndEndsWithMeta) {
  const auto devices = tessera::devices();
  ASSERT_GE(devices.size(), 2u);
  EXPECT_EQ(devices.front(), tessera::kCPU) << "the CPU plugin was not loaded";
  EXPECT_TRUE(devices.back().is_meta());
  const auto props = tessera::properties(tessera::kCPU);
  EXPECT_STREQ(props.type_name, "cpu");
  EXPECT_TRUE(props.dtypes & TSR_DTYPE_BIT(TSR_FLOAT32));
}

TEST(Device, MetaTensorsHaveShapesWithoutData) {
  const Tensor m = tessera::empty({2, 3}, tessera::kMeta);
  EXPECT_EQ(m.device(), tessera::kMeta);
  EXPECT_EQ((m + m).sizes(), Dims({2, 3}));
  EXPECT_EQ(m.str(), "tensor(..., size=(2, 3), device='meta:0')");
}

TEST(Runtime, DefaultRuntimeIsStable) {
  EXPECT_NE(tessera::default_runtime(), nullptr);
  EXPECT_EQ(tessera::default_runtime(), tessera::default_runtime());
}

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

TEST(ErrorMapping, StatusBecomesErrorWithCodeAndMessage) {
  try {
    tessera::check(tsr_status_create(TSR_OUT_OF_RANGE, "dim 5 out of range"));
    FAIL() << "check did not throw";
  } catch (const tessera::Error& error) {
    EXPECT_EQ(error.code(), TSR_OUT_OF_RANGE);
    EXPECT_STREQ(error.what(), "dim 5 out of range");
  }
  EXPECT_NO_THROW(tessera::check(nullptr));
}

TEST(ErrorMapping, UndefinedTensorIsRejectedNotCrashed) {
  const Tensor undefined;
  EXPECT_THROW(undefined.sizes(), tessera::Error);
  EXPECT_THROW(undefined + undefined, tessera::Error);
}

TEST(ErrorMapping, TooManyDimsAreRejectedBeforeTheCall) {
  EXPECT_THROW(tessera::empty({1, 1, 1, 1, 1, 1, 1, 1, 1}), tessera::Error);
}

}  // namespace
