// The nn op family end to end (C++ frontend, CPU plugin): normalisation,
// dropout, embedding, attention and losses against float64 references
// computed here from the definitions, both through the fused float32 CPU
// kernels (layer_norm, sdpa, cross_entropy) and through the decompositions
// (float64 inputs, which the fused kernels do not take; meta device).
//
// Tolerances (conformance/tolerances.hpp, Note [Tolerances]): float64 1e-12
// relative and absolute, widened to 1e-10 for these accumulating ops
// (softmax, norms, matmul: a few hundred ulps of reordering); float32 the
// `loose` tolerance rtol 2.08e-5, atol 1.6e-4 (1.3e-6 / 1e-5 times the
// accumulating factor 16).
//
// torch 1.13 constants (python3, torch 1.13.1, float64):
//   see CrossEntropy.MatchesTorchConstants and PointwiseLoss.EdgeValuesMatchTorch,
//   which quote the snippets that produced them.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "tessera/tessera.hpp"

namespace {

using tessera::Dims;
using tessera::Reduction;
using tessera::Tensor;

constexpr double kF64Tol = 1e-10;
constexpr double kF32Rtol = 2.08e-5;
constexpr double kF32Atol = 1.6e-4;
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// Deterministic values in [lo, hi): a small LCG.
std::vector<double> random_values(size_t n, uint32_t seed, double lo = -1.0, double hi = 1.0) {
  std::vector<double> v(n);
  uint32_t s = seed;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = lo + (hi - lo) * static_cast<double>(s >> 8) / static_cast<double>(1u << 24);
  }
  return v;
}
std::vector<double> rounded_to_float(std::vector<double> v) {
  for (auto& x : v) x = static_cast<double>(static_cast<float>(x));
  return v;
}

// A float64 or float32 tensor of `values` (rounded to float32 for float32).
Tensor make(const std::vector<double>& values, tessera::IntList shape, tessera::Dtype dtype) {
  return tessera::tensor(values, shape, dtype);
}

void expect_close(const Tensor& actual, const std::vector<double>& expected, tessera::Dtype dtype,
                  const std::string& what) {
  const std::vector<double> a = actual.to_vector<double>();
  ASSERT_EQ(a.size(), expected.size()) << what;
  const double rtol = dtype == tessera::kFloat64 ? kF64Tol : kF32Rtol;
  const double atol = dtype == tessera::kFloat64 ? kF64Tol : kF32Atol;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(a[i])) << what << " at " << i << ": " << a[i];
    } else {
      EXPECT_NEAR(a[i], expected[i], atol + rtol * std::abs(expected[i])) << what << " at " << i;
    }
  }
}

// Runs `f`, expecting a tessera::Error with `code` whose message contains
// every one of `parts`.
void expect_error(const std::function<void()>& f, tsr_status_code code,
                  const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one containing '" << parts.front() << "'";
  } catch (const tessera::Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    for (const std::string& p : parts)
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos)
          << "message '" << e.what() << "' lacks '" << p << "'";
  }
}

const tessera::Dtype kBoth[] = {tessera::kFloat32, tessera::kFloat64};

// ---------------------------------------------------------------------------
// Which path runs: float32 takes the fused CPU kernels (no inner ops), float64
// the decompositions.
// ---------------------------------------------------------------------------

// The names of the ops that `f` crosses the dispatcher with.
std::vector<std::string> ops_crossed(const std::function<void()>& f) {
  std::vector<std::string> names;
  auto record = [](const tsr_op* op, void* context) {
    static_cast<std::vector<std::string>*>(context)->push_back(tsr_op_name(op));
  };
  tessera::check(tsr_runtime_set_op_observer(tessera::default_runtime(), record, &names));
  try {
    f();
  } catch (...) {
    tessera::check(tsr_runtime_set_op_observer(tessera::default_runtime(), nullptr, nullptr));
    throw;
  }
  tessera::check(tsr_runtime_set_op_observer(tessera::default_runtime(), nullptr, nullptr));
  return names;
}
bool crosses(const std::vector<std::string>& names, const std::string& op) {
  for (const std::string& n : names)
    if (n == op) return true;
  return false;
}

TEST(FusedKernels, Float32RunsTheKernelFloat64TheDecomposition) {
  for (const char* name :
       {"native_layer_norm", "scaled_dot_product_attention", "cross_entropy_loss"}) {
    const tsr_op* op = nullptr;
    tessera::check(tsr_op_find(tessera::default_runtime(), name, &op));
    bool f32 = false, f64 = true;
    tessera::check(tsr_op_has_kernel(op, tessera::kCPU.raw(), TSR_FLOAT32, &f32));
    tessera::check(tsr_op_has_kernel(op, tessera::kCPU.raw(), TSR_FLOAT64, &f64));
    EXPECT_TRUE(f32) << name << ": the CPU plugin's fused kernel did not bind (schema mismatch?)";
    EXPECT_FALSE(f64) << name;
  }
  for (tessera::Dtype dt : kBoth) {
    const bool fused = dt == tessera::kFloat32;
    Tensor x = tessera::ones({4, 8}).to(dt);
    auto ln = ops_crossed([&] { tessera::layer_norm(x, {8}); });
    EXPECT_EQ(crosses(ln, "mean.dim"), !fused) << tessera::name(dt);
    Tensor q = tessera::ones({1, 2, 3, 4}).to(dt);
    auto at = ops_crossed([&] { tessera::scaled_dot_product_attention(q, q, q); });
    EXPECT_EQ(crosses(at, "matmul"), !fused) << tessera::name(dt);
    Tensor t = tessera::tensor({1, 2, 3, 0});
    auto ce = ops_crossed([&] { tessera::cross_entropy(x, t); });
    EXPECT_EQ(crosses(ce, "_log_softmax"), !fused) << tessera::name(dt);
  }
}

// ---------------------------------------------------------------------------
// Layer norm
// ---------------------------------------------------------------------------

struct LayerNormRef {
  std::vector<double> out, mean, rstd;
};
LayerNormRef reference_layer_norm(const std::vector<double>& x, int64_t rows, int64_t n,
                                  const std::vector<double>* w, const std::vector<double>* b,
                                  double eps) {
  LayerNormRef r;
  r.out.resize(x.size());
  for (int64_t i = 0; i < rows; ++i) {
    double mu = 0, var = 0;
    for (int64_t j = 0; j < n; ++j) mu += x[i * n + j];
    mu /= static_cast<double>(n);
    for (int64_t j = 0; j < n; ++j) var += (x[i * n + j] - mu) * (x[i * n + j] - mu);
    var /= static_cast<double>(n);
    const double rs = 1.0 / std::sqrt(var + eps);
    r.mean.push_back(mu);
    r.rstd.push_back(rs);
    for (int64_t j = 0; j < n; ++j) {
      double y = (x[i * n + j] - mu) * rs;
      if (w) y *= (*w)[j];
      if (b) y += (*b)[j];
      r.out[i * n + j] = y;
    }
  }
  return r;
}

TEST(LayerNorm, FusedAndDecompositionMatchFloat64Reference) {
  for (tessera::Dtype dt : kBoth) {
    for (int affine = 0; affine < 3; ++affine) {
      for (int ns_dims = 1; ns_dims <= 2; ++ns_dims) {
        const std::vector<double> x = rounded_to_float(random_values(4 * 7 * 37, 3, -3, 5));
        const std::vector<double> w = rounded_to_float(random_values(7 * 37, 4));
        const std::vector<double> b = rounded_to_float(random_values(7 * 37, 5));
        const int64_t n = ns_dims == 1 ? 37 : 7 * 37;
        const std::vector<double> wn(w.begin(), w.begin() + n), bn(b.begin(), b.begin() + n);
        Tensor input = make(x, {4, 7, 37}, dt);
        const Dims ns = ns_dims == 1 ? Dims({37}) : Dims({7, 37});
        Tensor weight = affine >= 1 ? make(wn, ns, dt) : Tensor();
        Tensor bias = affine >= 2 ? make(bn, ns, dt) : Tensor();
        LayerNormRef ref = reference_layer_norm(x, 4 * 7 * 37 / n, n, affine >= 1 ? &wn : nullptr,
                                                affine >= 2 ? &bn : nullptr, 1e-5);
        auto [out, mean, rstd] = tessera::native_layer_norm(input, ns, weight, bias, 1e-5);
        const std::string what = std::string(tessera::name(dt)) +
                                 " affine=" + std::to_string(affine) +
                                 " ns_dims=" + std::to_string(ns_dims);
        expect_close(out, ref.out, dt, what);
        expect_close(mean, ref.mean, dt, what + " mean");
        expect_close(rstd, ref.rstd, dt, what + " rstd");
        EXPECT_EQ(mean.sizes(), ns_dims == 1 ? Dims({4, 7, 1}) : Dims({4, 1, 1}));
        EXPECT_EQ(out.dtype(), dt);
        expect_close(tessera::layer_norm(input, ns, weight, bias), ref.out, dt, what + " wrapper");
      }
    }
  }
}

