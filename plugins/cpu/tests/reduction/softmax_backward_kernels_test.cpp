// softmax_backward_kernels_test.cpp - the CPU kernels of
// _softmax_backward_data, _log_softmax_backward_data and
// cross_entropy_loss_backward (with the cross_entropy_loss forward, whose
// rows share a body) called directly, under each "isa" value this
// processor runs (a body the processor lacks is skipped with the missing
// /proc/cpuinfo flags), against long double references of the definitions:
//   softmax:     dx = y (g - sum(g y));   log_softmax: dx = g - exp(y) sum(g)
//   cross_entropy (class targets): d/dx_c of
//     (1 - ls) (-w_t log p_t) + ls / C (-sum_c w_c log p_c)
//   = (1 - ls) w_t (p_c - [c = t]) + ls / C (W p_c - w_c), times the
//     gradient reaching the position (mean: over sum w_t of kept targets).
// Lines of 70 (vector body and tail) and 4500 (past the AVX bodies' float64
// flush every 4096 elements), along the inner, an outer and a middle dim and
// on transposed storage. Tolerances: 64 ulps of float32 relative to the
// row's scale (the sums cancel), 1e-12 for float64, float16 rounding for
// float16 results.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "../plugin_harness.hpp"

namespace cpu_test {
namespace {

tsr_value int_value(int64_t i) {
  tsr_value v{};
  v.tag = TSR_VALUE_INT;
  v.u.i = i;
  return v;
}
tsr_value dtype_value(tsr_dtype d) {
  tsr_value v{};
  v.tag = TSR_VALUE_DTYPE;
  v.u.i = d;
  return v;
}
tsr_value float_value(double f) {
  tsr_value v{};
  v.tag = TSR_VALUE_FLOAT;
  v.u.f = f;
  return v;
}

void fill_uniform(host_tensor& t, uint64_t seed, double lo, double hi) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  for_each_index(t.sizes(), [&](const std::vector<int64_t>& i) { t.set(i, ref_value{u(rng), 0}); });
}

class SoftmaxBackwardKernels : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    const std::string reason = isa_unavailable_reason(GetParam());
    if (!reason.empty()) GTEST_SKIP() << reason;
  }
};

// g and y (a valid softmax / log_softmax output along dim) of `sizes`, the
// kernel's result against the reference along every line of `dim`.
void check_lines(bool log, tsr_dtype d, tsr_dtype out_dtype, const std::vector<int64_t>& sizes,
                 int dim, bool transposed) {
  host_tensor g = transposed ? host_tensor::permuted(d, sizes, {1, 0}) : host_tensor(d, sizes);
  host_tensor y = transposed ? host_tensor::permuted(d, sizes, {1, 0}) : host_tensor(d, sizes);
  host_tensor x(TSR_FLOAT64, sizes);
  fill_uniform(g, 11, -1, 1);
  fill_uniform(x, 12, -4, 4);
  std::vector<int64_t> other = sizes;
  other[static_cast<size_t>(dim)] = 1;
  // y = softmax(x) or log_softmax(x) along dim, rounded to d.
  for_each_index(other, [&](const std::vector<int64_t>& base) {
    std::vector<int64_t> idx = base;
    long double m = -INFINITY, s = 0;
    for (int64_t k = 0; k < sizes[dim]; ++k) {
      idx[dim] = k;
      m = std::max(m, x.get(idx).re);
    }
    for (int64_t k = 0; k < sizes[dim]; ++k) {
      idx[dim] = k;
      s += std::exp(x.get(idx).re - m);
    }
    for (int64_t k = 0; k < sizes[dim]; ++k) {
      idx[dim] = k;
      const long double v = x.get(idx).re - m;
      y.set(idx, ref_value{log ? v - std::log(s) : std::exp(v) / s, 0});
    }
  });
  host_tensor out(out_dtype, sizes);
  std::vector<tsr_value> args = {tensor_value(g), tensor_value(y), int_value(dim),
                                 dtype_value(out_dtype)};
  std::vector<tsr_tensor_desc> outs = {out.desc()};
  const status_ptr st = test_plugin::get().call(
      log ? "_log_softmax_backward_data" : "_softmax_backward_data", args, outs);
  ASSERT_EQ(st, nullptr) << message_of(st);
  const long double tol = out_dtype == TSR_FLOAT64   ? 1e-12L
                          : out_dtype == TSR_FLOAT32 ? 64 * unit_roundoff(TSR_FLOAT32)
                                                     : 2 * unit_roundoff(out_dtype);
  int failures = 0;
  for_each_index(other, [&](const std::vector<int64_t>& base) {
    std::vector<int64_t> idx = base;
    long double s = 0, scale = 0;
    for (int64_t k = 0; k < sizes[dim]; ++k) {
      idx[dim] = k;
      const long double gv = g.get(idx).re, yv = y.get(idx).re;
      s += log ? gv : gv * yv;
      scale = std::max(scale, std::fabs(gv));
    }
    for (int64_t k = 0; k < sizes[dim] && failures < 5; ++k) {
      idx[dim] = k;
      const long double gv = g.get(idx).re, yv = y.get(idx).re;
      const long double e = log ? gv - std::exp(yv) * s : yv * (gv - s);
      const long double got = out.get(idx).re;
      const long double bound = tol * (std::fabs(e) + scale + (log ? std::fabs(s) : 0));
      if (!(std::fabs(got - e) <= bound)) {
        ++failures;
        ADD_FAILURE() << (log ? "log_softmax" : "softmax") << " dim " << dim << " at " << k << ": "
                      << static_cast<double>(got) << " vs " << static_cast<double>(e);
      }
    }
  });
}

