// autograd_extensions_test.cpp - what applications plug into autograd through
// the C ABI: tensor gradient hooks and post-accumulate hooks, custom
// functions (forward/backward callbacks with a context), and inference mode.
// Expected values are worked out by hand in float64 (commented at each check).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <regex>
#include <string>
#include <thread>
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
const auto take = tsr_test::status_message;

Tensor leaf(const std::vector<double>& v, tessera::IntList shape) {
  Tensor t = tessera::tensor(v, shape, tessera::TensorOptions().dtype(Dtype::Float64));
  t.requires_grad_();
  return t;
}

std::vector<double> values(const Tensor& t) { return t.to_vector<double>(); }

// ---- tensor hooks ----------------------------------------------------------

TEST(Hooks, LeafHooksReplaceTheGradientInRegistrationOrder) {
  Tensor x = leaf({1, 2, 3}, {3});
  std::vector<std::string> order;
  x.register_hook([&](const Tensor& g) {
    order.push_back("double");
    return g * 2.0;
  });
  x.register_hook([&](const Tensor& g) {
    order.push_back("observe");
    EXPECT_EQ(values(g), (std::vector<double>{4, 8, 12}));  // 2x, doubled by the first hook
    return Tensor();                                        // keep it
  });
  (x * x).sum().backward();  // d/dx sum(x^2) = 2x = (2, 4, 6), doubled by the hook
  EXPECT_EQ(values(x.grad()), (std::vector<double>{4, 8, 12}));
  EXPECT_EQ(order, (std::vector<std::string>{"double", "observe"}));
}

TEST(Hooks, RemovedHooksStopAndTheirContextIsReleased) {
  Tensor x = leaf({1, 1}, {2});
  static int destroyed = 0;
  destroyed = 0;
  uint64_t handle = 0;
  auto triple = [](void*, tsr_tensor* g, tsr_tensor** out) -> tsr_status* {
    const tsr_op* mul = nullptr;
    if (tsr_status* st = tsr_op_find(tessera::default_runtime(), "mul.Scalar", &mul)) return st;
    tsr_value args[2] = {};
    args[0].tag = TSR_VALUE_TENSOR;
    args[0].u.tensor = g;  // borrowed for the call
    args[1].tag = TSR_VALUE_SCALAR;
    args[1].u.scalar.kind = TSR_FLOAT64;
    args[1].u.scalar.v.f = 3.0;
    tsr_value r{};
    tsr_status* st = tsr_op_call(mul, args, 2, &r, 1);
    if (st == nullptr) *out = r.u.tensor;
    return st;
  };
  ASSERT_EQ(take(tsr_tensor_register_hook(
                x.get(), triple, nullptr, [](void*) { ++destroyed; }, &handle)),
            "");
  x.sum().backward();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{3, 3}));
  EXPECT_EQ(destroyed, 0);
  x.remove_hook(handle);
  EXPECT_EQ(destroyed, 1);
  x.sum().backward();  // accumulates 1 more, unhooked
  EXPECT_EQ(values(x.grad()), (std::vector<double>{4, 4}));
  const std::string m = error_of([&] { x.remove_hook(handle); });
  EXPECT_NE(m.find("no such hook"), std::string::npos) << m;
}

TEST(Hooks, NonLeafHooksChangeWhatFlowsUpstreamAndWhatRetainGradSees) {
  Tensor x = leaf({1, 2}, {2});
  Tensor y = x * 3.0;
  y.retain_grad();
  std::vector<double> seen;
  y.register_hook([&](const Tensor& g) {
    seen = values(g);
    return g + 1.0;
  });
  (y * y).sum().backward();  // dL/dy = 2y = (6, 12); hooked: (7, 13)
  EXPECT_EQ(seen, (std::vector<double>{6, 12}));
  EXPECT_EQ(values(y.grad()), (std::vector<double>{7, 13}));
  EXPECT_EQ(values(x.grad()), (std::vector<double>{21, 39}));  // 3 * (7, 13)
}

TEST(Hooks, GradResultsPassThroughTheInputsHooks) {
  Tensor x = leaf({2}, {1});
  x.register_hook([](const Tensor& g) { return g * 10.0; });
  Tensor g = ag::grad({(x * x).sum()}, {x})[0];
  EXPECT_EQ(values(g), (std::vector<double>{40}));  // 2x * 10
  EXPECT_FALSE(x.grad().defined());                 // grad() leaves .grad alone
}

