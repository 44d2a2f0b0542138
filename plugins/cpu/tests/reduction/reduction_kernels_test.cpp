// reduction_kernels_test.cpp - the reduction family's CPU kernels called
// directly: _reduce's PROD/AMAX/AMIN/ANY/ALL codes, _arg_reduce, _scan,
// cummax and _softmax/_log_softmax on contiguous and permuted layouts
// against long double references, plus malformed calls (bad codes, dims,
// output dtypes) answered with statuses. SUM and MEAN: reduce_test.cpp.
// Tolerances: exact for integers, bool and extremes; PROD 64 ulps of the
// dtype; softmax 32 ulps of float32 (float64: 1e-12).
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <random>

#include "../plugin_harness.hpp"

namespace cpu_test {
namespace {

tsr_value int_value(int64_t i) {
  tsr_value v{};
  v.tag = TSR_VALUE_INT;
  v.u.i = i;
  return v;
}

void fill_random(host_tensor& t, uint64_t seed, long double lo = -2, long double hi = 2) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(static_cast<double>(lo), static_cast<double>(hi));
  for_each_index(t.sizes(), [&](const std::vector<int64_t>& i) {
    ref_value v{is_integer(t.dtype()) ? std::round(u(rng) * 3) : u(rng), 0};
    unsigned char bytes[16];
    encode(t.dtype(), bytes, v);
    t.set(i, decode(t.dtype(), bytes));
  });
}

// keepdim-layout output (stride 0 on reduced dims).
host_tensor keepdim_out(tsr_dtype d, const std::vector<int64_t>& sizes,
                        const std::vector<bool>& reduced) {
  std::vector<int64_t> out_sizes(sizes.size()), strides(sizes.size(), 0);
  int64_t s = 1;
  for (int k = static_cast<int>(sizes.size()) - 1; k >= 0; --k) {
    out_sizes[k] = reduced[k] ? 1 : sizes[k];
    if (!reduced[k]) {
      strides[k] = s;
      s *= sizes[k];
    }
  }
  return host_tensor(d, out_sizes, strides);
}

status_ptr call_reduce(int code, const host_tensor& in, const std::vector<int64_t>& dims,
                       host_tensor& out) {
  std::vector<tsr_value> args = {tensor_value(in), int_value(code), int_list_value(dims),
                                 bool_value(false)};
  std::vector<tsr_tensor_desc> outs = {out.desc()};
  return test_plugin::get().call("_reduce", args, outs);
}

struct code_case {
  int code;
  tsr_dtype d;
};

class ReduceCodes : public ::testing::TestWithParam<code_case> {};

TEST_P(ReduceCodes, MatchTheReferenceOnContiguousAndPermutedInputs) {
  const auto [code, d] = GetParam();
  const std::vector<int64_t> sizes = {4, 5, 6};
  const bool logical = code == TSR_REDUCE_ANY || code == TSR_REDUCE_ALL;
  for (bool permuted : {false, true}) {
    host_tensor in = permuted ? host_tensor::permuted(d, sizes, {2, 0, 1}) : host_tensor(d, sizes);
    // Products of 120 factors near 1 stay finite; integer products wrap.
    const bool prod = code == TSR_REDUCE_PROD;
    fill_random(in, 11 + code, prod && !is_integer(d) ? 0.9L : -2.0L,
                prod && !is_integer(d) ? 1.1L : 2.0L);
    for (const std::vector<int64_t>& dims :
         std::vector<std::vector<int64_t>>{{0}, {2}, {0, 1}, {1, 2}, {0, 1, 2}}) {
      std::vector<bool> reduced(3, false);
      for (int64_t k : dims) reduced[k] = true;
      host_tensor out = keepdim_out(logical ? TSR_BOOL : d, sizes, reduced);
      const status_ptr s = call_reduce(code, in, dims, out);
      ASSERT_EQ(s, nullptr) << message_of(s);
      for_each_index(out.sizes(), [&](const std::vector<int64_t>& o) {
        std::vector<int64_t> red(3);
        for (int k = 0; k < 3; ++k) red[k] = reduced[k] ? sizes[k] : 1;
        long double acc = code == TSR_REDUCE_PROD ? 1 : 0;
        uint64_t wrapped = 1;
        bool first = true, any = false, all = true;
        for_each_index(red, [&](const std::vector<int64_t>& r) {
          std::vector<int64_t> idx(3);
          for (int k = 0; k < 3; ++k) idx[k] = reduced[k] ? r[k] : o[k];
          const long double x = in.get(idx).re;
          any = any || x != 0;
          all = all && x != 0;
          if (code == TSR_REDUCE_PROD) acc *= x;
          if (code == TSR_REDUCE_PROD && is_integer(d)) {
            wrapped *= static_cast<uint64_t>(static_cast<int64_t>(x));
          }
          if (code == TSR_REDUCE_AMAX) acc = first ? x : std::max(acc, x);
          if (code == TSR_REDUCE_AMIN) acc = first ? x : std::min(acc, x);
          first = false;
        });
        const ref_value got = out.get(o);
        if (code == TSR_REDUCE_PROD && is_integer(d)) {
          const ref_value expected = ref_convert(
              ref_value{static_cast<long double>(static_cast<int64_t>(wrapped)), 0}, TSR_INT64, d);
          EXPECT_TRUE(same_value(got, expected)) << to_string(got) << " vs " << to_string(expected);
        } else if (logical) {
          EXPECT_EQ(got.re != 0, code == TSR_REDUCE_ANY ? any : all);
        } else if (code == TSR_REDUCE_PROD && !is_integer(d)) {
          EXPECT_TRUE(near_value(got, ref_value{acc, 0}, 64 * unit_roundoff(d) * std::fabs(acc)))
              << to_string(got) << " vs " << static_cast<double>(acc);
        } else {
          EXPECT_EQ(static_cast<double>(got.re), static_cast<double>(acc));
        }
      });
    }
  }
}

std::vector<code_case> code_cases() {
  std::vector<code_case> out;
  for (int code :
       {TSR_REDUCE_PROD, TSR_REDUCE_AMAX, TSR_REDUCE_AMIN, TSR_REDUCE_ANY, TSR_REDUCE_ALL})
    for (tsr_dtype d : {TSR_FLOAT32, TSR_FLOAT64, TSR_FLOAT16, TSR_INT32, TSR_INT64})
      out.push_back({code, d});
  return out;
}

std::string case_name(const ::testing::TestParamInfo<code_case>& info) {
  static const char* const names[] = {"sum", "prod", "mean", "amax", "amin", "any", "all"};
  return std::string(names[info.param.code]) + "_" + name_of(info.param.d);
}

INSTANTIATE_TEST_SUITE_P(CodesAndDtypes, ReduceCodes, ::testing::ValuesIn(code_cases()), case_name);

TEST(ReduceCodesEdges, NaNIsStickyAndMalformedCallsGiveStatuses) {
  host_tensor in(TSR_FLOAT32, {40});
  fill_random(in, 3);
  in.set({17}, ref_value{NAN, 0});
  host_tensor out(TSR_FLOAT32, {1}, {0});
  ASSERT_EQ(call_reduce(TSR_REDUCE_AMAX, in, {0}, out), nullptr);
  EXPECT_TRUE(std::isnan(static_cast<double>(out.get({0}).re)));
  ASSERT_EQ(call_reduce(TSR_REDUCE_AMIN, in, {0}, out), nullptr);
  EXPECT_TRUE(std::isnan(static_cast<double>(out.get({0}).re)));
  EXPECT_EQ(code_of(call_reduce(99, in, {0}, out)), TSR_UNIMPLEMENTED);
  EXPECT_EQ(code_of(call_reduce(TSR_REDUCE_ANY, in, {0}, out)), TSR_INVALID_ARGUMENT);  // not bool
  host_tensor empty(TSR_FLOAT32, {0});
  empty.desc().data = nullptr;
  EXPECT_EQ(code_of(call_reduce(TSR_REDUCE_AMAX, empty, {0}, out)), TSR_INVALID_ARGUMENT);
  host_tensor c(TSR_COMPLEX64, {3});
  host_tensor cout(TSR_COMPLEX64, {1}, {0});
  EXPECT_EQ(code_of(call_reduce(TSR_REDUCE_AMAX, c, {0}, cout)), TSR_UNIMPLEMENTED);
}

TEST(ArgReduceKernel, FirstExtremeOnRowsColumnsAndNaN) {
  const std::vector<int64_t> sizes = {7, 130};
  for (bool permuted : {false, true}) {
    host_tensor in = permuted ? host_tensor::permuted(TSR_FLOAT32, sizes, {1, 0})
                              : host_tensor(TSR_FLOAT32, sizes);
    fill_random(in, 5);
    in.set({3, 100}, ref_value{NAN, 0});
    in.set({3, 120}, ref_value{NAN, 0});
    for (int code : {TSR_ARG_REDUCE_ARGMAX, TSR_ARG_REDUCE_ARGMIN}) {
      for (int dim : {0, 1}) {
        std::vector<bool> reduced = {dim == 0, dim == 1};
        host_tensor out = keepdim_out(TSR_INT64, sizes, reduced);
        std::vector<tsr_value> args = {tensor_value(in), int_value(code), int_value(dim),
                                       bool_value(false)};
        std::vector<tsr_tensor_desc> outs = {out.desc()};
        const status_ptr s = test_plugin::get().call("_arg_reduce", args, outs);
        ASSERT_EQ(s, nullptr) << message_of(s);
        for_each_index(out.sizes(), [&](const std::vector<int64_t>& o) {
          int64_t best = -1;
          long double bv = 0;
          for (int64_t k = 0; k < sizes[dim]; ++k) {
            std::vector<int64_t> idx = o;
            idx[dim] = k;
            const long double x = in.get(idx).re;
            const bool take =
                best < 0 || (!std::isnan(bv) &&
                             (std::isnan(x) || (code == TSR_ARG_REDUCE_ARGMAX ? x > bv : x < bv)));
            if (take) {
              best = k;
              bv = x;
            }
          }
          EXPECT_EQ(static_cast<int64_t>(out.get(o).re), best);
        });
      }
    }
  }
}

TEST(ScanKernels, CumsumAndCummaxAlongBothDimsOfPermutedInputs) {
  const std::vector<int64_t> sizes = {9, 20};
  host_tensor in = host_tensor::permuted(TSR_FLOAT64, sizes, {1, 0});
  fill_random(in, 6);
  for (int dim : {0, 1}) {
    host_tensor out(TSR_FLOAT64, sizes);
    std::vector<tsr_value> args = {tensor_value(in), int_value(TSR_SCAN_CUMSUM), int_value(dim)};
    std::vector<tsr_tensor_desc> outs = {out.desc()};
    ASSERT_EQ(test_plugin::get().call("_scan", args, outs), nullptr);
    host_tensor values(TSR_FLOAT64, sizes), indices(TSR_INT64, sizes);
    std::vector<tsr_value> cargs = {tensor_value(in), int_value(dim)};
    std::vector<tsr_tensor_desc> couts = {values.desc(), indices.desc()};
    const status_ptr s = test_plugin::get().call("cummax", cargs, couts);
    ASSERT_EQ(s, nullptr) << message_of(s);
    const int other = 1 - dim;
    for (int64_t o = 0; o < sizes[other]; ++o) {
      long double acc = 0, best = 0;
      int64_t bi = 0;
      for (int64_t k = 0; k < sizes[dim]; ++k) {
        std::vector<int64_t> idx(2);
        idx[dim] = k;
        idx[other] = o;
        const long double x = in.get(idx).re;
        acc += x;
        if (k == 0 || x >= best) {
          best = x;
          bi = k;
        }
        EXPECT_NEAR(static_cast<double>(out.get(idx).re), static_cast<double>(acc), 1e-12);
        EXPECT_EQ(static_cast<double>(values.get(idx).re), static_cast<double>(best));
        EXPECT_EQ(static_cast<int64_t>(indices.get(idx).re), bi);
      }
    }
  }
  // A logcumsumexp of integers and an unknown code are refused.
  host_tensor ints(TSR_INT32, {4});
  host_tensor int_out(TSR_INT32, {4});
  std::vector<tsr_tensor_desc> outs = {int_out.desc()};
  std::vector<tsr_value> bad = {tensor_value(ints), int_value(TSR_SCAN_LOGCUMSUMEXP), int_value(0)};
  EXPECT_EQ(code_of(test_plugin::get().call("_scan", bad, outs)), TSR_UNIMPLEMENTED);
  bad[1] = int_value(42);
  EXPECT_EQ(code_of(test_plugin::get().call("_scan", bad, outs)), TSR_UNIMPLEMENTED);
  bad[1] = int_value(TSR_SCAN_CUMSUM);
  bad[2] = int_value(1);
  EXPECT_EQ(code_of(test_plugin::get().call("_scan", bad, outs)), TSR_INVALID_ARGUMENT);
}

// softmax and log_softmax along each dim of a random float32/float64 matrix.
void softmax_rows_and_columns(const std::vector<int64_t>& sizes) {
  for (tsr_dtype d : {TSR_FLOAT32, TSR_FLOAT64}) {
    host_tensor in(d, sizes);
    fill_random(in, 8, -30, 30);
    for (bool log : {false, true}) {
      for (int dim : {0, 1}) {
        host_tensor out(d, sizes);
        std::vector<tsr_value> args = {tensor_value(in), int_value(dim), bool_value(false)};
        std::vector<tsr_tensor_desc> outs = {out.desc()};
        const status_ptr s = test_plugin::get().call(log ? "_log_softmax" : "_softmax", args, outs);
        ASSERT_EQ(s, nullptr) << message_of(s);
        const int other = 1 - dim;
        for (int64_t o = 0; o < sizes[other]; ++o) {
          std::vector<int64_t> idx(2);
          idx[other] = o;
          long double m = -INFINITY, sum = 0;
          for (int64_t k = 0; k < sizes[dim]; ++k) {
            idx[dim] = k;
            m = std::max(m, in.get(idx).re);
          }
          for (int64_t k = 0; k < sizes[dim]; ++k) {
            idx[dim] = k;
            sum += std::exp(in.get(idx).re - m);
          }
          for (int64_t k = 0; k < sizes[dim]; ++k) {
            idx[dim] = k;
            const long double x = in.get(idx).re;
            const long double e = log ? x - m - std::log(sum) : std::exp(x - m) / sum;
            const long double t = d == TSR_FLOAT64 ? 1e-12L : 32 * unit_roundoff(d);
            EXPECT_TRUE(near_value(out.get(idx), ref_value{e, 0}, t * (1 + std::fabs(e))))
                << to_string(out.get(idx)) << " vs " << static_cast<double>(e);
          }
        }
      }
    }
  }
}

TEST(SoftmaxKernels, RowsAndColumnsMatchTheReference) {
  // Lines of 70 (vector body and tail) and 2085 (past the AVX2 body's float64
  // flush every 1024 elements), through both loop bodies where the processor
  // has AVX2.
  for (const char* isa : available_isas()) {
    const isa_scope scope(isa);
    for (const std::vector<int64_t>& sizes :
         {std::vector<int64_t>{33, 70}, std::vector<int64_t>{3, 2085}}) {
      SCOPED_TRACE(std::string(isa) + " " + std::to_string(sizes[1]));
      softmax_rows_and_columns(sizes);
    }
  }
  // Integer input and a wrong output dtype are refused.
  host_tensor ints(TSR_INT32, {4});
  host_tensor out(TSR_FLOAT32, {4});
  std::vector<tsr_tensor_desc> outs = {out.desc()};
  std::vector<tsr_value> args = {tensor_value(ints), int_value(0), bool_value(false)};
  EXPECT_EQ(code_of(test_plugin::get().call("_softmax", args, outs)), TSR_UNIMPLEMENTED);
  host_tensor f64(TSR_FLOAT64, {4});
  args[0] = tensor_value(f64);
  EXPECT_EQ(code_of(test_plugin::get().call("_softmax", args, outs)), TSR_INVALID_ARGUMENT);
}

TEST(SoftmaxKernels, NaNAndInfinityFollowPyTorch) {
  // Rows of 45 float32: a NaN, a +inf, all -inf (each NaN throughout, as in
  // PyTorch), and -inf among finite values (exactly 0 there, log: -inf).
  constexpr int64_t n = 45;
  const long double inf = INFINITY;
  host_tensor in(TSR_FLOAT32, {4, n});
  for (int64_t r = 0; r < 4; ++r) {
    for (int64_t k = 0; k < n; ++k)
      in.set({r, k}, ref_value{0.25L * static_cast<long double>(k % 7), 0});
  }
  in.set({0, 40}, ref_value{NAN, 0});
  in.set({1, 3}, ref_value{inf, 0});
  for (int64_t k = 0; k < n; ++k) in.set({2, k}, ref_value{-inf, 0});
  in.set({3, 0}, ref_value{-inf, 0});
  in.set({3, 44}, ref_value{-inf, 0});
  for (const char* isa : available_isas()) {
    const isa_scope scope(isa);
    for (bool log : {false, true}) {
      SCOPED_TRACE(std::string(isa) + (log ? " log_softmax" : " softmax"));
      host_tensor out(TSR_FLOAT32, {4, n});
      std::vector<tsr_value> args = {tensor_value(in), int_value(1), bool_value(false)};
      std::vector<tsr_tensor_desc> outs = {out.desc()};
      const status_ptr s = test_plugin::get().call(log ? "_log_softmax" : "_softmax", args, outs);
      ASSERT_EQ(s, nullptr) << message_of(s);
      for (int64_t r = 0; r < 3; ++r) {
        for (int64_t k = 0; k < n; ++k)
          EXPECT_TRUE(std::isnan(out.get({r, k}).re)) << r << "," << k;
      }
      long double sum = 0;
      for (int64_t k = 1; k < 44; ++k)
        sum += std::exp(0.25L * static_cast<long double>(k % 7) - 1.5L);
      for (int64_t k = 0; k < n; ++k) {
        const long double got = out.get({3, k}).re;
        if (k == 0 || k == 44) {
          EXPECT_EQ(got, log ? -inf : 0.0L) << k;
          continue;
        }
        const long double x = 0.25L * static_cast<long double>(k % 7) - 1.5L;
        const long double e = log ? x - std::log(sum) : std::exp(x) / sum;
        EXPECT_NEAR(static_cast<double>(got), static_cast<double>(e),
                    static_cast<double>(32 * unit_roundoff(TSR_FLOAT32) * (1 + std::fabs(e))))
            << k;
      }
    }
  }
}

}  // namespace
}  // namespace cpu_test
