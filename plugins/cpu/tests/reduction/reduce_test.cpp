// reduce_test.cpp - the _reduce kernel's SUM and MEAN codes over single,
// multiple, all and no dims, on contiguous, transposed, strided, flipped and broadcast
// inputs, into keepdim-layout outputs (stride 0 on reduced dims), against a
// long double reference; plus the accuracy of 1M-element float32 sums.
// Floating tolerance: u_out * |ref| + count * u_acc * sum|x|, with u_acc 2^-53
// for float32/float64/complex (they accumulate in float64) and 2^-24 for
// float16/bfloat16 (float32 lanes). The AVX2 and AVX-512 bodies of contiguous
// float32 sums add runs of 16 elements per float32 lane before going to
// float64, so with isa "avx2" or "avx512" a float32 sum may also be off by
// 20 * 2^-24 * sum|x| (each element passes through at most 18 float32
// roundings). Integer sums wrap like int64
// and match exactly. The accuracy tests run once per available isa.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <optional>
#include <random>

#include "../plugin_harness.hpp"

namespace cpu_test {
namespace {

ref_value random_entry(tsr_dtype d, std::mt19937_64& rng) {
  ref_value v;
  if (is_integer(d)) {
    v.re = static_cast<long double>(static_cast<int64_t>(rng()));
  } else {
    std::uniform_real_distribution<double> u(-4.0, 4.0);
    v.re = u(rng);
    v.im = is_complex(d) ? u(rng) : 0;
  }
  unsigned char bytes[16];
  encode(d, bytes, v);
  return decode(d, bytes);
}

// Output descriptor in keepdim layout: reduced dims size 1, stride 0; kept
// dims contiguous, or in reverse order when `transposed_out`.
host_tensor keepdim_out(tsr_dtype d, const std::vector<int64_t>& sizes,
                        const std::vector<bool>& reduced, bool transposed_out) {
  std::vector<int64_t> out_sizes(sizes.size()), strides(sizes.size(), 0);
  int64_t s = 1;
  const int n = static_cast<int>(sizes.size());
  for (int k = 0; k < n; ++k) {
    const int dim = transposed_out ? k : n - 1 - k;
    out_sizes[dim] = reduced[dim] ? 1 : sizes[dim];
    if (!reduced[dim]) {
      strides[dim] = s;
      s *= sizes[dim];
    }
  }
  return host_tensor(d, out_sizes, strides);
}

// `op` names the reduction: "sum.dim_IntList" (code SUM) or "mean.dim" (MEAN),
// both run by the _reduce kernel.
int code_of_op(const std::string& op) {
  return op == "mean.dim" ? TSR_REDUCE_MEAN : TSR_REDUCE_SUM;
}

status_ptr reduce(const char* op, const host_tensor& in,
                  const std::optional<std::vector<int64_t>>& dims, host_tensor& out) {
  tsr_value code{};
  code.tag = TSR_VALUE_INT;
  code.u.i = code_of_op(op);
  std::vector<tsr_value> args = {tensor_value(in), code,
                                 dims ? int_list_value(*dims) : none_value(), bool_value(false)};
  std::vector<tsr_tensor_desc> outs = {out.desc()};
  return test_plugin::get().call("_reduce", args, outs);
}

// `lane_roundoff`: the extra relative error (times sum|x|) of float32 lanes.
void expect_reduction(const char* op, const host_tensor& in, const std::vector<bool>& reduced,
                      const host_tensor& out, long double lane_roundoff = 0) {
  const tsr_dtype d = in.dtype();
  const bool mean = std::string(op) == "mean.dim";
  std::vector<int64_t> out_sizes = out.sizes();
  for_each_index(out_sizes, [&](const std::vector<int64_t>& o) {
    long double re = 0, im = 0, abs_sum = 0;
    uint64_t wrapped = 0;
    int64_t count = 0;
    std::vector<int64_t> red_sizes;
    for (size_t k = 0; k < reduced.size(); ++k) red_sizes.push_back(reduced[k] ? in.sizes()[k] : 1);
    for_each_index(red_sizes, [&](const std::vector<int64_t>& r) {
      std::vector<int64_t> idx(o.size());
      for (size_t k = 0; k < o.size(); ++k) idx[k] = reduced[k] ? r[k] : o[k];
      const ref_value x = in.get(idx);
      re += x.re;
      im += x.im;
      abs_sum += std::hypot(x.re, x.im);
      wrapped += static_cast<uint64_t>(static_cast<int64_t>(is_integer(d) ? x.re : 0));
      ++count;
    });
    ref_value expected;
    if (is_integer(d)) {
      expected = ref_convert(ref_value{static_cast<long double>(static_cast<int64_t>(wrapped)), 0},
                             TSR_INT64, d);
    } else if (mean) {
      expected =
          ref_value{count ? re / count : NAN, is_complex(d) ? (count ? im / count : NAN) : 0};
      abs_sum = count ? abs_sum / count : 0;
    } else {
      expected = ref_value{re, im};
    }
    const long double u_acc =
        (d == TSR_FLOAT16 || d == TSR_BFLOAT16) ? std::ldexp(1.0L, -24) : std::ldexp(1.0L, -53);
    const long double tol = is_integer(d)
                                ? 0
                                : unit_roundoff(d) * std::hypot(expected.re, expected.im) * 1.01L +
                                      ((count + 2) * u_acc + lane_roundoff) * abs_sum;
    const ref_value got = out.get(o);
    ASSERT_TRUE(near_value(got, expected, tol))
        << op << " " << name_of(d) << " got " << to_string(got) << " expected "
        << to_string(expected) << " count " << count;
  });
}

struct input_layout {
  const char* name;
  std::function<host_tensor(tsr_dtype)> make;
};

std::vector<input_layout> input_layouts() {
  const std::vector<int64_t> sizes = {4, 5, 6};
  return {
      {"contiguous", [=](tsr_dtype d) { return host_tensor(d, sizes); }},
      {"permuted",
       [=](tsr_dtype d) {
         return host_tensor::permuted(d, sizes, {2, 0, 1});
       }},
      {"strided",
       [=](tsr_dtype d) {
         return host_tensor(d, sizes, {70, 12, 2});
       }},
      {"flipped",
       [=](tsr_dtype d) {
         return host_tensor(d, sizes, {-30, 6, -1});
       }},
      {"broadcast",
       [=](tsr_dtype d) {
         return host_tensor(d, sizes, {0, 6, 1});
       }},
  };
}

struct reduce_case {
  const char* op;
  tsr_dtype d;
};

class Reductions : public ::testing::TestWithParam<reduce_case> {};

TEST_P(Reductions, EveryDimSetOnEveryLayout) {
  const auto [op, d] = GetParam();
  std::mt19937_64 rng(3 + d);
  const std::vector<std::optional<std::vector<int64_t>>> dim_sets = {
      std::vector<int64_t>{0},    std::vector<int64_t>{1},
      std::vector<int64_t>{2},    std::vector<int64_t>{0, 2},
      std::vector<int64_t>{1, 2}, std::vector<int64_t>{0, 1, 2},
      std::vector<int64_t>{},     std::nullopt};
  for (const auto& layout : input_layouts()) {
    host_tensor in = layout.make(d);
    for_each_index(in.sizes(), [&](const auto& i) { in.set(i, random_entry(d, rng)); });
    for (const auto& dims : dim_sets) {
      for (bool transposed_out : {false, true}) {
        std::vector<bool> reduced(3, !dims.has_value());
        if (dims) {
          for (int64_t k : *dims) reduced[k] = true;
        }
        SCOPED_TRACE(std::string(layout.name) + " dims " +
                     (dims ? std::to_string(dims->size()) : std::string("None")) +
                     (transposed_out ? " transposed out" : ""));
        host_tensor out = keepdim_out(d, in.sizes(), reduced, transposed_out);
        const status_ptr s = reduce(op, in, dims, out);
        ASSERT_EQ(s, nullptr) << message_of(s);
        expect_reduction(op, in, reduced, out);
      }
    }
  }
}

TEST_P(Reductions, ZeroDimAndEmptyInputs) {
  const auto [op, d] = GetParam();
  host_tensor scalar(d, {});
  scalar.set({}, ref_value{3, is_complex(d) ? -1.0L : 0.0L});
  host_tensor out(d, {});
  ASSERT_EQ(reduce(op, scalar, std::vector<int64_t>{}, out), nullptr);
  EXPECT_TRUE(same_value(out.get({}), scalar.get({})));
  ASSERT_EQ(reduce(op, scalar, std::nullopt, out), nullptr);
  EXPECT_TRUE(same_value(out.get({}), scalar.get({})));
  // Reducing an empty dim: sum 0, mean NaN.
  host_tensor empty(d, {3, 0});
  empty.desc().data = nullptr;
  host_tensor out3(d, {3, 1}, {1, 0});
  ASSERT_EQ(reduce(op, empty, std::vector<int64_t>{1}, out3), nullptr);
  for (int64_t i = 0; i < 3; ++i) {
    const ref_value v = out3.get({i, 0});
    if (std::string(op) == "mean.dim") {
      EXPECT_TRUE(std::isnan(v.re)) << to_string(v);
    } else {
      EXPECT_TRUE(same_value(v, ref_value{0, 0})) << to_string(v);
    }
  }
}

std::vector<reduce_case> all_cases() {
  std::vector<reduce_case> out;
  for (tsr_dtype d : all_dtypes()) {
    if (d != TSR_BOOL) out.push_back({"sum.dim_IntList", d});
    if (is_floating(d) || is_complex(d)) out.push_back({"mean.dim", d});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(OpsAndDtypes, Reductions, ::testing::ValuesIn(all_cases()),
                         [](const auto& info) {
                           std::string name = info.param.op;
                           name = name.substr(0, name.find('.'));
                           return name + "_" + name_of(info.param.d);
                         });

// |got - exact| in units of the float32 ulp at the exact value.
long double ulps_off(float got, long double exact) {
  int e = 0;
  std::frexp(exact, &e);
  const long double ulp = std::ldexp(1.0L, std::max(e - 24, -149));
  return std::fabs(static_cast<long double>(got) - exact) / ulp;
}

void one_million_sums(int64_t n) {
  std::mt19937_64 rng(2024);
  for (const bool positive : {true, false}) {
    host_tensor in(TSR_FLOAT32, {n});
    std::uniform_real_distribution<float> u(positive ? 0.0f : -1.0f, 1.0f);
    long double exact = 0;
    for (int64_t i = 0; i < n; ++i) {
      const float x = u(rng);
      static_cast<float*>(in.desc().data)[i] = x;
      exact += x;
    }
    host_tensor out(TSR_FLOAT32, {1}, {0});
    ASSERT_EQ(reduce("sum.dim_IntList", in, std::vector<int64_t>{0}, out), nullptr);
    const float got = static_cast<float*>(out.desc().data)[0];
    EXPECT_LE(ulps_off(got, exact), 1.0L)
        << "got " << got << " exact " << static_cast<double>(exact);
    host_tensor mean_out(TSR_FLOAT32, {1}, {0});
    ASSERT_EQ(reduce("mean.dim", in, std::vector<int64_t>{0}, mean_out), nullptr);
    const float mean = static_cast<float*>(mean_out.desc().data)[0];
    EXPECT_LE(ulps_off(mean, exact / n), 1.0L);
  }
}

void large_row_and_column_sums(long double lane_roundoff) {
  // (2048, 640) float32: over dim 0 (column sums) and dim 1 (row sums), large
  // enough to run in parallel.
  const int64_t rows = 2048, cols = 640;
  host_tensor in(TSR_FLOAT32, {rows, cols});
  std::mt19937_64 rng(8);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (int64_t i = 0; i < rows * cols; ++i) static_cast<float*>(in.desc().data)[i] = u(rng);
  for (int dim : {0, 1}) {
    std::vector<bool> reduced = {dim == 0, dim == 1};
    host_tensor out = keepdim_out(TSR_FLOAT32, in.sizes(), reduced, false);
    ASSERT_EQ(reduce("sum.dim_IntList", in, std::vector<int64_t>{dim}, out), nullptr);
    expect_reduction("sum.dim_IntList", in, reduced, out, lane_roundoff);
  }
  // The same through a transposed view: dim 1 of the view is memory's dim 0.
  host_tensor view = in;
  std::swap(view.desc().sizes[0], view.desc().sizes[1]);
  std::swap(view.desc().strides[0], view.desc().strides[1]);
  host_tensor out = keepdim_out(TSR_FLOAT32, {cols, rows}, {false, true}, false);
  ASSERT_EQ(reduce("sum.dim_IntList", view, std::vector<int64_t>{1}, out), nullptr);
  for (int64_t j = 0; j < cols; j += 37) {
    long double exact = 0;
    for (int64_t i = 0; i < rows; ++i) exact += static_cast<float*>(in.desc().data)[i * cols + j];
    EXPECT_LE(ulps_off(static_cast<float*>(out.desc().data)[j], exact), 1.0L);
  }
}

// The float32 lane error allowed under `isa` (see the top of the file).
long double float32_lane_roundoff(const char* isa) {
  return std::string(isa) != "baseline" ? 20 * std::ldexp(1.0L, -24) : 0;
}

TEST(SumAccuracy, OneMillionFloat32SumsStayWithinAnUlpOfTheExactSum) {
  const int64_t n = 1 << 20;
  for (const char* isa : available_isas()) {
    SCOPED_TRACE(isa);
    const isa_scope scope(isa);
    one_million_sums(n);
  }
}

TEST(SumAccuracy, LargeRowAndColumnReductionsMatchTheReference) {
  for (const char* isa : available_isas()) {
    SCOPED_TRACE(isa);
    const isa_scope scope(isa);
    large_row_and_column_sums(float32_lane_roundoff(isa));
  }
}

TEST(ReduceBadCalls, UnresolvedDimsAndWrongOutputsAreInvalid) {
  host_tensor in(TSR_FLOAT32, {2, 3});
  host_tensor out(TSR_FLOAT32, {1, 3}, {0, 1});
  EXPECT_EQ(code_of(reduce("sum.dim_IntList", in, std::vector<int64_t>{-1}, out)),
            TSR_INVALID_ARGUMENT);
  EXPECT_EQ(code_of(reduce("sum.dim_IntList", in, std::vector<int64_t>{1, 0}, out)),
            TSR_INVALID_ARGUMENT);
  EXPECT_EQ(code_of(reduce("sum.dim_IntList", in, std::vector<int64_t>{2}, out)),
            TSR_INVALID_ARGUMENT);
  EXPECT_EQ(code_of(reduce("sum.dim_IntList", in, std::vector<int64_t>{1}, out)),
            TSR_INVALID_ARGUMENT);  // out should be (2, 1)
  host_tensor ints(TSR_INT64, {2, 3});
  host_tensor int_out(TSR_INT64, {1, 3}, {0, 1});
  EXPECT_EQ(code_of(reduce("mean.dim", ints, std::vector<int64_t>{0}, int_out)), TSR_UNIMPLEMENTED);
  // out must have self's dtype (SUM) ...
  host_tensor f64_out(TSR_FLOAT64, {1, 3}, {0, 1});
  EXPECT_EQ(code_of(reduce("sum.dim_IntList", in, std::vector<int64_t>{0}, f64_out)),
            TSR_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace cpu_test