TEST(Hooks, PostAccumulateHooksSeeTheUpdatedGrad) {
  Tensor w = leaf({1, 2}, {2});
  std::vector<std::vector<double>> seen;
  w.register_post_accumulate_grad_hook([&](const Tensor& t) { seen.push_back(values(t.grad())); });
  (w * 2.0).sum().backward();
  (w * 2.0).sum().backward();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0], (std::vector<double>{2, 2}));
  EXPECT_EQ(seen[1], (std::vector<double>{4, 4}));
  // Not on non-leaves; not on tensors that do not require grad.
  Tensor y = w * 2.0;
  std::string m = error_of([&] { y.register_post_accumulate_grad_hook([](const Tensor&) {}); });
  EXPECT_NE(m.find("cannot be registered on non-leaf tensors"), std::string::npos) << m;
  Tensor plain = tessera::tensor({1.0}, {1});
  m = error_of([&] { plain.register_hook([](const Tensor& g) { return g; }); });
  EXPECT_NE(m.find("doesn't require gradient"), std::string::npos) << m;
}

TEST(Hooks, BadReplacementsAndHookErrorsFailTheBackwardClearly) {
  Tensor x = leaf({1, 2}, {2});
  x.register_hook([](const Tensor&) { return tessera::tensor({1.0, 2.0, 3.0}, {3}); });
  std::string m = error_of([&] { x.sum().backward(); });
  EXPECT_NE(m.find("returned a gradient of shape [3]"), std::string::npos) << m;
  EXPECT_NE(m.find("shape [2]"), std::string::npos) << m;
  Tensor z = leaf({1}, {1});
  z.register_hook([](const Tensor&) -> Tensor {
    throw tessera::Error(TSR_FAILED_PRECONDITION, "my hook says no");
  });
  m = error_of([&] { z.sum().backward(); });
  EXPECT_NE(m.find("my hook says no"), std::string::npos) << m;
  EXPECT_FALSE(z.grad().defined());
}

// ---- custom functions ------------------------------------------------------

struct MyExp : ag::Function<MyExp> {
  static std::vector<Tensor> forward(ag::FunctionContext& ctx, const std::vector<Tensor>& in) {
    Tensor y = tessera::exp(in[0]);
    ctx.save_for_backward({y});
    return {y};
  }
  static std::vector<Tensor> backward(ag::FunctionContext& ctx, const std::vector<Tensor>& g) {
    return {g[0] * ctx.saved_tensors()[0]};  // d exp(x) = exp(x)
  }
};
Tensor my_exp(const Tensor& x) { return MyExp::apply({x}, "MyExp")[0]; }

TEST(CustomFunction, ForwardBackwardAndHigherOrder) {
  Tensor x = leaf({0.0, 1.0, -0.5}, {3});
  Tensor y = my_exp(x);
  EXPECT_EQ(y.grad_fn_name(), "MyExpBackward");
  EXPECT_TRUE(y.requires_grad());
  y.sum().backward();
  const std::vector<double> g = values(x.grad());
  for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(g[i], std::exp(values(x)[i]), 1e-15);
  // gradcheck, and second order: backward's mul of the saved output records.
  Tensor a = leaf({0.2, -0.4}, {2});
  auto fn = [](const std::vector<Tensor>& in) { return my_exp(in[0] * 2.0); };
  EXPECT_EQ(ag::gradcheck(fn, {a}), "");
  EXPECT_EQ(ag::gradgradcheck(fn, {a}), "");
}

TEST(CustomFunction, SavedTensorsAreVersionCheckedAndFreedAfterBackward) {
  Tensor x = leaf({1.0, 2.0}, {2});
  Tensor y = my_exp(x);
  Tensor s = y.sum();
  {
    ag::NoGradGuard no_grad;
    y.add_(1.0);  // the saved output changes
  }
  std::string m = error_of([&] { s.backward(); });
  EXPECT_NE(m.find("modified by an inplace operation"), std::string::npos) << m;
  Tensor z = my_exp(x).sum();
  z.backward();
  m = error_of([&] { z.backward(); });
  EXPECT_NE(m.find("second time"), std::string::npos) << m;
}

