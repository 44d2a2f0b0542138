// ops_nn_backward_test.cpp - the fused backward ops of softmax, log_softmax
// and cross_entropy: _softmax_backward_data, _log_softmax_backward_data and
// cross_entropy_loss_backward, end to end through the C++ frontend and the
// CPU plugin. float32 runs the plugin's kernels, float64 the decompositions;
// both are checked against float64 references written here (the softmax
// derivative from its definition; for cross_entropy, float64 autograd through
// the forward's decomposition under create_graph - the composed form, which
// shares no code with the backward op). Training (backward without
// create_graph) must cross the fused op and none of the composed form's ops.
// PyTorch's own gradients for the same ops are in conformance/golden.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "tessera/autograd.hpp"
#include "tessera/tessera.hpp"

namespace {

using tessera::Tensor;
using tessera::detail::value;

constexpr double kF64Tol = 1e-10;
constexpr double kF32Rtol = 2e-5;
constexpr double kF32Atol = 2e-6;

std::vector<double> random_values(size_t n, uint32_t seed, double lo = -1.0, double hi = 1.0) {
  std::vector<double> v(n);
  uint32_t s = seed;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = lo + (hi - lo) * static_cast<double>(s >> 8) / static_cast<double>(1u << 24);
  }
  return v;
}

void expect_close(const Tensor& actual, const std::vector<double>& expected, tessera::Dtype dtype,
                  const std::string& what, double scale = 1.0) {
  const std::vector<double> a = actual.to(tessera::kFloat64).to_vector<double>();
  ASSERT_EQ(a.size(), expected.size()) << what;
  const double rtol = dtype == tessera::kFloat64 ? kF64Tol : kF32Rtol;
  const double atol = (dtype == tessera::kFloat64 ? kF64Tol : kF32Atol) * scale;
  int failures = 0;
  for (size_t i = 0; i < a.size() && failures < 5; ++i) {
    if (!(std::abs(a[i] - expected[i]) <= atol + rtol * std::abs(expected[i]))) {
      ++failures;
      ADD_FAILURE() << what << " at " << i << ": " << a[i] << " vs " << expected[i];
    }
  }
}

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

const tessera::Dtype kBoth[] = {tessera::kFloat32, tessera::kFloat64};

Tensor softmax_backward(bool log, const Tensor& g, const Tensor& y, int64_t dim,
                        tessera::Dtype input_dtype) {
  return tessera::call_op(
      log ? "_log_softmax_backward_data" : "_softmax_backward_data",
      {value(g), value(y), value(dim), value(std::optional<tessera::Dtype>(input_dtype))});
}

// ---------------------------------------------------------------------------
// _softmax_backward_data / _log_softmax_backward_data
// ---------------------------------------------------------------------------

struct LineCase {
  std::vector<int64_t> shape;
  int64_t dim;
  bool transposed;  // g and y given as the transpose of a contiguous (shape[1], shape[0])
};

// The reference along dim of row-major data (strides from `shape`).
std::vector<double> softmax_backward_ref(bool log, const std::vector<double>& g,
                                         const std::vector<double>& y,
                                         const std::vector<int64_t>& shape, int64_t dim) {
  const size_t nd = shape.size();
  if (nd == 0) return {log ? g[0] - std::exp(y[0]) * g[0] : y[0] * (g[0] - g[0] * y[0])};
  const auto d = static_cast<size_t>(dim < 0 ? dim + static_cast<int64_t>(nd) : dim);
  int64_t inner = 1, outer = 1;
  for (size_t k = d + 1; k < nd; ++k) inner *= shape[k];
  for (size_t k = 0; k < d; ++k) outer *= shape[k];
  const int64_t n = shape[d];
  std::vector<double> out(g.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t k) { return static_cast<size_t>((o * n + k) * inner + i); };
      double s = 0;
      for (int64_t k = 0; k < n; ++k) s += log ? g[at(k)] : g[at(k)] * y[at(k)];
      for (int64_t k = 0; k < n; ++k)
        out[at(k)] = log ? g[at(k)] - std::exp(y[at(k)]) * s : y[at(k)] * (g[at(k)] - s);
    }
  }
  return out;
}

