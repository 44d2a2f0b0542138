// autograd_test.cpp - the engine and recording (the seed autograd program) and
// gradcheck of differentiable ops against float64 finite differences.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "frontend_test_support.h"
#include "tessera/autograd.hpp"
#include "tessera/tessera.hpp"

namespace {

using tessera::Dtype;
using tessera::Tensor;
using tessera::detail::value;
namespace ag = tessera::autograd;
using tsr_test::error_of;

Tensor leaf(const std::vector<double>& values, tessera::IntList shape,
            Dtype dtype = Dtype::Float64) {
  Tensor t = tessera::tensor(values, shape, tessera::TensorOptions().dtype(dtype));
  t.requires_grad_();
  return t;
}

// Deterministic values in [-1, 1).
std::vector<double> values(size_t n, uint32_t seed) {
  std::vector<double> v(n);
  uint32_t state = seed;
  for (auto& x : v) {
    state = state * 1664525u + 1013904223u;
    x = static_cast<double>(state >> 8) / static_cast<double>(1u << 24) * 2.0 - 1.0;
  }
  return v;
}

Tensor op(const char* name, std::initializer_list<tsr_value> args) {
  return tessera::call_op(name, args);
}

TEST(Autograd, LeavesAccumulateAcrossPathsAndCalls) {
  Tensor x = leaf({1, 2, 3}, {3});
  EXPECT_TRUE(x.is_leaf());
  EXPECT_TRUE(x.requires_grad());
  Tensor y = op("mul.Tensor", {value(x), value(x)});  // two paths to x
  EXPECT_FALSE(y.is_leaf());
  EXPECT_EQ(y.grad_fn_name(), "MulBackward0");
  Tensor s = op("sum", {value(y), tessera::detail::none()});
  EXPECT_EQ(s.grad_fn_name(), "SumBackward0");
  s.backward(Tensor(), /*retain_graph=*/true);
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{2, 4, 6}));
  s.backward();  // accumulates
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{4, 8, 12}));
}

TEST(Autograd, ASecondBackwardThroughAFreedGraphFailsClearly) {
  Tensor x = leaf({1, 2}, {2});
  Tensor s = op("sum", {value(op("mul.Tensor", {value(x), value(x)})), tessera::detail::none()});
  s.backward();
  const std::string message = error_of([&] { s.backward(); });
  EXPECT_NE(message.find("backward through the graph a second time"), std::string::npos) << message;
  EXPECT_NE(message.find("retain_graph"), std::string::npos) << message;
}

TEST(Autograd, NonScalarOutputsNeedAGradient) {
  Tensor x = leaf({1, 2}, {2});
  Tensor y = op("mul.Scalar", {value(x), value(tessera::Scalar(3.0))});
  const std::string message = error_of([&] { y.backward(); });
  EXPECT_NE(message.find("implicitly created only for scalar outputs"), std::string::npos)
      << message;
  y.backward(tessera::tensor(std::vector<double>{1, 10}, {2}).to(Dtype::Float64));
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{3, 30}));
}

TEST(Autograd, ThirdDerivativeOfXToTheFourthAtTwoIs48) {
  Tensor x = leaf({2}, {});
  Tensor y = op("pow.Tensor_Scalar", {value(x), value(tessera::Scalar(4.0))});
  Tensor d1 = ag::grad({y}, {x}, {}, std::nullopt, /*create_graph=*/true)[0];
  Tensor d2 = ag::grad({d1}, {x}, {}, std::nullopt, true)[0];
  Tensor d3 = ag::grad({d2}, {x}, {}, std::nullopt, true)[0];
  EXPECT_DOUBLE_EQ(d1.item<double>(), 32.0);  // 4 x^3
  EXPECT_DOUBLE_EQ(d2.item<double>(), 48.0);  // 12 x^2
  EXPECT_DOUBLE_EQ(d3.item<double>(), 48.0);  // 24 x
  EXPECT_FALSE(x.grad().defined()) << "grad() leaves .grad alone";
}

TEST(Autograd, ModifyingASavedTensorInPlaceIsDetected) {
  Tensor x = leaf({1, 2, 3}, {3});
  Tensor a = op("mul.Scalar", {value(x), value(tessera::Scalar(2.0))});
  Tensor b = op("mul.Tensor", {value(a), value(a)});  // saves a
  op("add_.Scalar", {value(a), value(tessera::Scalar(1.0))});
  const std::string message = error_of([&] {
    op("sum", {value(b), tessera::detail::none()}).backward();
  });
  EXPECT_NE(message.find("modified by an inplace operation"), std::string::npos) << message;
  EXPECT_NE(message.find("MulBackward0"), std::string::npos) << message;
  EXPECT_NE(message.find("is at version 1; expected version 0"), std::string::npos) << message;
}

TEST(Autograd, InPlaceOnALeafThatRequiresGradIsRefused) {
  Tensor x = leaf({1, 2}, {2});
  const std::string message = error_of([&] {
    op("add_.Scalar", {value(x), value(tessera::Scalar(1.0))});
  });
  EXPECT_NE(message.find("leaf"), std::string::npos) << message;
  ag::NoGradGuard no_grad;  // allowed under no_grad, as in PyTorch
  op("add_.Scalar", {value(x), value(tessera::Scalar(1.0))});
  EXPECT_EQ(x.to_vector<double>(), (std::vector<double>{2, 3}));
}

TEST(Autograd, InPlaceOnANonLeafRebasesItsHistory) {
  Tensor x = leaf({1, 2, 3}, {3});
  Tensor y = op("mul.Scalar", {value(x), value(tessera::Scalar(2.0))});
  op("mul_.Tensor", {value(y), value(x)});  // y = 2x * x
  EXPECT_EQ(y.grad_fn_name(), "MulBackward0");
  op("sum", {value(y), tessera::detail::none()}).backward();
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{4, 8, 12}));  // 4x
}

TEST(Autograd, NoGradAndIntegerOutputsRecordNothing) {
  Tensor x = leaf({1, -2, 3}, {3});
  {
    ag::NoGradGuard no_grad;
    EXPECT_FALSE(ag::is_grad_enabled());
    Tensor y = op("mul.Tensor", {value(x), value(x)});
    EXPECT_FALSE(y.requires_grad());
    EXPECT_TRUE(y.is_leaf());
  }
  EXPECT_TRUE(ag::is_grad_enabled());
  Tensor idx = op("argmax", {value(x)});
  EXPECT_FALSE(idx.requires_grad());
  Tensor positive = op("gt.Scalar", {value(x), value(tessera::Scalar(0.0))});
  EXPECT_FALSE(positive.requires_grad());
  Tensor ints = tessera::tensor(std::vector<double>{1, 2}, {2}).to(Dtype::Int64);
  EXPECT_NE(error_of([&] { ints.requires_grad_(); }).find("floating point"), std::string::npos);
}