struct DoubleInPlace : ag::Function<DoubleInPlace> {
  static std::vector<Tensor> forward(ag::FunctionContext& ctx, const std::vector<Tensor>& in) {
    Tensor x = in[0];
    x.mul_(2.0);
    ctx.mark_dirty({x});
    return {x};
  }
  static std::vector<Tensor> backward(ag::FunctionContext&, const std::vector<Tensor>& g) {
    return {g[0] * 2.0};
  }
};

TEST(CustomFunction, MarkDirtyRebasesTheInputAndRefusesLeaves) {
  Tensor a = leaf({1.0, 3.0}, {2});
  Tensor b = a * 1.0;  // a non-leaf to modify
  Tensor out = DoubleInPlace::apply({b}, "DoubleInPlace")[0];
  EXPECT_EQ(b.grad_fn_name(), "DoubleInPlaceBackward");  // b itself now comes from the function
  EXPECT_EQ(values(b), (std::vector<double>{2.0, 6.0}));
  (out * out).sum().backward();  // d/da (2a)^2 = 8a
  EXPECT_EQ(values(a.grad()), (std::vector<double>{8.0, 24.0}));
  Tensor c = leaf({1.0}, {1});
  const std::string m = error_of([&] { DoubleInPlace::apply({c}, "DoubleInPlace"); });
  EXPECT_NE(m.find("leaf tensor that requires grad"), std::string::npos) << m;
}

struct SplitSign : ag::Function<SplitSign> {
  // Returns (x, sign(x)): the first an input returned as is, the second
  // marked non-differentiable.
  static std::vector<Tensor> forward(ag::FunctionContext& ctx, const std::vector<Tensor>& in) {
    Tensor s = tessera::sign(in[0]);
    ctx.mark_non_differentiable({s});
    needs = {ctx.needs_input_grad(0), ctx.needs_input_grad(1)};
    return {in[0], s};
  }
  static std::vector<Tensor> backward(ag::FunctionContext&, const std::vector<Tensor>& g) {
    return {g[0], Tensor()};
  }
  static inline std::vector<bool> needs;
};

TEST(CustomFunction, InputsReturnedComeBackAsViewsAndNonDifferentiableOutputsHaveNoHistory) {
  Tensor x = leaf({-2.0, 5.0}, {2});
  Tensor other = tessera::tensor({1.0, 1.0}, {2}, tessera::TensorOptions().dtype(Dtype::Float64));
  std::vector<Tensor> r = SplitSign::apply({x, other}, "SplitSign", 2);
  EXPECT_EQ(SplitSign::needs, (std::vector<bool>{true, false}));
  EXPECT_NE(r[0].get(), x.get());
  EXPECT_EQ(r[0].grad_fn_name(), "SplitSignBackward");
  EXPECT_FALSE(r[1].requires_grad());
  EXPECT_EQ(values(r[1]), (std::vector<double>{-1.0, 1.0}));
  (r[0] * 3.0).sum().backward();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{3.0, 3.0}));
  {
    ag::NoGradGuard no_grad;  // nothing records
    std::vector<Tensor> q = SplitSign::apply({x, other}, "SplitSign", 2);
    EXPECT_FALSE(q[0].requires_grad());
    EXPECT_EQ(SplitSign::needs, (std::vector<bool>{false, false}));
  }
}

struct WrongShape : ag::Function<WrongShape> {
  static std::vector<Tensor> forward(ag::FunctionContext&, const std::vector<Tensor>& in) {
    return {in[0] * 2.0};
  }
  static std::vector<Tensor> backward(ag::FunctionContext&, const std::vector<Tensor>&) {
    return {tessera::tensor({1.0, 2.0, 3.0}, {3}, tessera::TensorOptions().dtype(Dtype::Float64))};
  }
};

TEST(CustomFunction, AnInvalidGradientShapeIsNamed) {
  Tensor x = leaf({1.0, 2.0}, {2});
  const std::string m = error_of([&] { WrongShape::apply({x}, "WrongShape")[0].sum().backward(); });
  EXPECT_NE(m.find("WrongShapeBackward returned an invalid gradient at index 0"), std::string::npos)
      << m;
  EXPECT_NE(m.find("got [3]"), std::string::npos) << m;
}

// ---- inference mode ----------------------------------------------------------

