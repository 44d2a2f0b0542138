// isa_bodies_test.cpp - every per-ISA body of the CPU plugin's hot loops
// (plugins/cpu/src/isa.hpp) against a long double reference: float32
// add/sub/mul/div, float32/float64 sums, softmax/log_softmax lines and
// layer_norm rows, at lengths that leave vector tails and at output addresses
// off the 64-byte alignment streaming stores need; and, for the AVX-512 bodies,
// the same above the last-level cache, where they write with streaming stores.
//
// Each IsaBodies test runs once per "isa" value (baseline, avx2, avx512), the
// Avx512StreamingStores ones with "avx512"; on a processor without an
// extension they are skipped and say which /proc/cpuinfo flags are missing. Contracts checked:
//   - float32 arithmetic is the correctly rounded result of x op fl(alpha*y)
//     (bit for bit; every body rounds as the baseline loop);
//   - sums are within the bound reduce_test.cpp states for the lane bodies;
//   - softmax within 32 float32 ulps (relative) of the exact value;
//   - layer_norm within its float32 accumulation bound, and bit for bit equal
//     to the baseline body (the AVX-512 body promises the same arithmetic).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "plugin_harness.hpp"

namespace cpu_test {
namespace {

constexpr long double kU32 = 0x1p-24L;

class IsaBodies : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    const std::string reason = isa_unavailable_reason(GetParam());
    if (!reason.empty()) GTEST_SKIP() << reason;
  }
};

// Elements in an output large enough for the plugin to stream it: its
// threshold is cpu0's last-level cache as sysfs reports it (device_info.cpp;
// sysconf, then 32 MiB, where sysfs has none); a quarter more so every path of
// a long loop runs.
int64_t streaming_floats() {
  int64_t bytes = 0;
  int best_level = 0;
  for (int index = 0; index < 8; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index);
    std::ifstream level_file(dir + "/level"), size_file(dir + "/size");
    int level = 0;
    std::string size;
    if (!(level_file >> level) || !(size_file >> size) || size.empty()) continue;
    int64_t b = std::atoll(size.c_str());
    if (size.back() == 'K') b <<= 10;
    if (size.back() == 'M') b <<= 20;
    if (level > best_level && b > 0) {
      best_level = level;
      bytes = b;
    }
  }
  if (bytes <= 0) bytes = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (bytes <= 0) bytes = sysconf(_SC_LEVEL2_CACHE_SIZE);
  if (bytes <= 0) bytes = int64_t{32} << 20;
  return bytes / 4 * 5 / 4 + 37;
}

// The streaming-store tests run under isa "avx512" only (the bodies that
// stream); skipped with the reason elsewhere.
class Avx512StreamingStores : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string reason = isa_unavailable_reason("avx512");
    if (!reason.empty()) GTEST_SKIP() << reason;
  }
};

// A 1-D float32 (or float64) view of n elements starting `offset` elements
// into `t` (so the data address can be off the 64-byte alignment); stride 0
// makes it a broadcast scalar.
tsr_tensor_desc view(const host_tensor& t, int64_t offset, int64_t n, int64_t stride = 1) {
  tsr_tensor_desc d = t.desc();
  const int64_t element = t.dtype() == TSR_FLOAT64 ? 8 : 4;
  d.ndim = 1;
  d.sizes[0] = n;
  d.strides[0] = stride;
  d.data = static_cast<char*>(d.data) + offset * element;
  d.byte_offset += offset * element;
  return d;
}

tsr_value desc_value(const tsr_tensor_desc& d) {
  tsr_value v{};
  v.tag = TSR_VALUE_TENSOR;
  v.u.desc = &d;
  return v;
}

float* floats(const host_tensor& t) { return static_cast<float*>(t.desc().data); }

void fill_uniform(float* p, int64_t n, uint64_t seed, float lo, float hi) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  for (int64_t i = 0; i < n; ++i) p[i] = u(rng);
}

enum class op { add, sub, mul, div };

const char* schema(op o) {
  switch (o) {
    case op::add:
      return "add.Tensor";
    case op::sub:
      return "sub.Tensor";
    case op::mul:
      return "mul.Tensor";
    default:
      return "div.Tensor";
  }
}

