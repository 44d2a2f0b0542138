// half_convert.hpp - bulk conversion between the 16-bit float types and
// float32, for loops that compute 16-bit data in float32 (elementwise
// arithmetic, copy_, sums).
//
// float16 uses the CPU's F16C instructions when it has them (checked once, at
// first use), which convert 8 values per instruction with the same results as
// sdk::half: round to nearest even, subnormals kept, NaN quieted with its sign
// and high payload bits. Without F16C, and for bfloat16 (plain integer shifts
// the compiler vectorises), the sdk conversions run element by element.
// `in` and `out` must not overlap. No allocation, no exceptions.
#ifndef TESSERA_PLUGINS_CPU_HALF_CONVERT_HPP_
#define TESSERA_PLUGINS_CPU_HALF_CONVERT_HPP_

#include <cstdint>

#include "tessera/sdk/half.hpp"

namespace tessera::cpu {

void half_to_float(const sdk::half* in, float* out, int64_t n) noexcept;
void float_to_half(const float* in, sdk::half* out, int64_t n) noexcept;

inline void bfloat16_to_float(const sdk::bfloat16* in, float* out, int64_t n) noexcept {
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(in[i]);
}
inline void float_to_bfloat16(const float* in, sdk::bfloat16* out, int64_t n) noexcept {
  for (int64_t i = 0; i < n; ++i) out[i] = sdk::bfloat16(in[i]);
}

// Overloads picking the right one for T = half or bfloat16.
inline void to_float(const sdk::half* in, float* out, int64_t n) noexcept {
  half_to_float(in, out, n);
}
inline void to_float(const sdk::bfloat16* in, float* out, int64_t n) noexcept {
  bfloat16_to_float(in, out, n);
}
inline void from_float(const float* in, sdk::half* out, int64_t n) noexcept {
  float_to_half(in, out, n);
}
inline void from_float(const float* in, sdk::bfloat16* out, int64_t n) noexcept {
  float_to_bfloat16(in, out, n);
}

}  // namespace tessera::cpu

#endif  // TESSERA_PLUGINS_CPU_HALF_CONVERT_HPP_