TEST(InferenceMode, TensorsMadeInsideHaveNoVersionAndAutogradRefusesThem) {
  Tensor w = leaf({1.0, 2.0}, {2});
  Tensor t;
  {
    ag::InferenceMode guard;
    EXPECT_TRUE(ag::InferenceMode::is_enabled());
    EXPECT_FALSE(ag::is_grad_enabled());
    t = w * 2.0;  // nothing records even though w requires grad
    EXPECT_FALSE(t.requires_grad());
    EXPECT_TRUE(t.is_inference());
    EXPECT_TRUE(t.view({2, 1}).is_inference());
    EXPECT_FALSE(w.view({2, 1}).is_inference());  // a view of a normal tensor stays normal
    t.add_(1.0);                                  // in-place inside is fine
  }
  EXPECT_TRUE(ag::is_grad_enabled());  // restored
  EXPECT_EQ(values(t), (std::vector<double>{3.0, 5.0}));
  std::string m = error_of([&] { (void)t.version(); });
  EXPECT_NE(m.find("do not track version counter"), std::string::npos) << m;
  m = error_of([&] { t.add_(1.0); });
  EXPECT_NE(m.find("Inplace update to inference tensor outside InferenceMode"), std::string::npos)
      << m;
  m = error_of([&] { (void)(w * t); });  // mul would save t for backward
  EXPECT_NE(m.find("Inference tensors cannot be saved for backward"), std::string::npos) << m;
  m = error_of([&] { t.requires_grad_(); });
  EXPECT_NE(m.find("inference tensor outside InferenceMode"), std::string::npos) << m;
  // A clone is a normal tensor again.
  Tensor c = t.clone();
  EXPECT_FALSE(c.is_inference());
  EXPECT_TRUE((w * c).sum().requires_grad());
}

TEST(InferenceMode, NoGradResultsStillCarryAVersionCounter) {
  Tensor x = leaf({1.0}, {1});
  ag::NoGradGuard no_grad;
  Tensor y = x * 2.0;
  EXPECT_FALSE(y.is_inference());
  const uint64_t v = y.version();
  y.add_(1.0);
  EXPECT_EQ(y.version(), v + 1);
}

// ---- fused kernels keep running while recording ------------------------------

std::vector<std::string> observed_ops(const std::function<void()>& fn) {
  static std::vector<std::string>* sink = nullptr;
  std::vector<std::string> names;
  sink = &names;
  tessera::check(tsr_runtime_set_op_observer(
      tessera::default_runtime(), [](const tsr_op* op, void*) { sink->push_back(tsr_op_name(op)); },
      nullptr));
  fn();
  tsr_runtime_set_op_observer(tessera::default_runtime(), nullptr, nullptr);
  return names;
}

TEST(FusedFormulas, LayerNormAndMaxPoolRecordTheirFusedOps) {
  Tensor x = tessera::randn({4, 8}, tessera::TensorOptions().dtype(Dtype::Float32));
  Tensor w = tessera::ones({8}, tessera::TensorOptions().dtype(Dtype::Float32));
  x.requires_grad_();
  w.requires_grad_();
  Tensor y;
  const int64_t n = 8;
  const std::vector<std::string> ln = observed_ops([&] {
    y = tessera::call_op("layer_norm", {value(x), value(tessera::IntList(n)), value(w)});
  });
  EXPECT_EQ(ln, (std::vector<std::string>{"layer_norm", "native_layer_norm"}));
  EXPECT_EQ(y.grad_fn_name(), "NativeLayerNormBackward0");
  Tensor img = tessera::randn({1, 2, 6, 6}, tessera::TensorOptions().dtype(Dtype::Float32));
  img.requires_grad_();
  const int64_t k[2] = {2, 2};
  const std::vector<std::string> mp = observed_ops([&] {
    y = tessera::call_op("max_pool2d", {value(img), value(tessera::IntList(k, 2))});
  });
  // As in PyTorch (whose node is MaxPool2DWithIndicesBackward0), max_pool2d
  // records max_pool2d_with_indices: its fused kernel gives the indices the
  // backward needs in the forward pass.
  EXPECT_EQ(mp, (std::vector<std::string>{"max_pool2d", "max_pool2d_with_indices"}));
  EXPECT_EQ(y.grad_fn_name(), "MaxPool2dWithIndicesBackward0");
  y.sum().backward();
  // Each 2x2 window passes its gradient to one element: 9 windows per plane.
  EXPECT_EQ(img.grad().sum().item<double>(), 18.0);
}