TEST_P(SoftmaxBackwardKernels, LinesAlongEveryDimMatchTheReference) {
  const isa_scope scope(GetParam());
  for (bool log : {false, true}) {
    for (tsr_dtype d : {TSR_FLOAT32, TSR_FLOAT64}) {
      SCOPED_TRACE(std::string(log ? "log " : "") + (d == TSR_FLOAT32 ? "float32" : "float64"));
      check_lines(log, d, d, {33, 70}, 1, false);
      check_lines(log, d, d, {3, 4500}, 1, false);
      check_lines(log, d, d, {70, 33}, 0, false);
      check_lines(log, d, d, {5, 6, 9}, 1, false);
      check_lines(log, d, d, {40, 37}, 1, true);
      check_lines(log, d, d, {40, 37}, 0, true);
    }
    // The backward of a half_to_float softmax: float32 in, float16/bfloat16 out.
    check_lines(log, TSR_FLOAT32, TSR_FLOAT16, {7, 70}, 1, false);
    check_lines(log, TSR_FLOAT32, TSR_BFLOAT16, {70, 7}, 0, false);
  }
}

TEST_P(SoftmaxBackwardKernels, MalformedCallsGiveStatuses) {
  const isa_scope scope(GetParam());
  host_tensor g(TSR_FLOAT32, {4, 5}), y(TSR_FLOAT64, {4, 5}), out(TSR_FLOAT32, {4, 5});
  std::vector<tsr_tensor_desc> outs = {out.desc()};
  std::vector<tsr_value> args = {tensor_value(g), tensor_value(y), int_value(1),
                                 dtype_value(TSR_FLOAT32)};
  // output of another dtype than grad_output
  EXPECT_EQ(code_of(test_plugin::get().call("_softmax_backward_data", args, outs)),
            TSR_INVALID_ARGUMENT);
  host_tensor y32(TSR_FLOAT32, {4, 5});
  args[1] = tensor_value(y32);
  args[3] = dtype_value(TSR_FLOAT64);  // input_dtype that fits nothing
  EXPECT_EQ(code_of(test_plugin::get().call("_softmax_backward_data", args, outs)),
            TSR_INVALID_ARGUMENT);
  args[3] = dtype_value(TSR_FLOAT32);
  args[2] = int_value(2);  // dim out of range
  EXPECT_EQ(code_of(test_plugin::get().call("_log_softmax_backward_data", args, outs)),
            TSR_INVALID_ARGUMENT);
}

