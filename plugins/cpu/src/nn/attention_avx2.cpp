// attention_avx2.cpp - the AVX2+FMA body of scaled_dot_product_attention
// (float32), chosen per call when use_avx2() holds (isa.hpp).
//
// Same algorithm as the baseline body in attention.cpp (an online softmax over
// key blocks, no L x S matrix), but each (task, key block) step is two small
// register-blocked matrix products instead of one dot product per score:
//
//   scores (rows x cols) = scale * Q_block (rows x E) . K_block^T (E x cols)
//   acc (rows x Ev)     += P (rows x cols) . V_block (cols x Ev)
//
// K_block is transposed (8 x 8 blocks in registers) into a scratch of
// kKeyBlock columns, padded with zeros to a multiple of 8, so the score tile
// is 6 rows x 16 columns of FMAs, one broadcast of q and two loads of K^T per
// E step (a block of fewer than 4 query rows, a decoding step, takes dot
// products against the key rows instead: the transpose would cost as much); the value tile is 6
// rows x 16 value columns, one broadcast of p and two loads of V per key. Between them, per row:
// mask and causal limit, block max (NaN detected), the correction exp(m_old - m_new) of acc and the
// running sum, and p = exp(s - m) in 8 lanes (avx2_math.hpp). When Ev is not a multiple of 8,
// V_block is first copied into a zero-padded scratch so the tiles never read past a row.
//
// Results match the baseline body's rules (attention.cpp): a row attending to
// nothing is NaN, S = 0 gives zeros, a NaN score or a +inf maximum makes its
// row NaN; values agree within float32 rounding (the order of the sums
// differs).
#include "attention.hpp"

#include "../isa.hpp"

#if TESSERA_CPU_HAVE_AVX2

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "../avx2_math.hpp"