TEST(SoftmaxBackward, FusedAndDecompositionMatchFloat64Reference) {
  const std::vector<LineCase> cases = {
      {{6, 37}, -1, false},   {{6, 37}, 0, false}, {{3, 5, 7}, 1, false},
      {{3, 5, 7}, -1, false}, {{70}, 0, false},    {{}, 0, false},
      {{9, 40}, 1, true},     {{9, 40}, 0, true},  {{2, 3, 1100}, 2, false}};
  for (bool log : {false, true}) {
    for (tessera::Dtype dt : kBoth) {
      for (const LineCase& cs : cases) {
        const std::string what = std::string(log ? "log_softmax" : "softmax") + " " +
                                 tessera::name(dt) + " ndim " + std::to_string(cs.shape.size()) +
                                 " dim " + std::to_string(cs.dim) +
                                 (cs.transposed ? " transposed" : "");
        size_t numel = 1;
        for (int64_t s : cs.shape) numel *= static_cast<size_t>(s);
        std::vector<int64_t> stored = cs.shape;
        if (cs.transposed) std::swap(stored[0], stored[1]);
        Tensor x = tessera::tensor(random_values(numel, 3, -4, 4), tessera::IntList(stored),
                                   tessera::kFloat64);
        Tensor g = tessera::tensor(random_values(numel, 5), tessera::IntList(stored), dt);
        if (cs.transposed) {
          x = x.t();
          g = g.t();
        }
        const int64_t dim = cs.dim;
        Tensor y = (log ? tessera::log_softmax(x, dim) : tessera::softmax(x, dim)).to(dt);
        // The reference from the (rounded) inputs, row-major.
        const std::vector<double> gv = g.contiguous().to(tessera::kFloat64).to_vector<double>();
        const std::vector<double> yv = y.contiguous().to(tessera::kFloat64).to_vector<double>();
        const std::vector<double> ref = softmax_backward_ref(log, gv, yv, cs.shape, dim);
        Tensor r = softmax_backward(log, g, y, dim, dt);
        EXPECT_EQ(r.dtype(), dt) << what;
        EXPECT_EQ(r.sizes(), y.sizes()) << what;
        expect_close(r.contiguous(), ref, dt, what);
        // Training through softmax takes the same gradient (from its own y).
        Tensor xt = x.to(dt);
        xt.requires_grad_();
        Tensor yt = log ? tessera::log_softmax(xt, dim) : tessera::softmax(xt, dim);
        (yt * g).sum().backward();
        const std::vector<double> yv2 =
            yt.detach().contiguous().to(tessera::kFloat64).to_vector<double>();
        expect_close(xt.grad().contiguous(), softmax_backward_ref(log, gv, yv2, cs.shape, dim), dt,
                     what + " autograd");
      }
    }
  }
}

TEST(SoftmaxBackward, HalfToFloatGradientHasTheInputDtype) {
  // _softmax(x_half, dim, half_to_float=True) gives float32; its backward
  // gives the float16 input a float16 gradient, computed in float32.
  for (bool log : {false, true}) {
    Tensor x = tessera::tensor(random_values(5 * 33, 7, -3, 3), {5, 33}, tessera::kFloat16);
    x.requires_grad_();
    Tensor y = tessera::call_op(log ? "_log_softmax" : "_softmax",
                                {value(x), value(int64_t{1}), value(true)});
    ASSERT_EQ(y.dtype(), tessera::kFloat32);
    Tensor g = tessera::tensor(random_values(5 * 33, 9), {5, 33}, tessera::kFloat32);
    (y * g).sum().backward();
    ASSERT_EQ(x.grad().dtype(), tessera::kFloat16) << log;
    const std::vector<double> ref =
        softmax_backward_ref(log, g.to(tessera::kFloat64).to_vector<double>(),
                             y.detach().to(tessera::kFloat64).to_vector<double>(), {5, 33}, 1);
    const std::vector<double> got = x.grad().to(tessera::kFloat64).to_vector<double>();
    for (size_t i = 0; i < ref.size(); ++i)
      EXPECT_NEAR(got[i], ref[i], 1e-3 * (1 + std::abs(ref[i]))) << log << " at " << i;
    // The decomposition (float64 can't be half_to_float; float32 with the
    // float16 input_dtype on a device path check): same dtype rule directly.
    Tensor r = softmax_backward(log, g, y.detach(), 1, tessera::kBFloat16);
    EXPECT_EQ(r.dtype(), tessera::kBFloat16);
  }
}

TEST(SoftmaxBackward, TrainingRunsTheFusedOpAndCreateGraphComposes) {
  for (bool log : {false, true}) {
    const char* fused = log ? "_log_softmax_backward_data" : "_softmax_backward_data";
    Tensor x = tessera::tensor(random_values(24, 4), {4, 6}, tessera::kFloat32);
    x.requires_grad_();
    Tensor w = tessera::tensor(random_values(24, 8), {4, 6}, tessera::kFloat32);
    Tensor y = log ? tessera::log_softmax(x, 1) : tessera::softmax(x, 1);
    Tensor loss = (y * w).sum();
    auto names = ops_crossed([&] { loss.backward(); });
    EXPECT_TRUE(crosses(names, fused)) << fused;
    EXPECT_FALSE(crosses(names, "sum.dim_IntList")) << fused;
    const std::vector<double> once = x.grad().to_vector<double>();
    // Under create_graph the composed form runs, and a second derivative
    // exists (gradgradcheck in autograd_test checks its values).
    x.set_grad(Tensor());
    Tensor y2 = log ? tessera::log_softmax(x, 1) : tessera::softmax(x, 1);
    Tensor loss2 = (y2 * w).sum();
    names = ops_crossed([&] { loss2.backward(Tensor(), false, true); });
    EXPECT_FALSE(crosses(names, fused)) << fused;
    EXPECT_TRUE(x.grad().requires_grad()) << fused;
    expect_close(x.grad().detach(), once, tessera::kFloat32, std::string(fused) + " composed");
  }
}

