// softmax_backward_lines.cpp - the AVX-512 and AVX2+FMA line bodies of the
// softmax backward kernels (contract in softmax_backward_lines.hpp).
//
// Each exported function is compiled for its extension with a target
// attribute, and so are the always-inline helpers it uses; nothing else in
// the plugin is, so none of these instructions runs unless a kernel chose the
// body at run time (isa.hpp). AVX-512 tails use masked loads and stores; AVX2
// tails run scalar code compiled for AVX2 (the same formulas).
#include "softmax_backward_lines.hpp"

#include "../isa.hpp"

#if TESSERA_CPU_HAVE_AVX512

// GCC 12 reports the deliberately undefined vectors inside its own
// avx512fintrin.h as "(may be) used uninitialized" once they are inlined here.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <limits>

#define TSR_SMB_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma")))
#define TSR_SMB_AVX512_INLINE \
  __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma"), always_inline)) inline
#define TSR_SMB_AVX2 __attribute__((target("avx2,fma")))
#define TSR_SMB_AVX2_INLINE __attribute__((target("avx2,fma"), always_inline)) inline
// For lambdas (written after the parameter list; they must capture).
#define TSR_SMB_AVX512_LAMBDA \
  __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma"), always_inline))
#define TSR_SMB_AVX2_LAMBDA __attribute__((target("avx2,fma"), always_inline))

namespace tessera::cpu {
namespace {

constexpr int64_t kFlush = 4096;  // float32 lane sums are flushed into float64 this often
constexpr float kLo = -87.0f;     // exp below this flushes to 0
constexpr float kHi = 88.3f;      // exp above this is inf
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2Hi = 0.693359375f;
constexpr float kLn2Lo = -2.12194440e-4f;

// exp(x) for any x, 16 lanes: x > 88.3 gives inf, x < -87 gives 0, NaN stays.
TSR_SMB_AVX512_INLINE __m512 exp16(__m512 x) noexcept {
  const __m512 xc = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(kLo)), _mm512_set1_ps(kHi));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(xc, _mm512_set1_ps(kLog2e)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Hi), xc);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Lo), r);
  __m512 p = _mm512_fmadd_ps(r, _mm512_set1_ps(1.0f / 720.0f), _mm512_set1_ps(1.0f / 120.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  const __m512i bits =
      _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
  __m512 result = _mm512_mul_ps(p, _mm512_castsi512_ps(bits));
  result = _mm512_mask_mov_ps(result, _mm512_cmp_ps_mask(x, _mm512_set1_ps(kLo), _CMP_LT_OQ),
                              _mm512_setzero_ps());
  result = _mm512_mask_mov_ps(result, _mm512_cmp_ps_mask(x, _mm512_set1_ps(kHi), _CMP_GT_OQ),
                              _mm512_set1_ps(std::numeric_limits<float>::infinity()));
  return _mm512_mask_mov_ps(result, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x);
}

TSR_SMB_AVX512_INLINE __mmask16 lanes16(int64_t len) noexcept {
  return static_cast<__mmask16>((1u << static_cast<unsigned>(len)) - 1u);
}

// sum over [0, n) of a[i] * b[i] (b null: of a[i]).
template <bool Product>
TSR_SMB_AVX512_INLINE double sum16(const float* a, const float* b, int64_t n) noexcept {
  double total = 0;
  for (int64_t block = 0; block < n; block += kFlush) {
    const int64_t end = std::min(n, block + kFlush);
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    int64_t i = block;
    auto term = [&](int64_t at, __mmask16 m) TSR_SMB_AVX512_LAMBDA {
      const __m512 va = _mm512_maskz_loadu_ps(m, a + at);
      return Product ? _mm512_mul_ps(va, _mm512_maskz_loadu_ps(m, b + at)) : va;
    };
    const __mmask16 all = static_cast<__mmask16>(0xffff);
    for (; i + 64 <= end; i += 64) {
      s0 = _mm512_add_ps(s0, term(i, all));
      s1 = _mm512_add_ps(s1, term(i + 16, all));
      s2 = _mm512_add_ps(s2, term(i + 32, all));
      s3 = _mm512_add_ps(s3, term(i + 48, all));
    }
    for (; i < end; i += 16)
      s0 = _mm512_add_ps(s0, term(i, lanes16(std::min<int64_t>(16, end - i))));
    total += static_cast<double>(
        _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3))));
  }
  return total;
}