TEST(Autograd, OutOverloadsRefuseInputsThatRequireGrad) {
  Tensor x = leaf({1, 2}, {2});
  Tensor out = tessera::empty({2}, tessera::TensorOptions().dtype(Dtype::Float64));
  const std::string message = error_of([&] { op("mul.out", {value(x), value(x), value(out)}); });
  EXPECT_NE(message.find("out=... arguments don't support automatic differentiation"),
            std::string::npos)
      << message;
}

TEST(Autograd, RetainGradKeepsANonLeafGradient) {
  Tensor x = leaf({1, 2}, {2});
  Tensor y = op("mul.Scalar", {value(x), value(tessera::Scalar(3.0))});
  y.retain_grad();
  op("sum", {value(op("mul.Tensor", {value(y), value(y)})), tessera::detail::none()}).backward();
  EXPECT_EQ(y.grad().to_vector<double>(), (std::vector<double>{6, 12}));   // 2y
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{18, 36}));  // 18x
}

TEST(Autograd, GradFnListsItsNextFunctions) {
  Tensor x = leaf({1, 2}, {2});
  Tensor c = tessera::tensor(std::vector<double>{3, 4}, {2},
                             tessera::TensorOptions().dtype(Dtype::Float64));
  Tensor y = op("exp", {value(x)});
  Tensor z = op("mul.Tensor", {value(y), value(c)});
  const auto next = z.grad_fn_next();
  ASSERT_EQ(next.size(), 1u) << "c needs no gradient and gets no edge";
  EXPECT_EQ(next[0].first, "ExpBackward0");
  EXPECT_EQ(y.grad_fn_next(),
            (std::vector<std::pair<std::string, uint32_t>>{{"AccumulateGrad", 0}}));
  EXPECT_TRUE(x.grad_fn_next().empty());
}

TEST(Autograd, DetachInPlaceMakesALeaf) {
  Tensor x = leaf({1, 2}, {2});
  Tensor y = op("mul.Scalar", {value(x), value(tessera::Scalar(2.0))});
  y.detach_();
  EXPECT_TRUE(y.is_leaf());
  EXPECT_FALSE(y.requires_grad());
  EXPECT_EQ(y.grad_fn_name(), "");
}

TEST(Autograd, AnomalyModeNamesTheForwardOpOfANaNGradient) {
  Tensor x = leaf({0.0, 1.0}, {2});
  Tensor y = op("sqrt", {value(x)});  // d sqrt(x)/dx at 0 is inf; times 0 -> nan
  Tensor z = op("mul.Tensor",
                {value(y), value(tessera::tensor(std::vector<double>{0, 1}, {2},
                                                 tessera::TensorOptions().dtype(Dtype::Float64)))});
  ag::set_detect_anomaly(true);
  const std::string message = error_of([&] {
    op("sum", {value(z), tessera::detail::none()}).backward();
  });
  ag::set_detect_anomaly(false);
  EXPECT_FALSE(ag::is_anomaly_enabled());
  EXPECT_NE(message.find("returned nan values"), std::string::npos) << message;
  EXPECT_NE(message.find("SqrtBackward0"), std::string::npos) << message;
  EXPECT_NE(message.find("'sqrt'"), std::string::npos) << message;
  // Without anomaly mode the NaN just lands in .grad.
  op("sum", {value(op("mul.Tensor",
                      {value(op("sqrt", {value(x)})),
                       value(tessera::tensor(std::vector<double>{0, 1}, {2},
                                             tessera::TensorOptions().dtype(Dtype::Float64)))})),
             tessera::detail::none()})
      .backward();
  EXPECT_TRUE(std::isnan(x.grad().to_vector<double>()[0]));
}

// scatter_reduce's non-smooth reductions at ties and zeros, where finite
// differences cannot check them: PyTorch 1.13's gradients (printed by
// torch.Tensor.scatter_reduce + backward), except where noted.
struct ScatterCase {
  std::vector<double> self;
  std::vector<int64_t> index;
  std::vector<double> src;
  const char* reduce;
  bool include_self;
  std::vector<double> g, grad_self, grad_src;
};

TEST(Autograd, ScatterReduceTiesAndZerosMatchPyTorch) {
  const ScatterCase cases[] = {
      // amax: tied members share the gradient evenly.
      {{1, 5}, {0, 0, 1}, {1, 0.5, 5}, "amax", true, {1, 2}, {0.5, 1}, {0.5, 0, 1}},
      // prod: one zero member gets the product of the others; two zeros: 0.
      {{2, 0, 3},
       {0, 0, 1, 1, 2},
       {0, 4, 5, 0, 7},
       "prod",
       true,
       {1, 2, 3},
       {0, 0, 21},
       {8, 0, 0, 0, 9}},
      {{2, 0, 3},
       {0, 0, 1, 1, 2},
       {0, 4, 5, 1, 7},
       "prod",
       true,
       {1, 2, 3},
       {0, 10, 21},
       {8, 0, 0, 0, 9}},
      {{2, 0, 3}, {0, 0, 1, 1}, {0, 4, 5, 2}, "prod", false, {1, 2, 3}, {0, 0, 3}, {4, 0, 4, 10}},
      // amin without self: only src members count. PyTorch 1.13 also counts
      // the excluded self[0] == 1 and gives src (1/3, 1/3, 1), so its src
      // gradients sum to less than the upstream gradient; we keep the sum.
      {{1, 5, -3}, {0, 0, 1}, {1, 1, 5}, "amin", false, {1, 2, 3}, {0, 0, 3}, {0.5, 0.5, 2}},
  };
  for (const ScatterCase& k : cases) {
    SCOPED_TRACE(std::string(k.reduce) + (k.include_self ? " include_self" : " exclude_self"));
    Tensor self = leaf(k.self, {static_cast<int64_t>(k.self.size())});
    Tensor src = leaf(k.src, {static_cast<int64_t>(k.src.size())});
    Tensor index = tessera::tensor(k.index, {static_cast<int64_t>(k.index.size())});
    Tensor r = op("scatter_reduce.two", {value(self), value(int64_t{0}), value(index), value(src),
                                         value(k.reduce), value(k.include_self)});
    r.backward(tessera::tensor(k.g, {static_cast<int64_t>(k.g.size())},
                               tessera::TensorOptions().dtype(Dtype::Float64)));
    EXPECT_EQ(self.grad().to_vector<double>(), k.grad_self);
    EXPECT_EQ(src.grad().to_vector<double>(), k.grad_src);
  }
}