TEST(SoftmaxBackward, ArgumentErrorsNameTheArgument) {
  Tensor g = tessera::ones({3, 4});
  Tensor y = tessera::ones({3, 4});
  expect_error([&] { softmax_backward(false, g, y.to(tessera::kFloat64), 1, tessera::kFloat32); },
               TSR_INVALID_ARGUMENT, {"_softmax_backward_data", "output", "float64"});
  expect_error([&] { softmax_backward(true, g, y.narrow(0, 0, 2), 1, tessera::kFloat32); },
               TSR_INVALID_ARGUMENT, {"_log_softmax_backward_data", "same size"});
  expect_error([&] { softmax_backward(false, g, y, 1, tessera::kFloat64); }, TSR_INVALID_ARGUMENT,
               {"input_dtype", "float64"});
  expect_error([&] { softmax_backward(false, g, y, 2, tessera::kFloat32); }, TSR_OUT_OF_RANGE,
               {"dim"});
  Tensor gi = tessera::ones({3, 4}, tessera::kInt64);
  expect_error([&] { softmax_backward(false, gi, gi, 1, tessera::kInt64); }, TSR_INVALID_ARGUMENT,
               {"grad_output", "floating"});
}

// ---------------------------------------------------------------------------
// cross_entropy_loss_backward
// ---------------------------------------------------------------------------

struct CeCase {
  std::vector<int64_t> shape;  // self
  bool probabilities;
  bool weighted;
  int64_t reduction;
  double smoothing;
};

TEST(CrossEntropyBackward, FusedMatchesComposedFloat64Gradient) {
  std::vector<CeCase> cases;
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{6, 7}, std::vector<int64_t>{7}, std::vector<int64_t>{2, 5, 3, 2}})
    for (bool prob : {false, true})
      for (bool weighted : {false, true})
        for (int64_t reduction : {0, 1, 2})
          for (double ls : {0.0, 0.2}) cases.push_back({shape, prob, weighted, reduction, ls});
  for (const CeCase& cs : cases) {
    const bool batched = cs.shape.size() >= 2;
    const int64_t c = batched ? cs.shape[1] : cs.shape[0];
    std::vector<int64_t> tshape;
    if (batched) {
      tshape.push_back(cs.shape[0]);
      for (size_t k = 2; k < cs.shape.size(); ++k) tshape.push_back(cs.shape[k]);
    }
    size_t numel = 1, positions = 1;
    for (int64_t s : cs.shape) numel *= static_cast<size_t>(s);
    for (int64_t s : tshape) positions *= static_cast<size_t>(s);
    std::vector<int64_t> t(positions);
    for (size_t i = 0; i < positions; ++i)
      t[i] = (i % 4 == 2) ? -100 : static_cast<int64_t>(i * 3 + 1) % c;  // ignore_index hits
    if (!batched) t[0] = 4;
    const Tensor weight = cs.weighted
                              ? tessera::tensor(random_values(static_cast<size_t>(c), 13, 0.3, 2.0),
                                                {c}, tessera::kFloat64)
                              : Tensor();
    const std::vector<double> xs = random_values(numel, 17, -3, 3);
    Tensor target64 =
        cs.probabilities
            ? tessera::softmax(tessera::tensor(random_values(numel, 19, -2, 2),
                                               tessera::IntList(cs.shape), tessera::kFloat64),
                               batched ? 1 : 0)
            : tessera::tensor(t, tessera::IntList(tshape));
    const std::string what = "ndim " + std::to_string(cs.shape.size()) +
                             (cs.probabilities ? " prob" : " class") +
                             (cs.weighted ? " weight" : "") + " reduction " +
                             std::to_string(cs.reduction) + " ls " + std::to_string(cs.smoothing);
    auto loss_of = [&](const Tensor& x, const Tensor& target, const Tensor& w) {
      return tessera::call_op("cross_entropy_loss",
                              {value(x), value(target), w.defined() ? value(w) : tsr_value{},
                               value(cs.reduction), value(int64_t{-100}), value(cs.smoothing)});
    };
    // The upstream gradient: varied per element for reduction none.
    auto upstream = [&](const Tensor& loss) {
      return cs.reduction == 0
                 ? tessera::tensor(random_values(static_cast<size_t>(loss.numel()), 23, 0.5, 1.5),
                                   loss.sizes(), loss.dtype())
                 : tessera::full({}, 0.75, loss.dtype());
    };
    // Reference: float64 autograd through the decomposition (create_graph).
    Tensor x64 = tessera::tensor(xs, tessera::IntList(cs.shape), tessera::kFloat64);
    x64.requires_grad_();
    Tensor l64 = loss_of(x64, target64, weight);
    l64.backward(upstream(l64), false, true);
    const std::vector<double> ref = x64.grad().detach().to_vector<double>();
    for (tessera::Dtype dt : kBoth) {
      Tensor x = tessera::tensor(xs, tessera::IntList(cs.shape), dt);
      x.requires_grad_();
      Tensor target = cs.probabilities ? target64.to(dt) : target64;
      Tensor w = cs.weighted ? weight.to(dt) : Tensor();
      Tensor loss = loss_of(x, target, w);
      Tensor up = upstream(loss);
      auto names = ops_crossed([&] { loss.backward(up); });
      EXPECT_TRUE(crosses(names, "cross_entropy_loss_backward")) << what;
      expect_close(x.grad(), ref, dt, what + " " + tessera::name(dt), 4.0);
      // The op called directly gives the same.
      Tensor direct = tessera::call_op(
          "cross_entropy_loss_backward",
          {value(up), value(x.detach()), value(target), w.defined() ? value(w) : tsr_value{},
           value(cs.reduction), value(int64_t{-100}), value(cs.smoothing)});
      expect_close(direct, ref, dt, what + " direct " + tessera::name(dt), 4.0);
    }
  }
}