// exp(x) for any x, 8 lanes, as exp16.
TSR_SMB_AVX2_INLINE __m256 exp8(__m256 x) noexcept {
  const __m256 xc = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(kLo)), _mm256_set1_ps(kHi));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(xc, _mm256_set1_ps(kLog2e)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Hi), xc);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Lo), r);
  __m256 p = _mm256_fmadd_ps(r, _mm256_set1_ps(1.0f / 720.0f), _mm256_set1_ps(1.0f / 120.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  const __m256i bits =
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  __m256 result = _mm256_mul_ps(p, _mm256_castsi256_ps(bits));
  result = _mm256_andnot_ps(_mm256_cmp_ps(x, _mm256_set1_ps(kLo), _CMP_LT_OQ), result);
  result = _mm256_blendv_ps(result, _mm256_set1_ps(std::numeric_limits<float>::infinity()),
                            _mm256_cmp_ps(x, _mm256_set1_ps(kHi), _CMP_GT_OQ));
  return _mm256_blendv_ps(result, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

TSR_SMB_AVX2_INLINE float exp1(float x) noexcept {
  return _mm256_cvtss_f32(exp8(_mm256_set1_ps(x)));
}

TSR_SMB_AVX2_INLINE float hsum8(__m256 v) noexcept {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
  return _mm_cvtss_f32(s);
}

template <bool Product>
TSR_SMB_AVX2_INLINE double sum8(const float* a, const float* b, int64_t n) noexcept {
  double total = 0;
  for (int64_t block = 0; block < n; block += kFlush) {
    const int64_t end = std::min(n, block + kFlush);
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    int64_t i = block;
    auto term = [&](int64_t at) TSR_SMB_AVX2_LAMBDA {
      const __m256 va = _mm256_loadu_ps(a + at);
      return Product ? _mm256_mul_ps(va, _mm256_loadu_ps(b + at)) : va;
    };
    for (; i + 32 <= end; i += 32) {
      s0 = _mm256_add_ps(s0, term(i));
      s1 = _mm256_add_ps(s1, term(i + 8));
      s2 = _mm256_add_ps(s2, term(i + 16));
      s3 = _mm256_add_ps(s3, term(i + 24));
    }
    for (; i + 8 <= end; i += 8) s0 = _mm256_add_ps(s0, term(i));
    float tail = 0;
    for (; i < end; ++i) tail += Product ? a[i] * b[i] : a[i];
    total += static_cast<double>(
        hsum8(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3))) + tail);
  }
  return total;
}

}  // namespace

namespace avx512 {

TSR_SMB_AVX512 void softmax_backward_line(const float* g, const float* y, float* out,
                                          int64_t n) noexcept {
  const __m512 s = _mm512_set1_ps(static_cast<float>(sum16<true>(g, y, n)));
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = lanes16(std::min<int64_t>(16, n - i));
    const __m512 vg = _mm512_maskz_loadu_ps(m, g + i);
    const __m512 vy = _mm512_maskz_loadu_ps(m, y + i);
    _mm512_mask_storeu_ps(out + i, m, _mm512_mul_ps(vy, _mm512_sub_ps(vg, s)));
  }
}

TSR_SMB_AVX512 void log_softmax_backward_line(const float* g, const float* y, float* out,
                                              int64_t n) noexcept {
  const __m512 s = _mm512_set1_ps(static_cast<float>(sum16<false>(g, nullptr, n)));
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = lanes16(std::min<int64_t>(16, n - i));
    const __m512 vg = _mm512_maskz_loadu_ps(m, g + i);
    const __m512 vy = _mm512_maskz_loadu_ps(m, y + i);
    _mm512_mask_storeu_ps(out + i, m, _mm512_fnmadd_ps(exp16(vy), s, vg));
  }
}

TSR_SMB_AVX512 void softmax_affine_line(const float* x, float* out, int64_t n, float a,
                                        const float* w, float b) noexcept {
  if (n == 0) return;
  __m512 vm = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = lanes16(std::min<int64_t>(16, n - i));
    vm = _mm512_mask_max_ps(vm, m, vm, _mm512_maskz_loadu_ps(m, x + i));
  }
  float mx = _mm512_reduce_max_ps(vm);
  if (std::isinf(mx)) mx = 0.0f;  // as the forward: an infinite max poisons the sum instead
  const __m512 shift = _mm512_set1_ps(mx);
  __m512 s0 = _mm512_setzero_ps();
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = lanes16(std::min<int64_t>(16, n - i));
    const __m512 e = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + i), shift));
    s0 = _mm512_add_ps(s0, _mm512_maskz_mov_ps(m, e));
    _mm512_mask_storeu_ps(out + i, m, e);
  }
  const __m512 scale = _mm512_set1_ps(a / _mm512_reduce_add_ps(s0));
  const __m512 vb = _mm512_set1_ps(b);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = lanes16(std::min<int64_t>(16, n - i));
    const __m512 e = _mm512_maskz_loadu_ps(m, out + i);
    const __m512 wv = w ? _mm512_maskz_loadu_ps(m, w + i) : _mm512_set1_ps(1.0f);
    _mm512_mask_storeu_ps(out + i, m, _mm512_fnmadd_ps(vb, wv, _mm512_mul_ps(e, scale)));
  }
}