namespace tessera::cpu {
namespace {

constexpr int64_t kKeyBlock = 128;  // a multiple of 16
constexpr int kTileRows = 6;
// Query blocks with fewer rows compute their scores as dot products against
// the key rows (score_row_direct) rather than transposing the key block.
constexpr int64_t kDirectRowsBelow = 4;
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

inline int64_t round_up8(int64_t n) noexcept { return (n + 7) / 8 * 8; }

struct scratch {
  std::vector<float> kt;      // E x kKeyBlock
  std::vector<float> scores;  // kSdpaQueryBlock x kKeyBlock; p after the softmax step
  std::vector<float> vpad;    // kKeyBlock x evp, only when Ev % 8 != 0
  std::vector<float> acc;     // kSdpaQueryBlock x evp
  float row_max[kSdpaQueryBlock];
  float row_sum[kSdpaQueryBlock];
  bool row_nan[kSdpaQueryBlock];
  int64_t evp;
  explicit scratch(const sdpa_params& p)
      : kt(static_cast<size_t>(std::max<int64_t>(p.e, 1) * kKeyBlock)),
        scores(static_cast<size_t>(kSdpaQueryBlock * kKeyBlock)),
        vpad(p.ev % 8 != 0 ? static_cast<size_t>(kKeyBlock * round_up8(p.ev)) : 0),
        acc(static_cast<size_t>(kSdpaQueryBlock * std::max<int64_t>(round_up8(p.ev), 8))),
        evp(round_up8(p.ev)) {}
};

// s[r][c] = scale * sum_e q[r][e] kt[e][c] for R rows and columns [0, cols8),
// cols8 a multiple of 8; q rows have stride e_dim, kt and s rows kKeyBlock.
template <int R>
TSR_AVX2_INLINE void score_tile(const float* q, int64_t e_dim, const float* kt, float* s,
                                int64_t cols8, float scale) noexcept {
  const __m256 sv = _mm256_set1_ps(scale);
  int64_t c = 0;
  for (; c + 16 <= cols8; c += 16) {
    __m256 a0[R], a1[R];
    for (int r = 0; r < R; ++r) a0[r] = a1[r] = _mm256_setzero_ps();
    for (int64_t e = 0; e < e_dim; ++e) {
      const __m256 k0 = _mm256_loadu_ps(kt + e * kKeyBlock + c);
      const __m256 k1 = _mm256_loadu_ps(kt + e * kKeyBlock + c + 8);
      for (int r = 0; r < R; ++r) {
        const __m256 qv = _mm256_broadcast_ss(q + r * e_dim + e);
        a0[r] = _mm256_fmadd_ps(qv, k0, a0[r]);
        a1[r] = _mm256_fmadd_ps(qv, k1, a1[r]);
      }
    }
    for (int r = 0; r < R; ++r) {
      _mm256_storeu_ps(s + r * kKeyBlock + c, _mm256_mul_ps(a0[r], sv));
      _mm256_storeu_ps(s + r * kKeyBlock + c + 8, _mm256_mul_ps(a1[r], sv));
    }
  }
  if (c < cols8) {
    __m256 a0[R];
    for (int r = 0; r < R; ++r) a0[r] = _mm256_setzero_ps();
    for (int64_t e = 0; e < e_dim; ++e) {
      const __m256 k0 = _mm256_loadu_ps(kt + e * kKeyBlock + c);
      for (int r = 0; r < R; ++r)
        a0[r] = _mm256_fmadd_ps(_mm256_broadcast_ss(q + r * e_dim + e), k0, a0[r]);
    }
    for (int r = 0; r < R; ++r) _mm256_storeu_ps(s + r * kKeyBlock + c, _mm256_mul_ps(a0[r], sv));
  }
}

// acc[r][x] += sum_{c < cols} p[r][c] v[c][x] for R rows and x in [0, evp),
// evp a multiple of 8; p rows have stride kKeyBlock, v rows ldv (>= evp), acc
// rows evp.
template <int R>
TSR_AVX2_INLINE void value_tile(const float* p, int64_t cols, const float* v, int64_t ldv,
                                float* acc, int64_t evp) noexcept {
  int64_t x = 0;
  for (; x + 16 <= evp; x += 16) {
    __m256 a0[R], a1[R];
    for (int r = 0; r < R; ++r) {
      a0[r] = _mm256_loadu_ps(acc + r * evp + x);
      a1[r] = _mm256_loadu_ps(acc + r * evp + x + 8);
    }
    for (int64_t c = 0; c < cols; ++c) {
      const __m256 v0 = _mm256_loadu_ps(v + c * ldv + x);
      const __m256 v1 = _mm256_loadu_ps(v + c * ldv + x + 8);
      for (int r = 0; r < R; ++r) {
        const __m256 pv = _mm256_broadcast_ss(p + r * kKeyBlock + c);
        a0[r] = _mm256_fmadd_ps(pv, v0, a0[r]);
        a1[r] = _mm256_fmadd_ps(pv, v1, a1[r]);
      }
    }
    for (int r = 0; r < R; ++r) {
      _mm256_storeu_ps(acc + r * evp + x, a0[r]);
      _mm256_storeu_ps(acc + r * evp + x + 8, a1[r]);
    }
  }
  if (x < evp) {
    __m256 a0[R];
    for (int r = 0; r < R; ++r) a0[r] = _mm256_loadu_ps(acc + r * evp + x);
    for (int64_t c = 0; c < cols; ++c) {
      const __m256 v0 = _mm256_loadu_ps(v + c * ldv + x);
      for (int r = 0; r < R; ++r)
        a0[r] = _mm256_fmadd_ps(_mm256_broadcast_ss(p + r * kKeyBlock + c), v0, a0[r]);
    }
    for (int r = 0; r < R; ++r) _mm256_storeu_ps(acc + r * evp + x, a0[r]);
  }
}

// s[c] = scale * dot(q, k_c) for c in [0, cols), key rows of e_dim contiguous
// floats: four keys at a time, each an 8-lane accumulator over E reduced with
// horizontal adds. For blocks of few query rows, where transposing the key
// block would cost as much as the products.
TSR_AVX2_INLINE void score_row_direct(const float* q, const float* k, int64_t e_dim, float* s,
                                      int64_t cols, float scale) noexcept {
  const int64_t e8 = e_dim / 8 * 8;
  int64_t c = 0;
  for (; c + 4 <= cols; c += 4) {
    const float* k0 = k + c * e_dim;
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (int64_t e = 0; e < e8; e += 8) {
      const __m256 qv = _mm256_loadu_ps(q + e);
      a0 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k0 + e), a0);
      a1 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k0 + e_dim + e), a1);
      a2 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k0 + 2 * e_dim + e), a2);
      a3 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k0 + 3 * e_dim + e), a3);
    }
    // hadd works within 128-bit halves: h = [sums of a0..a3 low, a0..a3 high].
    const __m256 h = _mm256_hadd_ps(_mm256_hadd_ps(a0, a1), _mm256_hadd_ps(a2, a3));
    alignas(16) float four[4];
    _mm_store_ps(four, _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1)));
    for (int j = 0; j < 4; ++j) {
      float t = four[j];
      for (int64_t e = e8; e < e_dim; ++e) t += q[e] * k0[j * e_dim + e];
      s[c + j] = t * scale;
    }
  }
  for (; c < cols; ++c) {
    float t = 0.0f;
    for (int64_t e = 0; e < e_dim; ++e) t += q[e] * k[c * e_dim + e];
    s[c] = t * scale;
  }
}

