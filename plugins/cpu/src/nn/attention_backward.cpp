// attention_backward.cpp - scaled_dot_product_attention_backward for float32,
// flash-attention style: the attention weights are recomputed per tile from
// q, k and the forward's saved logsumexp, never kept as an L x S matrix.
//
// With P = exp(scale q k^T (+ mask) - logsumexp) and D = rowsum(dO * O):
//   dV += P^T dO,  dS = P * (dO V^T - D),  dQ += scale dS K,  dK += scale dS^T Q.
//
// A task is one (batch, key/value head): it owns that head's dK and dV (and
// the dQ rows of the Hq / Hkv query heads it serves), so tasks write disjoint
// memory and no result depends on the thread count. Per task K and V are
// transposed once (E x S and Ev x S, S padded to the vector width); then per
// query head and block of kRowBlock query rows, per block of kColBlock keys
// (causal: up to the diagonal), five products on the tile:
//   scores = Q_b Kt_b,  P = exp(scale scores + mask - lse),  dV_b += P^T dO_b,
//   dP = dO_b Vt_b,  dS = scale P (dP - D),  dQ_b += dS K_b,  dK_b += dS^T Q_b.
// Each is C (+)= A B with A row-major (one broadcast per element) and B
// row-major (vector loads along C's rows): a register tile of up to 6 rows x 2
// vectors. P^T and dS^T are written beside P and dS for the two products that
// need them.
//
// Bodies: the same source compiled for AVX-512 F/BW/DQ/VL (16 lanes),
// AVX2+FMA (8) and the x86-64 baseline (4, SSE2) through GCC's vector
// extensions (isa.hpp chooses per call); exp is a degree-7 polynomial on the
// reduced argument (relative error below 2e-7), exactly 0 below -87.3, NaN
// for NaN. A fully masked row has logsumexp -inf and gets NaN gradients, as
// the float64 definition (core/ops/nn/attention.cpp) does.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <limits>
#include <new>
#include <vector>

#include "../isa.hpp"
#include "../parallel.hpp"
#include "nn_kernels.hpp"