TEST(LayerNorm, NonContiguousInputAndLargeRows) {
  const std::vector<double> x = rounded_to_float(random_values(33 * 1030, 8, -2, 2));
  for (tessera::Dtype dt : kBoth) {
    // A transposed view: rows of the logical (1030, 33) tensor are strided.
    Tensor t = make(x, {33, 1030}, dt).t();
    std::vector<double> xt(x.size());
    for (int64_t i = 0; i < 1030; ++i)
      for (int64_t j = 0; j < 33; ++j) xt[i * 33 + j] = x[j * 1030 + i];
    expect_close(tessera::layer_norm(t, {33}),
                 reference_layer_norm(xt, 1030, 33, nullptr, nullptr, 1e-5).out, dt, "transposed");
    // One long row (crosses every vector lane and remainder path).
    Tensor row = make(x, {1, 33 * 1030}, dt);
    expect_close(tessera::layer_norm(row, {33 * 1030}, {}, {}, 1e-3),
                 reference_layer_norm(x, 1, 33 * 1030, nullptr, nullptr, 1e-3).out, dt, "long");
  }
}

TEST(LayerNorm, EmptyAndMetaInputs) {
  Tensor empty = tessera::zeros({0, 5});
  EXPECT_EQ(tessera::layer_norm(empty, {5}).sizes(), Dims({0, 5}));
  Tensor meta = tessera::empty({3, 4, 8}, tessera::kMeta);
  auto [out, mean, rstd] = tessera::native_layer_norm(meta, {8}, {}, {}, 1e-5);
  EXPECT_EQ(out.sizes(), Dims({3, 4, 8}));
  EXPECT_EQ(mean.sizes(), Dims({3, 4, 1}));
  EXPECT_TRUE(out.device().is_meta());
}

TEST(LayerNorm, BadShapesNameOpAndArgument) {
  Tensor x = tessera::zeros({2, 3, 4});
  expect_error([&] { tessera::layer_norm(x, {5}); }, TSR_INVALID_ARGUMENT,
               {"layer_norm", "input",
                "Given normalized_shape=[5], expected input with shape "
                "[*, 5], but got input of size[2, 3, 4]"});
  expect_error([&] { tessera::layer_norm(x, {4}, tessera::ones({3})); }, TSR_INVALID_ARGUMENT,
               {"layer_norm", "weight", "Expected weight to be of same shape as normalized_shape"});
  expect_error([&] { tessera::layer_norm(x, {}); }, TSR_INVALID_ARGUMENT,
               {"normalized_shape", "at least 1-dimensional"});
  expect_error(
      [&] {
        tessera::layer_norm(tessera::zeros({2, 4}, tessera::kInt64), {4});
      },
      TSR_INVALID_ARGUMENT, {"layer_norm", "input", "floating"});
}

// The gradients of layer norm in float64 from the definition, for upstream
// gradient g: dx = rstd (gx - mean(gx) - x^ mean(gx x^)), gx = g w.
struct LayerNormGrads {
  std::vector<double> dx, dw, db;
};
LayerNormGrads reference_layer_norm_grads(const std::vector<double>& x,
                                          const std::vector<double>& g, int64_t rows, int64_t n,
                                          const std::vector<double>* w, double eps) {
  const LayerNormRef f = reference_layer_norm(x, rows, n, nullptr, nullptr, eps);
  LayerNormGrads r;
  r.dx.resize(x.size());
  r.dw.assign(static_cast<size_t>(n), 0.0);
  r.db.assign(static_cast<size_t>(n), 0.0);
  for (int64_t i = 0; i < rows; ++i) {
    double a = 0, b = 0;
    for (int64_t j = 0; j < n; ++j) {
      const double gx = g[i * n + j] * (w ? (*w)[j] : 1.0);
      a += gx;
      b += gx * f.out[i * n + j];
      r.dw[j] += g[i * n + j] * f.out[i * n + j];
      r.db[j] += g[i * n + j];
    }
    a /= static_cast<double>(n);
    b /= static_cast<double>(n);
    for (int64_t j = 0; j < n; ++j) {
      const double gx = g[i * n + j] * (w ? (*w)[j] : 1.0);
      r.dx[i * n + j] = f.rstd[i] * (gx - a - f.out[i * n + j] * b);
    }
  }
  return r;
}

// native_layer_norm_backward through tsr_op_call: every result slot, None
// ones as undefined tensors.
std::vector<Tensor> layer_norm_backward(const Tensor& g, const Tensor& x, tessera::IntList ns,
                                        const Tensor& mean, const Tensor& rstd, const Tensor& w,
                                        const Tensor& b, std::array<bool, 3> mask) {
  const tsr_op* op = nullptr;
  tessera::check(tsr_op_find(tessera::default_runtime(), "native_layer_norm_backward", &op));
  const int32_t bools[3] = {mask[0], mask[1], mask[2]};
  tsr_value mask_value{};
  mask_value.tag = TSR_VALUE_BOOL_LIST;
  mask_value.len = 3;
  mask_value.u.bools = bools;
  using tessera::detail::value;
  const tsr_value args[8] = {value(g),
                             value(x),
                             value(tessera::IntList(ns.data(), ns.size())),
                             value(mean),
                             value(rstd),
                             w.defined() ? value(w) : tsr_value{},
                             b.defined() ? value(b) : tsr_value{},
                             mask_value};
  tsr_value results[3] = {};
  tessera::check(tsr_op_call(op, args, 8, results, 3));
  std::vector<Tensor> out;
  for (const tsr_value& r : results)
    out.push_back(r.tag == TSR_VALUE_TENSOR ? Tensor::adopt(r.u.tensor) : Tensor());
  return out;
}

TEST(LayerNormBackward, FusedAndDecompositionMatchFloat64Reference) {
  struct Case {
    std::vector<int64_t> shape;
    int ns_dims;
  };
  // Rows shorter than a vector, rows with a lane remainder, more columns than
  // one column block (256), several normalized dims.
  const Case cases[] = {
      {{5, 3}, 1}, {{4, 7, 37}, 1}, {{4, 7, 37}, 2}, {{33, 1030}, 1}, {{64, 1024}, 1}};
  for (const Case& cs : cases) {
    int64_t numel = 1;
    for (int64_t d : cs.shape) numel *= d;
    int64_t n = 1;
    for (size_t d = cs.shape.size() - static_cast<size_t>(cs.ns_dims); d < cs.shape.size(); ++d)
      n *= cs.shape[d];
    const int64_t rows = numel / n;
    const std::vector<int64_t> ns(cs.shape.end() - cs.ns_dims, cs.shape.end());
    const std::vector<double> x = rounded_to_float(random_values(numel, 21, -3, 5));
    const std::vector<double> g = rounded_to_float(random_values(numel, 22, -2, 2));
    const std::vector<double> w = rounded_to_float(random_values(n, 23, -2, 2));
    const LayerNormRef f = reference_layer_norm(x, rows, n, nullptr, nullptr, 1e-5);
    for (tessera::Dtype dt : kBoth) {
      for (int affine = 0; affine < 2; ++affine) {
        const LayerNormGrads ref =
            reference_layer_norm_grads(x, g, rows, n, affine ? &w : nullptr, 1e-5);
        std::vector<int64_t> stat_shape = cs.shape;
        for (size_t d = stat_shape.size() - static_cast<size_t>(cs.ns_dims); d < stat_shape.size();
             ++d)
          stat_shape[d] = 1;
        Tensor weight = affine ? make(w, ns, dt) : Tensor();
        Tensor bias = affine ? tessera::zeros(ns).to(dt) : Tensor();
        const std::string what = std::string(tessera::name(dt)) + " rows=" + std::to_string(rows) +
                                 " n=" + std::to_string(n) + " affine=" + std::to_string(affine);
        std::vector<Tensor> r = layer_norm_backward(
            make(g, cs.shape, dt), make(x, cs.shape, dt), ns, make(f.mean, stat_shape, dt),
            make(f.rstd, stat_shape, dt), weight, bias, {true, true, true});
        expect_close(r[0], ref.dx, dt, what + " dx");
        ASSERT_EQ(r[1].defined(), affine == 1) << what;
        ASSERT_EQ(r[2].defined(), affine == 1) << what;
        if (affine) {
          EXPECT_EQ(r[1].sizes(), Dims(tessera::IntList(ns))) << what;
          expect_close(r[1], ref.dw, dt, what + " dw");
          expect_close(r[2], ref.db, dt, what + " db");
        }
        // Training through layer_norm takes the same gradients.
        Tensor xt = make(x, cs.shape, dt);
        xt.requires_grad_();
        Tensor wt = affine ? make(w, ns, dt) : Tensor();
        Tensor bt = affine ? tessera::zeros(ns).to(dt) : Tensor();
        if (affine) {
          wt.requires_grad_();
          bt.requires_grad_();
        }
        (tessera::layer_norm(xt, ns, wt, bt) * make(g, cs.shape, dt)).sum().backward();
        expect_close(xt.grad(), ref.dx, dt, what + " autograd dx");
        if (affine) {
          expect_close(wt.grad(), ref.dw, dt, what + " autograd dw");
          expect_close(bt.grad(), ref.db, dt, what + " autograd db");
        }
      }
    }
  }
}