// fl(x op fl(alpha * y)): the products and sums of two floats are exact in
// long double (64-bit significand) for the magnitudes used here, so one
// rounding to float gives the correctly rounded result; the quotient is
// rounded twice (to 64 bits, then 24), which differs from one rounding with
// probability below 2^-39 per element.
float reference(op o, float x, float y, float alpha) {
  const long double a = x;
  const auto b = static_cast<long double>(static_cast<float>(static_cast<long double>(alpha) * y));
  switch (o) {
    case op::add:
      return static_cast<float>(a + b);
    case op::sub:
      return static_cast<float>(a - b);
    case op::mul:
      return static_cast<float>(a * static_cast<long double>(y));
    default:
      return static_cast<float>(a / static_cast<long double>(y));
  }
}

bool same_bits(float a, float b) {
  return std::memcmp(&a, &b, sizeof a) == 0 || (std::isnan(a) && std::isnan(b));
}

// Calls o on views of x, y (or y[0] broadcast) and out, n elements each, and
// checks every element; out may be x's storage (in place).
void check_binary(op o, float alpha, const host_tensor& x_store, int64_t x_off,
                  const host_tensor& y_store, int64_t y_off, bool y_scalar,
                  const host_tensor& out_store, int64_t out_off, int64_t n) {
  const tsr_tensor_desc xd = view(x_store, x_off, n);
  const tsr_tensor_desc yd = view(y_store, y_off, n, y_scalar ? 0 : 1);
  const tsr_tensor_desc od = view(out_store, out_off, n);
  const float* x = static_cast<const float*>(xd.data);
  const float* y = static_cast<const float*>(yd.data);
  std::vector<float> expected(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) expected[i] = reference(o, x[i], y[y_scalar ? 0 : i], alpha);
  std::vector<tsr_value> args = {desc_value(xd), desc_value(yd)};
  if (o == op::add || o == op::sub) args.push_back(scalar_value(float_scalar(alpha)));
  std::vector<tsr_tensor_desc> outs = {od};
  const status_ptr s = test_plugin::get().call(schema(o), args, outs);
  ASSERT_EQ(s, nullptr) << message_of(s);
  const float* got = static_cast<const float*>(od.data);
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_TRUE(same_bits(got[i], expected[i]))
        << schema(o) << " n " << n << " element " << i << ": got " << got[i] << " expected "
        << expected[i];
  }
}

TEST_P(IsaBodies, Float32ArithmeticIsCorrectlyRoundedAtEveryLengthAndAlignment) {
  const isa_scope scope(GetParam());
  const int64_t capacity = 5000 + 8;
  host_tensor x(TSR_FLOAT32, {capacity}), y(TSR_FLOAT32, {capacity}), out(TSR_FLOAT32, {capacity});
  fill_uniform(floats(x), capacity, 1, -4.0f, 4.0f);
  fill_uniform(floats(y), capacity, 2, 0.25f, 4.0f);  // never 0: div stays finite
  for (int64_t i = 1; i < capacity; i += 7) floats(y)[i] = -floats(y)[i];
  const std::vector<float> x_saved(floats(x), floats(x) + capacity);
  for (op o : {op::add, op::sub, op::mul, op::div}) {
    for (float alpha : {1.0f, 2.5f}) {
      if (alpha != 1.0f && (o == op::mul || o == op::div)) continue;
      for (int64_t n : {1, 5, 15, 16, 17, 63, 64, 65, 130, 1000, 5000}) {
        for (int64_t off : {0, 1, 3}) {
          for (bool y_scalar : {false, true}) {
            SCOPED_TRACE(std::string(schema(o)) + " alpha " + std::to_string(alpha) + " n " +
                         std::to_string(n) + " offset " + std::to_string(off) +
                         (y_scalar ? " scalar other" : ""));
            check_binary(o, alpha, x, off, y, 5 - off, y_scalar, out, off, n);
            check_binary(o, alpha, x, off, y, 5 - off, y_scalar, x, off, n);  // in place
            std::copy(x_saved.begin(), x_saved.end(), floats(x));
          }
        }
      }
    }
  }
}

