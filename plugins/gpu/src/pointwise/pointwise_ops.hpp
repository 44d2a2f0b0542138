// pointwise_ops.hpp - the per-element math of the pointwise kernels
// (pointwise.cu): one TSR_HD function per family and dtype class, switched by
// the tsr_unary_op / tsr_binary_op code (tessera/opcodes.h).
//
// Semantics are the CPU plugin's (plugins/cpu/src/pointwise/*.cpp), which
// match PyTorch: floating functions run in compute_t<T> (float for the 16-bit
// floats), the special functions (erfinv, digamma, lgamma) in double; integer
// arithmetic wraps modulo 2^bits in unsigned types (no UB); NaN handling per
// code as in the CPU plugin (sign(NaN) = 0, maximum/minimum propagate NaN,
// clamp ignores NaN bounds, ...).
//
// Math calls go through the small overload set in namespace `m` (expf for
// float, exp for double): the global C functions exist on the host and on both
// device compilers, while their float overloads and std:: math do not
// everywhere.
#pragma once

#include <math.h>

#include <cstdint>
#include <limits>
#include <type_traits>

#include "dtypes.hpp"
#include "hd.hpp"
#include "tessera/opcodes.h"
#include "tessera/sdk/dtype_traits.hpp"
#include "tessera/sdk/special.hpp"

