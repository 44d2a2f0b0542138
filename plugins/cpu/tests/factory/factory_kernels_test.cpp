// factory_kernels_test.cpp - the factory family's kernel (_iota_) and the
// plugin's random_fill entry called directly: values against references
// computed here (iota) and sdk/philox.hpp (random_fill), strided and empty
// outputs, and malformed calls, which must fail with a status, never crash.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "../plugin_harness.hpp"
#include "tessera/opcodes.h"
#include "tessera/sdk/philox.hpp"

namespace cpu_test {
namespace {

namespace philox = tessera::sdk::philox;

constexpr const char* kIota = "_iota_";

std::vector<tsr_value> iota_args(const host_tensor& self, const tsr_scalar& start,
                                 const tsr_scalar& step, const tsr_scalar* end = nullptr) {
  return {tensor_value(self), scalar_value(start), scalar_value(step),
          end ? scalar_value(*end) : none_value()};
}

status_ptr run_iota(host_tensor& self, const std::vector<tsr_value>& args) {
  std::vector<tsr_tensor_desc> outs = {self.desc()};
  return test_plugin::get().call(kIota, args, outs);
}

TEST(IotaKernel, FillsStartPlusIStepInRowMajorOrder) {
  for (tsr_dtype d : {TSR_UINT8, TSR_INT8, TSR_INT16, TSR_INT32, TSR_INT64, TSR_FLOAT16,
                      TSR_BFLOAT16, TSR_FLOAT32, TSR_FLOAT64}) {
    SCOPED_TRACE(name_of(d));
    host_tensor t = host_tensor::permuted(d, {3, 4}, {1, 0});  // column-major storage
    ASSERT_EQ(code_of(run_iota(t, iota_args(t, int_scalar(3), int_scalar(2)))), TSR_OK);
    int64_t i = 0;
    for_each_index(t.sizes(), [&](const std::vector<int64_t>& index) {
      const long double expected = static_cast<long double>(3 + 2 * i);
      EXPECT_EQ(t.get(index).re, expected) << "element " << i;
      ++i;
    });
  }
}

TEST(IotaKernel, IntegersComputeInInt64AndWrap) {
  host_tensor t(TSR_UINT8, {4});
  ASSERT_EQ(code_of(run_iota(t, iota_args(t, int_scalar(254), int_scalar(1)))), TSR_OK);
  EXPECT_EQ(t.get({0}).re, 254);
  EXPECT_EQ(t.get({1}).re, 255);
  EXPECT_EQ(t.get({2}).re, 0);
  EXPECT_EQ(t.get({3}).re, 1);
}

TEST(IotaKernel, EndGivesTheSymmetricFormExactAtBothEnds) {
  host_tensor t(TSR_FLOAT64, {7});
  const double step = (1.0 - 0.1) / 6;
  const tsr_scalar end = float_scalar(1.0);
  ASSERT_EQ(code_of(run_iota(t, iota_args(t, float_scalar(0.1), float_scalar(step), &end))),
            TSR_OK);
  for (int64_t i = 0; i < 7; ++i) {
    const double expected =
        i < 3 ? 0.1 + step * static_cast<double>(i) : 1.0 - step * static_cast<double>(6 - i);
    EXPECT_EQ(static_cast<double>(t.get({i}).re), expected) << i;
  }
  EXPECT_EQ(static_cast<double>(t.get({6}).re), 1.0);
  // Integer outputs with a fractional step compute in double and truncate.
  host_tensor q(TSR_INT32, {5});
  const tsr_scalar one = int_scalar(1);
  ASSERT_EQ(code_of(run_iota(q, iota_args(q, int_scalar(0), float_scalar(0.25), &one))), TSR_OK);
  const long double expected[] = {0, 0, 0, 0, 1};
  for (int64_t i = 0; i < 5; ++i) EXPECT_EQ(q.get({i}).re, expected[i]);
}

TEST(IotaKernel, HandlesZeroDimAndEmptyOutputs) {
  host_tensor s(TSR_FLOAT32, {});
  ASSERT_EQ(code_of(run_iota(s, iota_args(s, float_scalar(2.5), int_scalar(1)))), TSR_OK);
  EXPECT_EQ(s.get({}).re, 2.5L);
  host_tensor e(TSR_FLOAT32, {0, 3});
  EXPECT_EQ(code_of(run_iota(e, iota_args(e, int_scalar(0), int_scalar(1)))), TSR_OK);
}

TEST(IotaKernel, RefusesMalformedCalls) {
  host_tensor b(TSR_BOOL, {2});
  EXPECT_EQ(code_of(run_iota(b, iota_args(b, int_scalar(0), int_scalar(1)))), TSR_UNIMPLEMENTED);
  host_tensor c(TSR_COMPLEX64, {2});
  EXPECT_EQ(code_of(run_iota(c, iota_args(c, int_scalar(0), int_scalar(1)))), TSR_UNIMPLEMENTED);
  host_tensor f(TSR_FLOAT32, {2});
  EXPECT_EQ(code_of(run_iota(f, iota_args(f, complex_scalar(0, 1), int_scalar(1)))),
            TSR_INVALID_ARGUMENT);
  std::vector<tsr_value> short_args = {tensor_value(f), scalar_value(int_scalar(0))};
  EXPECT_EQ(code_of(run_iota(f, short_args)), TSR_INVALID_ARGUMENT);
  std::vector<tsr_value> bad_tag = iota_args(f, int_scalar(0), int_scalar(1));
  bad_tag[2] = bool_value(true);
  EXPECT_EQ(code_of(run_iota(f, bad_tag)), TSR_INVALID_ARGUMENT);
  host_tensor other(TSR_FLOAT32, {3});
  std::vector<tsr_tensor_desc> outs = {other.desc()};
  EXPECT_EQ(
      code_of(test_plugin::get().call(kIota, iota_args(f, int_scalar(0), int_scalar(1)), outs)),
      TSR_INVALID_ARGUMENT);
}

// ---- random_fill ----------------------------------------------------------

status_ptr fill(tsr_random_fill_call& call) {
  const test_plugin& p = test_plugin::get();
  return status_ptr(p.api().random_fill(p.context(), &call));
}

tsr_random_fill_call make_call(host_tensor& out, int32_t distribution, double p0, double p1,
                               uint64_t seed = 12345, uint64_t offset = 0) {
  tsr_random_fill_call call;
  std::memset(&call, 0, sizeof call);
  call.struct_size = sizeof call;
  call.device = 0;
  call.distribution = distribution;
  call.seed = seed;
  call.offset = offset;
  call.param0 = p0;
  call.param1 = p1;
  call.out = &out.desc();
  return call;
}

TEST(RandomFill, WritesTheSdkReferenceBitsForEveryDistributionAndDtype) {
  struct Case {
    int32_t distribution;
    tsr_dtype dtype;
    double p0, p1;
  };
  const Case cases[] = {
      {TSR_RANDOM_UNIFORM, TSR_FLOAT32, 0, 1},   {TSR_RANDOM_UNIFORM, TSR_FLOAT64, -1, 1},
      {TSR_RANDOM_UNIFORM, TSR_FLOAT16, 0, 1},   {TSR_RANDOM_UNIFORM, TSR_BFLOAT16, 2, 3},
      {TSR_RANDOM_NORMAL, TSR_FLOAT32, 1, 2},    {TSR_RANDOM_NORMAL, TSR_FLOAT64, 0, 1},
      {TSR_RANDOM_BERNOULLI, TSR_BOOL, 0.25, 0}, {TSR_RANDOM_BERNOULLI, TSR_FLOAT64, 0.5, 0},
      {TSR_RANDOM_RANDINT, TSR_INT64, -7, 9},    {TSR_RANDOM_RANDINT, TSR_INT64, 0, 1e15},
      {TSR_RANDOM_RANDINT, TSR_UINT8, 0, 256},   {TSR_RANDOM_BITS, TSR_INT32, 0, 0},
      {TSR_RANDOM_BITS, TSR_INT64, 0, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(philox::distribution_name(c.distribution));
    SCOPED_TRACE(name_of(c.dtype));
    for (int64_t n : {1, 5, 131, 100003}) {  // the last one is split between threads
      host_tensor out(c.dtype, {n});
      tsr_random_fill_call call = make_call(out, c.distribution, c.p0, c.p1, 99, 7);
      ASSERT_EQ(code_of(fill(call)), TSR_OK);
      std::vector<unsigned char> expected(static_cast<size_t>(n) * size_of(c.dtype));
      philox::fill({c.distribution, c.dtype, 99, 7, c.p0, c.p1}, expected.data(), 0, n);
      EXPECT_EQ(std::memcmp(out.desc().data, expected.data(), expected.size()), 0) << "n = " << n;
    }
  }
}

TEST(RandomFill, LeavesEmptyOutputsAlone) {
  host_tensor out(TSR_FLOAT32, {0});
  tsr_random_fill_call call = make_call(out, TSR_RANDOM_UNIFORM, 0, 1);
  EXPECT_EQ(code_of(fill(call)), TSR_OK);
}

TEST(RandomFill, RefusesMalformedCalls) {
  const test_plugin& p = test_plugin::get();
  host_tensor out(TSR_FLOAT32, {8});
  tsr_random_fill_call call = make_call(out, TSR_RANDOM_UNIFORM, 0, 1);
  EXPECT_EQ(code_of(status_ptr(p.api().random_fill(p.context(), nullptr))), TSR_INVALID_ARGUMENT);
  EXPECT_EQ(code_of(status_ptr(p.api().random_fill(nullptr, &call))), TSR_INVALID_ARGUMENT);

  tsr_random_fill_call small = call;
  small.struct_size = 8;
  EXPECT_EQ(code_of(fill(small)), TSR_INVALID_ARGUMENT);
  tsr_random_fill_call device = call;
  device.device = 1;
  EXPECT_EQ(code_of(fill(device)), TSR_OUT_OF_RANGE);
  tsr_random_fill_call no_out = call;
  no_out.out = nullptr;
  EXPECT_EQ(code_of(fill(no_out)), TSR_INVALID_ARGUMENT);

  host_tensor strided(TSR_FLOAT32, {4, 2}, {1, 4});
  tsr_random_fill_call strided_call = make_call(strided, TSR_RANDOM_UNIFORM, 0, 1);
  EXPECT_EQ(code_of(fill(strided_call)), TSR_INVALID_ARGUMENT);

  tsr_random_fill_call unknown = call;
  unknown.distribution = 99;
  EXPECT_EQ(code_of(fill(unknown)), TSR_UNIMPLEMENTED);

  host_tensor ints(TSR_INT64, {8});
  tsr_random_fill_call uniform_ints = make_call(ints, TSR_RANDOM_UNIFORM, 0, 1);
  EXPECT_EQ(code_of(fill(uniform_ints)), TSR_UNIMPLEMENTED);
  host_tensor complex(TSR_COMPLEX64, {8});
  tsr_random_fill_call normal_complex = make_call(complex, TSR_RANDOM_NORMAL, 0, 1);
  EXPECT_EQ(code_of(fill(normal_complex)), TSR_UNIMPLEMENTED);

  // Parameters that would make values undefined (a modulo by zero, an
  // out-of-range conversion) are refused before any element is written.
  for (auto [p0, p1] : {std::pair<double, double>{3, 3}, {5, 2}, {0.5, 4}, {0, 1e300}}) {
    tsr_random_fill_call bad = make_call(ints, TSR_RANDOM_RANDINT, p0, p1);
    EXPECT_EQ(code_of(fill(bad)), TSR_INVALID_ARGUMENT) << p0 << " " << p1;
  }
  tsr_random_fill_call nan_uniform =
      make_call(out, TSR_RANDOM_UNIFORM, std::numeric_limits<double>::quiet_NaN(), 1);
  EXPECT_EQ(code_of(fill(nan_uniform)), TSR_INVALID_ARGUMENT);
  tsr_random_fill_call huge_uniform = make_call(out, TSR_RANDOM_UNIFORM, -1e300, 1e300);
  EXPECT_EQ(code_of(fill(huge_uniform)), TSR_INVALID_ARGUMENT);
  tsr_random_fill_call negative_std = make_call(out, TSR_RANDOM_NORMAL, 0, -1);
  EXPECT_EQ(code_of(fill(negative_std)), TSR_INVALID_ARGUMENT);
  tsr_random_fill_call bad_p = make_call(out, TSR_RANDOM_BERNOULLI, 1.5, 0);
  EXPECT_EQ(code_of(fill(bad_p)), TSR_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace cpu_test