TEST(CrossEntropyBackward, Float32ClassTargetsRunOneKernelAndAllIgnoredMeanIsZero) {
  Tensor x = tessera::tensor(random_values(40, 29, -2, 2), {5, 8}, tessera::kFloat32);
  x.requires_grad_();
  Tensor t = tessera::tensor(std::vector<int64_t>{1, 7, 0, 3, 5}, {5});
  Tensor loss = tessera::cross_entropy(x, t);
  auto names = ops_crossed([&] { loss.backward(); });
  EXPECT_TRUE(crosses(names, "cross_entropy_loss_backward"));
  EXPECT_FALSE(crosses(names, "_log_softmax"));
  EXPECT_FALSE(crosses(names, "_softmax"));  // the kernel, not the decomposition
  // Every target ignored: the mean is NaN (0 / 0) and the gradient 0, as PyTorch's.
  for (tessera::Dtype dt : kBoth) {
    for (double ls : {0.0, 0.3}) {
      Tensor xi = tessera::tensor(random_values(12, 31), {3, 4}, dt);
      xi.requires_grad_();
      Tensor ti = tessera::tensor(std::vector<int64_t>{-100, -100, -100}, {3});
      Tensor li = tessera::call_op(
          "cross_entropy_loss",
          {value(xi), value(ti), tsr_value{}, value(int64_t{1}), value(int64_t{-100}), value(ls)});
      EXPECT_TRUE(std::isnan(li.item<double>()));
      li.backward();
      for (double v : xi.grad().to(tessera::kFloat64).to_vector<double>())
        EXPECT_EQ(v, 0.0) << tessera::name(dt) << " ls " << ls;
    }
  }
  // Argument errors name the argument.
  Tensor g = tessera::full({}, 1.0);
  expect_error(
      [&] {
        tessera::call_op("cross_entropy_loss_backward",
                         {value(tessera::ones({5})), value(x.detach()), value(t), tsr_value{},
                          value(int64_t{1}), value(int64_t{-100}), value(0.0)});
      },
      TSR_INVALID_ARGUMENT, {"cross_entropy_loss_backward", "grad_output"});
  Tensor bad = tessera::tensor(std::vector<int64_t>{1, 8, 0, 3, 5}, {5});
  expect_error(
      [&] {
        tessera::call_op("cross_entropy_loss_backward",
                         {value(g.to(tessera::kFloat32)), value(x.detach()), value(bad),
                          tsr_value{}, value(int64_t{1}), value(int64_t{-100}), value(0.0)});
      },
      TSR_OUT_OF_RANGE, {"Target 8 is out of bounds"});
  expect_error(
      [&] {
        tessera::call_op("cross_entropy_loss_backward",
                         {value(g), value(x.detach().to(tessera::kFloat64)), value(t), tsr_value{},
                          value(int64_t{1}), value(int64_t{-100}), value(1.5)});
      },
      TSR_INVALID_ARGUMENT, {"label_smoothing"});
}

}  // namespace
