// wrong_kernel.cpp - TEST ONLY: the deliberately wrong kernel result behind
// $TESSERA_CPU_TEST_WRONG_KERNEL (context.hpp), so the conformance suite can
// show it catches one (op, dtype, shape class and error in its report).
#include <cstdint>
#include <limits>

#include "wrong_kernel.hpp"

namespace tessera::cpu {

void make_wrong(const tsr_kernel_call* call, bool nan) noexcept {
  for (int32_t k = 0; k < call->nouts; ++k) {
    const tsr_tensor_desc& out = call->outs[k];
    if (out.data == nullptr) continue;
    bool empty = false;
    for (int32_t d = 0; d < out.ndim; ++d) empty |= out.sizes[d] == 0;
    if (empty) continue;
    if (out.dtype == TSR_FLOAT32) {
      float* p = static_cast<float*>(out.data);
      *p = nan ? std::numeric_limits<float>::quiet_NaN() : *p * 1.01f + 1e-3f;
      return;
    }
    if (out.dtype == TSR_FLOAT64) {
      double* p = static_cast<double*>(out.data);
      *p = nan ? std::numeric_limits<double>::quiet_NaN() : *p * 1.01 + 1e-3;
      return;
    }
  }
}

}  // namespace tessera::cpu