namespace tessera::cpu {
namespace {

constexpr int64_t kRowBlock = 64;  // query rows per tile
constexpr int64_t kColBlock = 64;  // keys per tile (a multiple of every vector width)
constexpr int kTileRows = 6;

#define TSR_BWD_INLINE __attribute__((always_inline)) inline

struct bwd_params {
  const float *g = nullptr, *q = nullptr, *k = nullptr, *v = nullptr, *o = nullptr, *lse = nullptr;
  float *dq = nullptr, *dk = nullptr, *dv = nullptr;
  const char* mask = nullptr;
  bool mask_is_bool = false;
  int64_t mask_strides[4] = {};
  int64_t batch = 0, hq = 0, hkv = 0, l = 0, s = 0, e = 0, ev = 0;
  bool causal = false;
  float scale = 1.0f;
};

template <int W>
struct lanes {
  typedef float vf __attribute__((vector_size(W * 4)));
  typedef int32_t vi __attribute__((vector_size(W * 4)));
};

inline int64_t round_up(int64_t n, int64_t m) noexcept { return (n + m - 1) / m * m; }

// C[r][0, n) (+)= sum_k A[r][k] B[k][0, n) for R rows; n a multiple of W
// handled in vectors of W and 2W, the rest (n % W) one by one.
template <int W, int R>
TSR_BWD_INLINE void gemm_rows(const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                              int64_t ldc, int64_t n, int64_t kdim, bool accumulate) noexcept {
  using V = typename lanes<W>::vf;
  int64_t x = 0;
  for (; x + 2 * W <= n; x += 2 * W) {
    V acc0[R], acc1[R];
    for (int r = 0; r < R; ++r) {
      if (accumulate) {
        std::memcpy(&acc0[r], c + r * ldc + x, sizeof(V));
        std::memcpy(&acc1[r], c + r * ldc + x + W, sizeof(V));
      } else {
        acc0[r] = V{};
        acc1[r] = V{};
      }
    }
    for (int64_t kk = 0; kk < kdim; ++kk) {
      V b0, b1;
      std::memcpy(&b0, b + kk * ldb + x, sizeof(V));
      std::memcpy(&b1, b + kk * ldb + x + W, sizeof(V));
      for (int r = 0; r < R; ++r) {
        const float av = a[r * lda + kk];
        acc0[r] += av * b0;
        acc1[r] += av * b1;
      }
    }
    for (int r = 0; r < R; ++r) {
      std::memcpy(c + r * ldc + x, &acc0[r], sizeof(V));
      std::memcpy(c + r * ldc + x + W, &acc1[r], sizeof(V));
    }
  }
  for (; x + W <= n; x += W) {
    V acc0[R];
    for (int r = 0; r < R; ++r) {
      if (accumulate)
        std::memcpy(&acc0[r], c + r * ldc + x, sizeof(V));
      else
        acc0[r] = V{};
    }
    for (int64_t kk = 0; kk < kdim; ++kk) {
      V b0;
      std::memcpy(&b0, b + kk * ldb + x, sizeof(V));
      for (int r = 0; r < R; ++r) acc0[r] += a[r * lda + kk] * b0;
    }
    for (int r = 0; r < R; ++r) std::memcpy(c + r * ldc + x, &acc0[r], sizeof(V));
  }
  for (; x < n; ++x) {
    for (int r = 0; r < R; ++r) {
      float t = accumulate ? c[r * ldc + x] : 0.0f;
      for (int64_t kk = 0; kk < kdim; ++kk) t += a[r * lda + kk] * b[kk * ldb + x];
      c[r * ldc + x] = t;
    }
  }
}

// C (m x n) (+)= A (m x kdim) B (kdim x n), all row-major.
template <int W>
TSR_BWD_INLINE void gemm(int64_t m, int64_t n, int64_t kdim, const float* a, int64_t lda,
                         const float* b, int64_t ldb, float* c, int64_t ldc,
                         bool accumulate) noexcept {
  for (int64_t r0 = 0; r0 < m; r0 += kTileRows) {
    const float* ar = a + r0 * lda;
    float* cr = c + r0 * ldc;
    switch (std::min<int64_t>(kTileRows, m - r0)) {
      case 6:
        gemm_rows<W, 6>(ar, lda, b, ldb, cr, ldc, n, kdim, accumulate);
        break;
      case 5:
        gemm_rows<W, 5>(ar, lda, b, ldb, cr, ldc, n, kdim, accumulate);
        break;
      case 4:
        gemm_rows<W, 4>(ar, lda, b, ldb, cr, ldc, n, kdim, accumulate);
        break;
      case 3:
        gemm_rows<W, 3>(ar, lda, b, ldb, cr, ldc, n, kdim, accumulate);
        break;
      case 2:
        gemm_rows<W, 2>(ar, lda, b, ldb, cr, ldc, n, kdim, accumulate);
        break;
      default:
        gemm_rows<W, 1>(ar, lda, b, ldb, cr, ldc, n, kdim, accumulate);
        break;
    }
  }
}

// s[0, n) = exp(s[0, n) - sub), n a multiple of W: 2^k p(f) with x = k ln2 + f,
// |f| <= ln2 / 2, p the degree-7 Taylor polynomial; 0 below -87.3 (and for
// -inf), NaN for NaN.
template <int W>
TSR_BWD_INLINE void exp_shifted(float* s, int64_t n, float sub) noexcept {
  using V = typename lanes<W>::vf;
  using VI = typename lanes<W>::vi;
  for (int64_t c = 0; c < n; c += W) {
    V x;
    std::memcpy(&x, s + c, sizeof(V));
    x = x - sub;
    V t = x * 1.44269504088896341f;
    t = t < -126.0f ? V{} - 126.0f : t;
    t = t > 126.0f ? V{} + 126.0f : t;
    const V rn = (t + 12582912.0f) - 12582912.0f;  // round to nearest
    V f = x - rn * 0.693359375f;
    f = f - rn * -2.12194440e-4f;
    V p = f * (1.0f / 5040.0f) + (1.0f / 720.0f);
    p = p * f + (1.0f / 120.0f);
    p = p * f + (1.0f / 24.0f);
    p = p * f + (1.0f / 6.0f);
    p = p * f + 0.5f;
    p = p * f + 1.0f;
    p = p * f + 1.0f;
    const VI bits = (__builtin_convertvector(rn, VI) + 127) << 23;
    V r = p * (V)bits;
    r = x < -87.3f ? V{} : r;
    std::memcpy(s + c, &r, sizeof(V));
  }
}

struct bwd_scratch {
  int64_t sp, ldp, ldt;
  std::vector<float> kt, vt;   // E x sp, Ev x sp
  std::vector<float> p, dp;    // kRowBlock x ldp (P; dP then dS)
  std::vector<float> pt, dst;  // kColBlock x ldt (P^T, dS^T)
  std::vector<float> d;        // kRowBlock
  explicit bwd_scratch(const bwd_params& a)
      : sp(round_up(std::max<int64_t>(a.s, 1), kColBlock)),
        ldp(kColBlock),
        ldt(kRowBlock),
        kt(static_cast<size_t>(std::max<int64_t>(a.e, 1) * sp), 0.0f),
        vt(static_cast<size_t>(std::max<int64_t>(a.ev, 1) * sp), 0.0f),
        p(static_cast<size_t>(kRowBlock * kColBlock)),
        dp(static_cast<size_t>(kRowBlock * kColBlock)),
        pt(static_cast<size_t>(kColBlock * kRowBlock)),
        dst(static_cast<size_t>(kColBlock * kRowBlock)),
        d(static_cast<size_t>(kRowBlock)) {}
};

template <int W>
TSR_BWD_INLINE void backward_task(const bwd_params& a, int64_t task, bwd_scratch& w) noexcept {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  const int64_t b = task / a.hkv, kvh = task % a.hkv;
  const int64_t groups = a.hq / a.hkv;
  const float* kb = a.k + (b * a.hkv + kvh) * a.s * a.e;
  const float* vb = a.v + (b * a.hkv + kvh) * a.s * a.ev;
  float* dkb = a.dk + (b * a.hkv + kvh) * a.s * a.e;
  float* dvb = a.dv + (b * a.hkv + kvh) * a.s * a.ev;
  std::fill(dkb, dkb + a.s * a.e, 0.0f);
  std::fill(dvb, dvb + a.s * a.ev, 0.0f);
  const int64_t sp = w.sp;
  for (int64_t j = 0; j < a.s; ++j) {
    for (int64_t x = 0; x < a.e; ++x) w.kt[static_cast<size_t>(x * sp + j)] = kb[j * a.e + x];
    for (int64_t x = 0; x < a.ev; ++x) w.vt[static_cast<size_t>(x * sp + j)] = vb[j * a.ev + x];
  }
  float* p = w.p.data();
  float* dp = w.dp.data();
  float* pt = w.pt.data();
  float* dst = w.dst.data();
  const int64_t ldp = w.ldp, ldt = w.ldt;
  for (int64_t h = kvh * groups; h < (kvh + 1) * groups; ++h) {
    const int64_t head = b * a.hq + h;
    for (int64_t i0 = 0; i0 < a.l; i0 += kRowBlock) {
      const int64_t rows = std::min(kRowBlock, a.l - i0);
      const float* qb = a.q + (head * a.l + i0) * a.e;
      const float* gb = a.g + (head * a.l + i0) * a.ev;
      const float* ob = a.o + (head * a.l + i0) * a.ev;
      const float* lb = a.lse + head * a.l + i0;
      float* dqb = a.dq + (head * a.l + i0) * a.e;
      std::fill(dqb, dqb + rows * a.e, 0.0f);
      for (int64_t r = 0; r < rows; ++r) {
        float t = 0.0f;
        for (int64_t x = 0; x < a.ev; ++x) t += gb[r * a.ev + x] * ob[r * a.ev + x];
        w.d[static_cast<size_t>(r)] = t;
      }
      const int64_t key_end = a.causal ? std::min(a.s, i0 + rows) : a.s;
      for (int64_t j0 = 0; j0 < key_end; j0 += kColBlock) {
        const int64_t cols = std::min(kColBlock, key_end - j0);
        const int64_t colsw = round_up(cols, W);
        // scores, then P = exp(scale scores + mask - lse); masked entries -inf first.
        gemm<W>(rows, colsw, a.e, qb, a.e, w.kt.data() + j0, sp, p, ldp, false);
        for (int64_t r = 0; r < rows; ++r) {
          float* pr = p + r * ldp;
          const int64_t i = i0 + r;
          for (int64_t c = 0; c < colsw; ++c) pr[c] *= a.scale;
          if (a.mask) {
            const int64_t base = b * a.mask_strides[0] + h * a.mask_strides[1] +
                                 i * a.mask_strides[2] + j0 * a.mask_strides[3];
            const int64_t step = a.mask_strides[3];
            if (a.mask_is_bool) {
              const bool* m = reinterpret_cast<const bool*>(a.mask) + base;
              for (int64_t c = 0; c < cols; ++c)
                if (!m[c * step]) pr[c] = kNegInf;
            } else {
              const float* m = reinterpret_cast<const float*>(a.mask) + base;
              for (int64_t c = 0; c < cols; ++c) pr[c] += m[c * step];
            }
          }
          const int64_t valid = a.causal ? std::clamp<int64_t>(i - j0 + 1, 0, cols) : cols;
          std::fill(pr + valid, pr + colsw, kNegInf);
          exp_shifted<W>(pr, colsw, lb[r]);
          // Columns past `cols` are never read (the products below stop at cols).
          for (int64_t c = 0; c < cols; ++c) pt[c * ldt + r] = pr[c];
        }
        // dV_b += P^T dO_b
        gemm<W>(cols, a.ev, rows, pt, ldt, gb, a.ev, dvb + j0 * a.ev, a.ev, true);
        // dP = dO_b Vt_b; dS = scale P (dP - D)
        gemm<W>(rows, colsw, a.ev, gb, a.ev, w.vt.data() + j0, sp, dp, ldp, false);
        for (int64_t r = 0; r < rows; ++r) {
          const float* pr = p + r * ldp;
          float* dr = dp + r * ldp;
          const float dd = w.d[static_cast<size_t>(r)];
          for (int64_t c = 0; c < cols; ++c) {
            dr[c] = a.scale * pr[c] * (dr[c] - dd);
            dst[c * ldt + r] = dr[c];
          }
        }
        // dQ_b += dS K_b;  dK_b += dS^T Q_b
        gemm<W>(rows, a.e, cols, dp, ldp, kb + j0 * a.e, a.e, dqb, a.e, true);
        gemm<W>(cols, a.e, rows, dst, ldt, qb, a.e, dkb + j0 * a.e, a.e, true);
      }
    }
  }
}

template <int W>
TSR_BWD_INLINE void backward_tasks(const bwd_params& a, int64_t begin, int64_t end) {
  bwd_scratch w(a);
  for (int64_t t = begin; t < end; ++t) backward_task<W>(a, t, w);
}

#if TESSERA_CPU_HAVE_AVX512
__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma"))) void backward_avx512(
    const bwd_params& a, int64_t begin, int64_t end) {
  backward_tasks<16>(a, begin, end);
}
#endif
#if TESSERA_CPU_HAVE_AVX2
__attribute__((target("avx2,fma"))) void backward_avx2(const bwd_params& a, int64_t begin,
                                                       int64_t end) {
  backward_tasks<8>(a, begin, end);
}
#endif
void backward_baseline(const bwd_params& a, int64_t begin, int64_t end) {
  backward_tasks<4>(a, begin, end);
}

void check_4d(const tsr_kernel_call& call, const tsr_tensor_desc& d, const char* name,
              const int64_t (&expected)[4]) {
  if (d.dtype != TSR_FLOAT32) sdk::throw_unsupported_dtype(call, name, d.dtype, kPluginName);
  bool ok = d.ndim == 4;
  for (int i = 0; ok && i < 4; ++i) ok = d.sizes[i] == expected[i];
  if (!ok)
    sdk::throw_status(TSR_INVALID_ARGUMENT,
                      "%s: argument '%s' must have shape (%lld, %lld, %lld, %lld)",
                      sdk::op_name(call), name, static_cast<long long>(expected[0]),
                      static_cast<long long>(expected[1]), static_cast<long long>(expected[2]),
                      static_cast<long long>(expected[3]));
  sdk::check_contiguous(call, d, name);
}

}  // namespace