namespace tessera::gpu::pw {

// ---- float/double overloads of the C math functions ---------------------------

namespace m {
#define TSR_PW_MATH1(name)                                   \
  TSR_HD inline float name(float x) { return ::name##f(x); } \
  TSR_HD inline double name(double x) { return ::name(x); }
#define TSR_PW_MATH2(name)                                               \
  TSR_HD inline float name(float x, float y) { return ::name##f(x, y); } \
  TSR_HD inline double name(double x, double y) { return ::name(x, y); }
TSR_PW_MATH1(exp)
TSR_PW_MATH1(exp2)
TSR_PW_MATH1(expm1)
TSR_PW_MATH1(log)
TSR_PW_MATH1(log2)
TSR_PW_MATH1(log10)
TSR_PW_MATH1(log1p)
TSR_PW_MATH1(sqrt)
TSR_PW_MATH1(sin)
TSR_PW_MATH1(cos)
TSR_PW_MATH1(tan)
TSR_PW_MATH1(asin)
TSR_PW_MATH1(acos)
TSR_PW_MATH1(atan)
TSR_PW_MATH1(sinh)
TSR_PW_MATH1(cosh)
TSR_PW_MATH1(tanh)
TSR_PW_MATH1(asinh)
TSR_PW_MATH1(acosh)
TSR_PW_MATH1(atanh)
TSR_PW_MATH1(erf)
TSR_PW_MATH1(erfc)
TSR_PW_MATH1(floor)
TSR_PW_MATH1(ceil)
TSR_PW_MATH1(trunc)
TSR_PW_MATH1(rint)
TSR_PW_MATH1(fabs)
TSR_PW_MATH2(pow)
TSR_PW_MATH2(atan2)
TSR_PW_MATH2(fmax)
TSR_PW_MATH2(fmin)
TSR_PW_MATH2(fmod)
TSR_PW_MATH2(copysign)
TSR_PW_MATH2(hypot)
#undef TSR_PW_MATH1
#undef TSR_PW_MATH2
}  // namespace m

template <class C>
TSR_HD inline bool is_nan(C x) {
  return x != x;
}
template <class C>
TSR_HD inline bool is_inf(C x) {
  return x == std::numeric_limits<C>::infinity() || x == -std::numeric_limits<C>::infinity();
}
// The sign bit (set for -0.0 and for NaNs with the bit set), via copysign.
template <class C>
TSR_HD inline bool sign_bit(C x) {
  return m::copysign(C(1), x) < C(0);
}

// Integer arithmetic wraps modulo 2^bits in sdk::wrap_t; the special
// functions and integer pow are the SDK's (special.hpp), host and device.
using sdk::integer_pow;
using sdk::wrap_t;

// ---- _unary ---------------------------------------------------------------------

// Codes whose out is bool (tessera/opcodes.h).
TSR_HD inline bool unary_predicate(int code) {
  return code == TSR_UNARY_LOGICAL_NOT || (code >= TSR_UNARY_ISNAN && code <= TSR_UNARY_SIGNBIT);
}

// Floating codes (not predicates) in compute type C. p0..p2 are the code's
// parameters converted to C, except ROUND: p0 = 10^|decimals| and p1 = the
// sign of decimals (computed on the host as the CPU plugin does).
template <class C>
TSR_HD inline C unary_floating(int code, C x, C p0, C p1, C p2) {
  constexpr C kInf = std::numeric_limits<C>::infinity();
  switch (code) {
    case TSR_UNARY_NEG:
      return -x;
    case TSR_UNARY_ABS:
      return m::fabs(x);
    case TSR_UNARY_SIGN:
      return C((x > C(0)) - (x < C(0)));  // NaN -> 0 as PyTorch
    case TSR_UNARY_EXP:
      return m::exp(x);
    case TSR_UNARY_EXP2:
      return m::exp2(x);
    case TSR_UNARY_EXPM1:
      return m::expm1(x);
    case TSR_UNARY_LOG:
      return m::log(x);
    case TSR_UNARY_LOG2:
      return m::log2(x);
    case TSR_UNARY_LOG10:
      return m::log10(x);
    case TSR_UNARY_LOG1P:
      return m::log1p(x);
    case TSR_UNARY_SQRT:
      return m::sqrt(x);
    case TSR_UNARY_RSQRT:
      return C(1) / m::sqrt(x);
    case TSR_UNARY_RECIPROCAL:
      return C(1) / x;
    case TSR_UNARY_SIN:
      return m::sin(x);
    case TSR_UNARY_COS:
      return m::cos(x);
    case TSR_UNARY_TAN:
      return m::tan(x);
    case TSR_UNARY_ASIN:
      return m::asin(x);
    case TSR_UNARY_ACOS:
      return m::acos(x);
    case TSR_UNARY_ATAN:
      return m::atan(x);
    case TSR_UNARY_SINH:
      return m::sinh(x);
    case TSR_UNARY_COSH:
      return m::cosh(x);
    case TSR_UNARY_TANH:
      return m::tanh(x);
    case TSR_UNARY_ASINH:
      return m::asinh(x);
    case TSR_UNARY_ACOSH:
      return m::acosh(x);
    case TSR_UNARY_ATANH:
      return m::atanh(x);
    case TSR_UNARY_SIGMOID:
      return C(1) / (C(1) + m::exp(-x));
    case TSR_UNARY_LOGIT: {
      if (p0 < C(0)) return m::log(x / (C(1) - x));  // eps < 0: no clamp
      const C hi = C(1) - p0;
      const C z = x < p0 ? p0 : (x > hi ? hi : x);
      return m::log(z / (C(1) - z));
    }
    case TSR_UNARY_ERF:
      return m::erf(x);
    case TSR_UNARY_ERFC:
      return m::erfc(x);
    case TSR_UNARY_ERFINV:
      return static_cast<C>(sdk::erfinv(static_cast<double>(x)));
    case TSR_UNARY_LGAMMA:
      return static_cast<C>(sdk::lgamma(static_cast<double>(x)));
    case TSR_UNARY_DIGAMMA:
      return static_cast<C>(sdk::digamma(static_cast<double>(x)));
    case TSR_UNARY_FLOOR:
      return m::floor(x);
    case TSR_UNARY_CEIL:
      return m::ceil(x);
    case TSR_UNARY_TRUNC:
      return m::trunc(x);
    case TSR_UNARY_ROUND:  // half to even (rint in the default rounding mode)
      if (p1 > C(0)) return m::rint(x * p0) / p0;
      if (p1 < C(0)) return m::rint(x / p0) * p0;
      return m::rint(x);
    case TSR_UNARY_FRAC:
      return x - m::trunc(x);
    case TSR_UNARY_RELU:
      return x < C(0) ? C(0) : x;
    case TSR_UNARY_LEAKY_RELU:
      return x > C(0) ? x : x * p0;
    case TSR_UNARY_ELU:  // p0 = alpha, p1 = scale, p2 = input_scale
      return x > C(0) ? x * p1 : p0 * p1 * m::expm1(x * p2);
    case TSR_UNARY_GELU:
      return C(0.5) * x * (C(1) + m::erf(x * static_cast<C>(0.70710678118654752440)));
    case TSR_UNARY_GELU_TANH: {
      const C beta = static_cast<C>(0.79788456080286535588);  // sqrt(2 / pi)
      const C inner = beta * (x + C(0.044715) * x * x * x);
      return C(0.5) * x * (C(1) + m::tanh(inner));
    }
    case TSR_UNARY_SILU:
      return x / (C(1) + m::exp(-x));
    case TSR_UNARY_MISH:
      return x * m::tanh(m::log1p(m::exp(x)));
    case TSR_UNARY_SOFTPLUS:  // p0 = beta, p1 = threshold
      return x * p0 > p1 ? x : m::log1p(m::exp(x * p0)) / p0;
    case TSR_UNARY_CLAMP: {  // NaN x propagates; NaN bounds are ignored
      const C r = x < p0 ? p0 : x;
      return r > p1 ? p1 : r;
    }
    case TSR_UNARY_CLAMP_MIN:
      return x < p0 ? p0 : x;
    case TSR_UNARY_CLAMP_MAX:
      return x > p0 ? p0 : x;
    case TSR_UNARY_HARDSIGMOID: {
      C t = x + C(3);
      t = t < C(0) ? C(0) : t;
      t = t > C(6) ? C(6) : t;
      return t / C(6);
    }
    case TSR_UNARY_HARDSWISH: {
      C t = x + C(3);
      t = t < C(0) ? C(0) : t;
      t = t > C(6) ? C(6) : t;
      return x * t / C(6);
    }
    case TSR_UNARY_SQUARE:
      return x * x;
    case TSR_UNARY_NAN_TO_NUM:  // p0 = nan, p1 = posinf, p2 = neginf
      return is_nan(x) ? p0 : x == kInf ? p1 : x == -kInf ? p2 : x;
    default:
      return x;  // unreachable: the host checks the code
  }
}

// Integer and bool codes (not predicates); p0, p1 converted to T.
template <class T>
TSR_HD inline T unary_integer(int code, T x, T p0, T p1) {
  if constexpr (std::is_same_v<T, bool>) {
    (void)p0;
    (void)p1;
    if (code == TSR_UNARY_BITWISE_NOT) return !x;
    return x;  // SIGN, NAN_TO_NUM: identity on bool
  } else {
    using W = wrap_t<T>;
    switch (code) {
      case TSR_UNARY_SIGN:
        if constexpr (std::is_unsigned_v<T>) {
          return static_cast<T>(x != 0);
        } else {
          return static_cast<T>((x > 0) - (x < 0));
        }
      case TSR_UNARY_BITWISE_NOT:
        return static_cast<T>(~x);
      case TSR_UNARY_NEG:  // wraps: -min == min, as PyTorch
        return static_cast<T>(W(0) - static_cast<W>(x));
      case TSR_UNARY_ABS:
        if constexpr (std::is_signed_v<T>) {
          return x < 0 ? static_cast<T>(W(0) - static_cast<W>(x)) : x;
        } else {
          return x;
        }
      case TSR_UNARY_RELU:
        if constexpr (std::is_signed_v<T>) {
          return x < 0 ? T(0) : x;
        } else {
          return x;
        }
      case TSR_UNARY_SQUARE:
        return static_cast<T>(static_cast<W>(x) * static_cast<W>(x));
      case TSR_UNARY_CLAMP: {
        const T r = x < p0 ? p0 : x;
        return r > p1 ? p1 : r;
      }
      case TSR_UNARY_CLAMP_MIN:
        return x < p0 ? p0 : x;
      case TSR_UNARY_CLAMP_MAX:
        return x > p0 ? p0 : x;
      default:  // FLOOR, CEIL, ROUND, TRUNC, NAN_TO_NUM: identity
        return x;
    }
  }
}

// Predicate codes (-> bool) for any dtype; x in its compute type.
template <class C>
TSR_HD inline bool unary_test(int code, C x) {
  if constexpr (std::is_floating_point_v<C>) {
    constexpr C kInf = std::numeric_limits<C>::infinity();
    switch (code) {
      case TSR_UNARY_LOGICAL_NOT:
        return x == C(0);
      case TSR_UNARY_ISNAN:
        return is_nan(x);
      case TSR_UNARY_ISINF:
        return is_inf(x);
      case TSR_UNARY_ISPOSINF:
        return x == kInf;
      case TSR_UNARY_ISNEGINF:
        return x == -kInf;
      case TSR_UNARY_ISFINITE:
        return !is_nan(x) && !is_inf(x);
      default:  // SIGNBIT
        return sign_bit(x);
    }
  } else {
    switch (code) {
      case TSR_UNARY_LOGICAL_NOT:
        return x == C(0);
      case TSR_UNARY_ISFINITE:
        return true;
      case TSR_UNARY_SIGNBIT:
        if constexpr (std::is_signed_v<C>) {
          return x < 0;
        } else {
          return false;
        }
      default:  // ISNAN, ISINF, ISPOSINF, ISNEGINF
        return false;
    }
  }
}

// ---- _binary --------------------------------------------------------------------

// Codes whose out is bool (tessera/opcodes.h).
TSR_HD inline bool binary_predicate(int code) {
  return (code >= TSR_BINARY_LOGICAL_AND && code <= TSR_BINARY_LOGICAL_XOR) ||
         (code >= TSR_BINARY_EQ && code <= TSR_BINARY_GE);
}

// Comparison and logical codes, any dtype (compute type C).
template <class C>
TSR_HD inline bool binary_test(int code, C x, C y) {
  switch (code) {
    case TSR_BINARY_LOGICAL_AND:
      return (x != C(0)) && (y != C(0));
    case TSR_BINARY_LOGICAL_OR:
      return (x != C(0)) || (y != C(0));
    case TSR_BINARY_LOGICAL_XOR:
      return (x != C(0)) != (y != C(0));
    case TSR_BINARY_EQ:
      return x == y;
    case TSR_BINARY_NE:
      return x != y;
    case TSR_BINARY_LT:
      return x < y;
    case TSR_BINARY_LE:
      return x <= y;
    case TSR_BINARY_GT:
      return x > y;
    default:  // GE
      return x >= y;
  }
}

template <class C>
TSR_HD inline C binary_floating(int code, C a, C b) {
  switch (code) {
    case TSR_BINARY_POW:
      return m::pow(a, b);
    case TSR_BINARY_ATAN2:
      return m::atan2(a, b);
    case TSR_BINARY_MAXIMUM:  // a + b is the NaN when either is one
      return (a != a || b != b) ? a + b : (a > b ? a : b);
    case TSR_BINARY_MINIMUM:
      return (a != a || b != b) ? a + b : (a < b ? a : b);
    case TSR_BINARY_FMAX:
      return m::fmax(a, b);
    case TSR_BINARY_FMIN:
      return m::fmin(a, b);
    case TSR_BINARY_REMAINDER: {  // sign of the divisor
      C r = m::fmod(a, b);
      if (r != C(0) && ((b < C(0)) != (r < C(0)))) r += b;
      return r;
    }
    case TSR_BINARY_FMOD:
      return m::fmod(a, b);
    case TSR_BINARY_DIV_TRUNC:
      return m::trunc(a / b);
    case TSR_BINARY_DIV_FLOOR:
      return sdk::floor_divide(a, b);
    case TSR_BINARY_COPYSIGN:
      return m::copysign(a, b);
    case TSR_BINARY_HYPOT:
      return m::hypot(a, b);
    case TSR_BINARY_XLOGY:
      if (is_nan(b)) return b;
      return a == C(0) ? C(0) : a * m::log(b);
    case TSR_BINARY_LOGADDEXP: {
      if (is_inf(a) && a == b) return a;
      const C mx = (a != a || b != b) ? a + b : (a > b ? a : b);
      return mx + m::log1p(m::exp(-m::fabs(a - b)));
    }
    default:
      return a;  // unreachable: the host checks the code
  }
}

// Integer and bool codes (not predicates). Division by zero never reaches
// here (the host scans `other` first); min / -1 wraps.
template <class T>
TSR_HD inline T binary_integer(int code, T a, T b) {
  switch (code) {
    case TSR_BINARY_MAXIMUM:
    case TSR_BINARY_FMAX:
      return a > b ? a : b;
    case TSR_BINARY_MINIMUM:
    case TSR_BINARY_FMIN:
      return a < b ? a : b;
    case TSR_BINARY_BITWISE_AND:
      return static_cast<T>(a & b);
    case TSR_BINARY_BITWISE_OR:
      return static_cast<T>(a | b);
    case TSR_BINARY_BITWISE_XOR:
      return static_cast<T>(a ^ b);
    default:
      break;
  }
  if constexpr (std::is_same_v<T, bool>) {
    return a;  // unreachable: no other code is claimed for bool
  } else {
    constexpr bool kSigned = std::is_signed_v<T>;
    constexpr T kBits = static_cast<T>(sizeof(T) * 8);
    using W = wrap_t<T>;
    switch (code) {
      case TSR_BINARY_POW:
        return integer_pow(a, b);
      case TSR_BINARY_REMAINDER:
        if constexpr (kSigned) {
          if (b == T(-1)) return T(0);
          T r = static_cast<T>(a % b);
          if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
          return r;
        } else {
          return static_cast<T>(a % b);
        }
      case TSR_BINARY_FMOD:
        if constexpr (kSigned) {
          if (b == T(-1)) return T(0);
        }
        return static_cast<T>(a % b);
      case TSR_BINARY_DIV_TRUNC:
        if constexpr (kSigned) {
          if (b == T(-1)) return static_cast<T>(W(0) - static_cast<W>(a));
        }
        return static_cast<T>(a / b);
      case TSR_BINARY_DIV_FLOOR:
        if constexpr (kSigned) {
          if (b == T(-1)) return static_cast<T>(W(0) - static_cast<W>(a));
          T q = static_cast<T>(a / b);
          if (a % b != 0 && ((a < 0) != (b < 0))) q = static_cast<T>(q - 1);
          return q;
        } else {
          return static_cast<T>(a / b);
        }
      case TSR_BINARY_LSHIFT:  // PyTorch 2: out-of-range shifts give 0
        if constexpr (kSigned) {
          if (b < 0) return T(0);
        }
        if (b >= kBits) return T(0);
        return static_cast<T>(static_cast<W>(a) << b);
      case TSR_BINARY_RSHIFT:  // out-of-range shifts give the sign fill
        if constexpr (kSigned) {
          if (b < 0 || b >= kBits) return a < 0 ? T(-1) : T(0);
        } else {
          if (b >= kBits) return T(0);
        }
        return static_cast<T>(a >> b);
      default:
        return a;  // unreachable: the host checks the code
    }
  }
}

}  // namespace tessera::gpu::pw
