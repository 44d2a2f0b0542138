// The internal op API (core/dispatch/op_api.h): each C++ argument becomes
// the frame value the op's schema asks for at its position, missing trailing
// arguments take their defaults, and a value the schema cannot take is an
// INTERNAL error naming the op and the argument. Values are checked against
// float64 arithmetic done here, not against another path of the core.
//
// This test links the core's layer libraries directly (core/CMakeLists.txt),
// so it reaches the internal API that libtessera keeps hidden.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dispatch/op_api.h"
#include "registry/registry.h"
#include "runtime/runtime.h"
#include "tessera/tessera.h"
#include "util/error.h"

namespace tsr {
namespace {

class OpApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tsr_runtime_options options{};
    options.struct_size = sizeof options;
    options.plugin_path = TESSERA_TEST_PLUGIN_DIR;
    ASSERT_EQ(tsr_runtime_create(&options, &handle_), nullptr);
    rt_ = runtime_from_handle(handle_, "runtime");
    ASSERT_EQ(tsr_device_parse(handle_, "cpu:0", &cpu_), nullptr) << "the CPU plugin must load";
  }
  void TearDown() override {
    held_.clear();
    tsr_runtime_destroy(handle_);
  }

  // A float32 CPU tensor of `sizes` holding `values`.
  TensorImpl* tensor(const std::vector<float>& values, std::vector<int64_t> sizes) {
    tsr_tensor* t = nullptr;
    tsr_status* st = tsr_tensor_from_host(handle_, values.data(), values.size() * sizeof(float),
                                          static_cast<int32_t>(sizes.size()), sizes.data(),
                                          TSR_FLOAT32, cpu_, &t);
    EXPECT_EQ(st, nullptr) << (st ? tsr_status_message(st) : "");
    held_.emplace_back(from_handle(t, "t"));
    return held_.back().get();
  }
  // The values of `t` as float64, in row-major order (any float dtype).
  static std::vector<double> values(const TensorRef& t) {
    TensorRef f = op::call(OpId::_to_copy, t, TSR_FLOAT64);
    TensorRef c = op::call(OpId::contiguous, f);
    std::vector<double> out(static_cast<size_t>(c->numel));
    tsr_status* st =
        tsr_tensor_copy_to_host(to_handle(c.get()), out.data(), out.size() * sizeof(double));
    EXPECT_EQ(st, nullptr) << (st ? tsr_status_message(st) : "");
    return out;
  }
  static std::vector<int64_t> sizes(const TensorRef& t) {
    return std::vector<int64_t>(t->sizes, t->sizes + t->ndim);
  }

  tsr_runtime* handle_ = nullptr;
  Runtime* rt_ = nullptr;
  tsr_device cpu_{};
  std::vector<TensorRef> held_;
};

// The INTERNAL error `fn` throws, or a failure.
template <class F>
std::string internal_error(F&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), TSR_INTERNAL) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST_F(OpApiTest, TensorsAndDefaultsTakeTheirSchemaPositions) {
  TensorImpl* a = tensor({1, 2, 3, 4}, {2, 2});
  TensorImpl* b = tensor({10, 20, 30, 40}, {2, 2});
  // add.Tensor(self, other, *, Scalar alpha=1): alpha defaults to 1, and a
  // double becomes a float Scalar, an int an int Scalar.
  EXPECT_EQ(values(op::call(OpId::add_Tensor, a, b)), (std::vector<double>{11, 22, 33, 44}));
  EXPECT_EQ(values(op::call(OpId::add_Tensor, a, b, 0.5)), (std::vector<double>{6, 12, 18, 24}));
  EXPECT_EQ(values(op::call(OpId::add_Tensor, a, b, 2)), (std::vector<double>{21, 42, 63, 84}));
  // add.Scalar(self, Scalar other, Scalar alpha=1).
  EXPECT_EQ(values(op::call(OpId::add_Scalar, a, 3)), (std::vector<double>{4, 5, 6, 7}));
  // A TensorRef is a Tensor as a TensorImpl* is.
  TensorRef ra = TensorRef::borrow(a);
  EXPECT_EQ(values(op::call(OpId::mul_Tensor, ra, ra)), (std::vector<double>{1, 4, 9, 16}));
}