TEST(Autograd, GradOfAnUnusedInputNeedsAllowUnused) {
  Tensor x = leaf({1}, {});
  Tensor z = leaf({5}, {});
  Tensor y = op("mul.Tensor", {value(x), value(x)});
  EXPECT_NE(error_of([&] {
              ag::grad({y}, {x, z}, {}, true);
            }).find("allow_unused"),
            std::string::npos);
  std::vector<Tensor> g = ag::grad({y}, {x, z}, {}, true, false, /*allow_unused=*/true);
  EXPECT_DOUBLE_EQ(g[0].item<double>(), 2.0);
  EXPECT_FALSE(g[1].defined());
}

// ---- gradcheck of differentiable ops (float64, eps 1e-6, atol 1e-5, rtol 1e-3) ----

struct Case {
  const char* name;
  std::vector<std::vector<int64_t>> shapes;
  std::function<Tensor(const std::vector<Tensor>&)> fn;
  double shift = 0;  // added to inputs (log, sqrt need positive values)
  double scale = 1;  // inputs are scale * [-1, 1) + shift
};

// Built once: the instantiations, the test names and every test body index
// into it (rebuilding it per lookup made each test process spend ~3 s under
// AddressSanitizer before running its one test).
std::vector<Case> make_cases() {
  auto s = [](double v) { return value(tessera::Scalar(v)); };
  auto i64 = [](int64_t v) { return value(v); };
  return {
      {"add.Tensor broadcast",
       {{2, 3}, {3}},
       [=](auto& x) {
         return op("add.Tensor", {value(x[0]), value(x[1]), s(2.5)});
       }},
      {"sub.Tensor broadcast",
       {{2, 1}, {2, 3}},
       [=](auto& x) {
         return op("sub.Tensor", {value(x[0]), value(x[1]), s(1.5)});
       }},
      {"mul.Tensor",
       {{2, 3}, {2, 3}},
       [](auto& x) {
         return op("mul.Tensor", {value(x[0]), value(x[1])});
       }},
      {"div.Tensor",
       {{3}, {3}},
       [](auto& x) {
         return op("div.Tensor", {value(x[0]), value(x[1])});
       },
       2.0},
      {"neg", {{4}}, [](auto& x) { return op("neg", {value(x[0])}); }},
      {"exp", {{4}}, [](auto& x) { return op("exp", {value(x[0])}); }},
      {"log", {{4}}, [](auto& x) { return op("log", {value(x[0])}); }, 2.0},
      {"tanh", {{4}}, [](auto& x) { return op("tanh", {value(x[0])}); }},
      {"sigmoid", {{4}}, [](auto& x) { return op("sigmoid", {value(x[0])}); }},
      {"sqrt", {{4}}, [](auto& x) { return op("sqrt", {value(x[0])}); }, 2.0},
      {"rsqrt", {{4}}, [](auto& x) { return op("rsqrt", {value(x[0])}); }, 2.0},
      {"sin", {{4}}, [](auto& x) { return op("sin", {value(x[0])}); }},
      {"cos", {{4}}, [](auto& x) { return op("cos", {value(x[0])}); }},
      {"pow.Tensor_Scalar",
       {{4}},
       [=](auto& x) {
         return op("pow.Tensor_Scalar", {value(x[0]), s(3.0)});
       }},
      {"gelu",
       {{5}},
       [](auto& x) {
         return op("gelu", {value(x[0]), value("none")});
       }},
      {"gelu tanh",
       {{5}},
       [](auto& x) {
         return op("gelu", {value(x[0]), value("tanh")});
       }},
      {"sum",
       {{2, 3}},
       [](auto& x) {
         return op("sum", {value(x[0]), tessera::detail::none()});
       }},
      {"sum.dim_IntList",
       {{2, 3, 2}},
       [](auto& x) {
         const int64_t d[2] = {0, 2};
         return op("sum.dim_IntList", {value(x[0]), value(tessera::IntList(d, 2)), value(false),
                                       tessera::detail::none()});
       }},
      {"mean.dim keepdim",
       {{2, 3}},
       [](auto& x) {
         const int64_t d = -1;
         return op("mean.dim",
                   {value(x[0]), value(tessera::IntList(d)), value(true), tessera::detail::none()});
       }},
      {"_softmax",
       {{2, 4}},
       [=](auto& x) {
         return op("_softmax", {value(x[0]), i64(1), value(false)});
       }},
      {"_log_softmax",
       {{3, 2}},
       [=](auto& x) {
         return op("_log_softmax", {value(x[0]), i64(0), value(false)});
       }},
      {"mm",
       {{2, 3}, {3, 4}},
       [](auto& x) {
         return op("mm", {value(x[0]), value(x[1])});
       }},
      {"bmm",
       {{2, 2, 3}, {2, 3, 2}},
       [](auto& x) {
         return op("bmm", {value(x[0]), value(x[1])});
       }},
      {"transpose of a view",
       {{2, 3}},
       [=](auto& x) {
         return op("mul.Scalar",
                   {value(op("transpose.int", {value(x[0]), i64(0), i64(1)})), s(2.0)});
       }},
      {"permute",
       {{2, 3, 4}},
       [](auto& x) {
         const int64_t p[3] = {2, 0, 1};
         return op("permute", {value(x[0]), value(tessera::IntList(p, 3))});
       }},
      {"expand",
       {{3, 1}},
       [](auto& x) {
         const int64_t sz[2] = {3, 4};
         return op("expand", {value(x[0]), value(tessera::IntList(sz, 2))});
       }},
      {"select.int",
       {{3, 4}},
       [=](auto& x) {
         return op("select.int", {value(x[0]), i64(1), i64(2)});
       }},
      {"slice.Tensor",
       {{5, 2}},
       [=](auto& x) {
         return op("slice.Tensor", {value(x[0]), i64(0), i64(1), i64(5), i64(2)});
       }},
      {"view",
       {{2, 6}},
       [](auto& x) {
         const int64_t sz[2] = {3, 4};
         return op("view", {value(x[0]), value(tessera::IntList(sz, 2))});
       }},
      {"linear (composite)",
       {{2, 3}, {4, 3}, {4}},
       [](auto& x) {
         return op("linear", {value(x[0]), value(x[1]), value(x[2])});
       }},
      {"matmul (composite)",
       {{2, 3}, {3}},
       [](auto& x) {
         return op("matmul", {value(x[0]), value(x[1])});
       }},
      {"matmul batched",
       {{2, 2, 3}, {3, 2}},
       [](auto& x) {
         return op("matmul", {value(x[0]), value(x[1])});
       }},
      {"reshape",
       {{2, 3}},
       [](auto& x) {
         const int64_t sz[1] = {6};
         return op("reshape", {value(op("t", {value(x[0])})), value(tessera::IntList(sz, 1))});
       }},
      {"clone", {{3}}, [](auto& x) { return op("clone", {value(x[0])}); }},
      {"mean",
       {{2, 3}},
       [](auto& x) {
         return op("mean", {value(x[0]), tessera::detail::none()});
       }},
      {"layer_norm (fusable)",
       {{2, 4}, {4}, {4}},
       [](auto& x) {
         const int64_t n = 4;
         return op("layer_norm",
                   {value(x[0]), value(tessera::IntList(n)), value(x[1]), value(x[2])});
       }},
      {"layer_norm over two dims, no affine",
       {{2, 3, 4}},
       [](auto& x) {
         const int64_t shape[2] = {3, 4};
         return op("layer_norm", {value(x[0]), value(tessera::IntList(shape, 2))});
       }},
      // The fused backward op differentiates through its decomposition (mean
      // and rstd as free inputs, rstd kept positive).
      {"native_layer_norm_backward (fusable)",
       {{2, 4}, {2, 4}, {2, 1}, {2, 1}, {4}, {4}},
       [](auto& x) {
         const int64_t n = 4;
         const int32_t mask[3] = {1, 1, 1};
         tsr_value m{};
         m.tag = TSR_VALUE_BOOL_LIST;
         m.len = 3;
         m.u.bools = mask;
         std::vector<Tensor> r = tessera::call_op_all(
             "native_layer_norm_backward",
             {value(x[0]), value(x[1]), value(tessera::IntList(n)), value(x[2]),
              value(x[3] * x[3] + 0.5), value(x[4]), value(x[5]), m});
         return r[0] + (r[1] * 0.5 + r[2] * 0.25).reshape({1, 4});
       }},
      {"softmax.int",
       {{2, 3}},
       [](auto& x) {
         return op("softmax.int", {value(x[0]), value(int64_t{1})});
       }},
      {"cross_entropy (fusable)",
       {{3, 4}},
       [](auto& x) {
         Tensor target = tessera::tensor(std::vector<int64_t>{0, 3, 1}, {3});
         return op("cross_entropy_loss", {value(x[0]), value(target)});
       }},
      // Training runs these backward ops (formulas without create_graph);
      // their own derivatives go through their decompositions. y is a valid
      // forward output (softmax / log_softmax of a free input).
      {"_softmax_backward_data (fusable)",
       {{3, 4}, {3, 4}},
       [](auto& x) {
         Tensor y = op("softmax.int", {value(x[1]), value(int64_t{1})});
         return op("_softmax_backward_data",
                   {value(x[0]), value(y), value(int64_t{1}),
                    value(std::optional<tessera::Dtype>(tessera::kFloat64))});
       }},
      {"_log_softmax_backward_data over dim 0 (fusable)",
       {{3, 4}, {3, 4}},
       [](auto& x) {
         Tensor y = op("log_softmax.int", {value(x[1]), value(int64_t{0})});
         return op("_log_softmax_backward_data",
                   {value(x[0]), value(y), value(int64_t{0}),
                    value(std::optional<tessera::Dtype>(tessera::kFloat64))});
       }},
      {"cross_entropy_loss_backward, weight, ignore_index, smoothing (fusable)",
       {{4}, {4, 3}, {3}},
       [](auto& x) {
         Tensor target = tessera::tensor(std::vector<int64_t>{0, 2, -100, 1}, {4});
         return op("cross_entropy_loss_backward",
                   {value(x[0]), value(x[1]), value(target), value(x[2] * x[2] + 0.5),
                    value(int64_t{0}), value(int64_t{-100}), value(0.1)});
       }},
      {"cross_entropy_loss_backward, probability targets, mean (fusable)",
       {{}, {2, 3, 2}, {2, 3, 2}},
       [](auto& x) {
         Tensor target = op("softmax.int", {value(x[2]), value(int64_t{1})});
         return op("cross_entropy_loss_backward",
                   {value(x[0]), value(x[1]), value(target), tsr_value{}, value(int64_t{1}),
                    value(int64_t{-100}), value(0.2)});
       }},
      // Probability targets and the weight take gradients too (the formula
      // differentiates the decomposition for them).
      {"cross_entropy, probability targets and weight",
       {{3, 4}, {3, 4}, {4}},
       [](auto& x) {
         return op("cross_entropy_loss", {value(x[0]), value(x[1] * x[1]), value(x[2]),
                                          value(int64_t{2}), value(int64_t{-100}), value(0.1)});
       }},
      {"cross_entropy (N, C, d), weight, ignore_index, smoothing, mean",
       {{2, 3, 2}},
       [](auto& x) {
         Tensor target = tessera::tensor(std::vector<int64_t>{0, 2, 1, 1}, {2, 2});
         Tensor w = tessera::tensor(std::vector<double>{0.5, 2.0, 1.5}, {3});
         return op("cross_entropy_loss", {value(x[0]), value(target), value(w), value(int64_t{1}),
                                          value(int64_t{1}), value(0.3)});
       }},
      {"exp2", {{4}}, [](auto& x) { return op("exp2", {value(x[0])}); }},
      {"expm1", {{4}}, [](auto& x) { return op("expm1", {value(x[0])}); }},
      {"log2", {{4}}, [](auto& x) { return op("log2", {value(x[0])}); }, 2.0},
      {"log10", {{4}}, [](auto& x) { return op("log10", {value(x[0])}); }, 2.0},
      {"log1p", {{4}}, [](auto& x) { return op("log1p", {value(x[0])}); }, 1.0},
      {"reciprocal", {{4}}, [](auto& x) { return op("reciprocal", {value(x[0])}); }, 2.0},
      {"tan", {{4}}, [](auto& x) { return op("tan", {value(x[0])}); }},
      {"asin", {{4}}, [](auto& x) { return op("asin", {value(x[0])}); }, 0, 0.5},
      {"acos", {{4}}, [](auto& x) { return op("acos", {value(x[0])}); }, 0, 0.5},
      {"atan", {{4}}, [](auto& x) { return op("atan", {value(x[0])}); }},
      {"sinh", {{4}}, [](auto& x) { return op("sinh", {value(x[0])}); }},
      {"cosh", {{4}}, [](auto& x) { return op("cosh", {value(x[0])}); }},
      {"asinh", {{4}}, [](auto& x) { return op("asinh", {value(x[0])}); }},
      {"acosh", {{4}}, [](auto& x) { return op("acosh", {value(x[0])}); }, 2.5},
      {"atanh", {{4}}, [](auto& x) { return op("atanh", {value(x[0])}); }, 0, 0.5},
      {"erf", {{4}}, [](auto& x) { return op("erf", {value(x[0])}); }},
      {"erfc", {{4}}, [](auto& x) { return op("erfc", {value(x[0])}); }},
      {"square", {{4}}, [](auto& x) { return op("square", {value(x[0])}); }},
      {"floor (zero)", {{4}}, [](auto& x) { return op("floor", {value(x[0])}); }, 0.3, 0.1},
      {"frac", {{4}}, [](auto& x) { return op("frac", {value(x[0])}); }, 0.5, 0.2},
      {"silu", {{4}}, [](auto& x) { return op("silu", {value(x[0])}); }},
      {"mish", {{4}}, [](auto& x) { return op("mish", {value(x[0])}); }},
      {"softplus",
       {{4}},
       [=](auto& x) {
         return op("softplus", {value(x[0]), s(2.0), s(1.0)});
       },
       0,
       1.5},
      {"leaky_relu",
       {{6}},
       [=](auto& x) {
         return op("leaky_relu", {value(x[0]), s(0.1)});
       }},
      {"elu",
       {{6}},
       [=](auto& x) {
         return op("elu", {value(x[0]), s(1.5), s(1.1), s(0.9)});
       }},
      {"hardtanh",
       {{6}},
       [=](auto& x) {
         return op("hardtanh", {value(x[0]), s(-0.5), s(0.5)});
       }},
      {"clamp",
       {{6}},
       [=](auto& x) {
         return op("clamp", {value(x[0]), s(-0.5), s(0.4)});
       }},
      {"clamp_min",
       {{6}},
       [=](auto& x) {
         return op("clamp_min", {value(x[0]), s(0.1)});
       }},
      {"hardsigmoid", {{6}}, [](auto& x) { return op("hardsigmoid", {value(x[0])}); }, 0, 4.0},
      {"hardswish", {{6}}, [](auto& x) { return op("hardswish", {value(x[0])}); }, 0, 4.0},
      {"logit",
       {{4}},
       [](auto& x) {
         return op("logit", {value(x[0]), tessera::detail::none()});
       },
       0.5,
       0.4},
      {"pow.Tensor_Tensor",
       {{4}, {4}},
       [](auto& x) {
         return op("pow.Tensor_Tensor", {value(x[0]), value(x[1])});
       },
       2.0},
      {"pow.Scalar",
       {{4}},
       [=](auto& x) {
         return op("pow.Scalar", {s(1.7), value(x[0])});
       }},
      // Special functions and the binary variants (formulas_pointwise_special.cpp).
      {"lgamma", {{4}}, [=](auto& x) { return op("lgamma", {value(x[0])}); }, 2.0},
      {"lgamma near 0 and negative",
       {{4}},
       [=](auto& x) { return op("lgamma", {value(x[0])}); },
       -0.6,
       0.3},
      {"digamma", {{4}}, [=](auto& x) { return op("digamma", {value(x[0])}); }, 1.5},
      {"digamma of negatives (reflection)",
       {{4}},
       [=](auto& x) { return op("digamma", {value(x[0])}); },
       -1.5,
       0.3},
      {"erfinv", {{4}}, [=](auto& x) { return op("erfinv", {value(x[0])}); }, 0.0, 0.8},
      {"selu", {{6}}, [=](auto& x) { return op("selu", {value(x[0])}); }},
      {"celu alpha 0.5",
       {{6}},
       [=](auto& x) {
         return op("celu", {value(x[0]), s(0.5)});
       }},
      {"true_divide.Tensor broadcast",
       {{2, 3}, {3}},
       [=](auto& x) {
         return op("true_divide.Tensor",
                   {value(x[0]), value(op("add.Scalar", {value(x[1]), s(2.0)}))});
       }},
      {"float_power.Tensor_Scalar",
       {{4}},
       [=](auto& x) {
         return op("float_power.Tensor_Scalar", {value(x[0]), s(3.0)});
       }},
      {"float_power.Scalar",
       {{4}},
       [=](auto& x) {
         return op("float_power.Scalar", {s(1.7), value(x[0])});
       }},
      {"xlogy.Tensor",
       {{4}, {4}},
       [=](auto& x) {
         return op("xlogy.Tensor", {value(x[0]), value(op("exp", {value(x[1])}))});
       }},
      {"xlogy.Scalar_Self",
       {{4}},
       [=](auto& x) {
         return op("xlogy.Scalar_Self", {s(1.5), value(op("exp", {value(x[0])}))});
       }},
      {"copysign.Tensor",
       {{5}, {5}},
       [=](auto& x) {
         return op("copysign.Tensor", {value(x[0]), value(x[1])});
       }},
      {"logaddexp",
       {{2, 3}, {3}},
       [=](auto& x) {
         return op("logaddexp", {value(x[0]), value(x[1])});
       }},
      {"clamp_min.Tensor",
       {{5}, {5}},
       [=](auto& x) {
         return op("clamp_min.Tensor", {value(x[0]), value(x[1])});
       }},
      {"clamp_max.Tensor",
       {{5}, {5}},
       [=](auto& x) {
         return op("clamp_max.Tensor", {value(x[0]), value(x[1])});
       }},
      {"logcumsumexp",
       {{2, 4}},
       [=](auto& x) {
         return op("logcumsumexp", {value(x[0]), i64(1)});
       }},
      {"cummax",
       {{2, 5}},
       [=](auto& x) {
         return op("cummax", {value(x[0]), i64(1)});
       }},
      {"cummin dim 0",
       {{4, 3}},
       [=](auto& x) {
         return op("cummin", {value(x[0]), i64(0)});
       }},
      {"nan_to_num", {{4}}, [=](auto& x) { return op("nan_to_num", {value(x[0])}); }},
      {"remainder.Scalar_Tensor",
       {{4}},
       [=](auto& x) {
         return op("remainder.Scalar_Tensor", {s(2.5), value(x[0])});
       },
       1.5,
       0.4},
      {"scatter.value_reduce multiply, duplicates",
       {{5}},
       [=](auto& x) {
         Tensor index = tessera::tensor(std::vector<int64_t>{1, 3, 1}, {3});
         return op("scatter.value_reduce",
                   {value(x[0]), i64(0), value(index), s(1.5), value("multiply")});
       }},
      {"aminmax dim 1 (sum of both)",
       {{3, 4}},
       [=](auto& x) {
         std::vector<Tensor> mm =
             tessera::call_op_all("aminmax", {value(x[0]), value(int64_t{1}), value(false)});
         return op("add.Tensor", {value(mm[0]), value(mm[1])});
       }},
      {"aminmax all, max",
       {{3, 4}},
       [=](auto& x) { return tessera::call_op_all("aminmax", {value(x[0])})[1]; }},
      {"diag of a vector, offset 1",
       {{3}},
       [=](auto& x) {
         return op("diag", {value(x[0]), i64(1)});
       }},
      {"diag of a wide matrix, offset -1",
       {{3, 5}},
       [=](auto& x) {
         return op("diag", {value(x[0]), i64(-1)});
       }},
      {"atan2",
       {{4}, {4}},
       [](auto& x) {
         return op("atan2", {value(x[0]), value(x[1])});
       }},
      {"maximum",
       {{5}, {5}},
       [](auto& x) {
         return op("maximum", {value(x[0]), value(x[1])});
       }},
      {"minimum broadcast",
       {{2, 3}, {3}},
       [](auto& x) {
         return op("minimum", {value(x[0]), value(x[1])});
       }},
      {"remainder.Tensor",
       {{4}, {4}},
       [](auto& x) {
         return op("remainder.Tensor", {value(x[0]), value(x[1])});
       },
       3.0},
      {"fmod.Tensor",
       {{4}, {4}},
       [](auto& x) {
         return op("fmod.Tensor", {value(x[0]), value(x[1])});
       },
       3.0},
      {"hypot",
       {{4}, {4}},
       [](auto& x) {
         return op("hypot", {value(x[0]), value(x[1])});
       }},
      {"rsub.Tensor",
       {{4}, {4}},
       [=](auto& x) {
         return op("rsub.Tensor", {value(x[0]), value(x[1]), s(2.0)});
       }},
      {"lerp.Tensor",
       {{4}, {4}, {4}},
       [](auto& x) {
         return op("lerp.Tensor", {value(x[0]), value(x[1]), value(x[2])});
       }},
      {"addcmul",
       {{4}, {4}, {4}},
       [=](auto& x) {
         return op("addcmul", {value(x[0]), value(x[1]), value(x[2]), s(0.5)});
       }},
      {"addcdiv",
       {{4}, {4}, {4}},
       [=](auto& x) {
         return op("addcdiv", {value(x[0]), value(x[1]), value(x[2]), s(0.5)});
       },
       2.0},
      {"cat",
       {{2, 3}, {1, 3}},
       [](auto& x) {
         tsr_tensor* l[2] = {x[0].get(), x[1].get()};
         return op("mul.Tensor",
                   {value(op("cat", {tessera::detail::value(std::vector<tsr_tensor*>(l, l + 2)),
                                     value(int64_t{0})})),
                    value(op("cat", {tessera::detail::value(std::vector<tsr_tensor*>(l, l + 2)),
                                     value(int64_t{0})}))});
       }},
      {"stack",
       {{3}, {3}},
       [](auto& x) {
         tsr_tensor* l[2] = {x[0].get(), x[1].get()};
         return op("stack",
                   {tessera::detail::value(std::vector<tsr_tensor*>(l, l + 2)), value(int64_t{1})});
       }},
      {"split.Tensor (list result)",
       {{5, 2}},
       [](auto& x) {
         auto parts = tessera::call_op_all("split.Tensor",
                                           {value(x[0]), value(int64_t{2}), value(int64_t{0})});
         return op("mul.Tensor", {value(parts[0]), value(op("exp", {value(parts[1])}))});
       }},
      {"chunk",
       {{2, 4}},
       [](auto& x) {
         auto parts =
             tessera::call_op_all("chunk", {value(x[0]), value(int64_t{2}), value(int64_t{1})});
         return op("mul.Tensor", {value(parts[0]), value(parts[1])});
       }},
      {"unbind",
       {{3, 2}},
       [](auto& x) {
         auto parts = tessera::call_op_all("unbind.int", {value(x[0]), value(int64_t{0})});
         return op("mul.Tensor", {value(parts[0]), value(parts[2])});
       }},
      {"narrow",
       {{5, 3}},
       [](auto& x) {
         return op("narrow",
                   {value(x[0]), value(int64_t{0}), value(int64_t{1}), value(int64_t{3})});
       }},
      {"diagonal",
       {{3, 4}},
       [](auto& x) {
         return op("diagonal",
                   {value(x[0]), value(int64_t{1}), value(int64_t{0}), value(int64_t{1})});
       }},
      {"movedim.int",
       {{2, 3, 4}},
       [](auto& x) {
         return op("movedim.int", {value(x[0]), value(int64_t{0}), value(int64_t{2})});
       }},
      {"swapaxes",
       {{2, 3}},
       [](auto& x) {
         return op("swapaxes", {value(x[0]), value(int64_t{0}), value(int64_t{1})});
       }},
      {"expand_as",
       {{1, 3}, {2, 3}},
       [](auto& x) {
         return op("mul.Tensor", {value(op("expand_as", {value(x[0]), value(x[1])})), value(x[1])});
       }},
      {"as_strided overlapping windows",
       {{6}},
       [](auto& x) {
         const int64_t sz[2] = {3, 3}, st[2] = {1, 1};
         return op("as_strided", {value(x[0]), value(tessera::IntList(sz, 2)),
                                  value(tessera::IntList(st, 2)), tessera::detail::none()});
       }},
      {"amax dim",
       {{3, 4}},
       [](auto& x) {
         const int64_t d = 1;
         return op("amax", {value(x[0]), value(tessera::IntList(d)), value(false)});
       }},
      {"max (all)", {{3, 4}}, [](auto& x) { return op("max", {value(x[0])}); }},
      {"prod",
       {{4}},
       [](auto& x) {
         return op("prod", {value(x[0]), tessera::detail::none()});
       }},
      {"prod.dim_int",
       {{2, 3}},
       [](auto& x) {
         return op("prod.dim_int",
                   {value(x[0]), value(int64_t{1}), value(true), tessera::detail::none()});
       }},
      {"cumsum",
       {{2, 4}},
       [](auto& x) {
         return op("cumsum", {value(x[0]), value(int64_t{1}), tessera::detail::none()});
       }},
      {"flip (composite)",
       {{2, 3}},
       [](auto& x) {
         const int64_t d[2] = {0, 1};
         return op("flip", {value(x[0]), value(tessera::IntList(d, 2))});
       }},
      {"roll (composite)",
       {{5}},
       [](auto& x) {
         const int64_t sh = 2;
         return op("roll", {value(x[0]), value(tessera::IntList(sh)),
                            tessera::detail::value(tessera::IntList())});
       }},
      {"repeat (composite)",
       {{2, 1}},
       [](auto& x) {
         const int64_t r[2] = {2, 3};
         return op("repeat", {value(x[0]), value(tessera::IntList(r, 2))});
       }},
      {"logsumexp (composite)",
       {{2, 3}},
       [](auto& x) {
         const int64_t d = 1;
         return op("logsumexp", {value(x[0]), value(tessera::IntList(d)), value(false)});
       }},
      {"var (composite)",
       {{2, 4}},
       [](auto& x) {
         const int64_t d = 1;
         return op("var.dim", {value(x[0]), value(tessera::IntList(d)), value(true), value(false)});
       }},
      {"max.dim (composite)",
       {{3, 4}},
       [](auto& x) {
         return tessera::call_op_all("max.dim", {value(x[0]), value(int64_t{1}), value(false)})[0];
       }},
      {"addmm (composite)",
       {{2, 2}, {2, 3}, {3, 2}},
       [=](auto& x) {
         return op("addmm", {value(x[0]), value(x[1]), value(x[2]), s(0.5), s(2.0)});
       }},
      {"einsum",
       {{2, 3}, {3, 4}},
       [](auto& x) {
         tsr_tensor* l[2] = {x[0].get(), x[1].get()};
         return op("einsum",
                   {value("ij,jk->ik"), tessera::detail::value(std::vector<tsr_tensor*>(l, l + 2)),
                    tessera::detail::none()});
       }},
      {"embedding",
       {{5, 3}},
       [](auto& x) {
         Tensor idx = tessera::tensor(std::vector<int64_t>{1, 4, 1}, {3});
         return op("embedding", {value(x[0]), value(idx)});
       }},
      {"conv2d (fused, formula)",
       {{1, 2, 4, 4}, {3, 2, 3, 3}, {3}},
       [](auto& x) {
         const int64_t one[2] = {1, 1};
         return op("conv2d", {value(x[0]), value(x[1]), value(x[2]),
                              value(tessera::IntList(one, 2)), value(tessera::IntList(one, 2))});
       }},
      {"conv2d stride 2, padding 1, dilation 2, groups 2 (formula)",
       {{2, 4, 7, 6}, {6, 2, 3, 2}, {6}},
       [](auto& x) {
         const int64_t s[2] = {2, 2}, p[2] = {1, 1}, d[2] = {2, 2};
         return op("conv2d", {value(x[0]), value(x[1]), value(x[2]), value(tessera::IntList(s, 2)),
                              value(tessera::IntList(p, 2)), value(tessera::IntList(d, 2)),
                              value(int64_t{2})});
       }},
      {"conv1d stride 3, no bias (formula)",
       {{1, 2, 9}, {3, 2, 3}},
       [](auto& x) {
         const int64_t s[1] = {3};
         return op("conv1d", {value(x[0]), value(x[1]), tessera::detail::none(),
                              value(tessera::IntList(s, 1))});
       }},
      {"conv_transpose2d stride 2, padding 1, output_padding 1, groups 2 (formula)",
       {{1, 4, 3, 3}, {4, 3, 3, 3}, {6}},
       [](auto& x) {
         const int64_t s[2] = {2, 2}, p[2] = {1, 1}, o[2] = {1, 1};
         return op(
             "conv_transpose2d.input",
             {value(x[0]), value(x[1]), value(x[2]), value(tessera::IntList(s, 2)),
              value(tessera::IntList(p, 2)), value(tessera::IntList(o, 2)), value(int64_t{2})});
       }},
      {"max_pool2d (records max_pool2d_with_indices)",
       {{1, 1, 4, 4}},
       [](auto& x) {
         const int64_t k[2] = {2, 2};
         return op("max_pool2d", {value(x[0]), value(tessera::IntList(k, 2))});
       }},
      {"max_pool2d_with_indices 3-d, overlapping windows, padding",
       {{2, 5, 5}},
       [](auto& x) {
         const int64_t k[2] = {3, 3}, s[2] = {2, 2}, p[2] = {1, 1};
         return op("max_pool2d_with_indices",
                   {value(x[0]), value(tessera::IntList(k, 2)), value(tessera::IntList(s, 2)),
                    value(tessera::IntList(p, 2))});
       }},
      {"avg_pool2d (fused, formula)",
       {{1, 2, 4, 4}},
       [](auto& x) {
         const int64_t k[2] = {2, 2};
         return op("avg_pool2d", {value(x[0]), value(tessera::IntList(k, 2))});
       }},
      {"mse_loss",
       {{3, 2}, {3, 2}},
       [](auto& x) {
         return op("mse_loss", {value(x[0]), value(x[1])});
       }},
      {"binary_cross_entropy_with_logits",
       {{4}, {4}},
       [](auto& x) {
         return op("binary_cross_entropy_with_logits",
                   {value(x[0]), value(op("sigmoid", {value(x[1])}))});
       }},
      {"scaled_dot_product_attention",
       {{1, 2, 3, 4}, {1, 2, 3, 4}, {1, 2, 3, 4}},
       [](auto& x) {
         return op("scaled_dot_product_attention", {value(x[0]), value(x[1]), value(x[2])});
       }},
      // Through scaled_dot_product_attention_forward and its fused backward
      // (Note [Attention backward from the saved logsumexp]): causal with
      // L != S and Ev != E, grouped-query heads, a bool mask, and a floating
      // mask that requires grad (the recomputed decomposition differentiates it).
      {"scaled_dot_product_attention causal, L != S, Ev != E",
       {{1, 2, 4, 3}, {1, 2, 5, 3}, {1, 2, 5, 2}},
       [](auto& x) {
         return op("scaled_dot_product_attention",
                   {value(x[0]), value(x[1]), value(x[2]), tessera::detail::none(), value(0.0),
                    value(true), value(0.7), value(false)});
       }},
      {"scaled_dot_product_attention gqa",
       {{1, 4, 3, 2}, {1, 2, 3, 2}, {1, 2, 3, 3}},
       [](auto& x) {
         return op("scaled_dot_product_attention",
                   {value(x[0]), value(x[1]), value(x[2]), tessera::detail::none(), value(0.0),
                    value(false), tessera::detail::none(), value(true)});
       }},
      {"scaled_dot_product_attention bool mask",
       {{2, 1, 3, 2}, {2, 1, 4, 2}, {2, 1, 4, 2}},
       [](auto& x) {
         Tensor mask =
             tessera::tensor(std::vector<double>{1, 0, 1, 1, 0, 1, 0, 1, 1, 1, 1, 0}, {3, 4})
                 .to(tessera::kBool);
         return op("scaled_dot_product_attention",
                   {value(x[0]), value(x[1]), value(x[2]), value(mask)});
       }},
      {"scaled_dot_product_attention float mask (requires grad)",
       {{1, 2, 3, 2}, {1, 2, 4, 2}, {1, 2, 4, 3}, {3, 4}},
       [](auto& x) {
         return op("scaled_dot_product_attention",
                   {value(x[0]), value(x[1]), value(x[2]), value(x[3])});
       }},
      // The fused backward op differentiates through its decomposition (out
      // and logsumexp as free inputs).
      {"scaled_dot_product_attention_backward (fusable)",
       {{1, 2, 3, 2}, {1, 2, 3, 4}, {1, 2, 5, 4}, {1, 2, 5, 2}, {1, 2, 3, 2}, {1, 2, 3}},
       [](auto& x) {
         std::vector<Tensor> r = tessera::call_op_all(
             "scaled_dot_product_attention_backward",
             {value(x[0]), value(x[1]), value(x[2]), value(x[3]), value(x[4]), value(x[5])});
         return (r[0] * r[0]).sum() + (r[1] * 0.5).sum() + (r[2] * r[2]).sum();
       }},
      {"where.self",
       {{4}, {4}},
       [](auto& x) {
         Tensor c = op("gt.Scalar", {value(x[0]), value(tessera::Scalar(0.0))});
         return op("where.self", {value(c), value(x[0]), value(x[1])});
       }},
  };
}

