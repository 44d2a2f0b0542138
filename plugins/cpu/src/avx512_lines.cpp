// avx512_lines.cpp - AVX-512 loops for pointwise float32 arithmetic, softmax
// lines, float sums and layer_norm rows.
//
// Each exported function is compiled with TSR_AVX512 (target attribute) and
// so are the always-inline helpers it uses; nothing else in the plugin is, so
// no AVX-512 instruction runs unless a kernel chose this path (isa.hpp).
// Tails are handled with masked loads and stores (a masked-off lane never
// faults), and a streaming store loop first runs masked up to the next
// 64-byte boundary of the output, which _mm512_stream_ps requires.
#include "avx512_lines.hpp"

#include "isa.hpp"

#if TESSERA_CPU_HAVE_AVX512

// GCC 12 reports the deliberately undefined vectors inside its own
// avx512fintrin.h (_mm512_undefined_ps() in casts and reductions) as "(may be)
// used uninitialized" once they are inlined here.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "exp_constants.hpp"

#define TSR_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma")))
#define TSR_AVX512_INLINE \
  __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma"), always_inline)) inline
// For lambdas, which do not inherit their function's target: written after the
// parameter list; the lambda must capture (a captureless one's conversion to a
// function pointer would be compiled for the baseline).
#define TSR_AVX512_LAMBDA \
  __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma"), always_inline))