TEST_F(OpApiTest, IntListsOptionalsAndBools) {
  TensorImpl* a = tensor({1, 2, 3, 4, 5, 6}, {2, 3});
  // sum.dim_IntList(self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None):
  // an int list from op::ints, a vector, and one int for int[1].
  TensorRef by_ints = op::call(OpId::sum_dim_IntList, a, op::ints({1}), true);
  EXPECT_EQ(sizes(by_ints), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(values(by_ints), (std::vector<double>{6, 15}));
  TensorRef by_vector = op::call(OpId::sum_dim_IntList, a, std::vector<int64_t>{0});
  EXPECT_EQ(sizes(by_vector), (std::vector<int64_t>{3}));
  EXPECT_EQ(values(by_vector), (std::vector<double>{5, 7, 9}));
  TensorRef by_int = op::call(OpId::sum_dim_IntList, a, int64_t{0}, false);
  EXPECT_EQ(values(by_int), (std::vector<double>{5, 7, 9}));
  // None for the optional dim sums everything; so does an empty std::optional.
  EXPECT_EQ(values(op::call(OpId::sum_dim_IntList, a, op::none)), (std::vector<double>{21}));
  EXPECT_EQ(values(op::call(OpId::sum_dim_IntList, a, std::optional<int64_t>())),
            (std::vector<double>{21}));
  // The dtype argument (kwarg-only, a frame position like any other).
  TensorRef as_f64 = op::call(OpId::sum_dim_IntList, a, op::ints({0, 1}), false, TSR_FLOAT64);
  EXPECT_EQ(as_f64->dtype, TSR_FLOAT64);
  EXPECT_EQ(values(as_f64), (std::vector<double>{21}));
}

TEST_F(OpApiTest, FactoriesTakeAnExplicitRuntime) {
  // full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype, Layout?, Device? device, ...).
  TensorRef f = op::call(rt_, OpId::full, op::ints({2, 3}), 2.5, TSR_FLOAT64, op::none, cpu_);
  EXPECT_EQ(f->dtype, TSR_FLOAT64);
  EXPECT_EQ(sizes(f), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values(f), std::vector<double>(6, 2.5));
}

TEST_F(OpApiTest, TensorListsAndSeveralResults) {
  TensorImpl* a = tensor({1, 2}, {2});
  TensorImpl* b = tensor({3, 4, 5}, {3});
  std::vector<TensorImpl*> both = {a, b};
  EXPECT_EQ(values(op::call(rt_, OpId::cat, both)), (std::vector<double>{1, 2, 3, 4, 5}));
  // max.dim returns (values, indices).
  TensorImpl* m = tensor({1, 9, 3, 7, 2, 8}, {2, 3});
  OpResults r = op::call_all(OpId::max_dim, m, int64_t{1});
  ASSERT_EQ(r.n, 2);
  EXPECT_EQ(values(r.r[0]), (std::vector<double>{9, 8}));
  EXPECT_EQ(r.r[1]->dtype, TSR_INT64);
  EXPECT_EQ(values(r.r[1]), (std::vector<double>{1, 2}));
}

TEST_F(OpApiTest, ValuesForwardedFromAnotherFrame) {
  TensorImpl* a = tensor({1, 2, 3}, {3});
  tsr_value args[2] = {};
  args[0].tag = TSR_VALUE_TENSOR;
  args[0].u.tensor = reinterpret_cast<tsr_tensor*>(a);
  args[1].tag = TSR_VALUE_SCALAR;
  args[1].u.scalar = scalar_float(0.25);
  OpResults r = op::call_values(rt_, OpId::mul_Scalar, args);
  ASSERT_EQ(r.n, 1);
  EXPECT_EQ(values(r.r[0]), (std::vector<double>{0.25, 0.5, 0.75}));
}

TEST_F(OpApiTest, AMismatchIsAnInternalErrorNamingOpAndArgument) {
  TensorImpl* a = tensor({1, 2, 3, 4}, {2, 2});
  // A float where the schema wants an int list.
  std::string why = internal_error([&] { op::call(OpId::sum_dim_IntList, a, 1.5); });
  EXPECT_NE(why.find("sum.dim_IntList"), std::string::npos) << why;
  EXPECT_NE(why.find("'dim'"), std::string::npos) << why;
  // None for an argument that is not optional.
  why = internal_error([&] { op::call(OpId::add_Tensor, a, op::none); });
  EXPECT_NE(why.find("add.Tensor"), std::string::npos) << why;
  EXPECT_NE(why.find("'other'"), std::string::npos) << why;
  // A string where a Tensor goes.
  why = internal_error([&] { op::call(OpId::mul_Tensor, a, "x"); });
  EXPECT_NE(why.find("'other'"), std::string::npos) << why;
  // More values than the schema has arguments.
  why = internal_error([&] { op::call(OpId::mm, a, a, a); });
  EXPECT_NE(why.find("mm"), std::string::npos) << why;
  // More ints than op::ints holds.
  why = internal_error([&] { op::ints({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}); });
  EXPECT_NE(why.find("op::ints"), std::string::npos) << why;
}

TEST_F(OpApiTest, ErrorsOfTheCalledOpPropagate) {
  TensorImpl* a = tensor({1, 2, 3, 4, 5, 6}, {2, 3});
  try {
    op::call(OpId::mm, a, a);  // (2x3) @ (2x3)
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), TSR_INVALID_ARGUMENT) << e.what();
  }
}

// Every op of the registry has its function: the ops layer installed them
// when this executable started (Note [Op implementations are installed]).
TEST(OpFunctions, EveryOpHasItsFunction) {
  const Registry& reg = Registry::get();
  ASSERT_EQ(reg.size(), static_cast<size_t>(kOpCount));
  for (const OpDef& def : reg.ops()) EXPECT_NE(def.fn, nullptr) << def.name;
  EXPECT_NE(custom_op_function(), nullptr);
}

}  // namespace
}  // namespace tsr