TEST(FusedFormulas, SdpaAndCrossEntropyRunFusedAndMatchFloat64Gradients) {
  // float32 runs the CPU plugin's fused kernels forward (sdpa as
  // scaled_dot_product_attention_forward, which keeps the logsumexp) and in
  // backward (scaled_dot_product_attention_backward; cross_entropy recomputes
  // its decomposition); float64 has no fused kernel and decomposes.
  auto grads_of = [](Dtype dtype, std::vector<std::string>* ops) {
    tessera::Generator gen(7);
    auto opts = tessera::TensorOptions().dtype(Dtype::Float64);
    Tensor q = tessera::randn({2, 3, 4}, gen, opts).to(dtype);
    Tensor k = tessera::randn({2, 5, 4}, gen, opts).to(dtype);
    Tensor v = tessera::randn({2, 5, 4}, gen, opts).to(dtype);
    Tensor logits = tessera::randn({6, 5}, gen, opts).to(dtype);
    Tensor target = tessera::tensor(std::vector<int64_t>{0, 4, 2, 2, 1, 3}, {6});
    for (Tensor* t : {&q, &k, &v, &logits}) t->requires_grad_();
    Tensor attn, loss;
    std::vector<std::string> seen = observed_ops([&] {
      attn = tessera::call_op("scaled_dot_product_attention", {value(q), value(k), value(v)});
      loss = tessera::call_op("cross_entropy_loss", {value(logits), value(target)});
    });
    if (ops) *ops = seen;
    ((attn * attn).sum() + loss).backward();
    std::vector<std::vector<double>> out;
    for (Tensor* t : {&q, &k, &v, &logits}) out.push_back(values(t->grad().to(Dtype::Float64)));
    return out;
  };
  std::vector<std::string> ops;
  const auto g32 = grads_of(Dtype::Float32, &ops);
  // The fused kernels ran: none of the decompositions' ops were dispatched.
  for (const char* decomposed : {"matmul", "bmm", "_softmax", "_log_softmax", "nll_loss"})
    EXPECT_EQ(std::count(ops.begin(), ops.end(), decomposed), 0) << decomposed;
  EXPECT_EQ(ops.front(), "scaled_dot_product_attention");
  EXPECT_EQ(ops.back(), "cross_entropy_loss");
  const auto g64 = grads_of(Dtype::Float64, nullptr);
  for (size_t i = 0; i < g32.size(); ++i)
    for (size_t j = 0; j < g32[i].size(); ++j) EXPECT_NEAR(g32[i][j], g64[i][j], 2e-5) << i;
}

// ---- coverage: every op either differentiates or says why not ----------------

TEST(AutogradCoverage, EveryOpHasADerivativeOrANonFloatResult) {
  // Ops allowed to have no derivative: their results are bool or integer
  // (comparisons, predicates, bitwise and logical ops, index searches), they
  // take no tensor that could require grad (where.Scalar), or they are the
  // op families' internal primitives that routed overloads call ("_unary").
  const std::regex allowed(
      "(_.*|bitwise_.*|logical_.*|(eq|ne|lt|le|gt|ge)_?\\..*|is(nan|inf|posinf|neginf|finite)|"
      "signbit|where\\.Scalar|any(\\.dim)?|all(\\.dim)?|nonzero|argwhere|argsort\\.stable|"
      "searchsorted\\..*|bucketize\\..*)");
  tsr_runtime* rt = tessera::default_runtime();
  size_t n = 0;
  tessera::check(tsr_op_count(rt, &n));
  std::vector<std::string> missing;
  size_t counts[5] = {};
  for (size_t i = 0; i < n; ++i) {
    const tsr_op* op = nullptr;
    tessera::check(tsr_op_at(rt, i, &op));
    tsr_op_autograd support{};
    tessera::check(tsr_op_autograd_support(op, &support));
    tsr_op_kind kind{};
    tessera::check(tsr_op_kind_of(op, &kind));
    ++counts[support];
    if (support == TSR_AUTOGRAD_MISSING && kind != TSR_OP_FACTORY &&
        !std::regex_match(tsr_op_name(op), allowed))
      missing.push_back(tsr_op_name(op));
  }
  std::string list;
  for (const std::string& m : missing) list += m + " ";
  EXPECT_TRUE(missing.empty()) << "ops without a derivative: " << list;
  std::printf("%zu ops: %zu formula, %zu decompose, %zu not differentiable, %zu out=, %zu none\n",
              n, counts[0], counts[1], counts[2], counts[3], counts[4]);
  // A few known answers.
  auto support_of = [&](const char* name) {
    const tsr_op* op = nullptr;
    tessera::check(tsr_op_find(rt, name, &op));
    tsr_op_autograd s{};
    tessera::check(tsr_op_autograd_support(op, &s));
    return s;
  };
  EXPECT_EQ(support_of("exp_"), TSR_AUTOGRAD_FORMULA);
  EXPECT_EQ(support_of("convolution"), TSR_AUTOGRAD_FORMULA);
  EXPECT_EQ(support_of("layer_norm"), TSR_AUTOGRAD_DECOMPOSES);
  EXPECT_EQ(support_of("add.out"), TSR_AUTOGRAD_OUT_VARIANT);
  EXPECT_EQ(support_of("eq.Tensor"), TSR_AUTOGRAD_MISSING);
}