namespace tessera::cpu::avx512 {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// The lanes [0, len) of a 16-lane vector, len in [0, 16].
TSR_AVX512_INLINE __mmask16 first_lanes(int64_t len) noexcept {
  return static_cast<__mmask16>((1u << static_cast<unsigned>(len)) - 1u);
}

// Elements to process before out + i is 64-byte aligned (0 to 15, at most n).
TSR_AVX512_INLINE int64_t until_aligned(const float* out, int64_t n) noexcept {
  const auto misalignment = reinterpret_cast<uintptr_t>(out) % 64;
  if (misalignment % sizeof(float) != 0) return n;  // cannot align: the caller streams nothing
  return std::min<int64_t>(n, static_cast<int64_t>((64 - misalignment) % 64 / sizeof(float)));
}

// Stores v to out (64-byte aligned when Stream).
template <bool Stream>
TSR_AVX512_INLINE void store(float* out, __m512 v) noexcept {
  if constexpr (Stream) {
    _mm512_stream_ps(out, v);
  } else {
    _mm512_storeu_ps(out, v);
  }
}

// Runs f(i, mask) over [0, n) in vectors of 16: the masked head up to the
// output's alignment (Stream only), full vectors (mask all ones; unrolled by
// 4), the masked tail. f must store its result itself with store<Stream> on
// full vectors and a masked store otherwise; f(i, 0xffff) is a full vector.
template <bool Stream, class F>
TSR_AVX512_INLINE void for_vectors(const float* out, int64_t n, F&& f) noexcept {
  int64_t i = 0;
  if constexpr (Stream) {
    const int64_t head = until_aligned(out, n);
    if (head == n) {  // unaligned element type or a short line: no stream
      for (; i < n; i += 16) f(i, first_lanes(std::min<int64_t>(16, n - i)), false);
      return;
    }
    if (head > 0) f(i, first_lanes(head), false);
    i = head;
  }
  for (; i + 64 <= n; i += 64) {
    f(i, static_cast<__mmask16>(0xffff), true);
    f(i + 16, static_cast<__mmask16>(0xffff), true);
    f(i + 32, static_cast<__mmask16>(0xffff), true);
    f(i + 48, static_cast<__mmask16>(0xffff), true);
  }
  for (; i + 16 <= n; i += 16) f(i, static_cast<__mmask16>(0xffff), true);
  if (i < n) f(i, first_lanes(n - i), false);
  if constexpr (Stream) _mm_sfence();
}

// Writes v's lanes under mask to out + i: a full vector with store<Stream>
// when `full`, else a masked store.
template <bool Stream>
TSR_AVX512_INLINE void put(float* out, int64_t i, __mmask16 mask, bool full, __m512 v) noexcept {
  if (full) {
    store<Stream>(out + i, v);
  } else {
    _mm512_mask_storeu_ps(out + i, mask, v);
  }
}

template <arith Op, bool HasAlpha>
TSR_AVX512_INLINE __m512 apply(__m512 a, __m512 b, __m512 alpha) noexcept {
  if constexpr (HasAlpha) b = _mm512_mul_ps(alpha, b);
  if constexpr (Op == arith::add) return _mm512_add_ps(a, b);
  if constexpr (Op == arith::sub) return _mm512_sub_ps(a, b);
  if constexpr (Op == arith::mul) return _mm512_mul_ps(a, b);
  return _mm512_div_ps(a, b);
}

template <arith Op, bool HasAlpha, bool Stream>
TSR_AVX512_INLINE void binary_loop(const float* x, const float* y, bool y_scalar, float alpha,
                                   float* out, int64_t n) noexcept {
  const __m512 av = _mm512_set1_ps(alpha);
  if (y_scalar) {
    const __m512 yv = _mm512_set1_ps(*y);
    for_vectors<Stream>(out, n, [&](int64_t i, __mmask16 mask, bool full) TSR_AVX512_LAMBDA {
      put<Stream>(out, i, mask, full,
                  apply<Op, HasAlpha>(_mm512_maskz_loadu_ps(mask, x + i), yv, av));
    });
    return;
  }
  for_vectors<Stream>(out, n, [&](int64_t i, __mmask16 mask, bool full) TSR_AVX512_LAMBDA {
    put<Stream>(out, i, mask, full,
                apply<Op, HasAlpha>(_mm512_maskz_loadu_ps(mask, x + i),
                                    _mm512_maskz_loadu_ps(mask, y + i), av));
  });
}

template <arith Op>
TSR_AVX512_INLINE void binary_dispatch(const float* x, const float* y, bool y_scalar, float alpha,
                                       float* out, int64_t n, bool stream) noexcept {
  constexpr bool kAlphaOp = Op == arith::add || Op == arith::sub;
  const bool has_alpha = kAlphaOp && alpha != 1.0f;
  if (has_alpha) {
    if (stream) {
      binary_loop<Op, kAlphaOp, true>(x, y, y_scalar, alpha, out, n);
    } else {
      binary_loop<Op, kAlphaOp, false>(x, y, y_scalar, alpha, out, n);
    }
  } else if (stream) {
    binary_loop<Op, false, true>(x, y, y_scalar, alpha, out, n);
  } else {
    binary_loop<Op, false, false>(x, y, y_scalar, alpha, out, n);
  }
}

// exp(x) for x <= 0 or x = -inf (never NaN), by exp_constants.hpp's
// reduction and polynomial, 2^n applied with vscalefps; x < -87 gives 0.
TSR_AVX512_INLINE __m512 exp_nonpositive(__m512 x) noexcept {
  namespace k = exp_poly;
  const __m512 lo = _mm512_set1_ps(k::kLowest);
  const __m512 xc = _mm512_max_ps(x, lo);
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(xc, _mm512_set1_ps(k::kLog2e)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(k::kLn2Hi), xc);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(k::kLn2Lo), r);
  __m512 p = _mm512_set1_ps(k::kPoly[0]);
  for (int i = 1; i < 7; ++i) p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(k::kPoly[i]));
  const __m512 result = _mm512_scalef_ps(p, n);
  return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, lo, _CMP_NLT_UQ), result);
}

// The sum of the 16 float lanes of v, in float64.
TSR_AVX512_INLINE double horizontal_sum_wide(__m512 v) noexcept {
  const __m512d wide = _mm512_add_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(v)),
                                     _mm512_cvtps_pd(_mm512_extractf32x8_ps(v, 1)));
  return _mm512_reduce_add_pd(wide);
}

