// tessera/sdk/half.hpp - 16-bit floating-point storage types: IEEE binary16
// (`half`) and bfloat16 (`bfloat16`).
//
// Both are trivially copyable 2-byte values holding the bit pattern only; all
// arithmetic happens in float32 (they convert implicitly to float). Conversions
// *to* them round to nearest, ties to even, and handle every class of input:
// NaN stays NaN (quiet, sign and high payload bits kept), +-inf stays inf, finite
// values too large become inf, tiny values become subnormals or signed zero.
// Conversion from double rounds once, correctly (no double rounding through
// float): it goes through float with round-to-odd, which is exact for targets
// with at least two fewer significand bits than float.
//
// Header-only, standard library only; used by the core and by plugins. Every
// function is noexcept and allocation-free. Integers convert through double
// (static_cast<double> first): there is deliberately no integer constructor.
#ifndef TESSERA_SDK_HALF_HPP_
#define TESSERA_SDK_HALF_HPP_

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

// By its own directory, like philox.hpp includes this header (the core
// includes them by path). TSR_SDK_HD: device code calls these too.
#include "device_code.hpp"

namespace tessera::sdk {

namespace detail {

// float32 bits -> binary16 bits, round to nearest even.
TSR_SDK_HD inline uint16_t float_to_half_bits(float value) noexcept {
  const uint32_t x = std::bit_cast<uint32_t>(value);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or NaN
    if (abs == 0x7f800000u) return sign | 0x7c00u;
    return static_cast<uint16_t>(sign | 0x7e00u | ((abs >> 13) & 0x3ffu));
  }
  const uint32_t exponent = abs >> 23;         // biased by 127
  if (exponent >= 143) return sign | 0x7c00u;  // >= 2^16: overflows to inf
  if (exponent >= 113) {                       // normal half (>= 2^-14)
    uint32_t h = ((exponent - 112) << 10) | ((abs >> 13) & 0x3ffu);
    const uint32_t rest = abs & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // may carry into inf
    return static_cast<uint16_t>(sign | h);
  }
  if (exponent <= 101) return sign;  // < 2^-25: rounds to zero
  // Subnormal half: the value in units of 2^-24 is mantissa >> (126 - exponent).
  const uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
  const uint32_t shift = 126 - exponent;  // 14 .. 24
  uint32_t h = mantissa >> shift;
  const uint32_t rest = mantissa & ((1u << shift) - 1u);
  const uint32_t halfway = 1u << (shift - 1);
  if (rest > halfway || (rest == halfway && (h & 1u))) ++h;  // may become the smallest normal
  return static_cast<uint16_t>(sign | h);
}

// binary16 bits -> float32 (exact).
TSR_SDK_HD inline float half_bits_to_float(uint16_t h) noexcept {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1fu) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24, exact in float.
    const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
    return sign ? -magnitude : magnitude;
  }
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

// float32 bits -> bfloat16 bits, round to nearest even.
TSR_SDK_HD inline uint16_t float_to_bfloat16_bits(float value) noexcept {
  const uint32_t x = std::bit_cast<uint32_t>(value);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // NaN
  const uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>((x + rounding) >> 16);  // overflow carries into inf correctly
}

TSR_SDK_HD inline float bfloat16_bits_to_float(uint16_t b) noexcept {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

// double -> float rounded to odd: truncate toward zero, then set the last
// significand bit if anything was lost. Rounding that float once more to a
// format with >= 2 fewer significand bits gives the correctly rounded result.
TSR_SDK_HD inline float double_to_float_round_odd(double value) noexcept {
  if (std::isnan(value)) return static_cast<float>(value);
  float f = static_cast<float>(value);
  if (std::isinf(f) && !std::isinf(value)) {
    f = std::copysign(std::numeric_limits<float>::max(), f);  // overflow: largest, inexact
  } else if (std::fabs(static_cast<double>(f)) > std::fabs(value)) {
    f = std::nextafter(f, 0.0f);  // rounded away from zero: step back toward it
  }
  if (static_cast<double>(f) != value) {
    f = std::bit_cast<float>(std::bit_cast<uint32_t>(f) | 1u);
  }
  return f;
}

}  // namespace detail

// IEEE 754 binary16. Value type holding bits; arithmetic through float.
struct half {
  uint16_t bits = 0;

  half() = default;
  TSR_SDK_HD explicit half(float value) noexcept : bits(detail::float_to_half_bits(value)) {}
  TSR_SDK_HD explicit half(double value) noexcept
      : bits(detail::float_to_half_bits(detail::double_to_float_round_odd(value))) {}
  TSR_SDK_HD operator float() const noexcept { return detail::half_bits_to_float(bits); }

  TSR_SDK_HD static half from_bits(uint16_t b) noexcept {
    half h;
    h.bits = b;
    return h;
  }
};

// bfloat16: the upper half of a float32. Value type holding bits.
struct bfloat16 {
  uint16_t bits = 0;

  bfloat16() = default;
  TSR_SDK_HD explicit bfloat16(float value) noexcept
      : bits(detail::float_to_bfloat16_bits(value)) {}
  TSR_SDK_HD explicit bfloat16(double value) noexcept
      : bits(detail::float_to_bfloat16_bits(detail::double_to_float_round_odd(value))) {}
  TSR_SDK_HD operator float() const noexcept { return detail::bfloat16_bits_to_float(bits); }

  TSR_SDK_HD static bfloat16 from_bits(uint16_t b) noexcept {
    bfloat16 h;
    h.bits = b;
    return h;
  }
};

static_assert(sizeof(half) == 2 && sizeof(bfloat16) == 2);

}  // namespace tessera::sdk

#endif  // TESSERA_SDK_HALF_HPP_