void sdpa_backward_kernel(const tsr_plugin_context& context, const tsr_kernel_call* raw_call) {
  const tsr_kernel_call& call = sdk::check_call(raw_call, 10, 3);
  const tsr_tensor_desc& g = sdk::tensor_arg(call, 0, "grad_out");
  const tsr_tensor_desc& q = sdk::tensor_arg(call, 1, "query");
  const tsr_tensor_desc& k = sdk::tensor_arg(call, 2, "key");
  const tsr_tensor_desc& v = sdk::tensor_arg(call, 3, "value");
  const tsr_tensor_desc& o = sdk::tensor_arg(call, 4, "out");
  const tsr_tensor_desc& lse = sdk::tensor_arg(call, 5, "logsumexp");
  const tsr_tensor_desc* mask = sdk::optional_tensor_arg(call, 6, "attn_mask");
  bwd_params a;
  a.causal = sdk::bool_arg(call, 7, "is_causal");
  if (sdk::is_none(call, 8))
    sdk::throw_status(TSR_INVALID_ARGUMENT, "%s: argument 'scale' must be filled in by the core",
                      sdk::op_name(call));
  a.scale = static_cast<float>(sdk::float_arg(call, 8, "scale"));
  const bool gqa = sdk::bool_arg(call, 9, "enable_gqa");
  if (q.ndim != 4 || k.ndim != 4 || v.ndim != 4)
    sdk::throw_status(TSR_INVALID_ARGUMENT,
                      "%s: query, key and value must be 4-d (B, H, seq, E); got %d, %d, %d dims",
                      sdk::op_name(call), static_cast<int>(q.ndim), static_cast<int>(k.ndim),
                      static_cast<int>(v.ndim));
  a.batch = q.sizes[0];
  a.hq = q.sizes[1];
  a.l = q.sizes[2];
  a.e = q.sizes[3];
  a.hkv = k.sizes[1];
  a.s = k.sizes[2];
  a.ev = v.sizes[3];
  if (!(a.hkv == a.hq || (gqa && a.hkv > 0 && a.hq % a.hkv == 0)))
    sdk::throw_status(TSR_INVALID_ARGUMENT,
                      "%s: key/value heads (%lld) must equal query heads (%lld), or divide them "
                      "with enable_gqa",
                      sdk::op_name(call), static_cast<long long>(a.hkv),
                      static_cast<long long>(a.hq));
  check_4d(call, q, "query", {a.batch, a.hq, a.l, a.e});
  check_4d(call, k, "key", {a.batch, a.hkv, a.s, a.e});
  check_4d(call, v, "value", {a.batch, a.hkv, a.s, a.ev});
  check_4d(call, g, "grad_out", {a.batch, a.hq, a.l, a.ev});
  check_4d(call, o, "out", {a.batch, a.hq, a.l, a.ev});
  if (lse.dtype != TSR_FLOAT32)
    sdk::throw_unsupported_dtype(call, "logsumexp", lse.dtype, kPluginName);
  if (lse.ndim != 3 || lse.sizes[0] != a.batch || lse.sizes[1] != a.hq || lse.sizes[2] != a.l)
    sdk::throw_status(TSR_INVALID_ARGUMENT,
                      "%s: argument 'logsumexp' must have shape (B, Hq, L) = (%lld, %lld, %lld)",
                      sdk::op_name(call), static_cast<long long>(a.batch),
                      static_cast<long long>(a.hq), static_cast<long long>(a.l));
  sdk::check_contiguous(call, lse, "logsumexp");
  tsr_tensor_desc& dq = sdk::out_arg(call, 0);
  tsr_tensor_desc& dk = sdk::out_arg(call, 1);
  tsr_tensor_desc& dv = sdk::out_arg(call, 2);
  check_4d(call, dq, "grad_query", {a.batch, a.hq, a.l, a.e});
  check_4d(call, dk, "grad_key", {a.batch, a.hkv, a.s, a.e});
  check_4d(call, dv, "grad_value", {a.batch, a.hkv, a.s, a.ev});
  if (mask) {
    sdk::check_attn_mask(call, *mask, a.batch, a.hq, a.l, a.s, kPluginName);
    a.mask = static_cast<const char*>(mask->data);
    a.mask_is_bool = mask->dtype == TSR_BOOL;
    std::copy_n(mask->strides, 4, a.mask_strides);
  }
  a.g = static_cast<const float*>(g.data);
  a.q = static_cast<const float*>(q.data);
  a.k = static_cast<const float*>(k.data);
  a.v = static_cast<const float*>(v.data);
  a.o = static_cast<const float*>(o.data);
  a.lse = static_cast<const float*>(lse.data);
  a.dq = static_cast<float*>(dq.data);
  a.dk = static_cast<float*>(dk.data);
  a.dv = static_cast<float*>(dv.data);
  const int64_t tasks = a.batch * a.hkv;
  if (tasks == 0) return;
  const isa_level isa = chosen_isa(context);
  const int64_t cost = a.hq / a.hkv * std::max<int64_t>(a.l, 1) * std::max<int64_t>(a.s, 1) *
                       (2 * a.e + 2 * a.ev + 8);
  std::atomic<bool> out_of_memory{false};
  parallel_ranges(thread_count(context), tasks, cost, [&](int64_t begin, int64_t end) {
    try {
#if TESSERA_CPU_HAVE_AVX512
      if (isa >= isa_level::avx512) return backward_avx512(a, begin, end);
#endif
#if TESSERA_CPU_HAVE_AVX2
      if (isa >= isa_level::avx2) return backward_avx2(a, begin, end);
#endif
      backward_baseline(a, begin, end);
    } catch (...) {  // only std::bad_alloc can get here; never leave the OpenMP region
      out_of_memory.store(true);
    }
  });
  if (out_of_memory.load())
    sdk::throw_status(TSR_RESOURCE_EXHAUSTED,
                      "%s: out of memory for the attention backward scratch", sdk::op_name(call));
}

}  // namespace tessera::cpu