// The maximum of x[0..n); NaN when any element is NaN.
TSR_AVX512_INLINE float line_max(const float* x, int64_t n) noexcept {
  const __m512 neg_inf = _mm512_set1_ps(-kInf);
  __m512 a0 = neg_inf, a1 = neg_inf, a2 = neg_inf, a3 = neg_inf;
  __mmask16 nan = 0;
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    const __m512 u0 = _mm512_loadu_ps(x + i), u1 = _mm512_loadu_ps(x + i + 16);
    const __m512 u2 = _mm512_loadu_ps(x + i + 32), u3 = _mm512_loadu_ps(x + i + 48);
    a0 = _mm512_max_ps(a0, u0);
    a1 = _mm512_max_ps(a1, u1);
    a2 = _mm512_max_ps(a2, u2);
    a3 = _mm512_max_ps(a3, u3);
    nan |= _mm512_cmp_ps_mask(u0, u1, _CMP_UNORD_Q) | _mm512_cmp_ps_mask(u2, u3, _CMP_UNORD_Q);
  }
  for (; i < n; i += 16) {
    const __mmask16 mask = first_lanes(std::min<int64_t>(16, n - i));
    const __m512 u = _mm512_mask_loadu_ps(neg_inf, mask, x + i);
    a0 = _mm512_max_ps(a0, u);
    nan |= _mm512_cmp_ps_mask(u, u, _CMP_UNORD_Q);
  }
  if (nan != 0) return kNaN;
  return _mm512_reduce_max_ps(_mm512_max_ps(_mm512_max_ps(a0, a1), _mm512_max_ps(a2, a3)));
}

// sum exp(x[i] - m) over [0, n), float32 lanes flushed into float64 every
// kFlush elements; stores the exponentials to e when Store (e may be x).
template <bool Store>
TSR_AVX512_INLINE double exp_sum(const float* x, float* e, int64_t n, float m) noexcept {
  constexpr int64_t kFlush = 1024;
  const __m512 mv = _mm512_set1_ps(m);
  double total = 0;
  int64_t i = 0;
  while (i + 64 <= n) {
    const int64_t stop = std::min(n, i + kFlush);
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    for (; i + 64 <= stop; i += 64) {
      const __m512 e0 = exp_nonpositive(_mm512_sub_ps(_mm512_loadu_ps(x + i), mv));
      const __m512 e1 = exp_nonpositive(_mm512_sub_ps(_mm512_loadu_ps(x + i + 16), mv));
      const __m512 e2 = exp_nonpositive(_mm512_sub_ps(_mm512_loadu_ps(x + i + 32), mv));
      const __m512 e3 = exp_nonpositive(_mm512_sub_ps(_mm512_loadu_ps(x + i + 48), mv));
      if constexpr (Store) {
        _mm512_storeu_ps(e + i, e0);
        _mm512_storeu_ps(e + i + 16, e1);
        _mm512_storeu_ps(e + i + 32, e2);
        _mm512_storeu_ps(e + i + 48, e3);
      }
      s0 = _mm512_add_ps(s0, e0);
      s1 = _mm512_add_ps(s1, e1);
      s2 = _mm512_add_ps(s2, e2);
      s3 = _mm512_add_ps(s3, e3);
    }
    total += horizontal_sum_wide(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
  }
  // The last n % 64 elements; masked-off lanes read -inf (exponential 0).
  for (; i < n; i += 16) {
    const __mmask16 mask = first_lanes(std::min<int64_t>(16, n - i));
    const __m512 v = exp_nonpositive(
        _mm512_sub_ps(_mm512_mask_loadu_ps(_mm512_set1_ps(-kInf), mask, x + i), mv));
    if constexpr (Store) _mm512_mask_storeu_ps(e + i, mask, v);
    total += horizontal_sum_wide(v);
  }
  return total;
}

// The line is NaN throughout when its maximum is NaN or infinite.
TSR_AVX512_INLINE bool fill_nan_if_degenerate(float m, float* y, int64_t n) noexcept {
  if (std::isfinite(m)) return false;
  std::fill(y, y + n, kNaN);
  return true;
}

// y = e * inv, e and y n floats apart or equal.
template <bool Stream>
TSR_AVX512_INLINE void scale(const float* e, float* y, int64_t n, float inv) noexcept {
  const __m512 iv = _mm512_set1_ps(inv);
  for_vectors<Stream>(y, n, [&](int64_t i, __mmask16 mask, bool full) TSR_AVX512_LAMBDA {
    put<Stream>(y, i, mask, full, _mm512_mul_ps(_mm512_maskz_loadu_ps(mask, e + i), iv));
  });
}

template <bool Stream>
TSR_AVX512_INLINE void shift(const float* x, float* y, int64_t n, float by) noexcept {
  const __m512 sv = _mm512_set1_ps(by);
  for_vectors<Stream>(y, n, [&](int64_t i, __mmask16 mask, bool full) TSR_AVX512_LAMBDA {
    put<Stream>(y, i, mask, full, _mm512_sub_ps(_mm512_maskz_loadu_ps(mask, x + i), sv));
  });
}

// Lines up to this many elements keep their exponentials in a stack buffer
// when streaming, so the output is written once, by streaming stores; longer
// ones write them to y and scale in place (cached stores).
constexpr int64_t kStreamedLineMax = 8192;

// 16 float32 lanes summed as the baseline layer_norm body does: lane l takes
// elements l, l + 16, ...; the n % 16 last ones go to lane 0 in order, then
// the lanes are added pairwise (8, 4, 2, 1), so both bodies agree exactly.
template <class Term>
TSR_AVX512_INLINE float lane_sum(const float* x, int64_t n, Term&& term) noexcept {
  __m512 acc = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) acc = _mm512_add_ps(acc, term(_mm512_loadu_ps(x + i)));
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, acc);
  for (; i < n; ++i) {
    const __m512 one = term(_mm512_set1_ps(x[i]));
    lanes[0] += _mm512_cvtss_f32(one);
  }
  for (int w = 8; w >= 1; w /= 2)
    for (int l = 0; l < w; ++l) lanes[l] += lanes[l + w];
  return lanes[0];
}

