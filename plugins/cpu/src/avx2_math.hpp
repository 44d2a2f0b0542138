// avx2_math.hpp - AVX2+FMA vector helpers shared by the plugin's AVX2 bodies
// (avx2_lines.cpp, nn/attention_avx2.cpp).
//
// Include only from a translation unit that guards the AVX2 path with
// TESSERA_CPU_HAVE_AVX2 (isa.hpp), and call only from functions compiled with
// TSR_AVX2 / TSR_AVX2_INLINE after use_avx2() said yes: these are AVX2
// instructions, illegal on a processor without them.
#ifndef TESSERA_PLUGINS_CPU_AVX2_MATH_HPP_
#define TESSERA_PLUGINS_CPU_AVX2_MATH_HPP_

#include <immintrin.h>

#include "exp_constants.hpp"

#define TSR_AVX2 __attribute__((target("avx2,fma")))
#define TSR_AVX2_INLINE __attribute__((target("avx2,fma"), always_inline)) inline

namespace tessera::cpu::avx2 {

// exp(x) for x <= 0 or x = -inf (never NaN), by exp_constants.hpp's
// reduction and polynomial, 2^n put into the exponent bits; x < -87 gives 0.
TSR_AVX2_INLINE __m256 exp_nonpositive(__m256 x) noexcept {
  namespace k = exp_poly;
  const __m256 lo = _mm256_set1_ps(k::kLowest);
  const __m256 xc = _mm256_max_ps(x, lo);
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(xc, _mm256_set1_ps(k::kLog2e)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(k::kLn2Hi), xc);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(k::kLn2Lo), r);
  __m256 p = _mm256_set1_ps(k::kPoly[0]);
  for (int i = 1; i < 7; ++i) p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(k::kPoly[i]));
  const __m256i bits =
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  const __m256 result = _mm256_mul_ps(p, _mm256_castsi256_ps(bits));
  return _mm256_andnot_ps(_mm256_cmp_ps(x, lo, _CMP_LT_OQ), result);
}

// The largest of the 8 lanes (NaN lanes are not detected here).
TSR_AVX2_INLINE float horizontal_max(__m256 v) noexcept {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_shuffle_ps(m, m, 1));
  return _mm_cvtss_f32(m);
}

// The sum of the 8 float lanes, in float32.
TSR_AVX2_INLINE float horizontal_sum(__m256 v) noexcept {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
  return _mm_cvtss_f32(s);
}

}  // namespace tessera::cpu::avx2

#endif  // TESSERA_PLUGINS_CPU_AVX2_MATH_HPP_
