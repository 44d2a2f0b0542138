// convert.hpp - element conversion between every pair of Tessera dtypes, with
// the semantics of copy_ (docs/operators.md):
//   - anything -> bool is x != 0 (complex: either part non-zero; NaN is true);
//   - floating -> integer truncates toward zero and saturates at the integer's
//     range; NaN -> 0;
//   - integer/bool -> integer wraps modulo 2^bits (two's complement);
//   - complex -> real dtype takes the real part; real -> complex has imag 0;
//   - -> float16/bfloat16 rounds to nearest even once, from the exact value
//     (no double rounding, also for int64 and float64 sources);
//   - other conversions are C++'s (round to nearest for int/double -> float).
// Also `compute_t<T>`, the type arithmetic on T happens in (float for the 16-bit
// floats), and scalar_as<C>() turning a tsr_scalar into it.
#ifndef TESSERA_PLUGINS_CPU_CONVERT_HPP_
#define TESSERA_PLUGINS_CPU_CONVERT_HPP_

#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "tessera/sdk/dtype_traits.hpp"
#include "tessera/sdk/half.hpp"

namespace tessera::cpu {

using sdk::bfloat16;
using sdk::half;
using sdk::is_complex_v;
using sdk::is_integral_v;
using sdk::is_reduced_float_v;

template <class T>
using compute_t = std::conditional_t<is_reduced_float_v<T>, float, T>;

// Floating value -> integer type I: truncate, saturate, NaN -> 0.
template <class I, class F>
inline I saturate_cast(F value) noexcept {
  const double v = static_cast<double>(value);
  if (std::isnan(v)) return I(0);
  // max + 1 and min are powers of two (or 0): exact in double.
  constexpr double upper = static_cast<double>(std::numeric_limits<I>::max() / 2 + 1) * 2.0;
  constexpr double lower = static_cast<double>(std::numeric_limits<I>::min());
  if (v >= upper) return std::numeric_limits<I>::max();
  if (v <= lower) return std::numeric_limits<I>::min();
  return static_cast<I>(v);
}

// An integer as a double rounded to odd (truncate, then set the last bit if
// anything was lost), so that rounding it once more to float16/bfloat16 is
// correct: a plain int64 -> double conversion rounds to nearest, and a second
// rounding could then land on a tie the exact value was not on.
template <class I>
inline double integer_to_double_round_odd(I value) noexcept {
  if constexpr (sizeof(I) < 8) {
    return static_cast<double>(value);  // exact
  } else {
    const bool negative = value < 0;
    uint64_t magnitude =
        negative ? uint64_t{0} - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
    if (magnitude < (uint64_t{1} << 53)) return static_cast<double>(value);
    const int shift = 11 - std::countl_zero(magnitude);  // keep the top 53 bits
    const uint64_t lost = magnitude & ((uint64_t{1} << shift) - 1);
    magnitude = (magnitude >> shift) | (lost != 0 ? 1u : 0u);
    const double result = std::ldexp(static_cast<double>(magnitude), shift);
    return negative ? -result : result;
  }
}

template <class To, class From>
inline To convert(From v) noexcept {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<To, bool>) {
    if constexpr (is_complex_v<From>) {
      return v.real() != 0 || v.imag() != 0;
    } else if constexpr (is_reduced_float_v<From>) {
      return static_cast<float>(v) != 0.0f;
    } else {
      return v != From(0);
    }
  } else if constexpr (is_complex_v<To>) {
    using R = typename To::value_type;
    if constexpr (is_complex_v<From>) {
      return To(static_cast<R>(v.real()), static_cast<R>(v.imag()));
    } else {
      return To(convert<R>(v), R(0));
    }
  } else if constexpr (is_complex_v<From>) {
    return convert<To>(v.real());
  } else if constexpr (is_reduced_float_v<From>) {
    return convert<To>(static_cast<float>(v));
  } else if constexpr (is_integral_v<To>) {
    if constexpr (std::is_floating_point_v<From>) {
      return saturate_cast<To>(v);
    } else {
      return static_cast<To>(v);  // modular since C++20
    }
  } else if constexpr (is_reduced_float_v<To>) {
    if constexpr (std::is_floating_point_v<From>) {
      return To(v);
    } else {
      return To(integer_to_double_round_odd(v));
    }
  } else {
    return static_cast<To>(v);
  }
}

// The value of `scalar` converted with copy_ semantics (fill_).
template <class T>
inline T scalar_convert(const tsr_scalar& scalar) noexcept {
  switch (scalar.kind) {
    case TSR_BOOL:
      return convert<T>(scalar.v.i != 0);
    case TSR_INT64:
      return convert<T>(scalar.v.i);
    case TSR_FLOAT64:
      return convert<T>(scalar.v.f);
    default:
      return convert<T>(std::complex<double>(scalar.v.c.re, scalar.v.c.im));
  }
}

}  // namespace tessera::cpu

#endif  // TESSERA_PLUGINS_CPU_CONVERT_HPP_
