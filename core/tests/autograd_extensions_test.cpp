// autograd_extensions_test.cpp - what applications plug into autograd through
// the C ABI: tensor gradient hooks and post-accumulate hooks, custom
// functions (forward/backward callbacks with a context), and inference mode.
// Expected values are worked out by hand in float64 (commented at each check).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tessera/autograd.hpp"
#include "tessera/tessera.hpp"

namespace {

using tessera::Dtype;
using tessera::Tensor;
using tessera::detail::value;
namespace ag = tessera::autograd;

Tensor leaf(const std::vector<double>& v, tessera::IntList shape) {
  Tensor t = tessera::tensor(v, shape, tessera::TensorOptions().dtype(Dtype::Float64));
  t.requires_grad_();
  return t;
}

std::vector<double> values(const Tensor& t) { return t.to_vector<double>(); }

template <class Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const tessera::Error& e) {
    return e.what();
  }
  return "";
}

std::string take(tsr_status* st) {
  if (st == nullptr) return "";
  std::string m = tsr_status_message(st);
  tsr_status_free(st);
  return m;
}

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

}  // namespace
