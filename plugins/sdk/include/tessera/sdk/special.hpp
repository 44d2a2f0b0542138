// tessera/sdk/special.hpp - special functions the C++ library lacks (erfinv, digamma) and a
// thread-safe lgamma, in double precision (float callers round once).
#ifndef TESSERA_SDK_SPECIAL_HPP_
#define TESSERA_SDK_SPECIAL_HPP_

#include <cmath>
#include <limits>
#include <numbers>

namespace tessera::sdk {

// Inverse error function on [-1, 1]: ±inf at ±1, NaN outside. A rational
// starting point (M. Giles, "Approximating the erfinv function", GPU Computing
// Gems, 2011; ~1e-7 relative) refined by two Newton steps, which bring it to
// double precision. Near |y| = 1 the steps solve erfc(x) = 1 - |y| (exact by
// Sterbenz) instead of erf(x) = y, whose rounding the steep inverse would
// amplify ~1e5 times.
inline double erfinv(double y) noexcept {
  if (std::isnan(y) || y < -1.0 || y > 1.0) return std::numeric_limits<double>::quiet_NaN();
  if (y == 1.0) return std::numeric_limits<double>::infinity();
  if (y == -1.0) return -std::numeric_limits<double>::infinity();
  if (y == 0.0) return y;  // keeps the sign of zero
  double w = -std::log((1.0 - y) * (1.0 + y));
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
    w = std::sqrt(w) - 3.0;
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
  const double a = std::fabs(y);
  double x = p * a;
  const double two_over_sqrt_pi = 2.0 / std::sqrt(std::numbers::pi);
  for (int i = 0; i < 2; ++i) {
    const double slope = two_over_sqrt_pi * std::exp(-x * x);
    if (slope == 0.0) break;  // |x| > ~26: already as close as double can say
    if (a > 0.5)
      x += (std::erfc(x) - (1.0 - a)) / slope;
    else
      x -= (std::erf(x) - a) / slope;
  }
  return y < 0 ? -x : x;
}

// Digamma (psi), the logarithmic derivative of gamma: -inf at +0, +inf at -0
// (PyTorch's convention), NaN at negative integers. Reflection for x < 0,
// recurrence up to x >= 10, then the asymptotic series (error < 1e-15).
inline double digamma(double x) noexcept {
  if (std::isnan(x)) return x;
  if (x == 0.0) return std::copysign(std::numeric_limits<double>::infinity(), -x);
  if (x == -std::numeric_limits<double>::infinity())
    return std::numeric_limits<double>::quiet_NaN();
  if (x == std::numeric_limits<double>::infinity()) return x;
  double result = 0.0;
  if (x < 0.0) {
    if (x == std::floor(x)) return std::numeric_limits<double>::quiet_NaN();
    // psi(x) = psi(1 - x) - pi / tan(pi x)
    result = -std::numbers::pi / std::tan(std::numbers::pi * x);
    x = 1.0 - x;
  }
  while (x < 10.0) {
    result -= 1.0 / x;
    x += 1.0;
  }
  const double z = 1.0 / (x * x);
  const double series =
      z * (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (1.0 / 240 - z * (1.0 / 132)))));
  return result + std::log(x) - 0.5 / x - series;
}

// log|gamma(x)| without touching the global `signgam` (std::lgamma writes it,
// a data race under OpenMP).
inline double lgamma(double x) noexcept {
  int sign = 0;
  return ::lgamma_r(x, &sign);
}

}  // namespace tessera::sdk

#endif  // TESSERA_SDK_SPECIAL_HPP_