TEST(LayerNormBackward, OutputMaskLeavesResultsOutAndTrainingRunsOneOp) {
  for (tessera::Dtype dt : kBoth) {
    Tensor x = tessera::randn({6, 10}).to(dt), g = tessera::randn({6, 10}).to(dt);
    auto [out, mean, rstd] = tessera::native_layer_norm(x, {10}, {}, {}, 1e-5);
    Tensor w = tessera::ones({10}).to(dt), b = tessera::zeros({10}).to(dt);
    std::vector<Tensor> r = layer_norm_backward(g, x, {10}, mean, rstd, w, b, {false, true, false});
    EXPECT_FALSE(r[0].defined()) << tessera::name(dt);
    EXPECT_TRUE(r[1].defined()) << tessera::name(dt);
    EXPECT_FALSE(r[2].defined()) << tessera::name(dt);
    r = layer_norm_backward(g, x, {10}, mean, rstd, {}, {}, {true, true, true});
    EXPECT_TRUE(r[0].defined() && !r[1].defined() && !r[2].defined()) << tessera::name(dt);
    expect_error(
        [&] {
          layer_norm_backward(g, x, {9}, mean, rstd, {}, {}, {true, true, true});
        },
        TSR_INVALID_ARGUMENT, {"native_layer_norm_backward", "normalized_shape"});
    expect_error(
        [&] {
          layer_norm_backward(g.narrow(0, 0, 3), x, {10}, mean, rstd, {}, {}, {true, true, true});
        },
        TSR_INVALID_ARGUMENT, {"native_layer_norm_backward", "grad_out"});
  }
  // Backward of a float32 layer_norm is one fused op, not the formula's dozen.
  Tensor x = tessera::randn({6, 10});
  x.requires_grad_();
  Tensor y = tessera::layer_norm(x, {10}).sum();
  auto names = ops_crossed([&] { y.backward(); });
  EXPECT_TRUE(crosses(names, "native_layer_norm_backward"));
  EXPECT_FALSE(crosses(names, "mean.dim"));
}

// ---------------------------------------------------------------------------
// Batch norm, group norm, RMS norm
// ---------------------------------------------------------------------------

TEST(BatchNorm, TrainingUpdatesRunningStatsAndEvalUsesThem) {
  const int64_t n = 3, c = 4, hw = 5;
  const std::vector<double> x = rounded_to_float(random_values(n * c * hw, 11, -2, 3));
  const std::vector<double> w = rounded_to_float(random_values(c, 12));
  const std::vector<double> b = rounded_to_float(random_values(c, 13));
  const std::vector<double> rm0 = {0.5, -0.25, 0.0, 1.0}, rv0 = {1.0, 2.0, 0.5, 4.0};
  for (tessera::Dtype dt : kBoth) {
    Tensor input = make(x, {n, c, hw}, dt);
    Tensor rm = make(rm0, {c}, dt), rv = make(rv0, {c}, dt);
    const uint64_t version = rm.version();
    auto [out, save_mean, save_invstd] = tessera::native_batch_norm(
        input, make(w, {c}, dt), make(b, {c}, dt), rm, rv, true, 0.1, 1e-5);
    std::vector<double> mean(c), var(c), ref(x.size()), rm1(c), rv1(c), invstd(c);
    for (int64_t ch = 0; ch < c; ++ch) {
      double s = 0, ss = 0;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < hw; ++j) s += x[(i * c + ch) * hw + j];
      mean[ch] = s / (n * hw);
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < hw; ++j) {
          const double d = x[(i * c + ch) * hw + j] - mean[ch];
          ss += d * d;
        }
      var[ch] = ss / (n * hw);
      invstd[ch] = 1 / std::sqrt(var[ch] + 1e-5);
      rm1[ch] = 0.9 * rm0[ch] + 0.1 * mean[ch];
      rv1[ch] = 0.9 * rv0[ch] + 0.1 * ss / (n * hw - 1);
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < hw; ++j) {
          const int64_t k = (i * c + ch) * hw + j;
          ref[k] = (x[k] - mean[ch]) * invstd[ch] * w[ch] + b[ch];
        }
    }
    expect_close(out, ref, dt, "train out");
    expect_close(save_mean, mean, dt, "save_mean");
    expect_close(save_invstd, invstd, dt, "save_invstd");
    expect_close(rm, rm1, dt, "running_mean");
    expect_close(rv, rv1, dt, "running_var (unbiased)");
    EXPECT_GT(rm.version(), version);

    // Evaluation: the running statistics, no weight/bias, nothing updated.
    Tensor ev = tessera::batch_norm(input, rm, rv, {}, {}, false);
    std::vector<double> ref_eval(x.size());
    for (size_t k = 0; k < x.size(); ++k) {
      const int64_t ch = (static_cast<int64_t>(k) / hw) % c;
      ref_eval[k] = (x[k] - rm1[ch]) / std::sqrt(rv1[ch] + 1e-5);
    }
    expect_close(ev, ref_eval, dt, "eval");
    expect_close(rm, rm1, dt, "running_mean unchanged by eval");
    auto eval_all = tessera::native_batch_norm(input, {}, {}, rm, rv, false, 0.1, 1e-5);
    EXPECT_EQ(eval_all[1].sizes(), Dims({0}));
    // Training without running statistics.
    expect_close(tessera::batch_norm(input, {}, {}, make(w, {c}, dt), make(b, {c}, dt), true), ref,
                 dt, "train without running stats");
  }
}

TEST(BatchNorm, BadInput) {
  Tensor x = tessera::zeros({2, 3, 4});
  expect_error(
      [&] { tessera::batch_norm(x, tessera::zeros({4}), tessera::ones({3}), {}, {}, true); },
      TSR_INVALID_ARGUMENT, {"native_batch_norm", "running_mean", "3", "not 4"});
  expect_error([&] { tessera::batch_norm(x, {}, {}, {}, {}, false); }, TSR_INVALID_ARGUMENT,
               {"native_batch_norm", "running_mean", "training=False"});
  expect_error([&] { tessera::batch_norm(tessera::zeros({3}), {}, {}, {}, {}, true); },
               TSR_INVALID_ARGUMENT, {"native_batch_norm", "input", "at least 2 dims"});
}

TEST(GroupNorm, MatchesReferenceWithAndWithoutAffine) {
  const int64_t n = 2, c = 6, hw = 10, g = 3;
  const std::vector<double> x = rounded_to_float(random_values(n * c * hw, 21, -1, 4));
  const std::vector<double> w = rounded_to_float(random_values(c, 22));
  const std::vector<double> b = rounded_to_float(random_values(c, 23));
  for (tessera::Dtype dt : kBoth) {
    for (bool affine : {false, true}) {
      std::vector<double> ref(x.size());
      const int64_t per = c / g * hw;
      for (int64_t i = 0; i < n * g; ++i) {
        double mu = 0, var = 0;
        for (int64_t j = 0; j < per; ++j) mu += x[i * per + j];
        mu /= per;
        for (int64_t j = 0; j < per; ++j) var += (x[i * per + j] - mu) * (x[i * per + j] - mu);
        var /= per;
        for (int64_t j = 0; j < per; ++j) {
          const int64_t k = i * per + j, ch = (k / hw) % c;
          ref[k] = (x[k] - mu) / std::sqrt(var + 1e-5);
          if (affine) ref[k] = ref[k] * w[ch] + b[ch];
        }
      }
      Tensor out =
          tessera::group_norm(make(x, {n, c, 2, 5}, dt), g, affine ? make(w, {c}, dt) : Tensor(),
                              affine ? make(b, {c}, dt) : Tensor());
      EXPECT_EQ(out.sizes(), Dims({n, c, 2, 5}));
      expect_close(out, ref, dt, affine ? "affine" : "plain");
    }
  }
  Tensor x3 = tessera::zeros({2, 3, 4});
  expect_error([&] { tessera::group_norm(x3, 2); }, TSR_INVALID_ARGUMENT,
               {"group_norm", "num_groups", "divisible by num_groups"});
  expect_error([&] { tessera::group_norm(x3, 0); }, TSR_INVALID_ARGUMENT,
               {"num groups to be greater than 0"});
  expect_error([&] { tessera::group_norm(x3, 3, tessera::ones({4})); }, TSR_INVALID_ARGUMENT,
               {"native_group_norm", "weight", "number of channels"});
}