TEST(AutogradCoverage, InPlaceVariantsDifferentiateLikeTheirFunctionalForm) {
  Tensor x = leaf({0.5, -1.0, 2.0}, {3});
  Tensor y = x * 1.0;
  tessera::call_op("exp_", {value(y)});
  Tensor z = x * 1.0;
  tessera::call_op("relu_", {value(z)});
  Tensor p = x * 1.0;
  tessera::call_op("pow_.Scalar", {value(p), value(tessera::Scalar(3.0))});
  (y + z + p).sum().backward();
  const std::vector<double> g = values(x.grad()), xv = values(x);
  for (size_t i = 0; i < 3; ++i)
    EXPECT_NEAR(g[i], std::exp(xv[i]) + (xv[i] > 0 ? 1.0 : 0.0) + 3 * xv[i] * xv[i], 1e-12) << i;
}

// ---- threads ------------------------------------------------------------------

// Forward on 8 threads recording graphs that share one leaf, then backward on
// 4 threads at once accumulating into it (run under ThreadSanitizer in CI's
// tsan stage): every contribution lands exactly once.
TEST(AutogradThreads, ForwardOnEightAndBackwardOnFourThreadsShareALeaf) {
  Tensor w = leaf({1.0, 2.0, 3.0}, {3});
  constexpr int kForward = 8, kBackward = 4, kRounds = 20;
  std::vector<std::vector<Tensor>> losses(kForward);
  {
    std::vector<std::thread> threads;
    for (int t = 0; t < kForward; ++t)
      threads.emplace_back([&, t] {
        for (int r = 0; r < kRounds; ++r) {
          Tensor c = tessera::full({3}, static_cast<double>(t + 1),
                                   tessera::TensorOptions().dtype(Dtype::Float64));
          losses[static_cast<size_t>(t)].push_back((w * c).sum());
        }
      });
    for (auto& th : threads) th.join();
  }
  {
    std::vector<std::thread> threads;
    for (int b = 0; b < kBackward; ++b)
      threads.emplace_back([&, b] {
        for (int t = b; t < kForward; t += kBackward)
          for (Tensor& loss : losses[static_cast<size_t>(t)]) loss.backward();
      });
    for (auto& th : threads) th.join();
  }
  // d/dw sum over threads t and rounds of sum(w * (t + 1)) = 20 * (1 + ... + 8) = 720.
  EXPECT_EQ(values(w.grad()), (std::vector<double>{720.0, 720.0, 720.0}));
}

// ---- leaf accumulators (Note [Leaf accumulator] in core/autograd/node.h) ----

TEST(LeafAccumulator, AGraphThatOutlivesALeafStillDeliversToTheOthers) {
  Tensor keep = leaf({4.0, 5.0, 6.0}, {3});
  Tensor loss;
  {
    Tensor gone = leaf({1.0, 2.0, 3.0}, {3});
    // mul.Scalar saves nothing, so only the graph's accumulator points at
    // `gone` once it leaves scope.
    loss = (gone * 2.0 + keep * 3.0).sum();
  }
  loss.backward();
  EXPECT_EQ(values(keep.grad()), (std::vector<double>{3.0, 3.0, 3.0}));
}