template <bool Stream, bool W, bool B>
TSR_AVX512_INLINE void normalize(const float* x, float* y, int64_t n, const float* w,
                                 const float* b, float mu, float rs) noexcept {
  const __m512 mv = _mm512_set1_ps(mu), rv = _mm512_set1_ps(rs);
  for_vectors<Stream>(y, n, [&](int64_t i, __mmask16 mask, bool full) TSR_AVX512_LAMBDA {
    __m512 v = _mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(mask, x + i), mv), rv);
    if constexpr (W) v = _mm512_mul_ps(v, _mm512_maskz_loadu_ps(mask, w + i));
    if constexpr (B) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, b + i));
    put<Stream>(y, i, mask, full, v);
  });
}

template <bool Stream>
TSR_AVX512_INLINE void normalize_any(const float* x, float* y, int64_t n, const float* w,
                                     const float* b, float mu, float rs) noexcept {
  if (w && b) {
    normalize<Stream, true, true>(x, y, n, w, b, mu, rs);
  } else if (w) {
    normalize<Stream, true, false>(x, y, n, w, b, mu, rs);
  } else if (b) {
    normalize<Stream, false, true>(x, y, n, w, b, mu, rs);
  } else {
    normalize<Stream, false, false>(x, y, n, w, b, mu, rs);
  }
}

}  // namespace

TSR_AVX512 void binary_line(arith op, const float* x, const float* y, bool y_scalar, float alpha,
                            float* out, int64_t n, bool stream) noexcept {
  switch (op) {
    case arith::add:
      return binary_dispatch<arith::add>(x, y, y_scalar, alpha, out, n, stream);
    case arith::sub:
      return binary_dispatch<arith::sub>(x, y, y_scalar, alpha, out, n, stream);
    case arith::mul:
      return binary_dispatch<arith::mul>(x, y, y_scalar, alpha, out, n, stream);
    case arith::div:
      return binary_dispatch<arith::div>(x, y, y_scalar, alpha, out, n, stream);
  }
}

