// The arithmetic of basic.def (add/sub/mul/div kernels) as a building block for
// pointwise overloads that route to it (rsub, true_divide, div modes).
#pragma once

#include "ops/pointwise/driver.h"

namespace tsr::ops {

// Runs `kernel_op` (add.Tensor, sub.Tensor, mul.Tensor or div.Tensor) on
// a op b (alpha scales b for add/sub; null means 1) with the call's mode from
// its schema. Defined in ops/pointwise/arithmetic.cpp.
void arith_op(OpCall& c, OpId kernel_op, EwInput a, EwInput b, const tsr_scalar* alpha);

}  // namespace tsr::ops