TEST(RmsNorm, DefaultEpsIsMachineEpsilonOfTheDtype) {
  const std::vector<double> x = rounded_to_float(random_values(5 * 16, 31, -1, 1));
  const std::vector<double> w = rounded_to_float(random_values(16, 32));
  for (tessera::Dtype dt : kBoth) {
    const double eps = dt == tessera::kFloat32 ? 1.1920928955078125e-07 : 2.220446049250313e-16;
    for (bool with_weight : {false, true}) {
      std::vector<double> ref(x.size());
      for (int64_t i = 0; i < 5; ++i) {
        double ms = 0;
        for (int64_t j = 0; j < 16; ++j) ms += x[i * 16 + j] * x[i * 16 + j];
        const double r = 1 / std::sqrt(ms / 16 + eps);
        for (int64_t j = 0; j < 16; ++j)
          ref[i * 16 + j] = x[i * 16 + j] * r * (with_weight ? w[j] : 1.0);
      }
      expect_close(
          tessera::rms_norm(make(x, {5, 16}, dt), {16}, with_weight ? make(w, {16}, dt) : Tensor()),
          ref, dt, "rms_norm");
    }
    // An explicit eps dominates a zero row.
    expect_close(tessera::rms_norm(tessera::zeros({1, 4}).to(dt), {4}, {}, 0.25), {0, 0, 0, 0}, dt,
                 "zero row");
  }
  expect_error(
      [&] {
        tessera::rms_norm(tessera::zeros({2, 3}), {4});
      },
      TSR_INVALID_ARGUMENT, {"rms_norm", "normalized_shape=[4]"});
}

// ---------------------------------------------------------------------------
// Dropout
// ---------------------------------------------------------------------------

TEST(Dropout, KeepsAboutOneMinusPAndScalesSurvivors) {
  const int64_t n = 20000;
  Tensor x = tessera::full({n}, 2.0);
  for (double p : {0.25, 0.5}) {
    const std::vector<float> y = tessera::dropout(x, p, true).to_vector<float>();
    int64_t kept = 0;
    for (float v : y) {
      if (v != 0.0f) {
        ++kept;
        EXPECT_FLOAT_EQ(v, static_cast<float>(2.0 / (1.0 - p)));
      }
    }
    // Binomial(n, 1-p): 6 standard deviations.
    const double sd = std::sqrt(n * p * (1 - p));
    EXPECT_NEAR(static_cast<double>(kept), n * (1 - p), 6 * sd) << "p=" << p;
  }
  auto [out, mask] = tessera::native_dropout(x, 0.3, true);
  EXPECT_EQ(mask.dtype(), tessera::kBool);
  const std::vector<bool> m = mask.to_vector<bool>();
  const std::vector<float> o = out.to_vector<float>();
  for (size_t i = 0; i < m.size(); ++i)
    EXPECT_FLOAT_EQ(o[i], m[i] ? static_cast<float>(2.0 / 0.7) : 0.0f);
}

TEST(Dropout, IdentityZeroAndInPlaceCases) {
  Tensor x = tessera::tensor({1.0, kNaN, -3.0});
  // train=False or p=0: the input itself (PyTorch returns the same tensor).
  EXPECT_EQ(tessera::dropout(x, 0.5, false).get(), x.get());
  EXPECT_EQ(tessera::dropout(x, 0.0, true).get(), x.get());
  // p=1: input * 0 (NaN stays NaN, as in PyTorch).
  const std::vector<float> z = tessera::dropout(x, 1.0, true).to_vector<float>();
  EXPECT_EQ(z[0], 0.0f);
  EXPECT_TRUE(std::isnan(z[1]));
  auto eval = tessera::native_dropout(x, 0.5, false);
  EXPECT_EQ(eval[1].to_vector<bool>(), (std::vector<bool>{true, true, true}));
  Tensor y = tessera::full({1000}, 1.0);
  const uint64_t v0 = y.version();
  Tensor& same = tessera::dropout_(y, 0.5, true);
  EXPECT_EQ(&same, &y);
  EXPECT_GT(y.version(), v0);
  for (float v : y.to_vector<float>()) EXPECT_TRUE(v == 0.0f || v == 2.0f);
  expect_error([&] { tessera::dropout(x, 1.5, true); }, TSR_INVALID_ARGUMENT,
               {"dropout", "'p'", "between 0 and 1, but got 1.5"});
  expect_error([&] { tessera::dropout(x, -0.1, false); }, TSR_INVALID_ARGUMENT, {"dropout", "'p'"});
}

// ---------------------------------------------------------------------------
// Embedding
// ---------------------------------------------------------------------------

TEST(Embedding, GathersRowsForAnyIndexShape) {
  const std::vector<double> w = random_values(5 * 3, 41);
  for (tessera::Dtype dt : kBoth) {
    Tensor weight = make(w, {5, 3}, dt);
    for (tessera::Dtype idt : {tessera::kInt64, tessera::kInt32}) {
      Tensor idx = tessera::tensor({4, 0, 2, 2, 1, 4}, {2, 3}).to(idt);
      Tensor out = tessera::embedding(weight, idx, 0);
      EXPECT_EQ(out.sizes(), Dims({2, 3, 3}));
      std::vector<double> ref;
      for (int64_t i : {4, 0, 2, 2, 1, 4})
        for (int64_t j = 0; j < 3; ++j) ref.push_back(w[i * 3 + j]);
      expect_close(out, rounded_to_float(ref), tessera::kFloat32, "embedding");
    }
    EXPECT_EQ(tessera::embedding(weight, tessera::scalar_tensor(2, tessera::kInt64)).sizes(),
              Dims({3}));
    EXPECT_EQ(tessera::embedding(weight, tessera::zeros({0, 4}, tessera::kInt64)).sizes(),
              Dims({0, 4, 3}));
  }
}

TEST(Embedding, BadIndicesAreErrorsNotReads) {
  Tensor weight = tessera::zeros({5, 3});
  expect_error(
      [&] {
        tessera::embedding(weight, tessera::tensor({1, 5}));
      },
      TSR_OUT_OF_RANGE, {"embedding", "indices", "5", "index out of range in self"});
  expect_error(
      [&] {
        tessera::embedding(weight, tessera::tensor({-1, 2}));
      },
      TSR_OUT_OF_RANGE, {"embedding", "indices", "-1"});
  expect_error(
      [&] {
        tessera::embedding(weight, tessera::tensor({1.0, 2.0}));
      },
      TSR_INVALID_ARGUMENT, {"embedding", "'indices'", "Long, Int"});
  expect_error([&] { tessera::embedding(tessera::zeros({5}), tessera::tensor({1})); },
               TSR_INVALID_ARGUMENT, {"embedding", "'weight' must be 2-D"});
  expect_error([&] { tessera::embedding(weight, tessera::tensor({1}), 7); }, TSR_INVALID_ARGUMENT,
               {"padding_idx", "Padding_idx must be within num_embeddings"});
}

// ---------------------------------------------------------------------------
// Scaled dot-product attention
// ---------------------------------------------------------------------------

struct AttnCase {
  int64_t b, hq, hkv, l, s, e, ev;
};
// mask(b, h, i, j): {attend, additive}
using MaskFn = std::function<std::pair<bool, double>(int64_t, int64_t, int64_t, int64_t)>;