// cross_entropy_loss_backward of float32 logits (N, C, D...) with class
// targets against the long double derivative, and the forward's losses
// against the long double definition.
void check_cross_entropy(const std::vector<int64_t>& sizes, bool weighted, int64_t reduction,
                         double ls) {
  const int64_t n = sizes[0], c = sizes[1];
  int64_t d = 1;
  for (size_t i = 2; i < sizes.size(); ++i) d *= sizes[i];
  host_tensor x(TSR_FLOAT32, sizes);
  fill_uniform(x, 21, -5, 5);
  std::vector<int64_t> tsizes = {n};
  for (size_t i = 2; i < sizes.size(); ++i) tsizes.push_back(sizes[i]);
  host_tensor target(TSR_INT64, tsizes);
  host_tensor w(TSR_FLOAT32, {c});
  fill_uniform(w, 22, 0.25, 2);
  std::vector<int64_t> t(static_cast<size_t>(n * d));
  for (size_t i = 0; i < t.size(); ++i) t[i] = i % 5 == 3 ? -100 : static_cast<int64_t>(i * 7) % c;
  int64_t pos = 0;
  for_each_index(tsizes, [&](const std::vector<int64_t>& i) {
    target.set(i, ref_value{static_cast<long double>(t[static_cast<size_t>(pos++)]), 0});
  });
  host_tensor grad =
      reduction == 0 ? host_tensor(TSR_FLOAT32, tsizes) : host_tensor(TSR_FLOAT32, {});
  fill_uniform(grad, 23, 0.5, 1.5);
  host_tensor out(TSR_FLOAT32, sizes);
  std::vector<tsr_value> args = {tensor_value(grad),   tensor_value(x),
                                 tensor_value(target), weighted ? tensor_value(w) : none_value(),
                                 int_value(reduction), int_value(-100),
                                 float_value(ls)};
  std::vector<tsr_tensor_desc> outs = {out.desc()};
  const status_ptr st = test_plugin::get().call("cross_entropy_loss_backward", args, outs);
  ASSERT_EQ(st, nullptr) << message_of(st);
  // The forward's per-position losses (reduction none) under the same ISA:
  // its rows take the logsumexp body of the same file.
  host_tensor losses(TSR_FLOAT32, tsizes);
  std::vector<tsr_value> fargs = {tensor_value(x), tensor_value(target), args[3],
                                  int_value(0),    int_value(-100),      float_value(ls)};
  std::vector<tsr_tensor_desc> fouts = {losses.desc()};
  const status_ptr fst = test_plugin::get().call("cross_entropy_loss", fargs, fouts);
  ASSERT_EQ(fst, nullptr) << message_of(fst);
  auto wc = [&](int64_t k) { return weighted ? w.get({k}).re : 1.0L; };
  long double wsum = 0, kept = 0;
  for (int64_t k = 0; k < c; ++k) wsum += wc(k);
  for (int64_t tv : t)
    if (tv != -100) kept += wc(tv);
  int failures = 0;
  for (int64_t s = 0; s < n; ++s) {
    for (int64_t j = 0; j < d; ++j) {
      const int64_t tv = t[static_cast<size_t>(s * d + j)];
      auto xi = [&](int64_t k) {
        return x.get(sizes.size() == 2 ? std::vector<int64_t>{s, k}
                                       : std::vector<int64_t>{s, k, j});
      };
      long double m = -INFINITY, se = 0;
      for (int64_t k = 0; k < c; ++k) m = std::max(m, xi(k).re);
      for (int64_t k = 0; k < c; ++k) se += std::exp(xi(k).re - m);
      {
        const long double lse = m + std::log(se);
        long double loss = 0, smooth = 0;
        for (int64_t k = 0; k < c; ++k) smooth -= wc(k) * (xi(k).re - lse);
        if (tv != -100) loss = (1 - ls) * -wc(tv) * (xi(tv).re - lse) + ls / c * smooth;
        const long double got = sizes.size() == 2 ? losses.get({s}).re : losses.get({s, j}).re;
        if (!(std::fabs(got - loss) <= 64 * unit_roundoff(TSR_FLOAT32) * (std::fabs(loss) + 8)))
          ADD_FAILURE() << "forward loss at sample " << s << " pos " << j << ": "
                        << static_cast<double>(got) << " vs " << static_cast<double>(loss);
      }
      long double gs = grad.numel() == 1 && reduction != 0 ? grad.get({}).re
                       : sizes.size() == 2                 ? grad.get({s}).re
                                                           : grad.get({s, j}).re;
      if (reduction == 1) gs /= kept;
      for (int64_t k = 0; k < c && failures < 5; ++k) {
        const long double p = std::exp(xi(k).re - m) / se;
        long double e = 0;
        if (tv != -100)
          e = gs * ((1 - ls) * wc(tv) * (p - (k == tv ? 1 : 0)) + ls / c * (wsum * p - wc(k)));
        const std::vector<int64_t> at =
            sizes.size() == 2 ? std::vector<int64_t>{s, k} : std::vector<int64_t>{s, k, j};
        const long double got = out.get(at).re;
        if (!(std::fabs(got - e) <=
              64 * unit_roundoff(TSR_FLOAT32) * (std::fabs(gs) * 4 + 1e-30L))) {
          ++failures;
          ADD_FAILURE() << "sample " << s << " pos " << j << " class " << k << ": "
                        << static_cast<double>(got) << " vs " << static_cast<double>(e);
        }
      }
    }
  }
}

TEST_P(SoftmaxBackwardKernels, CrossEntropyRowsAndPositionsMatchTheDerivative) {
  const isa_scope scope(GetParam());
  for (int64_t reduction : {0, 1, 2}) {
    for (bool weighted : {false, true}) {
      for (double ls : {0.0, 0.15}) {
        SCOPED_TRACE("reduction " + std::to_string(reduction) + " weight " +
                     std::to_string(weighted) + " ls " + std::to_string(ls));
        check_cross_entropy({9, 45}, weighted, reduction, ls);
        check_cross_entropy({2, 7, 70}, weighted, reduction, ls);
      }
    }
  }
  // A target out of range is refused before anything is written.
  host_tensor x(TSR_FLOAT32, {2, 3}), target(TSR_INT64, {2}), g(TSR_FLOAT32, {}),
      out(TSR_FLOAT32, {2, 3});
  target.set({0}, ref_value{0, 0});
  target.set({1}, ref_value{3, 0});
  std::vector<tsr_value> args = {tensor_value(g), tensor_value(x), tensor_value(target),
                                 none_value(),    int_value(1),    int_value(-100),
                                 float_value(0)};
  std::vector<tsr_tensor_desc> outs = {out.desc()};
  EXPECT_EQ(code_of(test_plugin::get().call("cross_entropy_loss_backward", args, outs)),
            TSR_OUT_OF_RANGE);
}

INSTANTIATE_TEST_SUITE_P(Isa, SoftmaxBackwardKernels, ::testing::ValuesIn(all_isas()),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
}  // namespace cpu_test
