// dtypes.hpp - element types of the shared kernels: the real dtypes (bool,
// integers, float16, bfloat16, float32, float64; no complex), conversion
// between any two with copy_'s semantics, and run-time dispatch.
//
// Conversion (the CPU plugin's convert.hpp, restated for device code; the
// gpuemu conformance run and gpu_host_logic_test check they agree):
//   - anything -> bool is x != 0 (NaN is true);
//   - floating -> integer truncates toward zero and saturates at the
//     integer's range; NaN -> 0;
//   - integer/bool -> integer wraps modulo 2^bits;
//   - -> float16/bfloat16 rounds to nearest even once, from the exact value
//     (doubles and int64 through round-to-odd floats);
//   - other conversions are C++'s.
// compute_t<T> is the type arithmetic on T happens in (float for the 16-bit
// floats). TSR_GPU_DISPATCH(dtype, T, body) runs `body` with T bound to the
// C++ type of a run-time dtype and throws UNIMPLEMENTED for complex/unknown.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "hd.hpp"
#include "tessera/sdk/dtype_traits.hpp"
#include "tessera/sdk/half.hpp"
#include "tessera/sdk/kernel_entry.hpp"
#include "tessera/sdk/status.hpp"
#include "tessera/types.h"

namespace tessera::gpu {

using half = sdk::half;
using bfloat16 = sdk::bfloat16;

using sdk::is_floating_v;
using sdk::is_integral_v;  // not bool
using sdk::is_reduced_float_v;
template <class T>
using compute_t = std::conditional_t<is_reduced_float_v<T>, float, T>;

// Floating value -> integer type I: truncate, saturate, NaN -> 0.
template <class I>
TSR_HD inline I saturate_cast(double v) {
  if (v != v) return I(0);
  constexpr double upper = static_cast<double>(std::numeric_limits<I>::max() / 2 + 1) * 2.0;
  constexpr double lower = static_cast<double>(std::numeric_limits<I>::min());
  if (v >= upper) return std::numeric_limits<I>::max();
  if (v <= lower) return std::numeric_limits<I>::min();
  return static_cast<I>(v);
}

// int64 as a double rounded to odd (so rounding it again to 16 bits is
// correct); smaller integers convert exactly.
TSR_HD inline double int64_to_double_round_odd(int64_t value) {
  const bool negative = value < 0;
  uint64_t magnitude =
      negative ? uint64_t{0} - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  if (magnitude < (uint64_t{1} << 53)) return static_cast<double>(value);
  int shift = 0;
  while ((magnitude >> shift) >= (uint64_t{1} << 53)) ++shift;  // keep the top 53 bits
  const uint64_t lost = magnitude & ((uint64_t{1} << shift) - 1);
  magnitude = (magnitude >> shift) | (lost != 0 ? 1u : 0u);
  double result = static_cast<double>(magnitude);
  for (int k = 0; k < shift; ++k) result *= 2.0;  // exact
  return negative ? -result : result;
}

template <class To, class From>
TSR_HD inline To convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<To, bool>) {
    if constexpr (is_reduced_float_v<From>) {
      return static_cast<float>(v) != 0.0f;
    } else {
      return v != From(0);
    }
  } else if constexpr (is_reduced_float_v<From>) {
    return convert<To>(static_cast<float>(v));
  } else if constexpr (is_integral_v<To>) {
    if constexpr (std::is_floating_point_v<From>) {
      return saturate_cast<To>(static_cast<double>(v));
    } else {
      return static_cast<To>(v);  // modular
    }
  } else if constexpr (is_reduced_float_v<To>) {
    if constexpr (std::is_floating_point_v<From>) {
      return To(v);
    } else if constexpr (sizeof(From) == 8) {
      return To(int64_to_double_round_odd(static_cast<int64_t>(v)));
    } else {
      return To(static_cast<double>(v));
    }
  } else {
    return static_cast<To>(v);
  }
}

// Loads element of dtype T at `p` as C (and stores C into T).
template <class T, class C>
TSR_HD inline C load_as(const char* p) {
  return convert<C>(*reinterpret_cast<const T*>(p));
}
template <class T, class C>
TSR_HD inline void store_from(char* p, C v) {
  *reinterpret_cast<T*>(p) = convert<T>(v);
}

using sdk::kFloatingDtypes;
using sdk::kIntegralDtypes;
using sdk::kNumericDtypes;
using sdk::kRealDtypes;

[[noreturn]] inline void unsupported_dtype(const char* what, int32_t dtype) {
  sdk::throw_status(TSR_UNIMPLEMENTED, "%s: dtype %d is not implemented by the GPU kernels", what,
                    static_cast<int>(dtype));
}

}  // namespace tessera::gpu

// Runs __VA_ARGS__ with T the C++ type of `dtype` (every real dtype).
#define TSR_GPU_DISPATCH_CASE(D, TYPE, T, ...) \
  case D: {                                    \
    using T = TYPE;                            \
    __VA_ARGS__;                               \
    break;                                     \
  }
#define TSR_GPU_DISPATCH(dtype, what, T, ...)                                     \
  switch (dtype) {                                                                \
    TSR_GPU_DISPATCH_CASE(TSR_BOOL, bool, T, __VA_ARGS__)                         \
    TSR_GPU_DISPATCH_CASE(TSR_UINT8, uint8_t, T, __VA_ARGS__)                     \
    TSR_GPU_DISPATCH_CASE(TSR_INT8, int8_t, T, __VA_ARGS__)                       \
    TSR_GPU_DISPATCH_CASE(TSR_INT16, int16_t, T, __VA_ARGS__)                     \
    TSR_GPU_DISPATCH_CASE(TSR_INT32, int32_t, T, __VA_ARGS__)                     \
    TSR_GPU_DISPATCH_CASE(TSR_INT64, int64_t, T, __VA_ARGS__)                     \
    TSR_GPU_DISPATCH_CASE(TSR_FLOAT16, ::tessera::gpu::half, T, __VA_ARGS__)      \
    TSR_GPU_DISPATCH_CASE(TSR_BFLOAT16, ::tessera::gpu::bfloat16, T, __VA_ARGS__) \
    TSR_GPU_DISPATCH_CASE(TSR_FLOAT32, float, T, __VA_ARGS__)                     \
    TSR_GPU_DISPATCH_CASE(TSR_FLOAT64, double, T, __VA_ARGS__)                    \
    default:                                                                      \
      ::tessera::gpu::unsupported_dtype(what, dtype);                             \
  }
