// conformance/tolerances.hpp - the per-dtype comparison tolerances of every
// value test in Tessera (golden suite, core op tests, kernel tests).
//
// Note [Tolerances]
// ~~~~~~~~~~~~~~~~~
// An actual value `a` matches an expected value `e` when
//     |a - e| <= atol + rtol * |e|
// (numpy/PyTorch `allclose`), with NaN matching NaN and an infinity matching
// only the same infinity. Integer and bool dtypes compare exactly (rtol = atol
// = 0). Complex dtypes use the tolerance of their real part, applied to the real
// and imaginary parts separately.
//
// The float rtols are PyTorch's own test-suite defaults (torch.testing): about
// ten ulps of the type, enough for a correctly rounded reference against an
// implementation that reorders a handful of operations. bfloat16 is 1.6e-2
// (two ulps of its 8-bit mantissa), float16 1e-3.
//
// Transcendental and accumulating ops (exp/log/trig/erf families, sums over
// many elements, matmul/conv, softmax and norms) legitimately lose more than a
// few ulps: vectorised polynomial approximations, blocked summation orders and
// FMA contraction all differ between libraries. Tests of those ops widen the
// tolerance with `loose(dtype)`, which scales rtol and atol by
// kAccumulatingFactor. One multiplier, here, rather than ad-hoc numbers in
// tests: if a correct kernel needs more, raise it here and say why.
#pragma once

#include <tessera/types.h>

namespace tessera::conformance {

struct Tolerance {
  double rtol;
  double atol;
};

// The multiplier `loose()` applies for transcendental and accumulating ops.
inline constexpr double kAccumulatingFactor = 16.0;

// The tolerance for comparing values of `dtype` (exact for integers and bool).
constexpr Tolerance tolerance(tsr_dtype dtype) {
  switch (dtype) {
    case TSR_FLOAT64:
    case TSR_COMPLEX128:
      return {1e-12, 1e-12};
    case TSR_FLOAT32:
    case TSR_COMPLEX64:
      return {1.3e-6, 1e-5};
    case TSR_FLOAT16:
      return {1e-3, 1e-5};
    case TSR_BFLOAT16:
      return {1.6e-2, 1e-5};
    case TSR_BOOL:
    case TSR_UINT8:
    case TSR_INT8:
    case TSR_INT16:
    case TSR_INT32:
    case TSR_INT64:
    default:
      return {0.0, 0.0};
  }
}

// tolerance(dtype) widened by kAccumulatingFactor, for transcendental and
// accumulating ops (see Note [Tolerances]). Exact dtypes stay exact.
constexpr Tolerance loose(tsr_dtype dtype) {
  const Tolerance t = tolerance(dtype);
  return {t.rtol * kAccumulatingFactor, t.atol * kAccumulatingFactor};
}

// True when `dtype` compares exactly (integers and bool).
constexpr bool is_exact(tsr_dtype dtype) {
  const Tolerance t = tolerance(dtype);
  return t.rtol == 0.0 && t.atol == 0.0;
}

}  // namespace tessera::conformance
