// avx2_lines.cpp - AVX2+FMA loops for softmax lines and float sums.
//
// Each exported function is compiled with __attribute__((target("avx2,fma")))
// and so are the always-inline helpers it uses; nothing else in the plugin
// is, so no AVX instruction runs unless a kernel chose this path (isa.hpp).
#include "avx2_lines.hpp"

#include "isa.hpp"

#if TESSERA_CPU_HAVE_AVX2

#include <algorithm>
#include <cmath>
#include <limits>

#include "avx2_math.hpp"

namespace tessera::cpu::avx2 {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

TSR_AVX2_INLINE double horizontal_sum(__m256d v) noexcept {
  __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
  s = _mm_add_sd(s, _mm_unpackhi_pd(s, s));
  return _mm_cvtsd_f64(s);
}

// Sum of the 8 float lanes of v, in float64.
TSR_AVX2_INLINE double horizontal_sum_wide(__m256 v) noexcept {
  return horizontal_sum(_mm256_add_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(v)),
                                      _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1))));
}

// The maximum of x[0..n); NaN when any element is NaN.
TSR_AVX2_INLINE float line_max(const float* x, int64_t n) noexcept {
  const __m256 neg_inf = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  __m256 a0 = neg_inf, a1 = neg_inf, a2 = neg_inf, a3 = neg_inf;
  __m256 nan = _mm256_setzero_ps();  // all-ones lanes where a NaN was seen
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256 u0 = _mm256_loadu_ps(x + i), u1 = _mm256_loadu_ps(x + i + 8);
    const __m256 u2 = _mm256_loadu_ps(x + i + 16), u3 = _mm256_loadu_ps(x + i + 24);
    a0 = _mm256_max_ps(a0, u0);
    a1 = _mm256_max_ps(a1, u1);
    a2 = _mm256_max_ps(a2, u2);
    a3 = _mm256_max_ps(a3, u3);
    nan = _mm256_or_ps(nan, _mm256_or_ps(_mm256_cmp_ps(u0, u1, _CMP_UNORD_Q),
                                         _mm256_cmp_ps(u2, u3, _CMP_UNORD_Q)));
  }
  for (; i + 8 <= n; i += 8) {
    const __m256 u = _mm256_loadu_ps(x + i);
    a0 = _mm256_max_ps(a0, u);
    nan = _mm256_or_ps(nan, _mm256_cmp_ps(u, u, _CMP_UNORD_Q));
  }
  if (_mm256_movemask_ps(nan) != 0) return kNaN;
  float m = horizontal_max(_mm256_max_ps(_mm256_max_ps(a0, a1), _mm256_max_ps(a2, a3)));
  for (; i < n; ++i) {
    if (x[i] != x[i]) return kNaN;
    m = std::max(m, x[i]);
  }
  return m;
}

// sum exp(x[i] - m) over [0, n), float32 lanes flushed into float64 every
// kFlush elements; stores the exponentials to y when Store.
template <bool Store>
TSR_AVX2_INLINE double exp_sum(const float* x, float* y, int64_t n, float m) noexcept {
  constexpr int64_t kFlush = 1024;
  const __m256 mv = _mm256_set1_ps(m);
  double total = 0;
  int64_t i = 0;
  while (i + 32 <= n) {
    const int64_t stop = std::min(n, i + kFlush);
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    for (; i + 32 <= stop; i += 32) {
      const __m256 e0 = exp_nonpositive(_mm256_sub_ps(_mm256_loadu_ps(x + i), mv));
      const __m256 e1 = exp_nonpositive(_mm256_sub_ps(_mm256_loadu_ps(x + i + 8), mv));
      const __m256 e2 = exp_nonpositive(_mm256_sub_ps(_mm256_loadu_ps(x + i + 16), mv));
      const __m256 e3 = exp_nonpositive(_mm256_sub_ps(_mm256_loadu_ps(x + i + 24), mv));
      if constexpr (Store) {
        _mm256_storeu_ps(y + i, e0);
        _mm256_storeu_ps(y + i + 8, e1);
        _mm256_storeu_ps(y + i + 16, e2);
        _mm256_storeu_ps(y + i + 24, e3);
      }
      s0 = _mm256_add_ps(s0, e0);
      s1 = _mm256_add_ps(s1, e1);
      s2 = _mm256_add_ps(s2, e2);
      s3 = _mm256_add_ps(s3, e3);
    }
    total += horizontal_sum_wide(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
  }
  // The last n % 32 elements, padded with -inf (whose exponential is 0).
  while (i < n) {
    const int64_t len = std::min<int64_t>(8, n - i);
    alignas(32) float tail[8];
    std::fill(tail, tail + 8, -std::numeric_limits<float>::infinity());
    std::copy(x + i, x + i + len, tail);
    const __m256 e = exp_nonpositive(_mm256_sub_ps(_mm256_load_ps(tail), mv));
    _mm256_store_ps(tail, e);
    if constexpr (Store) std::copy(tail, tail + len, y + i);
    total += horizontal_sum_wide(e);
    i += len;
  }
  return total;
}

// The line is NaN throughout when its maximum is NaN or infinite.
TSR_AVX2_INLINE bool fill_nan_if_degenerate(float m, float* y, int64_t n) noexcept {
  if (std::isfinite(m)) return false;
  std::fill(y, y + n, kNaN);
  return true;
}

}  // namespace