TSR_AVX512 void softmax_line(const float* x, float* y, int64_t n, bool stream) noexcept {
  if (n <= 0) return;
  const float m = line_max(x, n);
  if (fill_nan_if_degenerate(m, y, n)) return;
  if (stream && n <= kStreamedLineMax) {
    alignas(64) float e[kStreamedLineMax];
    const auto inv = static_cast<float>(1.0 / exp_sum<true>(x, e, n, m));
    scale<true>(e, y, n, inv);
    return;
  }
  const auto inv = static_cast<float>(1.0 / exp_sum<true>(x, y, n, m));
  scale<false>(y, y, n, inv);
}

TSR_AVX512 void log_softmax_line(const float* x, float* y, int64_t n, bool stream) noexcept {
  if (n <= 0) return;
  const float m = line_max(x, n);
  if (fill_nan_if_degenerate(m, y, n)) return;
  const float by = m + static_cast<float>(std::log(exp_sum<false>(x, nullptr, n, m)));
  if (stream) {
    shift<true>(x, y, n, by);
  } else {
    shift<false>(x, y, n, by);
  }
}

TSR_AVX512 double sum(const float* x, int64_t n) noexcept {
  // As avx2::sum: converting every element to float64 costs more than reading
  // it, so blocks of kBlock elements are summed in 4 x 16 float32 lanes and
  // the block sums in float64.
  constexpr int64_t kBlock = 1024;
  __m512d wide = _mm512_setzero_pd();
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (int64_t j = i; j < i + kBlock; j += 64) {
      a0 = _mm512_add_ps(a0, _mm512_loadu_ps(x + j));
      a1 = _mm512_add_ps(a1, _mm512_loadu_ps(x + j + 16));
      a2 = _mm512_add_ps(a2, _mm512_loadu_ps(x + j + 32));
      a3 = _mm512_add_ps(a3, _mm512_loadu_ps(x + j + 48));
    }
    const __m512 s = _mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3));
    wide = _mm512_add_pd(wide, _mm512_add_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(s)),
                                             _mm512_cvtps_pd(_mm512_extractf32x8_ps(s, 1))));
  }
  for (; i < n; i += 8) {
    const auto mask = static_cast<__mmask8>((1u << std::min<int64_t>(8, n - i)) - 1u);
    wide = _mm512_add_pd(wide, _mm512_cvtps_pd(_mm256_maskz_loadu_ps(mask, x + i)));
  }
  return _mm512_reduce_add_pd(wide);
}

TSR_AVX512 double sum(const double* x, int64_t n) noexcept {
  __m512d a[8];
  for (auto& v : a) v = _mm512_setzero_pd();
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    for (int k = 0; k < 8; ++k) a[k] = _mm512_add_pd(a[k], _mm512_loadu_pd(x + i + 8 * k));
  }
  for (; i < n; i += 8) {
    const auto mask = static_cast<__mmask8>((1u << std::min<int64_t>(8, n - i)) - 1u);
    a[0] = _mm512_add_pd(a[0], _mm512_maskz_loadu_pd(mask, x + i));
  }
  for (int width = 4; width >= 1; width /= 2) {
    for (int k = 0; k < width; ++k) a[k] = _mm512_add_pd(a[k], a[k + width]);
  }
  return _mm512_reduce_add_pd(a[0]);
}

TSR_AVX512 void layer_norm_row(const float* x, float* y, int64_t n, const float* w, const float* b,
                               float eps, float* out_mean, float* out_rstd, bool stream) noexcept {
  const float mu =
      lane_sum(x, n, [&](__m512 v) TSR_AVX512_LAMBDA { return v; }) / static_cast<float>(n);
  const __m512 mv = _mm512_set1_ps(mu);
  const float var = lane_sum(x, n,
                             [&](__m512 v) TSR_AVX512_LAMBDA {
                               const __m512 d = _mm512_sub_ps(v, mv);
                               return _mm512_mul_ps(d, d);
                             }) /
                    static_cast<float>(n);
  const float rs = 1.0f / std::sqrt(var + eps);
  *out_mean = mu;
  *out_rstd = rs;
  if (stream) {
    normalize_any<true>(x, y, n, w, b, mu, rs);
  } else {
    normalize_any<false>(x, y, n, w, b, mu, rs);
  }
}

}  // namespace tessera::cpu::avx512

#endif  // TESSERA_CPU_HAVE_AVX512