std::vector<double> reference_sdpa(const AttnCase& a, const std::vector<double>& q,
                                   const std::vector<double>& k, const std::vector<double>& v,
                                   const MaskFn& mask, double scale) {
  std::vector<double> out(static_cast<size_t>(a.b * a.hq * a.l * a.ev), 0.0);
  std::vector<double> sc(static_cast<size_t>(a.s));
  for (int64_t b = 0; b < a.b; ++b)
    for (int64_t h = 0; h < a.hq; ++h) {
      const int64_t kh = h / (a.hq / a.hkv);
      for (int64_t i = 0; i < a.l; ++i) {
        double mx = -kInf;
        for (int64_t j = 0; j < a.s; ++j) {
          double d = 0;
          for (int64_t x = 0; x < a.e; ++x)
            d +=
                q[((b * a.hq + h) * a.l + i) * a.e + x] * k[((b * a.hkv + kh) * a.s + j) * a.e + x];
          d *= scale;
          auto [attend, add] = mask ? mask(b, h, i, j) : std::make_pair(true, 0.0);
          sc[j] = attend ? d + add : -kInf;
          mx = std::max(mx, sc[j]);
        }
        double sum = 0;
        for (int64_t j = 0; j < a.s; ++j) sum += std::exp(sc[j] - mx);  // NaN if mx = -inf
        for (int64_t j = 0; j < a.s; ++j) {
          const double p = std::exp(sc[j] - mx) / sum;
          for (int64_t x = 0; x < a.ev; ++x)
            out[((b * a.hq + h) * a.l + i) * a.ev + x] +=
                p * v[((b * a.hkv + kh) * a.s + j) * a.ev + x];
        }
      }
    }
  return out;
}

// Runs `body` once per instruction set the CPU plugin offers (its "isa"
// option: the baseline body always, the AVX2+FMA one where the processor has
// it), restoring the plugin's own choice afterwards.
void for_each_cpu_isa(const std::function<void(const std::string&)>& body) {
  for (const char* isa : {"baseline", "avx2"}) {
    try {
      tessera::set_option(tessera::kCPU, "isa", isa);
    } catch (const tessera::Error&) {
      continue;  // this processor lacks it
    }
    body(isa);
  }
  tessera::set_option(tessera::kCPU, "isa", "auto");
}

TEST(Attention, FusedAndDecompositionMatchReference) {
  // Shapes that reach every tile of the fused kernels: query blocks of 64
  // rows and tiles of 6 (L = 70, 130), key blocks of 128 (S = 300, 129),
  // Ev not a multiple of 8 (6, 20), odd E (5), grouped-query heads.
  // E = 64 with Ev = 24: two score column chunks per E step, a value tail.
  const AttnCase cases[] = {{2, 3, 3, 5, 7, 4, 6},      {1, 2, 2, 70, 300, 16, 8},
                            {2, 4, 2, 9, 9, 8, 8},      {2, 3, 3, 47, 47, 32, 32},
                            {1, 2, 1, 130, 129, 5, 20}, {2, 3, 3, 47, 33, 64, 24}};
  for_each_cpu_isa([&](const std::string& isa) {
    for (const AttnCase& a : cases) {
      const bool gqa = a.hq != a.hkv;
      const auto q = rounded_to_float(random_values(a.b * a.hq * a.l * a.e, 51, -2, 2));
      const auto k = rounded_to_float(random_values(a.b * a.hkv * a.s * a.e, 52, -2, 2));
      const auto v = rounded_to_float(random_values(a.b * a.hkv * a.s * a.ev, 53));
      const auto fmask = rounded_to_float(random_values(a.b * a.l * a.s, 54, -3, 1));
      const double scale = 1 / std::sqrt(static_cast<double>(a.e));
      for (tessera::Dtype dt : kBoth) {
        Tensor tq = make(q, {a.b, a.hq, a.l, a.e}, dt);
        Tensor tk = make(k, {a.b, a.hkv, a.s, a.e}, dt);
        Tensor tv = make(v, {a.b, a.hkv, a.s, a.ev}, dt);
        const std::string what =
            isa + " " + std::string(tessera::name(dt)) + " L=" + std::to_string(a.l);
        expect_close(tessera::scaled_dot_product_attention(tq, tk, tv, {}, 0, false, {}, gqa),
                     reference_sdpa(a, q, k, v, nullptr, scale), dt, what + " plain");
        expect_close(
            tessera::scaled_dot_product_attention(tq, tk, tv, {}, 0, true, 0.3, gqa),
            reference_sdpa(
                a, q, k, v,
                [](int64_t, int64_t, int64_t i, int64_t j) { return std::make_pair(j <= i, 0.0); },
                0.3),
            dt, what + " causal");
        // A bool (L, S) mask broadcast over batch and heads; row 0 keeps key 0.
        std::vector<uint8_t> bm(static_cast<size_t>(a.l * a.s));
        for (int64_t i = 0; i < a.l; ++i)
          for (int64_t j = 0; j < a.s; ++j) bm[i * a.s + j] = (j == 0 || (i * 7 + j * 3) % 5 != 0);
        std::vector<bool> bmv(bm.begin(), bm.end());
        Tensor tbm = tessera::tensor(std::vector<double>(bm.begin(), bm.end()), {a.l, a.s})
                         .to(tessera::kBool);
        expect_close(tessera::scaled_dot_product_attention(tq, tk, tv, tbm, 0, false, {}, gqa),
                     reference_sdpa(
                         a, q, k, v,
                         [&](int64_t, int64_t, int64_t i, int64_t j) {
                           return std::make_pair(static_cast<bool>(bm[i * a.s + j]), 0.0);
                         },
                         scale),
                     dt, what + " bool mask");
        // A float (B, 1, L, S) mask broadcast over heads.
        Tensor tfm = make(fmask, {a.b, 1, a.l, a.s}, dt);
        expect_close(tessera::scaled_dot_product_attention(tq, tk, tv, tfm, 0, false, {}, gqa),
                     reference_sdpa(
                         a, q, k, v,
                         [&](int64_t b, int64_t, int64_t i, int64_t j) {
                           return std::make_pair(true, fmask[(b * a.l + i) * a.s + j]);
                         },
                         scale),
                     dt, what + " float mask");
      }
    }
  });
}

TEST(Attention, FullyMaskedRowIsNaNAndNoKeysIsZero) {
  for_each_cpu_isa([](const std::string& isa) {
    for (tessera::Dtype dt : kBoth) {
      Tensor q = tessera::ones({1, 1, 2, 4}).to(dt), k = tessera::ones({1, 1, 3, 4}).to(dt);
      Tensor v = tessera::ones({1, 1, 3, 2}).to(dt);
      Tensor mask = tessera::tensor({1.0, 1.0, 0.0, 0.0, 0.0, 0.0}, {2, 3}).to(tessera::kBool);
      expect_close(tessera::scaled_dot_product_attention(q, k, v, mask), {1, 1, kNaN, kNaN}, dt,
                   isa + " fully masked row");
      Tensor k0 = tessera::ones({1, 1, 0, 4}).to(dt), v0 = tessera::ones({1, 1, 0, 2}).to(dt);
      expect_close(tessera::scaled_dot_product_attention(q, k0, v0), {0, 0, 0, 0}, dt,
                   isa + " no keys");
      // dropout_p = 1 drops every weight: zeros.
      expect_close(tessera::scaled_dot_product_attention(q, k, v, {}, 1.0), {0, 0, 0, 0}, dt,
                   isa + " dropout 1");
      // A NaN score poisons its own row only, and so does a +inf score (its
      // softmax is inf / inf); both sit past the first key block of 128.
      // Narrow and wide heads (E = 4, 64); the last row attends to nothing.
      for (int64_t e : {4, 64}) {
        std::vector<double> fm(4 * 200, 0.0);
        fm[150] = kNaN;
        fm[200 + 170] = kInf;
        for (int j = 0; j < 200; ++j) fm[600 + j] = -kInf;
        Tensor qn = tessera::ones({1, 1, 4, e}).to(dt) * 0.5;
        Tensor kn = tessera::ones({1, 1, 200, e}).to(dt) * 0.25;
        Tensor vn = tessera::ones({1, 1, 200, 2}).to(dt);
        Tensor mn = tessera::tensor(fm, {4, 200}).to(dt);
        const std::vector<double> got =
            tessera::scaled_dot_product_attention(qn, kn, vn, mn).to_vector<double>();
        const std::string at = isa + " E=" + std::to_string(e);
        EXPECT_TRUE(std::isnan(got[0]) && std::isnan(got[1])) << at << " NaN score";
        EXPECT_TRUE(std::isnan(got[2]) && std::isnan(got[3])) << at << " +inf score";
        EXPECT_NEAR(got[4], 1.0, 1e-6) << at << " other rows";
        EXPECT_NEAR(got[5], 1.0, 1e-6) << at << " other rows";
        EXPECT_TRUE(std::isnan(got[6]) && std::isnan(got[7])) << at << " attends to nothing";
      }
    }
  });
  // 3-d inputs (no batch dim) and a meta shape.
  Tensor q3 = tessera::ones({2, 3, 4}), k3 = tessera::ones({2, 5, 4}),
         v3 = tessera::ones({2, 5, 6});
  EXPECT_EQ(tessera::scaled_dot_product_attention(q3, k3, v3).sizes(), Dims({2, 3, 6}));
  Tensor qm = tessera::empty({2, 8, 3, 4}, tessera::kMeta);
  Tensor km = tessera::empty({2, 2, 5, 4}, tessera::kMeta);
  Tensor vm = tessera::empty({2, 2, 5, 7}, tessera::kMeta);
  EXPECT_EQ(tessera::scaled_dot_product_attention(qm, km, vm, {}, 0, true, {}, true).sizes(),
            Dims({2, 8, 3, 7}));
}