// kt[e][c] = k[c][e] for c in [0, cols), e in [0, e_dim), zero for c in
// [cols, cols8): 8 x 8 blocks through registers, the edges one by one.
TSR_AVX2_INLINE void transpose_keys(const float* k, int64_t e_dim, int64_t cols, int64_t cols8,
                                    float* kt) noexcept {
  const int64_t c8 = cols / 8 * 8, e8 = e_dim / 8 * 8;
  for (int64_t c = 0; c < c8; c += 8) {
    for (int64_t e = 0; e < e8; e += 8) {
      __m256 r[8];
      for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(k + (c + i) * e_dim + e);
      const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
      const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
      const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
      const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
      const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
      const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
      const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
      const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
      float* out = kt + e * kKeyBlock + c;
      _mm256_storeu_ps(out + 0 * kKeyBlock, _mm256_permute2f128_ps(u0, u4, 0x20));
      _mm256_storeu_ps(out + 1 * kKeyBlock, _mm256_permute2f128_ps(u1, u5, 0x20));
      _mm256_storeu_ps(out + 2 * kKeyBlock, _mm256_permute2f128_ps(u2, u6, 0x20));
      _mm256_storeu_ps(out + 3 * kKeyBlock, _mm256_permute2f128_ps(u3, u7, 0x20));
      _mm256_storeu_ps(out + 4 * kKeyBlock, _mm256_permute2f128_ps(u0, u4, 0x31));
      _mm256_storeu_ps(out + 5 * kKeyBlock, _mm256_permute2f128_ps(u1, u5, 0x31));
      _mm256_storeu_ps(out + 6 * kKeyBlock, _mm256_permute2f128_ps(u2, u6, 0x31));
      _mm256_storeu_ps(out + 7 * kKeyBlock, _mm256_permute2f128_ps(u3, u7, 0x31));
    }
    for (int64_t e = e8; e < e_dim; ++e)
      for (int64_t i = 0; i < 8; ++i) kt[e * kKeyBlock + c + i] = k[(c + i) * e_dim + e];
  }
  for (int64_t e = 0; e < e_dim; ++e) {
    float* ktr = kt + e * kKeyBlock;
    for (int64_t c = c8; c < cols; ++c) ktr[c] = k[c * e_dim + e];
    for (int64_t c = cols; c < cols8; ++c) ktr[c] = 0.0f;
  }
}

// Runs Tile<R> over `rows` rows in groups of kTileRows (the last group smaller).
template <template <int> class Tile, class... Args>
TSR_AVX2_INLINE void over_row_groups(int64_t rows, Args... args) noexcept {
  for (int64_t r0 = 0; r0 < rows; r0 += kTileRows) {
    switch (std::min<int64_t>(kTileRows, rows - r0)) {
      case 6:
        Tile<6>::run(r0, args...);
        break;
      case 5:
        Tile<5>::run(r0, args...);
        break;
      case 4:
        Tile<4>::run(r0, args...);
        break;
      case 3:
        Tile<3>::run(r0, args...);
        break;
      case 2:
        Tile<2>::run(r0, args...);
        break;
      default:
        Tile<1>::run(r0, args...);
        break;
    }
  }
}

template <int R>
struct scores_group {
  TSR_AVX2_INLINE static void run(int64_t r0, const float* q, int64_t e_dim, const float* kt,
                                  float* s, int64_t cols8, float scale) noexcept {
    score_tile<R>(q + r0 * e_dim, e_dim, kt, s + r0 * kKeyBlock, cols8, scale);
  }
};

template <int R>
struct values_group {
  TSR_AVX2_INLINE static void run(int64_t r0, const float* p, int64_t cols, const float* v,
                                  int64_t ldv, float* acc, int64_t evp) noexcept {
    value_tile<R>(p + r0 * kKeyBlock, cols, v, ldv, acc + r0 * evp, evp);
  }
};