TEST_F(Avx512StreamingStores, Float32ArithmeticAboveTheLastLevelCacheIsCorrectlyRounded) {
  const isa_scope scope("avx512");
  const int64_t n = streaming_floats();
  host_tensor x(TSR_FLOAT32, {n + 1}), y(TSR_FLOAT32, {n + 1}), out(TSR_FLOAT32, {n + 1});
  fill_uniform(floats(x), n + 1, 3, -4.0f, 4.0f);
  fill_uniform(floats(y), n + 1, 4, 0.25f, 4.0f);
  for (op o : {op::add, op::mul}) {
    for (int64_t off : {0, 1}) {  // 1: the output starts off the 64-byte alignment
      SCOPED_TRACE(std::string(schema(o)) + " offset " + std::to_string(off));
      check_binary(o, 1.0f, x, off, y, 1 - off, false, out, off, n);
    }
  }
  check_binary(op::add, 2.5f, x, 0, y, 0, true, out, 0, n);
}

// The sum of n elements `offset` into `in` (float32 or float64) by the _reduce
// kernel, checked against the exact sum.
void check_sum(const host_tensor& in, int64_t offset, int64_t n) {
  const tsr_dtype d = in.dtype();
  const tsr_tensor_desc xd = view(in, offset, n);
  host_tensor out(d, {1}, {0});
  tsr_value code{};
  code.tag = TSR_VALUE_INT;
  code.u.i = TSR_REDUCE_SUM;
  const std::vector<int64_t> dims = {0};
  std::vector<tsr_value> args = {desc_value(xd), code, int_list_value(dims), bool_value(false)};
  std::vector<tsr_tensor_desc> outs = {out.desc()};
  const status_ptr s = test_plugin::get().call("_reduce", args, outs);
  ASSERT_EQ(s, nullptr) << message_of(s);
  long double exact = 0, magnitude = 0;
  for (int64_t i = 0; i < n; ++i) {
    const long double v = d == TSR_FLOAT64 ? static_cast<const double*>(xd.data)[i]
                                           : static_cast<const float*>(xd.data)[i];
    exact += v;
    magnitude += std::fabs(v);
  }
  const long double got = out.get({0}).re;
  const long double lanes = d == TSR_FLOAT32 ? 20 * kU32 : 0;
  const long double bound = unit_roundoff(d) * std::fabs(exact) +
                            (lanes + static_cast<long double>(n) * 0x1p-53L) * magnitude;
  EXPECT_LE(std::fabs(got - exact), bound)
      << name_of(d) << " n " << n << " offset " << offset << ": got " << static_cast<double>(got)
      << " exact " << static_cast<double>(exact);
}

TEST_P(IsaBodies, Float32AndFloat64SumsStayWithinTheLaneBound) {
  const isa_scope scope(GetParam());
  const int64_t capacity = 100003 + 8;
  for (tsr_dtype d : {TSR_FLOAT32, TSR_FLOAT64}) {
    host_tensor in(d, {capacity});
    std::mt19937_64 rng(5);
    std::uniform_real_distribution<double> u(-1.0, 3.0);
    for (int64_t i = 0; i < capacity; ++i) in.set({i}, ref_value{u(rng), 0});
    for (int64_t n : {1, 7, 8, 9, 63, 1023, 1024, 1025, 4097, 100003}) {
      for (int64_t off : {0, 3}) check_sum(in, off, n);
    }
  }
}

