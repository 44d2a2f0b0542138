// large_perf_test - the "large" shape class of family "ops" (results of
// representative ops on inputs of a million elements against a float64
// reference computed here), and family "perf" (the same calls timed: the
// median of 5 after a warm-up, recorded as the test property "ms"; run only
// by `tessera conformance --perf`, which compares it with a baseline).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "case_info.h"
#include "conformance/tolerances.hpp"
#include "suite_support.h"

namespace tessera::conformance {
namespace {

// One op on large inputs: inputs as float64 host data, the op's call, and
// the float64 reference of its result.
struct LargeCase {
  std::string name;  // "add_Tensor": the case id is ops/large__<name>__<dtype>
  std::string op;
  std::vector<std::vector<int64_t>> shapes;
  // Arguments after the tensor inputs (dims, flags).
  std::function<std::vector<tsr_value>(const std::vector<tsr_tensor*>&)> args;
  std::function<std::vector<double>(const std::vector<std::vector<double>>&)> reference;
  bool loose = false;  // accumulating ops: tolerances.hpp loose()
  // Input 0 is a transposed view (non-contiguous): shapes[0] is its logical
  // shape, its storage the transpose.
  bool transpose_first = false;
  // Absolute tolerance multiplier: a result summing n terms carries up to
  // sqrt(n)..n roundings of the terms' scale.
  double atol_scale = 1;
};

// Deterministic inputs in [-1, 1).
std::vector<double> input_values(size_t n, uint32_t seed) {
  std::vector<double> v(n);
  uint32_t s = seed * 2654435761u + 1;
  for (double& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<double>(s >> 8) / static_cast<double>(1u << 23) - 1.0;
  }
  return v;
}

int64_t numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

const std::vector<LargeCase>& large_cases() {
  static const std::vector<LargeCase> cases = [] {
    using V = std::vector<std::vector<double>>;
    std::vector<LargeCase> c;
    const std::vector<int64_t> big = {1024, 1024};
    auto tensors = [](const std::vector<tsr_tensor*>& t) {
      std::vector<tsr_value> v;
      for (tsr_tensor* x : t) v.push_back(tensor_value(x));
      return v;
    };
    c.push_back({"add_Tensor", "add.Tensor", {big, {1024}}, tensors, [](const V& in) {
                   std::vector<double> r(in[0].size());
                   for (size_t i = 0; i < r.size(); ++i) r[i] = in[0][i] + in[1][i % 1024];
                   return r;
                 }});
    c.push_back({"mul_Tensor", "mul.Tensor", {big, big}, tensors, [](const V& in) {
                   std::vector<double> r(in[0].size());
                   for (size_t i = 0; i < r.size(); ++i) r[i] = in[0][i] * in[1][i];
                   return r;
                 }});
    c.push_back({"exp",
                 "exp",
                 {big},
                 tensors,
                 [](const V& in) {
                   std::vector<double> r(in[0].size());
                   for (size_t i = 0; i < r.size(); ++i) r[i] = std::exp(in[0][i]);
                   return r;
                 },
                 true});
    c.push_back({"sum",
                 "sum",
                 {big},
                 tensors,
                 [](const V& in) {
                   double s = 0;
                   for (double x : in[0]) s += x;
                   return std::vector<double>{s};
                 },
                 true,
                 false,
                 1024});
    c.push_back({"softmax_last_dim",
                 "_softmax",
                 {big},
                 [tensors](const std::vector<tsr_tensor*>& t) {
                   std::vector<tsr_value> v = tensors(t);
                   v.push_back(int_value(-1));
                   tsr_value f{};
                   f.tag = TSR_VALUE_BOOL;
                   v.push_back(f);
                   return v;
                 },
                 [](const V& in) {
                   std::vector<double> r(in[0].size());
                   for (size_t row = 0; row < 1024; ++row) {
                     double m = -INFINITY, s = 0;
                     for (size_t j = 0; j < 1024; ++j) m = std::max(m, in[0][row * 1024 + j]);
                     for (size_t j = 0; j < 1024; ++j) s += std::exp(in[0][row * 1024 + j] - m);
                     for (size_t j = 0; j < 1024; ++j)
                       r[row * 1024 + j] = std::exp(in[0][row * 1024 + j] - m) / s;
                   }
                   return r;
                 },
                 true});
    // 256 x 512 @ 512 x 384 in float64 (mm and mm_transposed).
    auto mm_reference = [](const V& in) {
      std::vector<double> r(256 * 384, 0.0);
      for (size_t i = 0; i < 256; ++i)
        for (size_t k = 0; k < 512; ++k)
          for (size_t j = 0; j < 384; ++j)
            r[i * 384 + j] += in[0][i * 512 + k] * in[1][k * 384 + j];
      return r;
    };
    c.push_back({"mm", "mm", {{256, 512}, {512, 384}}, tensors, mm_reference, true});
    // Rows of a 1024 x 1024 matrix, reduced or scanned along dim `d`.
    auto rows = [](const std::vector<double>& x, auto&& per_row) {
      std::vector<double> out;
      for (size_t r = 0; r < 1024; ++r)
        per_row(std::vector<double>(x.begin() + static_cast<std::ptrdiff_t>(r * 1024),
                                    x.begin() + static_cast<std::ptrdiff_t>(r * 1024 + 1024)),
                out);
      return out;
    };
    auto with = [tensors](std::vector<tsr_value> extra) {
      return [tensors, extra](const std::vector<tsr_tensor*>& t) {
        std::vector<tsr_value> v = tensors(t);
        v.insert(v.end(), extra.begin(), extra.end());
        return v;
      };
    };
    static const int64_t kDim0[1] = {0}, kDim1[1] = {1}, kLast[1] = {1024}, kOnes[2] = {1, 1};
    auto ints = [](const int64_t* p, int32_t n) {
      tsr_value v{};
      v.tag = TSR_VALUE_INT_LIST;
      v.len = n;
      v.u.ints = p;
      return v;
    };
    c.push_back({"clone_transposed",
                 "clone",
                 {big},
                 tensors,
                 [](const V& in) { return in[0]; },
                 false,
                 true});
    c.push_back(
        {"mm_transposed", "mm", {{256, 512}, {512, 384}}, tensors, mm_reference, true, true});
    c.push_back({"bmm",
                 "bmm",
                 {{16, 128, 256}, {16, 256, 128}},
                 tensors,
                 [](const V& in) {
                   std::vector<double> r(16 * 128 * 128, 0.0);
                   for (size_t b = 0; b < 16; ++b)
                     for (size_t i = 0; i < 128; ++i)
                       for (size_t k = 0; k < 256; ++k)
                         for (size_t j = 0; j < 128; ++j)
                           r[(b * 128 + i) * 128 + j] +=
                               in[0][(b * 128 + i) * 256 + k] * in[1][(b * 256 + k) * 128 + j];
                   return r;
                 },
                 true});
    c.push_back({"maximum", "maximum", {big, big}, tensors, [](const V& in) {
                   std::vector<double> r(in[0].size());
                   for (size_t i = 0; i < r.size(); ++i) r[i] = std::max(in[0][i], in[1][i]);
                   return r;
                 }});
    c.push_back({"amax_dim1", "amax", {big}, with({ints(kDim1, 1)}), [rows](const V& in) {
                   return rows(in[0], [](const std::vector<double>& row, std::vector<double>& out) {
                     out.push_back(*std::max_element(row.begin(), row.end()));
                   });
                 }});
    c.push_back({"argmax_dim1",
                 "argmax",
                 {big},
                 with({int_value(1)}),
                 [rows](const V& in) {
                   return rows(in[0], [](const std::vector<double>& row, std::vector<double>& out) {
                     out.push_back(static_cast<double>(std::max_element(row.begin(), row.end()) -
                                                       row.begin()));
                   });
                 },
                 false,
                 true});
    c.push_back({"mean_dim0",
                 "mean.dim",
                 {big},
                 with({ints(kDim0, 1)}),
                 [](const V& in) {
                   std::vector<double> r(1024, 0.0);
                   for (size_t i = 0; i < 1024; ++i)
                     for (size_t j = 0; j < 1024; ++j) r[j] += in[0][i * 1024 + j] / 1024;
                   return r;
                 },
                 true});
    c.push_back({"cumsum_dim1",
                 "cumsum",
                 {big},
                 with({int_value(1)}),
                 [rows](const V& in) {
                   return rows(in[0], [](const std::vector<double>& row, std::vector<double>& out) {
                     double s = 0;
                     for (double x : row) out.push_back(s += x);
                   });
                 },
                 true,
                 false,
                 32});
    c.push_back({"sort_dim1",
                 "sort",
                 {big},
                 with({int_value(1)}),
                 [rows](const V& in) {
                   return rows(in[0], [](std::vector<double> row, std::vector<double>& out) {
                     std::sort(row.begin(), row.end());
                     out.insert(out.end(), row.begin(), row.end());
                   });
                 },
                 false,
                 true});
    c.push_back({"layer_norm",
                 "layer_norm",
                 {big},
                 with({ints(kLast, 1)}),
                 [rows](const V& in) {
                   return rows(in[0], [](const std::vector<double>& row, std::vector<double>& out) {
                     double mean = 0, var = 0;
                     for (double x : row) mean += x / 1024;
                     for (double x : row) var += (x - mean) * (x - mean) / 1024;
                     for (double x : row) out.push_back((x - mean) / std::sqrt(var + 1e-5));
                   });
                 },
                 true});
    c.push_back({"conv2d_3x3",
                 "conv2d",
                 {{4, 16, 64, 64}, {32, 16, 3, 3}},
                 [tensors, ints](const std::vector<tsr_tensor*>& t) {
                   std::vector<tsr_value> v = tensors(t);
                   v.push_back(tsr_value{});  // bias None
                   v.push_back(ints(kOnes, 2));
                   v.push_back(ints(kOnes, 2));  // padding 1
                   return v;
                 },
                 [](const V& in) {
                   const std::vector<double>& x = in[0];
                   const std::vector<double>& w = in[1];
                   std::vector<double> r(4 * 32 * 64 * 64, 0.0);
                   for (size_t n = 0; n < 4; ++n)
                     for (size_t o = 0; o < 32; ++o)
                       for (size_t ci = 0; ci < 16; ++ci)
                         for (size_t ky = 0; ky < 3; ++ky)
                           for (size_t kx = 0; kx < 3; ++kx) {
                             const double wk = w[((o * 16 + ci) * 3 + ky) * 3 + kx];
                             for (size_t y = 0; y < 64; ++y) {
                               const ptrdiff_t iy = static_cast<ptrdiff_t>(y + ky) - 1;
                               if (iy < 0 || iy >= 64) continue;
                               double* out = &r[((n * 32 + o) * 64 + y) * 64];
                               const double* row =
                                   &x[((n * 16 + ci) * 64 + static_cast<size_t>(iy)) * 64];
                               for (size_t xx = 0; xx < 64; ++xx) {
                                 const ptrdiff_t ix = static_cast<ptrdiff_t>(xx + kx) - 1;
                                 if (ix >= 0 && ix < 64) out[xx] += wk * row[ix];
                               }
                             }
                           }
                   return r;
                 },
                 true});
    return c;
  }();
  return cases;
}

// Floating dtypes to try; a case runs for those the device claims.
constexpr tsr_dtype kDtypes[] = {TSR_FLOAT32, TSR_FLOAT64};

struct Param {
  size_t index;
  tsr_dtype dtype;
};

std::vector<Param> params() {
  std::vector<Param> out;
  for (size_t i = 0; i < large_cases().size(); ++i)
    for (tsr_dtype d : kDtypes) out.push_back({i, d});
  return out;
}

std::string param_name(const testing::TestParamInfo<Param>& info) {
  return large_cases()[info.param.index].name + "__" + tsr_dtype_name(info.param.dtype);
}

// Registers op/dtype/shape class of every case for the report.
const bool kRegistered = [] {
  for (const Param& p : params()) {
    const LargeCase& c = large_cases()[p.index];
    const std::string suffix = c.name + "__" + tsr_dtype_name(p.dtype);
    register_case_info("ops/large__" + suffix, c.op, tsr_dtype_name(p.dtype), "large");
    register_case_info("perf/" + suffix, c.op, tsr_dtype_name(p.dtype), "large");
  }
  return true;
}();

// The case's inputs on the device (in `dtype`) and on the host (float64,
// rounded through `dtype` so the reference sees what the device sees).
struct Inputs {
  std::vector<TensorPtr> device;
  std::vector<std::vector<double>> host;
};

Inputs make_inputs(const LargeCase& c, tsr_dtype dtype) {
  Inputs in;
  for (size_t k = 0; k < c.shapes.size(); ++k) {
    std::vector<double> v =
        input_values(static_cast<size_t>(numel(c.shapes[k])), static_cast<uint32_t>(k + 1));
    const bool transposed = k == 0 && c.transpose_first;
    std::vector<int64_t> storage_shape = c.shapes[k];
    if (transposed) std::swap(storage_shape[0], storage_shape[1]);
    TensorPtr t = on_device(v, storage_shape, TSR_FLOAT64);
    if (transposed) {
      // v holds the storage [b, a]; the case sees its transpose [a, b].
      tsr_tensor* view = nullptr;
      check(tsr_tensor_transpose(t.get(), 0, 1, &view), "tsr_tensor_transpose");
      t.reset(view);
      const size_t a = static_cast<size_t>(c.shapes[k][0]), b = static_cast<size_t>(c.shapes[k][1]);
      std::vector<double> logical(v.size());
      for (size_t i = 0; i < a; ++i)
        for (size_t j = 0; j < b; ++j) logical[i * b + j] = v[j * a + i];
      v = std::move(logical);
    }
    if (dtype != TSR_FLOAT64) {
      tsr_tensor* converted = nullptr;
      check(tsr_tensor_to_dtype(t.get(), dtype, &converted), "tsr_tensor_to_dtype");
      t.reset(converted);
      if (dtype == TSR_FLOAT32)
        for (double& x : v) x = static_cast<double>(static_cast<float>(x));
    }
    in.device.push_back(std::move(t));
    in.host.push_back(std::move(v));
  }
  return in;
}

TensorPtr run(const LargeCase& c, const Inputs& in) {
  std::vector<tsr_tensor*> handles;
  for (const TensorPtr& t : in.device) handles.push_back(t.get());
  return call(c.op.c_str(), c.args(handles));
}

class Large : public testing::TestWithParam<Param> {};

TEST_P(Large, Case){TSR_CONFORMANCE_TRY({
  const LargeCase& c = large_cases()[GetParam().index];
  const tsr_dtype dtype = GetParam().dtype;
  if (!(properties().dtypes & TSR_DTYPE_BIT(dtype)))
    GTEST_SKIP() << "the device does not claim " << tsr_dtype_name(dtype);
  const Inputs in = make_inputs(c, dtype);
  TensorPtr out = run(c, in);
  tsr_tensor* as64 = nullptr;
  check(tsr_tensor_to_dtype(out.get(), TSR_FLOAT64, &as64), "tsr_tensor_to_dtype");
  const std::vector<double> got = to_host<double>(TensorPtr(as64).get());
  const std::vector<double> want = c.reference(in.host);
  ASSERT_EQ(got.size(), want.size());
  // A sum over n terms carries n roundings: scale the tolerance with the
  // reduction length (sum: 2^20 terms, softmax/mm rows: ~10^3).
  Tolerance tol = c.loose ? loose(dtype) : tolerance(dtype);
  tol.atol *= c.atol_scale;
  double worst = 0;
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double bound = tol.atol + tol.rtol * std::fabs(want[i]);
    const double ratio = std::fabs(got[i] - want[i]) / bound;
    worst = std::max(worst, ratio);
    if (!(ratio <= 1.0) && bad++ == 0) first = i;
  }
  RecordProperty("error", std::to_string(worst));
  EXPECT_EQ(bad, 0u) << bad << " of " << got.size() << " values differ; first at " << first << ": "
                     << got[first] << ", float64 reference " << want[first] << "; worst error "
                     << worst << "x the tolerance";
})}

INSTANTIATE_TEST_SUITE_P(Ops, Large, testing::ValuesIn(params()), param_name);

class Timing : public testing::TestWithParam<Param> {};

TEST_P(Timing, Case){TSR_CONFORMANCE_TRY({
  const LargeCase& c = large_cases()[GetParam().index];
  const tsr_dtype dtype = GetParam().dtype;
  if (!(properties().dtypes & TSR_DTYPE_BIT(dtype)))
    GTEST_SKIP() << "the device does not claim " << tsr_dtype_name(dtype);
  const Inputs in = make_inputs(c, dtype);
  std::vector<double> ms;
  for (int rep = 0; rep < 6; ++rep) {
    check(tsr_device_synchronize(runtime(), device()), "tsr_device_synchronize");
    const auto t0 = std::chrono::steady_clock::now();
    TensorPtr out = run(c, in);
    check(tsr_device_synchronize(runtime(), device()), "tsr_device_synchronize");
    const double t =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (rep > 0) ms.push_back(t);  // the first call warms caches and pools
  }
  std::sort(ms.begin(), ms.end());
  RecordProperty("ms", std::to_string(ms[ms.size() / 2]));
})}

INSTANTIATE_TEST_SUITE_P(Perf, Timing, testing::ValuesIn(params()), param_name);

}  // namespace
}  // namespace tessera::conformance