TEST(Attention, BadInput) {
  Tensor q = tessera::ones({1, 2, 3, 4}), k = tessera::ones({1, 2, 5, 4});
  Tensor v = tessera::ones({1, 2, 5, 4});
  expect_error(
      [&] {
        tessera::scaled_dot_product_attention(q, k, v, tessera::ones({3, 5}), 0, true);
      },
      TSR_INVALID_ARGUMENT, {"scaled_dot_product_attention", "attn_mask", "is_causal"});
  expect_error(
      [&] {
        tessera::scaled_dot_product_attention(q, tessera::ones({1, 2, 5, 3}), v);
      },
      TSR_INVALID_ARGUMENT, {"scaled_dot_product_attention", "key", "embedding"});
  expect_error(
      [&] {
        tessera::scaled_dot_product_attention(q, k, v, tessera::ones({4, 5}));
      },
      TSR_INVALID_ARGUMENT, {"attn_mask", "broadcast"});
  expect_error([&] { tessera::scaled_dot_product_attention(q, k, v.to(tessera::kFloat64)); },
               TSR_INVALID_ARGUMENT, {"same dtype"});
  expect_error(
      [&] {
        tessera::scaled_dot_product_attention(tessera::ones({1, 3, 3, 4}), k, v, {}, 0, false, {},
                                              true);
      },
      TSR_INVALID_ARGUMENT, {"enable_gqa", "divide"});
}

// ---------------------------------------------------------------------------
// Cross entropy and nll
// ---------------------------------------------------------------------------

// Reference: x is (N, C, D) row-major, t is (N, D).
double reference_ce(const std::vector<double>& x, const std::vector<int64_t>& t, int64_t n,
                    int64_t c, int64_t d, const std::vector<double>* w, Reduction r, int64_t ignore,
                    double ls, std::vector<double>* per_element) {
  double total = 0, wsum = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t p = 0; p < d; ++p) {
      double mx = -kInf;
      for (int64_t k = 0; k < c; ++k) mx = std::max(mx, x[(i * c + k) * d + p]);
      double se = 0;
      for (int64_t k = 0; k < c; ++k) se += std::exp(x[(i * c + k) * d + p] - mx);
      const double lse = mx + std::log(se);
      const int64_t tt = t[i * d + p];
      double loss = 0;
      if (tt != ignore) {
        const double wt = w ? (*w)[tt] : 1.0;
        double smooth = 0;
        for (int64_t k = 0; k < c; ++k)
          smooth -= (w ? (*w)[k] : 1.0) * (x[(i * c + k) * d + p] - lse);
        loss = (1 - ls) * -wt * (x[(i * c + tt) * d + p] - lse) + ls / c * smooth;
        wsum += wt;
      }
      total += loss;
      if (per_element) per_element->push_back(loss);
    }
  return r == Reduction::Sum ? total : total / wsum;
}

TEST(CrossEntropy, ClassIndicesFusedAndDecompositionMatchReference) {
  struct Shape {
    int64_t n, c, d1, d2;
  };
  for (const Shape& s : {Shape{37, 11, 1, 1}, Shape{3, 5, 4, 6}, Shape{130, 70, 1, 1}}) {
    const int64_t d = s.d1 * s.d2;
    const auto x = rounded_to_float(random_values(s.n * s.c * d, 61, -4, 4));
    const auto w = rounded_to_float(random_values(s.c, 62, 0.1, 2));
    std::vector<int64_t> t;
    for (int64_t i = 0; i < s.n * d; ++i) t.push_back(i % 7 == 3 ? -100 : (i * 5 + 1) % s.c);
    const Dims xs = d == 1 ? Dims({s.n, s.c}) : Dims({s.n, s.c, s.d1, s.d2});
    const Dims ts = d == 1 ? Dims({s.n}) : Dims({s.n, s.d1, s.d2});
    Tensor target = tessera::tensor(t, ts);
    for (tessera::Dtype dt : kBoth) {
      Tensor input = make(x, xs, dt);
      for (bool weighted : {false, true}) {
        for (double ls : {0.0, 0.2}) {
          for (Reduction r : {Reduction::None, Reduction::Mean, Reduction::Sum}) {
            std::vector<double> per;
            const double ref =
                reference_ce(x, t, s.n, s.c, d, weighted ? &w : nullptr, r, -100, ls, &per);
            Tensor out = tessera::cross_entropy(
                input, target, weighted ? make(w, {s.c}, dt) : Tensor(), r, -100, ls);
            const std::string what = std::string(tessera::name(dt)) + " n=" + std::to_string(s.n) +
                                     " w=" + std::to_string(weighted) +
                                     " ls=" + std::to_string(ls) +
                                     " r=" + std::to_string(static_cast<int>(r));
            if (r == Reduction::None) {
              EXPECT_EQ(out.sizes(), ts);
              expect_close(out, per, dt, what);
            } else {
              EXPECT_EQ(out.dim(), 0);
              expect_close(out, {ref}, dt, what);
            }
          }
        }
      }
    }
  }
}

TEST(CrossEntropy, MatchesTorchConstants) {
  // python3: torch 1.13.1
  //   x = torch.tensor([[0.1, 0.2, 0.3], [1.0, -1.0, 0.5], [0.0, 2.0, -2.0]], dtype=torch.float64)
  //   t = torch.tensor([2, -100, 1])
  //   F.cross_entropy(x, t)                          -> 0.5724372383645718
  //   F.cross_entropy(x, t, label_smoothing=0.2)     -> 0.7824372383645719
  //   F.cross_entropy(x, t, weight=torch.tensor([1., 2., 3.], dtype=torch.float64),
  //                   label_smoothing=0.1)           -> 0.7342995033729215
  const std::vector<double> x = {0.1, 0.2, 0.3, 1.0, -1.0, 0.5, 0.0, 2.0, -2.0};
  Tensor t = tessera::tensor({2, -100, 1});
  for (tessera::Dtype dt : kBoth) {
    Tensor in = make(x, {3, 3}, dt);
    expect_close(tessera::cross_entropy(in, t), {0.5724372383645718}, dt, "plain");
    expect_close(tessera::cross_entropy(in, t, {}, Reduction::Mean, -100, 0.2),
                 {0.7824372383645719}, dt, "smoothing");
    expect_close(
        tessera::cross_entropy(in, t, make({1, 2, 3}, {3}, dt), Reduction::Mean, -100, 0.1),
        {0.7342995033729215}, dt, "weight + smoothing");
  }
}

TEST(CrossEntropy, ProbabilityTargetsUnbatchedAndAllIgnored) {
  const auto x = rounded_to_float(random_values(4 * 5, 71, -2, 2));
  auto p = random_values(4 * 5, 72, 0.0, 1.0);
  for (int64_t i = 0; i < 4; ++i) {
    double s = 0;
    for (int64_t k = 0; k < 5; ++k) s += p[i * 5 + k];
    for (int64_t k = 0; k < 5; ++k) p[i * 5 + k] /= s;
  }
  p = rounded_to_float(p);
  const auto w = rounded_to_float(random_values(5, 73, 0.5, 1.5));
  for (tessera::Dtype dt : kBoth) {
    double total = 0;
    for (int64_t i = 0; i < 4; ++i) {
      double mx = -kInf, se = 0;
      for (int64_t k = 0; k < 5; ++k) mx = std::max(mx, x[i * 5 + k]);
      for (int64_t k = 0; k < 5; ++k) se += std::exp(x[i * 5 + k] - mx);
      for (int64_t k = 0; k < 5; ++k)
        total -= w[k] * (p[i * 5 + k] * 0.9 + 0.1 / 5) * (x[i * 5 + k] - mx - std::log(se));
    }
    expect_close(tessera::cross_entropy(make(x, {4, 5}, dt), make(p, {4, 5}, dt), make(w, {5}, dt),
                                        Reduction::Mean, -100, 0.1),
                 {total / 4}, dt, "probabilities");
    // Unbatched: (C) logits, 0-d target.
    const std::vector<double> row(x.begin(), x.begin() + 5);
    std::vector<double> per;
    const double ref = reference_ce(row, {3}, 1, 5, 1, nullptr, Reduction::Mean, -100, 0, &per);
    Tensor out =
        tessera::cross_entropy(make(row, {5}, dt), tessera::scalar_tensor(3, tessera::kInt64));
    EXPECT_EQ(out.dim(), 0);
    expect_close(out, {ref}, dt, "unbatched");
    // Every target ignored: mean is 0 / 0.
    Tensor ignored = tessera::full({4}, -100, tessera::kInt64);
    expect_close(tessera::cross_entropy(make(x, {4, 5}, dt), ignored), {kNaN}, dt, "all ignored");
    expect_close(tessera::cross_entropy(make(x, {4, 5}, dt), ignored, {}, Reduction::Sum), {0}, dt,
                 "all ignored sum");
  }
}