// softmax or log_softmax over the rows of a rows x cols float32 matrix stored
// `offset` floats into its buffer, against the exact values.
void check_softmax_rows(bool log, int64_t rows, int64_t cols, int64_t offset) {
  host_tensor buffer(TSR_FLOAT32, {rows * cols + offset});
  host_tensor out_buffer(TSR_FLOAT32, {rows * cols + offset});
  fill_uniform(floats(buffer), rows * cols + offset, 7 + static_cast<uint64_t>(cols), -30, 30);
  auto matrix = [&](const host_tensor& t) {
    tsr_tensor_desc d = view(t, offset, rows);
    d.ndim = 2;
    d.sizes[1] = cols;
    d.strides[0] = cols;
    d.strides[1] = 1;
    return d;
  };
  const tsr_tensor_desc in = matrix(buffer);
  tsr_value dim{};
  dim.tag = TSR_VALUE_INT;
  dim.u.i = 1;
  std::vector<tsr_value> args = {desc_value(in), dim, bool_value(false)};
  std::vector<tsr_tensor_desc> outs = {matrix(out_buffer)};
  const status_ptr s = test_plugin::get().call(log ? "_log_softmax" : "_softmax", args, outs);
  ASSERT_EQ(s, nullptr) << message_of(s);
  const float* x = static_cast<const float*>(in.data);
  const float* y = static_cast<const float*>(outs[0].data);
  std::vector<long double> exps(static_cast<size_t>(cols));
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    const long double m = *std::max_element(xr, xr + cols);
    long double sum = 0;
    for (int64_t k = 0; k < cols; ++k) {
      exps[k] = std::exp(xr[k] - m);
      sum += exps[k];
    }
    for (int64_t k = 0; k < cols; ++k) {
      const long double e = log ? xr[k] - m - std::log(sum) : exps[k] / sum;
      ASSERT_LE(std::fabs(y[r * cols + k] - e), 32 * kU32 * (1 + std::fabs(e)))
          << (log ? "log_softmax" : "softmax") << " " << rows << "x" << cols << " offset " << offset
          << " at " << r << "," << k << ": got " << y[r * cols + k] << " expected "
          << static_cast<double>(e);
    }
  }
}

TEST_P(IsaBodies, SoftmaxLinesMatchTheReferenceAtEveryWidthAndAlignment) {
  const isa_scope scope(GetParam());
  for (bool log : {false, true}) {
    for (int64_t cols : {1, 3, 16, 17, 100, 1025, 4099, 9000}) {
      for (int64_t offset : {0, 1}) check_softmax_rows(log, 3, cols, offset);
    }
  }
}

TEST_F(Avx512StreamingStores, SoftmaxAboveTheLastLevelCacheMatchesTheReference) {
  const isa_scope scope("avx512");
  // 4099-wide lines fit the AVX-512 body's stack buffer for streamed lines and
  // start at every alignment; 9000-wide ones do not fit it.
  const int64_t narrow = 4099, wide = 9000;
  check_softmax_rows(false, streaming_floats() / narrow + 1, narrow, 1);
  check_softmax_rows(true, streaming_floats() / narrow + 1, narrow, 0);
  check_softmax_rows(false, streaming_floats() / wide + 1, wide, 0);
}

struct layer_norm_result {
  std::vector<float> y, mean, rstd;
};

// native_layer_norm over the last dim of a rows x n matrix (x stored `offset`
// floats into its buffer), with optional weight and bias.
layer_norm_result run_layer_norm(const host_tensor& x, int64_t offset, int64_t rows, int64_t n,
                                 const host_tensor* w, const host_tensor* b) {
  tsr_tensor_desc in = view(x, offset, rows);
  in.ndim = 2;
  in.sizes[1] = n;
  in.strides[0] = n;
  in.strides[1] = 1;
  host_tensor y_buffer(TSR_FLOAT32, {rows * n + offset});
  tsr_tensor_desc y = view(y_buffer, offset, rows);
  y.ndim = 2;
  y.sizes[1] = n;
  y.strides[0] = n;
  y.strides[1] = 1;
  host_tensor mean(TSR_FLOAT32, {rows}), rstd(TSR_FLOAT32, {rows});
  const std::vector<int64_t> shape = {n};
  tsr_value eps{};
  eps.tag = TSR_VALUE_FLOAT;
  eps.u.f = 1e-5;
  std::vector<tsr_value> args = {desc_value(in), int_list_value(shape),
                                 w ? tensor_value(*w) : none_value(),
                                 b ? tensor_value(*b) : none_value(), eps};
  std::vector<tsr_tensor_desc> outs = {y, mean.desc(), rstd.desc()};
  const status_ptr s = test_plugin::get().call("native_layer_norm", args, outs);
  EXPECT_EQ(s, nullptr) << message_of(s);
  const float* yp = static_cast<const float*>(y.data);
  return {std::vector<float>(yp, yp + rows * n),
          std::vector<float>(floats(mean), floats(mean) + rows),
          std::vector<float>(floats(rstd), floats(rstd) + rows)};
}