TSR_SMB_AVX512 float logsumexp_line(const float* x, int64_t n) noexcept {
  __m512 vm = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = lanes16(std::min<int64_t>(16, n - i));
    vm = _mm512_mask_max_ps(vm, m, vm, _mm512_maskz_loadu_ps(m, x + i));
  }
  float mx = _mm512_reduce_max_ps(vm);
  if (std::isinf(mx)) mx = 0.0f;
  const __m512 shift = _mm512_set1_ps(mx);
  double total = 0;
  for (int64_t block = 0; block < n; block += kFlush) {
    const int64_t end = std::min(n, block + kFlush);
    __m512 s0 = _mm512_setzero_ps(), s1 = s0;
    int64_t i = block;
    for (; i + 32 <= end; i += 32) {
      s0 = _mm512_add_ps(s0, exp16(_mm512_sub_ps(_mm512_loadu_ps(x + i), shift)));
      s1 = _mm512_add_ps(s1, exp16(_mm512_sub_ps(_mm512_loadu_ps(x + i + 16), shift)));
    }
    for (; i < end; i += 16) {
      const __mmask16 m = lanes16(std::min<int64_t>(16, end - i));
      const __m512 e = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + i), shift));
      s0 = _mm512_add_ps(s0, _mm512_maskz_mov_ps(m, e));
    }
    total += static_cast<double>(_mm512_reduce_add_ps(_mm512_add_ps(s0, s1)));
  }
  return mx + static_cast<float>(std::log(total));
}

}  // namespace avx512

namespace avx2 {

TSR_SMB_AVX2 void softmax_backward_line(const float* g, const float* y, float* out,
                                        int64_t n) noexcept {
  const float sc = static_cast<float>(sum8<true>(g, y, n));
  const __m256 s = _mm256_set1_ps(sc);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 vg = _mm256_loadu_ps(g + i);
    _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_loadu_ps(y + i), _mm256_sub_ps(vg, s)));
  }
  for (; i < n; ++i) out[i] = y[i] * (g[i] - sc);
}

TSR_SMB_AVX2 void log_softmax_backward_line(const float* g, const float* y, float* out,
                                            int64_t n) noexcept {
  const float sc = static_cast<float>(sum8<false>(g, nullptr, n));
  const __m256 s = _mm256_set1_ps(sc);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 vg = _mm256_loadu_ps(g + i);
    _mm256_storeu_ps(out + i, _mm256_fnmadd_ps(exp8(_mm256_loadu_ps(y + i)), s, vg));
  }
  for (; i < n; ++i) out[i] = g[i] - exp1(y[i]) * sc;
}

TSR_SMB_AVX2 void softmax_affine_line(const float* x, float* out, int64_t n, float a,
                                      const float* w, float b) noexcept {
  if (n == 0) return;
  __m256 vm = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) vm = _mm256_max_ps(vm, _mm256_loadu_ps(x + i));
  __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(vm), _mm256_extractf128_ps(vm, 1));
  m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
  m4 = _mm_max_ss(m4, _mm_shuffle_ps(m4, m4, 1));
  float mx = _mm_cvtss_f32(m4);
  for (; i < n; ++i) mx = x[i] > mx ? x[i] : mx;
  if (std::isinf(mx)) mx = 0.0f;  // as the forward: an infinite max poisons the sum instead
  const __m256 shift = _mm256_set1_ps(mx);
  __m256 s0 = _mm256_setzero_ps();
  i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), shift));
    s0 = _mm256_add_ps(s0, e);
    _mm256_storeu_ps(out + i, e);
  }
  float tail = 0.0f;
  for (; i < n; ++i) {
    out[i] = exp1(x[i] - mx);
    tail += out[i];
  }
  const float sc = a / (hsum8(s0) + tail);
  const __m256 scale = _mm256_set1_ps(sc);
  const __m256 vb = _mm256_set1_ps(b);
  i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 wv = w ? _mm256_loadu_ps(w + i) : _mm256_set1_ps(1.0f);
    _mm256_storeu_ps(out + i,
                     _mm256_fnmadd_ps(vb, wv, _mm256_mul_ps(_mm256_loadu_ps(out + i), scale)));
  }
  for (; i < n; ++i) out[i] = out[i] * sc - b * (w ? w[i] : 1.0f);
}

TSR_SMB_AVX2 float logsumexp_line(const float* x, int64_t n) noexcept {
  __m256 vm = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) vm = _mm256_max_ps(vm, _mm256_loadu_ps(x + i));
  __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(vm), _mm256_extractf128_ps(vm, 1));
  m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
  m4 = _mm_max_ss(m4, _mm_shuffle_ps(m4, m4, 1));
  float mx = _mm_cvtss_f32(m4);
  for (; i < n; ++i) mx = x[i] > mx ? x[i] : mx;
  if (std::isinf(mx)) mx = 0.0f;
  const __m256 shift = _mm256_set1_ps(mx);
  double total = 0;
  for (int64_t block = 0; block < n; block += kFlush) {
    const int64_t end = std::min(n, block + kFlush);
    __m256 s0 = _mm256_setzero_ps();
    int64_t k = block;
    for (; k + 8 <= end; k += 8)
      s0 = _mm256_add_ps(s0, exp8(_mm256_sub_ps(_mm256_loadu_ps(x + k), shift)));
    float tail = 0.0f;
    for (; k < end; ++k) tail += exp1(x[k] - mx);
    total += static_cast<double>(hsum8(s0) + tail);
  }
  return mx + static_cast<float>(std::log(total));
}

}  // namespace avx2

}  // namespace tessera::cpu

#endif  // TESSERA_CPU_HAVE_AVX512