// Applies the mask to scores[0, cols) of query row i: bool false -> -inf,
// float added.
TSR_AVX2_INLINE void apply_mask(const sdpa_params& p, int64_t b, int64_t h, int64_t i, int64_t j0,
                                int64_t cols, float* s) noexcept {
  const int64_t base = b * p.mask_strides[0] + h * p.mask_strides[1] + i * p.mask_strides[2] +
                       j0 * p.mask_strides[3];
  const int64_t step = p.mask_strides[3];
  if (p.mask_is_bool) {
    const bool* m = reinterpret_cast<const bool*>(p.mask) + base;
    int64_t c = 0;
    if (step == 1) {  // 8 bools widened to lanes; false lanes become -inf
      const __m256 neg_inf = _mm256_set1_ps(kNegInf);
      for (; c + 8 <= cols; c += 8) {
        const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(m + c));
        const __m256i lanes = _mm256_cvtepu8_epi32(bytes);
        const __m256 off = _mm256_castsi256_ps(_mm256_cmpeq_epi32(lanes, _mm256_setzero_si256()));
        _mm256_storeu_ps(s + c, _mm256_blendv_ps(_mm256_loadu_ps(s + c), neg_inf, off));
      }
    }
    for (; c < cols; ++c)
      if (!m[c * step]) s[c] = kNegInf;
  } else {
    const float* m = reinterpret_cast<const float*>(p.mask) + base;
    if (step == 1) {
      int64_t c = 0;
      for (; c + 8 <= cols; c += 8)
        _mm256_storeu_ps(s + c, _mm256_add_ps(_mm256_loadu_ps(s + c), _mm256_loadu_ps(m + c)));
      for (; c < cols; ++c) s[c] += m[c];
    } else {
      for (int64_t c = 0; c < cols; ++c) s[c] += m[c * step];
    }
  }
}