TEST(CrossEntropy, BadTargetsAreClearErrors) {
  for (tessera::Dtype dt : kBoth) {  // float32: fused kernel; float64: decomposition
    Tensor x = tessera::zeros({4, 5}).to(dt);
    expect_error(
        [&] {
          tessera::cross_entropy(x, tessera::tensor({1, 5, 3, 0}));
        },
        TSR_OUT_OF_RANGE, {"cross_entropy_loss", "target", "Target 5 is out of bounds."});
    expect_error(
        [&] {
          tessera::cross_entropy(x, tessera::tensor({1, -1, 3, 0}));
        },
        TSR_OUT_OF_RANGE, {"Target -1 is out of bounds."});
    expect_error(
        [&] {
          tessera::cross_entropy(x, tessera::tensor({1, 2, 3}));
        },
        TSR_INVALID_ARGUMENT,
        {"target",
         "Expected input batch_size (4) to match target "
         "batch_size (3)."});
    expect_error(
        [&] {
          tessera::cross_entropy(x, tessera::tensor({1, 2, 3, 0}), tessera::ones({4}).to(dt));
        },
        TSR_INVALID_ARGUMENT, {"weight", "for all 5 classes"});
    expect_error(
        [&] {
          tessera::cross_entropy(x, tessera::tensor({1, 2, 3, 0}), {}, Reduction::Mean, -100, 1.5);
        },
        TSR_INVALID_ARGUMENT, {"label_smoothing must be between 0.0 and 1.0. Got: 1.5"});
    expect_error(
        [&] {
          tessera::cross_entropy(x, tessera::tensor({1, 2, 3, 0}), {}, static_cast<Reduction>(3));
        },
        TSR_INVALID_ARGUMENT, {"cross_entropy_loss", "reduction", "3"});
    expect_error(
        [&] {
          tessera::cross_entropy(x, tessera::tensor({1, 2, 3, 0}).to(tessera::kInt32));
        },
        TSR_INVALID_ARGUMENT, {"target", "expected scalar type Long"});
  }
}

TEST(NllLoss, VariantsMatchReferenceAndCheckShapes) {
  const auto lp = rounded_to_float(random_values(2 * 3 * 4 * 5, 81, -3, 0));
  const auto w = rounded_to_float(random_values(3, 82, 0.5, 2));
  std::vector<int64_t> t;
  for (int64_t i = 0; i < 2 * 4 * 5; ++i) t.push_back(i % 9 == 0 ? 1 : (i * 2) % 3);
  for (tessera::Dtype dt : kBoth) {
    Tensor x = make(lp, {2, 3, 4, 5}, dt);
    Tensor target = tessera::tensor(t, {2, 4, 5});
    double total = 0, wsum = 0;
    std::vector<double> per;
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t p = 0; p < 20; ++p) {
        const int64_t tt = t[n * 20 + p];
        if (tt == 1) {  // ignore_index = 1
          per.push_back(0);
          continue;
        }
        per.push_back(-w[tt] * lp[(n * 3 + tt) * 20 + p]);
        total += per.back();
        wsum += w[tt];
      }
    Tensor wt = make(w, {3}, dt);
    expect_close(tessera::nll_loss(x, target, wt, Reduction::Mean, 1), {total / wsum}, dt, "nd");
    expect_close(tessera::call_op("nll_loss2d",
                                  {tessera::detail::value(x), tessera::detail::value(target),
                                   tessera::detail::value(wt), tessera::detail::value(int64_t{2}),
                                   tessera::detail::value(int64_t{1})}),
                 {total}, dt, "2d sum");
    expect_close(tessera::nll_loss(x, target, wt, Reduction::None, 1), per, dt, "none");
  }
  Tensor x2 = tessera::zeros({2, 3});
  expect_error(
      [&] {
        tessera::call_op("nll_loss",
                         {tessera::detail::value(tessera::zeros({2, 3, 4})),
                          tessera::detail::value(tessera::zeros({2, 4}, tessera::kInt64))});
      },
      TSR_INVALID_ARGUMENT, {"nll_loss", "1D or 2D"});
  expect_error(
      [&] {
        tessera::call_op("nll_loss2d",
                         {tessera::detail::value(tessera::zeros({2, 3, 4, 5})),
                          tessera::detail::value(tessera::zeros({2, 4}, tessera::kInt64))});
      },
      TSR_INVALID_ARGUMENT, {"nll_loss2d", "target", "3D"});
  expect_error(
      [&] {
        tessera::nll_loss(tessera::zeros({2, 3, 4}), tessera::zeros({2, 5}, tessera::kInt64));
      },
      TSR_INVALID_ARGUMENT, {"Expected target size [2, 4], got [2, 5]"});
  expect_error(
      [&] {
        tessera::nll_loss(x2, tessera::tensor({0, 3}));
      },
      TSR_OUT_OF_RANGE, {"nll_loss_nd", "Target 3 is out of bounds."});
}

// ---------------------------------------------------------------------------
// Pointwise losses
// ---------------------------------------------------------------------------

double reduce_ref(const std::vector<double>& v, Reduction r) {
  double s = 0;
  for (double x : v) s += x;
  return r == Reduction::Sum ? s : s / static_cast<double>(v.size());
}

void check_pointwise_loss(const char* name,
                          const std::function<Tensor(const Tensor&, const Tensor&, Reduction)>& op,
                          const std::function<double(double, double)>& ref, double lo, double hi,
                          double tlo, double thi) {
  const auto x = rounded_to_float(random_values(6 * 7, 91, lo, hi));
  const auto y = rounded_to_float(random_values(6 * 7, 92, tlo, thi));
  std::vector<double> per;
  for (size_t i = 0; i < x.size(); ++i) per.push_back(ref(x[i], y[i]));
  for (tessera::Dtype dt : kBoth) {
    Tensor a = make(x, {6, 7}, dt), b = make(y, {6, 7}, dt);
    const std::string what = std::string(name) + " " + tessera::name(dt);
    expect_close(op(a, b, Reduction::None), per, dt, what + " none");
    expect_close(op(a, b, Reduction::Mean), {reduce_ref(per, Reduction::Mean)}, dt, what + " mean");
    expect_close(op(a, b, Reduction::Sum), {reduce_ref(per, Reduction::Sum)}, dt, what + " sum");
    // A transposed (non-contiguous) pair gives the transposed losses.
    Tensor at = make(x, {7, 6}, dt).t(), bt = make(y, {7, 6}, dt).t();
    std::vector<double> pt;
    for (int64_t i = 0; i < 6; ++i)
      for (int64_t j = 0; j < 7; ++j) pt.push_back(ref(x[j * 6 + i], y[j * 6 + i]));
    expect_close(op(at, bt, Reduction::None), pt, dt, what + " transposed");
  }
}