TEST(LeafAccumulator, OneLeafAcrossManyGraphsAccumulatesEveryOne) {
  Tensor w = leaf({1.0, -2.0}, {2});
  for (int i = 1; i <= 5; ++i) (w * static_cast<double>(i)).sum().backward();
  EXPECT_EQ(values(w.grad()), (std::vector<double>{15.0, 15.0}));
  // A graph kept across another's backward still reaches the same leaf.
  Tensor first = (w * w).sum();
  (w * 10.0).sum().backward();
  first.backward();
  EXPECT_EQ(values(w.grad()), (std::vector<double>{27.0, 21.0}));  // 15 + 10 + 2w
}

TEST(LeafAccumulator, ALeafResizedByAnOutArgumentGetsGradientsOfItsNewShape) {
  Tensor w = leaf({1.0, 2.0, 3.0}, {3});
  (w * 2.0).sum().backward();  // the accumulator is made for shape [3]
  w.set_grad(Tensor());
  {
    ag::NoGradGuard no_grad;
    const Tensor a = tessera::ones({2, 2}, tessera::TensorOptions().dtype(Dtype::Float64));
    tessera::call_op("add.out", {value(a), value(a), value(1.0), value(w)});
  }
  ASSERT_EQ(w.sizes(), (std::vector<int64_t>{2, 2}));
  (w * 3.0).sum().backward();
  EXPECT_EQ(w.grad().sizes(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(values(w.grad()), (std::vector<double>{3.0, 3.0, 3.0, 3.0}));
}

TEST(LeafAccumulator, LeavesDroppedWhileOtherThreadsRunBackwardAreSafe) {
  // Each round: a fresh leaf used by a graph, dropped on this thread while
  // another thread runs the graph's backward (ASan/TSan builds check that the
  // accumulator never touches the dead leaf).
  constexpr int kRounds = 200;
  Tensor keep = leaf({1.0}, {1});
  for (int r = 0; r < kRounds; ++r) {
    Tensor loss;
    {
      Tensor w = leaf({static_cast<double>(r)}, {1});
      loss = (w * 2.0 + keep).sum();
      std::thread backward([l = loss]() mutable { l.backward(); });
      w = Tensor();
      backward.join();
    }
  }
  EXPECT_EQ(values(keep.grad()), (std::vector<double>{static_cast<double>(kRounds)}));
}

}  // namespace

namespace {

// softmax(x, dim, dtype=float64) on a float32 x casts inside the composite;
// the cast is recorded, so the gradient reaches x (it used to stop there:
// "the derivative of op 'softmax.int' is not implemented").
TEST(CompositeCasts, SoftmaxWithADtypeArgumentDifferentiatesThroughTheCast) {
  const std::vector<float> xs = {0.5f, -1.0f, 2.0f, 0.25f};
  const std::vector<double> cs = {1.0, -2.0, 0.5, 3.0};
  Tensor x = tessera::tensor(xs);
  x.requires_grad_();
  const Tensor c = tessera::tensor(cs, {4}, tessera::TensorOptions().dtype(Dtype::Float64));
  const Tensor y = tessera::call_op(
      "softmax.int", {value(x), value(int64_t{0}), value(std::optional<Dtype>(Dtype::Float64))});
  EXPECT_EQ(y.dtype(), Dtype::Float64);
  (y * c).sum().backward();
  ASSERT_TRUE(x.grad().defined());
  EXPECT_EQ(x.grad().dtype(), Dtype::Float32);
  // d/dx_i sum_j c_j s_j = s_i (c_i - sum_j c_j s_j), in float64 on the host.
  double z = 0, cs_dot = 0;
  std::vector<double> s(4);
  for (size_t i = 0; i < 4; ++i) z += std::exp(static_cast<double>(xs[i]));
  for (size_t i = 0; i < 4; ++i) s[i] = std::exp(static_cast<double>(xs[i])) / z;
  for (size_t i = 0; i < 4; ++i) cs_dot += cs[i] * s[i];
  const std::vector<float> g = x.grad().to_vector<float>();
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(g[i], s[i] * (cs[i] - cs_dot), 1e-6) << i;
}

}  // namespace