// The online-softmax step of one row over one key block: s[0, cols8) holds
// the scores (entries past the valid ones already -inf) and becomes
// p = exp(s - m_new); acc's row is rescaled to the new maximum.
TSR_AVX2_INLINE void softmax_step(float* s, int64_t cols8, float& row_max, float& row_sum,
                                  bool& row_nan, float* acc, int64_t evp) noexcept {
  __m256 mx = _mm256_set1_ps(kNegInf);
  __m256 nan = _mm256_setzero_ps();
  for (int64_t c = 0; c < cols8; c += 8) {
    const __m256 x = _mm256_loadu_ps(s + c);
    mx = _mm256_max_ps(mx, x);
    nan = _mm256_or_ps(nan, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
  }
  const float block_max = avx2::horizontal_max(mx);
  if (_mm256_movemask_ps(nan) != 0 || block_max == -kNegInf) row_nan = true;
  const float m_old = row_max;
  const float m_new = std::max(m_old, block_max);
  if (row_nan || m_new == kNegInf) {  // nothing attended so far, or the row is NaN anyway
    std::fill(s, s + cols8, 0.0f);
    return;
  }
  if (m_new != m_old) {
    const float correction = m_old == kNegInf ? 0.0f : std::exp(m_old - m_new);
    row_sum *= correction;
    const __m256 cv = _mm256_set1_ps(correction);
    for (int64_t x = 0; x < evp; x += 8)
      _mm256_storeu_ps(acc + x, _mm256_mul_ps(_mm256_loadu_ps(acc + x), cv));
    row_max = m_new;
  }
  const __m256 mv = _mm256_set1_ps(m_new);
  __m256 sum = _mm256_setzero_ps();
  for (int64_t c = 0; c < cols8; c += 8) {
    const __m256 e = avx2::exp_nonpositive(_mm256_sub_ps(_mm256_loadu_ps(s + c), mv));
    _mm256_storeu_ps(s + c, e);
    sum = _mm256_add_ps(sum, e);
  }
  row_sum += avx2::horizontal_sum(sum);
}

TSR_AVX2 void attend_task(const sdpa_params& p, int64_t task, scratch& w) noexcept {
  const int64_t q_blocks = (p.l + kSdpaQueryBlock - 1) / kSdpaQueryBlock;
  const int64_t bh = task / q_blocks;
  const int64_t b = bh / p.hq, h = bh % p.hq;
  const int64_t i0 = (task % q_blocks) * kSdpaQueryBlock;
  const int64_t rows = std::min(kSdpaQueryBlock, p.l - i0);
  const int64_t kv_head = h / (p.hq / p.hkv);
  const float* qb = p.q + ((b * p.hq + h) * p.l + i0) * p.e;
  const float* kb = p.k + (b * p.hkv + kv_head) * p.s * p.e;
  const float* vb = p.v + (b * p.hkv + kv_head) * p.s * p.ev;
  float* ob = p.out + ((b * p.hq + h) * p.l + i0) * p.ev;
  const int64_t evp = w.evp;
  float* acc = w.acc.data();
  float* sc = w.scores.data();
  float* kt = w.kt.data();

  std::fill(w.row_max, w.row_max + rows, kNegInf);
  std::fill(w.row_sum, w.row_sum + rows, 0.0f);
  std::fill(w.row_nan, w.row_nan + rows, false);
  std::fill(acc, acc + rows * evp, 0.0f);
  const int64_t key_end = p.causal ? std::min(p.s, i0 + rows) : p.s;
  for (int64_t j0 = 0; j0 < key_end; j0 += kKeyBlock) {
    const int64_t cols = std::min(kKeyBlock, key_end - j0);
    const int64_t cols8 = round_up8(cols);
    if (rows < kDirectRowsBelow) {
      for (int64_t r = 0; r < rows; ++r)
        score_row_direct(qb + r * p.e, kb + j0 * p.e, p.e, sc + r * kKeyBlock, cols, p.scale);
    } else {
      transpose_keys(kb + j0 * p.e, p.e, cols, cols8, kt);
      over_row_groups<scores_group>(rows, qb, p.e, static_cast<const float*>(kt), sc, cols8,
                                    p.scale);
    }
    for (int64_t r = 0; r < rows; ++r) {
      float* s = sc + r * kKeyBlock;
      const int64_t i = i0 + r;
      if (p.mask) apply_mask(p, b, h, i, j0, cols, s);
      // Causal: key j attends to query i when j <= i (top-left aligned).
      const int64_t valid = p.causal ? std::clamp<int64_t>(i - j0 + 1, 0, cols) : cols;
      std::fill(s + valid, s + cols8, kNegInf);
      softmax_step(s, cols8, w.row_max[r], w.row_sum[r], w.row_nan[r], acc + r * evp, evp);
    }
    const float* vsrc = vb + j0 * p.ev;
    int64_t ldv = p.ev;
    if (!w.vpad.empty()) {
      for (int64_t c = 0; c < cols; ++c) {
        float* dst = w.vpad.data() + c * evp;
        std::copy(vsrc + c * p.ev, vsrc + (c + 1) * p.ev, dst);
        std::fill(dst + p.ev, dst + evp, 0.0f);
      }
      vsrc = w.vpad.data();
      ldv = evp;
    }
    over_row_groups<values_group>(rows, static_cast<const float*>(sc), cols, vsrc, ldv, acc, evp);
  }
  for (int64_t r = 0; r < rows; ++r) {
    float* o = ob + r * p.ev;
    const float* a = acc + r * evp;
    const float sum = w.row_sum[r];
    if (p.lse)  // -inf where nothing is attended (S = 0 included); NaN rows NaN
      p.lse[(b * p.hq + h) * p.l + i0 + r] =
          w.row_nan[r] ? std::numeric_limits<float>::quiet_NaN()
                       : (sum == 0.0f ? kNegInf : w.row_max[r] + std::log(sum));
    if (p.s == 0) {
      std::fill(o, o + p.ev, 0.0f);
    } else if (w.row_nan[r] || sum == 0.0f) {  // a NaN row, or one that attends to nothing
      std::fill(o, o + p.ev, std::numeric_limits<float>::quiet_NaN());
    } else {
      const float inv = 1.0f / sum;
      for (int64_t x = 0; x < p.ev; ++x) o[x] = a[x] * inv;
    }
  }
}

}  // namespace

void sdpa_tasks_avx2(const sdpa_params& p, int64_t begin, int64_t end) {
  scratch w(p);
  for (int64_t t = begin; t < end; ++t) attend_task(p, t, w);
}

}  // namespace tessera::cpu

#endif  // TESSERA_CPU_HAVE_AVX2
