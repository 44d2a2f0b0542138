// autograd_reachability_test - Note [Composite reachability]: a composite
// differentiated through its decomposition must reach every input that
// requires grad, or the call fails naming the input. index_put's
// decomposition writes `values` with a direct kernel call (a real graph cut:
// before index_put had a formula, `values` silently got no gradient); this
// binary makes it decompose (TESSERA_AUTOGRAD_DECOMPOSE, set before the
// formula table is built) and checks that the cut is now loud.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "frontend_test_support.h"
#include "tessera/autograd.hpp"
#include "tessera/tessera.hpp"

namespace {

using tessera::Dtype;
using tessera::Tensor;
using tsr_test::error_of;

// Before main, so before any op records.
const bool kDecomposeIndexPut = [] {
  setenv("TESSERA_AUTOGRAD_DECOMPOSE", "index_put", 1);
  return true;
}();

Tensor f64(const std::vector<double>& values, tessera::IntList shape, bool requires_grad) {
  Tensor t = tessera::tensor(values, shape, tessera::TensorOptions().dtype(Dtype::Float64));
  if (requires_grad) t.requires_grad_();
  return t;
}

TEST(CompositeReachability, AnInputTheDecompositionCutsOffFailsTheCall) {
  ASSERT_TRUE(kDecomposeIndexPut);
  Tensor self = f64({0, 0, 0, 0, 0}, {5}, true);
  Tensor values = f64({1, 2}, {2}, true);
  const Tensor index = tessera::tensor({0, 3});
  const std::string message =
      error_of([&] { tessera::index_put(self, {index}, values, /*accumulate=*/true); });
  EXPECT_NE(message.find("op 'index_put'"), std::string::npos) << message;
  EXPECT_NE(message.find("argument 'values' requires grad"), std::string::npos) << message;
  EXPECT_NE(message.find("nondifferentiable_args"), std::string::npos) << message;
}

TEST(CompositeReachability, InputsTheDecompositionReachesPass) {
  // Only self requires grad: it reaches the result through a recorded clone.
  Tensor self = f64({0, 0, 0, 0, 0}, {5}, true);
  Tensor values = f64({1, 2}, {2}, false);
  Tensor r = tessera::index_put(self, {tessera::tensor({0, 3})}, values, /*accumulate=*/true);
  r.backward(f64({1, 2, 3, 4, 5}, {5}, false));
  EXPECT_EQ(self.grad().to_vector<double>(), (std::vector<double>{1, 2, 3, 4, 5}));
}

TEST(CompositeReachability, AddFamilyWithBetaZeroStillReachesSelf) {
  // beta = 0 ignores self's values (NaN included) but, as in PyTorch, self
  // still gets a (zero) gradient rather than being cut off the graph.
  const double nan = std::nan("");
  for (const char* which : {"addmm", "addr"}) {
    SCOPED_TRACE(which);
    Tensor self = f64({nan, 1, 2, 3}, {2, 2}, true);
    Tensor a = f64({1, 2, 3, 4}, {2, 2}, true);
    Tensor v = f64({1, 2}, {2}, true);
    Tensor out = std::string(which) == "addmm" ? tessera::addmm(self, a, a, /*beta=*/0)
                                               : tessera::addr(self, v, v, /*beta=*/0);
    EXPECT_FALSE(std::isnan(out.sum().item<double>()));
    const std::vector<Tensor> g = tessera::autograd::grad({out.sum()}, {self});
    EXPECT_EQ(g[0].to_vector<double>(), (std::vector<double>{0, 0, 0, 0}));
  }
}

TEST(CompositeReachability, TheListedOpReportsThatItDecomposes) {
  const tsr_op* op = nullptr;
  ASSERT_EQ(tsr_test::status_message(tsr_op_find(tessera::default_runtime(), "index_put", &op)),
            "");
  tsr_op_autograd support = TSR_AUTOGRAD_MISSING;
  ASSERT_EQ(tsr_test::status_message(tsr_op_autograd_support(op, &support)), "");
  EXPECT_EQ(support, TSR_AUTOGRAD_DECOMPOSES);
}

}  // namespace
