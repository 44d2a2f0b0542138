// golden_grad_test.cpp - what golden_grad_test runs of the gradient family:
// GoldenGrad (gradcheck_test.cpp) on cpu:0, as Ops/GoldenGrad.Case/<case>.
// The suite runs the same cases as Autograd/GoldenGrad (suite_target.cpp).
#include "conformance/golden/harness.h"

namespace tessera::golden {
namespace {

INSTANTIATE_TEST_SUITE_P(Ops, GoldenGrad, testing::ValuesIn(case_indices()), case_name);

}  // namespace
}  // namespace tessera::golden