// Float64 leaves of the case's shapes, values scale * [-1, 1) + shift.
std::vector<Tensor> inputs_for(const Case& c, uint32_t seed) {
  std::vector<Tensor> inputs;
  for (const auto& shape : c.shapes) {
    size_t n = 1;
    for (int64_t d : shape) n *= static_cast<size_t>(d);
    std::vector<double> v = values(n, seed++);
    for (double& e : v) e = e * c.scale + c.shift;
    inputs.push_back(leaf(v, tessera::IntList(shape.data(), shape.size())));
  }
  return inputs;
}

const std::vector<Case>& cases() {
  static const std::vector<Case> table = make_cases();
  return table;
}

// The case's name as a test name.
std::string case_name(const ::testing::TestParamInfo<size_t>& info) {
  std::string n = cases()[info.param].name;
  for (char& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

class Gradcheck : public ::testing::TestWithParam<size_t> {};

TEST_P(Gradcheck, AnalyticalMatchesFiniteDifferences) {
  const Case& c = cases()[GetParam()];
  EXPECT_EQ(ag::gradcheck(c.fn, inputs_for(c, 11)), "") << c.name;
}

// gradgradcheck of the smooth ones: second derivatives through the backward
// formulas recorded under create_graph.
class Gradgradcheck : public ::testing::TestWithParam<size_t> {};

// The smooth cases (second derivatives exist at the test inputs), as
// indices into cases(); a name that matches no case fails the run, so a
// renamed case cannot drop out of the check silently.
std::vector<size_t> smooth_cases() {
  static const std::vector<std::string> smooth = {
      "add.Tensor broadcast",
      "mul.Tensor",
      "div.Tensor",
      "exp",
      "log",
      "tanh",
      "sigmoid",
      "sin",
      "pow.Tensor_Scalar",
      "gelu",
      "gelu tanh",
      "_softmax",
      "_log_softmax",
      "mm",
      "sum.dim_IntList",
      "mean.dim keepdim",
      "linear (composite)",
      "layer_norm (fusable)",
      "layer_norm over two dims, no affine",
      "conv2d stride 2, padding 1, dilation 2, groups 2 (formula)",
      "conv1d stride 3, no bias (formula)",
      "conv_transpose2d stride 2, padding 1, output_padding 1, groups 2 (formula)",
      "cross_entropy (fusable)",
      "_softmax_backward_data (fusable)",
      "cross_entropy (N, C, d), weight, ignore_index, smoothing, mean",
      "logsumexp (composite)",
      "var (composite)",
      "silu",
      "atan2",
      "scaled_dot_product_attention",
      "scaled_dot_product_attention causal, L != S, Ev != E",
      "scaled_dot_product_attention gqa",
      "scaled_dot_product_attention float mask (requires grad)",
      "softplus",
      "expand",
      "select.int",
      "cat"};
  std::vector<size_t> out;
  for (const std::string& name : smooth) {
    size_t i = 0;
    while (i < cases().size() && cases()[i].name != name) ++i;
    if (i == cases().size()) {
      std::fprintf(stderr, "smooth_cases: no gradcheck case named '%s'\n", name.c_str());
      std::abort();
    }
    out.push_back(i);
  }
  return out;
}

TEST_P(Gradgradcheck, SecondDerivativesMatchFiniteDifferences) {
  const Case& c = cases()[GetParam()];
  EXPECT_EQ(ag::gradgradcheck(c.fn, inputs_for(c, 23)), "") << c.name;
}

INSTANTIATE_TEST_SUITE_P(Ops, Gradgradcheck, ::testing::ValuesIn(smooth_cases()), case_name);

INSTANTIATE_TEST_SUITE_P(Ops, Gradcheck, ::testing::Range(size_t{0}, cases().size()), case_name);

}  // namespace

// Training batch norm updates its running statistics in place without
// history, as PyTorch's kernels do: recorded, the buffers would chain each
// step's graph to the next (and the reachability check refuses the second
// step, whose buffers then require grad without being differentiated).
// Reference: running_mean = 0.9 * running_mean + 0.1 * batch mean, in float64.
TEST(BatchNormAutograd, RunningStatisticsAreUpdatedWithoutHistory) {
  const int64_t n = 4, c = 3, l = 2;
  const std::vector<double> xs = values(static_cast<size_t>(n * c * l), 7);
  Tensor x = leaf(xs, {n, c, l});
  Tensor w = leaf({1.0, 2.0, 0.5}, {c});
  Tensor rm = tessera::tensor(std::vector<double>{0, 0, 0}, {c},
                              tessera::TensorOptions().dtype(Dtype::Float64));
  Tensor rv = tessera::tensor(std::vector<double>{1, 1, 1}, {c},
                              tessera::TensorOptions().dtype(Dtype::Float64));
  std::vector<double> mean(static_cast<size_t>(c), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < c; ++j)
      for (int64_t k = 0; k < l; ++k)
        mean[static_cast<size_t>(j)] += xs[static_cast<size_t>((i * c + j) * l + k)] / (n * l);
  std::vector<double> expected(static_cast<size_t>(c), 0.0);
  for (int step = 0; step < 3; ++step) {
    Tensor y = tessera::batch_norm(x, rm, rv, w, {}, true);
    y.mul(y).sum().backward();
    EXPECT_FALSE(rm.requires_grad()) << "step " << step;
    EXPECT_FALSE(rv.requires_grad()) << "step " << step;
    for (size_t j = 0; j < expected.size(); ++j) expected[j] = 0.9 * expected[j] + 0.1 * mean[j];
    const std::vector<double> got = rm.to_vector<double>();
    for (size_t j = 0; j < expected.size(); ++j)
      EXPECT_NEAR(got[j], expected[j], 1e-12) << "step " << step << " channel " << j;
  }
  EXPECT_TRUE(x.grad().defined());
  EXPECT_TRUE(w.grad().defined());
}
