// pointwise_kernels_test.cpp - the pointwise family's kernels (_unary,
// _binary, where.self) called directly: their code/dtype tables, strided,
// flipped, broadcast and aliased operands, integer division by zero, and
// malformed calls (which must fail with a status, never crash).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "../plugin_harness.hpp"
#include "tessera/opcodes.h"

namespace cpu_test {
namespace {

constexpr const char* kUnary = "_unary";
constexpr const char* kBinary = "_binary";

tsr_value int_value(int64_t i) {
  tsr_value v{};
  v.tag = TSR_VALUE_INT;
  v.u.i = i;
  return v;
}

std::vector<tsr_value> unary_args(const host_tensor& self, int64_t code, double p0 = 0) {
  return {tensor_value(self), int_value(code), scalar_value(float_scalar(p0)),
          scalar_value(int_scalar(0)), scalar_value(int_scalar(0))};
}

// Every entry for `schema` (a family is split by dtype groups).
std::vector<const tsr_kernel_entry*> entries(const char* name) {
  std::vector<const tsr_kernel_entry*> out;
  const tsr_plugin_api& api = test_plugin::get().api();
  const std::string prefix = std::string(name) + "(";
  for (size_t i = 0; i < api.kernel_count; ++i)
    if (std::string(api.kernels[i].schema).rfind(prefix, 0) == 0) out.push_back(&api.kernels[i]);
  return out;
}

bool claimed(const char* name, int code, tsr_dtype dtype) {
  for (const tsr_kernel_entry* e : entries(name)) {
    const bool has_code = (e->op_codes[code / 64] >> (code % 64)) & 1u;
    const bool has_dtype = e->dtype_masks[0] == 0 || ((e->dtype_masks[0] >> dtype) & 1u);
    if (has_code && has_dtype) return true;
  }
  return false;
}

TEST(PointwiseKernelTable, FloatingDtypesHaveEveryCodeButTheBitwiseOnes) {
  for (tsr_dtype d : {TSR_FLOAT16, TSR_BFLOAT16, TSR_FLOAT32, TSR_FLOAT64}) {
    for (int c = 0; c < TSR_UNARY_CODE_COUNT; ++c)
      EXPECT_EQ(claimed(kUnary, c, d), c != TSR_UNARY_BITWISE_NOT) << "unary " << c;
    for (int c = 0; c < TSR_BINARY_CODE_COUNT; ++c) {
      const bool bitwise = (c >= TSR_BINARY_BITWISE_AND && c <= TSR_BINARY_RSHIFT);
      EXPECT_EQ(claimed(kBinary, c, d), !bitwise) << "binary " << c;
    }
  }
  // Integers: the codes the core sends them (no transcendental functions).
  EXPECT_TRUE(claimed(kUnary, TSR_UNARY_NEG, TSR_INT32));
  EXPECT_TRUE(claimed(kUnary, TSR_UNARY_BITWISE_NOT, TSR_BOOL));
  EXPECT_FALSE(claimed(kUnary, TSR_UNARY_EXP, TSR_INT64));
  EXPECT_FALSE(claimed(kUnary, TSR_UNARY_NEG, TSR_BOOL));
  EXPECT_TRUE(claimed(kBinary, TSR_BINARY_LSHIFT, TSR_UINT8));
  EXPECT_FALSE(claimed(kBinary, TSR_BINARY_LSHIFT, TSR_BOOL));
  EXPECT_TRUE(claimed(kBinary, TSR_BINARY_EQ, TSR_BOOL));
}

TEST(PointwiseKernels, UnaryOverFlippedBroadcastAndAliasedOperands) {
  // A flipped (negative-stride) input and a transposed output.
  host_tensor in(TSR_FLOAT32, {3, 4}, {-4, 1});
  host_tensor out = host_tensor::permuted(TSR_FLOAT32, {3, 4}, {1, 0});
  for_each_index(in.sizes(), [&](const std::vector<int64_t>& i) {
    in.set(i, ref_value{static_cast<long double>(i[0] * 4 + i[1]) / 7, 0});
  });
  std::vector<tsr_tensor_desc> outs = {out.desc()};
  auto st = test_plugin::get().call(kUnary, unary_args(in, TSR_UNARY_EXP), outs);
  ASSERT_EQ(code_of(st), TSR_OK) << message_of(st);
  for_each_index(in.sizes(), [&](const std::vector<int64_t>& i) {
    EXPECT_TRUE(near_value(out.get(i), ref_value{std::exp(in.get(i).re), 0}, 1e-6L));
  });
  // A broadcast (stride-0) input: every output is f(the one element).
  host_tensor scalar(TSR_FLOAT64, {5}, {0});
  scalar.set({0}, ref_value{2.0L, 0});
  host_tensor out5(TSR_FLOAT64, {5});
  outs = {out5.desc()};
  st = test_plugin::get().call(kUnary, unary_args(scalar, TSR_UNARY_SQUARE), outs);
  ASSERT_EQ(code_of(st), TSR_OK) << message_of(st);
  for (int64_t k = 0; k < 5; ++k) EXPECT_EQ(out5.get({k}).re, 4.0L);
  // In place on float16 (out aliases self exactly).
  host_tensor h(TSR_FLOAT16, {300});
  for (int64_t k = 0; k < 300; ++k) h.set({k}, ref_value{static_cast<long double>(k) - 150, 0});
  outs = {h.desc()};
  st = test_plugin::get().call(kUnary, unary_args(h, TSR_UNARY_RELU), outs);
  ASSERT_EQ(code_of(st), TSR_OK) << message_of(st);
  for (int64_t k = 0; k < 300; ++k) EXPECT_EQ(h.get({k}).re, k < 150 ? 0.0L : k - 150.0L) << k;
}

TEST(PointwiseKernels, IntegerDivisionByZeroIsAStatusAndWritesNothing) {
  host_tensor a(TSR_INT32, {4}), b(TSR_INT32, {4}), out(TSR_INT32, {4});
  for (int64_t k = 0; k < 4; ++k) {
    a.set({k}, ref_value{static_cast<long double>(10 + k), 0});
    b.set({k}, ref_value{k == 2 ? 0.0L : 3.0L, 0});
    out.set({k}, ref_value{-7, 0});
  }
  for (int code :
       {TSR_BINARY_REMAINDER, TSR_BINARY_FMOD, TSR_BINARY_DIV_TRUNC, TSR_BINARY_DIV_FLOOR}) {
    std::vector<tsr_tensor_desc> outs = {out.desc()};
    auto st = test_plugin::get().call(
        kBinary, {tensor_value(a), tensor_value(b), int_value(code), scalar_value(int_scalar(0))},
        outs);
    EXPECT_EQ(code_of(st), TSR_INVALID_ARGUMENT) << code;
    EXPECT_NE(message_of(st).find("ZeroDivisionError"), std::string::npos) << message_of(st);
    for (int64_t k = 0; k < 4; ++k) EXPECT_EQ(out.get({k}).re, -7.0L);
  }
  // The minimum divided by -1 wraps.
  host_tensor m(TSR_INT64, {1}), n(TSR_INT64, {1}), q(TSR_INT64, {1});
  const int64_t min = std::numeric_limits<int64_t>::min();
  std::memcpy(m.address({0}), &min, sizeof min);
  n.set({0}, ref_value{-1, 0});
  std::vector<tsr_tensor_desc> outs = {q.desc()};
  auto st = test_plugin::get().call(kBinary,
                                    {tensor_value(m), tensor_value(n),
                                     int_value(TSR_BINARY_DIV_FLOOR), scalar_value(int_scalar(0))},
                                    outs);
  ASSERT_EQ(code_of(st), TSR_OK) << message_of(st);
  int64_t got = 0;
  std::memcpy(&got, q.address({0}), sizeof got);
  EXPECT_EQ(got, min);
}

TEST(PointwiseKernels, WhereSelectsEveryElementSize) {
  for (tsr_dtype d : {TSR_INT8, TSR_FLOAT16, TSR_INT32, TSR_FLOAT64, TSR_COMPLEX128}) {
    host_tensor c(TSR_BOOL, {2, 3}), x(d, {2, 3}), y(d, {3}), out(d, {2, 3});
    host_tensor yb(d, {2, 3}, {0, 1});  // y broadcast over rows
    for_each_index(c.sizes(), [&](const std::vector<int64_t>& i) {
      c.set(i, ref_value{static_cast<long double>((i[0] + i[1]) % 2), 0});
      x.set(i, ref_value{static_cast<long double>(i[0] * 3 + i[1] + 1), 0});
    });
    for (int64_t k = 0; k < 3; ++k) yb.set({0, k}, ref_value{-1.0L - k, 0});
    std::vector<tsr_tensor_desc> outs = {out.desc()};
    auto st = test_plugin::get().call("where.self",
                                      {tensor_value(c), tensor_value(x), tensor_value(yb)}, outs);
    ASSERT_EQ(code_of(st), TSR_OK) << message_of(st);
    for_each_index(c.sizes(), [&](const std::vector<int64_t>& i) {
      const long double want = c.get(i).re != 0 ? x.get(i).re : -1.0L - i[1];
      EXPECT_EQ(out.get(i).re, want) << name_of(d);
    });
  }
}

TEST(PointwiseKernels, MalformedCallsFailWithAStatus) {
  host_tensor f(TSR_FLOAT32, {2}), i(TSR_INT32, {2}), b(TSR_BOOL, {2}), small(TSR_FLOAT32, {1});
  std::vector<tsr_tensor_desc> outs = {f.desc()};
  auto st = test_plugin::get().call(kUnary, unary_args(f, 999), outs);
  EXPECT_EQ(code_of(st), TSR_INVALID_ARGUMENT);
  EXPECT_NE(message_of(st).find("999"), std::string::npos) << message_of(st);
  st = test_plugin::get().call(kUnary, unary_args(f, TSR_UNARY_ISNAN), outs);  // out not bool
  EXPECT_EQ(code_of(st), TSR_INVALID_ARGUMENT) << message_of(st);
  outs = {i.desc()};
  st = test_plugin::get().call(kUnary, unary_args(f, TSR_UNARY_EXP), outs);  // dtype mismatch
  EXPECT_EQ(code_of(st), TSR_INVALID_ARGUMENT) << message_of(st);
  outs = {f.desc()};
  st = test_plugin::get().call(kUnary, unary_args(small, TSR_UNARY_EXP), outs);  // sizes
  EXPECT_EQ(code_of(st), TSR_INVALID_ARGUMENT) << message_of(st);
  st = test_plugin::get().call(kUnary, {tensor_value(f)}, outs);  // too few arguments
  EXPECT_EQ(code_of(st), TSR_INVALID_ARGUMENT) << message_of(st);
  outs = {i.desc()};
  st = test_plugin::get().call(kUnary, unary_args(i, TSR_UNARY_EXP), outs);  // no int exp
  EXPECT_EQ(code_of(st), TSR_UNIMPLEMENTED) << message_of(st);
  outs = {f.desc()};
  st = test_plugin::get().call(kBinary,
                               {tensor_value(f), tensor_value(f), int_value(TSR_BINARY_BITWISE_AND),
                                scalar_value(int_scalar(0))},
                               outs);
  EXPECT_EQ(code_of(st), TSR_UNIMPLEMENTED) << message_of(st);
  st = test_plugin::get().call("where.self", {tensor_value(f), tensor_value(f), tensor_value(f)},
                               outs);  // condition not bool
  EXPECT_EQ(code_of(st), TSR_INVALID_ARGUMENT) << message_of(st);
  (void)b;
}

}  // namespace
}  // namespace cpu_test
