// tessera/sdk/special.hpp - special functions the C++ library lacks (erfinv,
// digamma), a thread-safe lgamma, in double precision (float callers round
// once), integer pow with PyTorch's rule for negative exponents, and
// Python's floor division of floats.
//
// Every function is TSR_SDK_HD (device_code.hpp): a GPU plugin's kernels call
// the same code as the host. Under nvcc they need --expt-relaxed-constexpr
// (std::numeric_limits); hipcc needs nothing.
#ifndef TESSERA_SDK_SPECIAL_HPP_
#define TESSERA_SDK_SPECIAL_HPP_

#include <cmath>
#include <limits>
#include <type_traits>

#include "tessera/sdk/device_code.hpp"
#include "tessera/sdk/dtype_traits.hpp"

namespace tessera::sdk {

// Inverse error function on [-1, 1]: ±inf at ±1, NaN outside. A rational
// starting point (M. Giles, "Approximating the erfinv function", GPU Computing
// Gems, 2011; ~1e-7 relative) refined by two Newton steps, which bring it to
// double precision. Near |y| = 1 the steps solve erfc(x) = 1 - |y| (exact by
// Sterbenz) instead of erf(x) = y, whose rounding the steep inverse would
// amplify ~1e5 times.
TSR_SDK_HD inline double erfinv(double y) noexcept {
  if (y != y || y < -1.0 || y > 1.0) return std::numeric_limits<double>::quiet_NaN();
  if (y == 1.0) return std::numeric_limits<double>::infinity();
  if (y == -1.0) return -std::numeric_limits<double>::infinity();
  if (y == 0.0) return y;  // keeps the sign of zero
  double w = -::log((1.0 - y) * (1.0 + y));
  double p;
  if (w < 5.0) {
    w -= 2.5;
    p = 2.81022636e-08;
    p = 3.43273939e-07 + p * w;
    p = -3.5233877e-06 + p * w;
    p = -4.39150654e-06 + p * w;
    p = 0.00021858087 + p * w;
    p = -0.00125372503 + p * w;
    p = -0.00417768164 + p * w;
    p = 0.246640727 + p * w;
    p = 1.50140941 + p * w;
  } else {
    w = ::sqrt(w) - 3.0;
    p = -0.000200214257;
    p = 0.000100950558 + p * w;
    p = 0.00134934322 + p * w;
    p = -0.00367342844 + p * w;
    p = 0.00573950773 + p * w;
    p = -0.0076224613 + p * w;
    p = 0.00943887047 + p * w;
    p = 1.00167406 + p * w;
    p = 2.83297682 + p * w;
  }
  const double a = ::fabs(y);
  double x = p * a;
  constexpr double two_over_sqrt_pi = 1.1283791670955126;  // 2 / sqrt(pi), correctly rounded
  for (int i = 0; i < 2; ++i) {
    const double slope = two_over_sqrt_pi * ::exp(-x * x);
    if (slope == 0.0) break;  // |x| > ~26: already as close as double can say
    if (a > 0.5)
      x += (::erfc(x) - (1.0 - a)) / slope;
    else
      x -= (::erf(x) - a) / slope;
  }
  return y < 0 ? -x : x;
}

// Digamma (psi), the logarithmic derivative of gamma: -inf at +0, +inf at -0
// (PyTorch's convention), NaN at negative integers. Reflection for x < 0,
// recurrence up to x >= 10, then the asymptotic series (error < 1e-15).
TSR_SDK_HD inline double digamma(double x) noexcept {
  constexpr double kPi = 3.141592653589793;
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (x != x) return x;
  if (x == 0.0) return ::copysign(kInf, -x);
  if (x == -kInf) return std::numeric_limits<double>::quiet_NaN();
  if (x == kInf) return x;
  double result = 0.0;
  if (x < 0.0) {
    if (x == ::floor(x)) return std::numeric_limits<double>::quiet_NaN();
    result = -kPi / ::tan(kPi * x);  // psi(x) = psi(1 - x) - pi / tan(pi x)
    x = 1.0 - x;
  }
  while (x < 10.0) {
    result -= 1.0 / x;
    x += 1.0;
  }
  const double z = 1.0 / (x * x);
  const double series =
      z * (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (1.0 / 240 - z * (1.0 / 132)))));
  return result + ::log(x) - 0.5 / x - series;
}

// log|gamma(x)| without touching the global `signgam` on the host
// (std::lgamma writes it, a data race when several threads run kernels);
// device code has no signgam and calls ::lgamma.
TSR_SDK_HD inline double lgamma(double x) noexcept {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  return ::lgamma(x);
#else
  int sign = 0;
  return ::lgamma_r(x, &sign);
#endif
}

// base ** exponent for an integer type T, wrapping modulo 2^bits (wrap_t,
// dtype_traits.hpp); a negative exponent gives 0 except for bases 1 and -1
// (PyTorch's rule).
template <class T>
TSR_SDK_HD inline T integer_pow(T base, T exponent) noexcept {
  if constexpr (std::is_signed_v<T>) {
    if (exponent < 0) {
      if (base == 1) return T(1);
      if (base == -1) return (exponent & 1) ? T(-1) : T(1);
      return T(0);
    }
  }
  using W = wrap_t<T>;
  W result = 1, b = static_cast<W>(base);
  auto e = static_cast<std::make_unsigned_t<T>>(exponent);
  while (e != 0) {
    if (e & 1u) result *= b;
    b *= b;
    e = static_cast<decltype(e)>(e >> 1);
  }
  return static_cast<T>(result);
}

// Python's floor division of floats (float or double): the exact quotient
// rounded down, b == 0 as IEEE division, a zero result with the quotient's
// sign.
template <class C>
TSR_SDK_HD inline C floor_divide(C a, C b) noexcept {
  static_assert(std::is_same_v<C, float> || std::is_same_v<C, double>);
  if (b == C(0)) return a / b;
  C mod, div, floor_div;
  if constexpr (std::is_same_v<C, float>) {
    mod = ::fmodf(a, b);
  } else {
    mod = ::fmod(a, b);
  }
  div = (a - mod) / b;
  if (mod != C(0) && ((b < C(0)) != (mod < C(0)))) div -= C(1);
  if constexpr (std::is_same_v<C, float>) {
    if (div == C(0)) return ::copysignf(C(0), a / b);
    floor_div = ::floorf(div);
  } else {
    if (div == C(0)) return ::copysign(C(0), a / b);
    floor_div = ::floor(div);
  }
  if (div - floor_div > C(0.5)) floor_div += C(1);
  return floor_div;
}

}  // namespace tessera::sdk

#endif  // TESSERA_SDK_SPECIAL_HPP_