TEST(PointwiseLoss, RegressionLossesMatchDefinitions) {
  check_pointwise_loss(
      "mse",
      [](const Tensor& a, const Tensor& b, Reduction r) { return tessera::mse_loss(a, b, r); },
      [](double x, double y) { return (x - y) * (x - y); }, -2, 2, -2, 2);
  check_pointwise_loss(
      "l1", [](const Tensor& a, const Tensor& b, Reduction r) { return tessera::l1_loss(a, b, r); },
      [](double x, double y) { return std::abs(x - y); }, -2, 2, -2, 2);
  check_pointwise_loss(
      "huber",
      [](const Tensor& a, const Tensor& b, Reduction r) {
        return tessera::huber_loss(a, b, r, 0.7);
      },
      [](double x, double y) {
        const double d = std::abs(x - y);
        return d < 0.7 ? 0.5 * d * d : 0.7 * (d - 0.35);
      },
      -2, 2, -2, 2);
  check_pointwise_loss(
      "smooth_l1",
      [](const Tensor& a, const Tensor& b, Reduction r) {
        return tessera::smooth_l1_loss(a, b, r, 0.5);
      },
      [](double x, double y) {
        const double d = std::abs(x - y);
        return d < 0.5 ? 0.5 * d * d / 0.5 : d - 0.25;
      },
      -2, 2, -2, 2);
  check_pointwise_loss(
      "smooth_l1 beta 0",
      [](const Tensor& a, const Tensor& b, Reduction r) {
        return tessera::smooth_l1_loss(a, b, r, 0.0);
      },
      [](double x, double y) { return std::abs(x - y); }, -2, 2, -2, 2);
  check_pointwise_loss(
      "bce",
      [](const Tensor& a, const Tensor& b, Reduction r) {
        return tessera::binary_cross_entropy(a, b, {}, r);
      },
      [](double x, double y) {
        return -(y * std::max(std::log(x), -100.0) + (1 - y) * std::max(std::log(1 - x), -100.0));
      },
      0.01, 0.99, 0, 1);
  check_pointwise_loss(
      "bce_with_logits",
      [](const Tensor& a, const Tensor& b, Reduction r) {
        return tessera::binary_cross_entropy_with_logits(a, b, {}, {}, r);
      },
      [](double x, double y) {
        return -(y * std::log(1 / (1 + std::exp(-x))) +
                 (1 - y) * std::log(1 - 1 / (1 + std::exp(-x))));
      },
      -5, 5, 0, 1);
  check_pointwise_loss(
      "kl_div",
      [](const Tensor& a, const Tensor& b, Reduction r) { return tessera::kl_div(a, b, r); },
      [](double x, double y) { return y * std::log(y) - y * x; }, -3, 0, 0.01, 1);
  check_pointwise_loss(
      "kl_div log_target",
      [](const Tensor& a, const Tensor& b, Reduction r) { return tessera::kl_div(a, b, r, true); },
      [](double x, double y) { return std::exp(y) * (y - x); }, -3, 0, -3, 0);
}

TEST(PointwiseLoss, EdgeValuesMatchTorch) {
  // torch 1.13.1 (python3):
  //   F.binary_cross_entropy(tensor([0., 1, 0.5]), tensor([1., 0, 0.5]), reduction='none')
  //     -> [100, 100, 0.6931]   (logs clamped at -100)
  //   F.binary_cross_entropy_with_logits(tensor([0., 100, -100]), tensor([1., 0, 1]),
  //     weight=tensor([0.5, 1, 2]), pos_weight=tensor([2., 2, 2]), reduction='none')
  //     -> [0.6931, 100, 400]
  //   F.kl_div(tensor([-1., -2]), tensor([0., 0.5]), reduction='none') -> [0, 0.6534]
  //   F.kl_div(tensor([-1., -2]), tensor([-1., 0.5]), reduction='none') -> [nan, 0.6534]
  for (tessera::Dtype dt : kBoth) {
    expect_close(tessera::binary_cross_entropy(make({0, 1, 0.5}, {3}, dt),
                                               make({1, 0, 0.5}, {3}, dt), {}, Reduction::None),
                 {100, 100, std::log(2.0)}, dt, "bce clamp");
    expect_close(tessera::binary_cross_entropy_with_logits(
                     make({0, 100, -100}, {3}, dt), make({1, 0, 1}, {3}, dt),
                     make({0.5, 1, 2}, {3}, dt), make({2, 2, 2}, {3}, dt), Reduction::None),
                 {0.5 * 2 * std::log(2.0), 100, 400}, dt, "bce logits stable");
    expect_close(tessera::kl_div(make({-1, -2}, {2}, dt), make({0, 0.5}, {2}, dt), Reduction::None),
                 {0, 0.5 * std::log(0.5) + 1.0}, dt, "kl 0 log 0");
    expect_close(
        tessera::kl_div(make({-1, -2}, {2}, dt), make({-1, 0.5}, {2}, dt), Reduction::None),
        {kNaN, 0.5 * std::log(0.5) + 1.0}, dt, "kl negative target");
    // Empty inputs: mean is NaN (0 / 0), sum 0.
    Tensor e = tessera::zeros({0, 3}).to(dt);
    expect_close(tessera::mse_loss(e, e), {kNaN}, dt, "empty mean");
    expect_close(tessera::mse_loss(e, e, Reduction::Sum), {0}, dt, "empty sum");
    // Broadcasting a (3,) target over (2, 3).
    expect_close(tessera::l1_loss(make({1, 2, 3, 4, 5, 6}, {2, 3}, dt), make({1, 1, 1}, {3}, dt),
                                  Reduction::None),
                 {0, 1, 2, 3, 4, 5}, dt, "broadcast");
  }
}

TEST(PointwiseLoss, BadInput) {
  Tensor a = tessera::zeros({2, 3});
  expect_error([&] { tessera::huber_loss(a, a, Reduction::Mean, 0.0); }, TSR_INVALID_ARGUMENT,
               {"huber_loss", "delta", "non-positive"});
  expect_error([&] { tessera::smooth_l1_loss(a, a, Reduction::Mean, -1.0); }, TSR_INVALID_ARGUMENT,
               {"smooth_l1_loss", "beta", "negative"});
  expect_error(
      [&] {
        tessera::binary_cross_entropy(tessera::tensor({0.0, 1.5}), tessera::tensor({1.0, 0.0}));
      },
      TSR_INVALID_ARGUMENT, {"binary_cross_entropy", "between 0 and 1"});
  expect_error([&] { tessera::mse_loss(a, tessera::zeros({4})); }, TSR_INVALID_ARGUMENT,
               {"[2, 3]"});
  expect_error(
      [&] {
        tessera::mse_loss(tessera::zeros({2}, tessera::kInt64),
                          tessera::zeros({2}, tessera::kInt64));
      },
      TSR_INVALID_ARGUMENT, {"mse_loss", "floating"});
  expect_error([&] { tessera::mse_loss(a, a, static_cast<Reduction>(5)); }, TSR_INVALID_ARGUMENT,
               {"mse_loss", "reduction", "5"});
}

TEST(ReducedPrecision, HalfAndBfloat16ComputeInFloat32AndKeepTheirDtype) {
  // Tolerances: two ulps of the result dtype (float16 2^-10, bfloat16 2^-7) on
  // top of the float32 computation, relative to the reference from the
  // rounded inputs.
  for (tessera::Dtype dt : {tessera::kFloat16, tessera::kBFloat16}) {
    const double tol = dt == tessera::kFloat16 ? 2e-3 : 1.6e-2;
    Tensor x = make(random_values(6 * 10, 101, -2, 2), {6, 10}, tessera::kFloat64).to(dt);
    const std::vector<double> xv = x.to_vector<double>();
    Tensor out = tessera::layer_norm(x, {10});
    EXPECT_EQ(out.dtype(), dt);
    const LayerNormRef ref = reference_layer_norm(xv, 6, 10, nullptr, nullptr, 1e-5);
    const std::vector<double> got = out.to_vector<double>();
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_NEAR(got[i], ref.out[i], tol * (1 + std::abs(ref.out[i]))) << tessera::name(dt);
    std::vector<int64_t> t = {0, 3, 9, 2, -100, 5};
    std::vector<double> per;
    const double ce = reference_ce(xv, t, 6, 10, 1, nullptr, Reduction::Mean, -100, 0.0, &per);
    Tensor loss = tessera::cross_entropy(x, tessera::tensor(t));
    EXPECT_EQ(loss.dtype(), dt);
    EXPECT_NEAR(loss.item<double>(), ce, tol * (1 + std::abs(ce))) << tessera::name(dt);
    Tensor q = x.reshape({1, 1, 6, 10});
    const AttnCase a{1, 1, 1, 6, 6, 10, 10};
    const std::vector<double> at = reference_sdpa(a, xv, xv, xv, nullptr, 1 / std::sqrt(10.0));
    const std::vector<double> got_at =
        tessera::scaled_dot_product_attention(q, q, q, {}, 0, false).to_vector<double>();
    for (size_t i = 0; i < at.size(); ++i)
      EXPECT_NEAR(got_at[i], at[i], 2 * tol * (1 + std::abs(at[i]))) << tessera::name(dt);
  }
}

}  // namespace