TSR_AVX2 void softmax_line(const float* x, float* y, int64_t n) noexcept {
  if (n <= 0) return;
  const float m = line_max(x, n);
  if (fill_nan_if_degenerate(m, y, n)) return;
  const __m256 inv = _mm256_set1_ps(static_cast<float>(1.0 / exp_sum<true>(x, y, n, m)));
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_loadu_ps(y + i), inv));
  for (; i < n; ++i) y[i] *= _mm256_cvtss_f32(inv);
}

TSR_AVX2 void log_softmax_line(const float* x, float* y, int64_t n) noexcept {
  if (n <= 0) return;
  const float m = line_max(x, n);
  if (fill_nan_if_degenerate(m, y, n)) return;
  const float shift = m + static_cast<float>(std::log(exp_sum<false>(x, nullptr, n, m)));
  const __m256 sv = _mm256_set1_ps(shift);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_sub_ps(_mm256_loadu_ps(x + i), sv));
  for (; i < n; ++i) y[i] = x[i] - shift;
}

TSR_AVX2 double sum(const float* x, int64_t n) noexcept {
  // Converting every element to float64 costs more than reading it (vcvtps2pd
  // is two micro-ops), so blocks of kBlock elements are summed in 4 x 8
  // float32 lanes - 16 additions per lane - and the block sums in float64.
  constexpr int64_t kBlock = 512;
  __m256d wide = _mm256_setzero_pd();
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (int64_t j = i; j < i + kBlock; j += 32) {
      a0 = _mm256_add_ps(a0, _mm256_loadu_ps(x + j));
      a1 = _mm256_add_ps(a1, _mm256_loadu_ps(x + j + 8));
      a2 = _mm256_add_ps(a2, _mm256_loadu_ps(x + j + 16));
      a3 = _mm256_add_ps(a3, _mm256_loadu_ps(x + j + 24));
    }
    const __m256 s = _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3));
    wide = _mm256_add_pd(wide, _mm256_add_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(s)),
                                             _mm256_cvtps_pd(_mm256_extractf128_ps(s, 1))));
  }
  for (; i + 4 <= n; i += 4) wide = _mm256_add_pd(wide, _mm256_cvtps_pd(_mm_loadu_ps(x + i)));
  double total = horizontal_sum(wide);
  for (; i < n; ++i) total += static_cast<double>(x[i]);
  return total;
}

TSR_AVX2 double sum(const double* x, int64_t n) noexcept {
  __m256d a[8];
  for (auto& v : a) v = _mm256_setzero_pd();
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    for (int k = 0; k < 8; ++k) a[k] = _mm256_add_pd(a[k], _mm256_loadu_pd(x + i + 4 * k));
  }
  for (; i + 4 <= n; i += 4) a[0] = _mm256_add_pd(a[0], _mm256_loadu_pd(x + i));
  double total = 0;
  for (; i < n; ++i) total += x[i];
  for (int width = 4; width >= 1; width /= 2) {
    for (int k = 0; k < width; ++k) a[k] = _mm256_add_pd(a[k], a[k + width]);
  }
  return horizontal_sum(a[0]) + total;
}

}  // namespace tessera::cpu::avx2

#endif  // TESSERA_CPU_HAVE_AVX2