// every_affine: with and without weight and bias (else with both only).
void check_layer_norm(const char* isa, int64_t rows, int64_t n, int64_t offset, bool every_affine) {
  host_tensor x(TSR_FLOAT32, {rows * n + offset}), w(TSR_FLOAT32, {n}), b(TSR_FLOAT32, {n});
  fill_uniform(floats(x), rows * n + offset, 11 + static_cast<uint64_t>(n), -3.0f, 5.0f);
  fill_uniform(floats(w), n, 12, -2.0f, 2.0f);
  fill_uniform(floats(b), n, 13, -1.0f, 1.0f);
  const float* xp = floats(x) + offset;
  for (int affine = every_affine ? 0 : 3; affine < 4; ++affine) {
    const host_tensor* wp = (affine & 1) ? &w : nullptr;
    const host_tensor* bp = (affine & 2) ? &b : nullptr;
    SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(n) + " offset " +
                 std::to_string(offset) + (wp ? " weight" : "") + (bp ? " bias" : ""));
    layer_norm_result got;
    {
      const isa_scope scope(isa);
      got = run_layer_norm(x, offset, rows, n, wp, bp);
    }
    for (int64_t r = 0; r < rows; ++r) {
      const float* xr = xp + r * n;
      long double mu = 0, var = 0, peak = 0;
      for (int64_t i = 0; i < n; ++i) mu += xr[i];
      mu /= n;
      for (int64_t i = 0; i < n; ++i) {
        var += (xr[i] - mu) * (xr[i] - mu);
        peak = std::max(peak, std::fabs(xr[i] - mu));
      }
      var /= n;
      const long double rs = 1 / std::sqrt(var + 1e-5L);
      // float32 lanes of n / 16 additions each, for mean and variance.
      const long double u = (static_cast<long double>(n) / 16 + 32) * kU32;
      ASSERT_LE(std::fabs(got.mean[r] - mu), u * 5);
      ASSERT_LE(std::fabs(got.rstd[r] - rs), u * rs);
      for (int64_t i = 0; i < n; ++i) {
        const long double wi = wp ? floats(w)[i] : 1, bi = bp ? floats(b)[i] : 0;
        const long double e = (xr[i] - mu) * rs * wi + bi;
        const long double tol = u * (std::fabs(wi) * (5 + peak) * rs + std::fabs(bi) + 1);
        ASSERT_LE(std::fabs(got.y[r * n + i] - e), tol)
            << "row " << r << " element " << i << ": got " << got.y[r * n + i] << " expected "
            << static_cast<double>(e);
      }
    }
    if (std::string(isa) != "baseline") {
      const isa_scope baseline("baseline");
      const layer_norm_result base = run_layer_norm(x, offset, rows, n, wp, bp);
      for (size_t i = 0; i < base.y.size(); ++i)
        ASSERT_TRUE(same_bits(got.y[i], base.y[i])) << "element " << i << " differs from baseline";
      for (size_t r = 0; r < base.mean.size(); ++r) {
        ASSERT_TRUE(same_bits(got.mean[r], base.mean[r]));
        ASSERT_TRUE(same_bits(got.rstd[r], base.rstd[r]));
      }
    }
  }
}

TEST_P(IsaBodies, LayerNormRowsMatchTheReferenceAndTheBaselineBody) {
  for (int64_t n : {1, 7, 16, 33, 4099}) check_layer_norm(GetParam(), 5, n, 1, true);
}

TEST_F(Avx512StreamingStores, LayerNormAboveTheLastLevelCacheMatchesTheReference) {
  const int64_t n = 4096;
  check_layer_norm("avx512", streaming_floats() / n + 1, n, 0, false);
}

INSTANTIATE_TEST_SUITE_P(EveryIsa, IsaBodies, ::testing::ValuesIn(all_isas()),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
}  // namespace cpu_test
