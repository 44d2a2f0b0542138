// attention.cpp - scaled_dot_product_attention for float32, flash-attention
// style: no L x S matrix is materialised.
//
// Work is split into tasks of (batch, head, block of kSdpaQueryBlock queries),
// OpenMP over tasks (attention.hpp). A task walks the keys in blocks with an
// online softmax: per query row it keeps the running max m, the running sum
// l of exp(s - m) and the accumulator acc = sum exp(s - m) v; a new block with
// a larger max rescales l and acc by exp(m_old - m_new). Causal attention
// (j <= i, top-left aligned) stops at the diagonal block.
//
// Two bodies: with AVX2+FMA (use_avx2(), isa.hpp) each step is a pair of
// register-blocked matrix products (attention_avx2.cpp); the baseline body
// below computes one dot product per score and one axpy over Ev per key.
//
// Masks: bool (true = attend) or float32 (added), any strides, shaped
// (B, Hq, L, S) (broadcast dims have stride 0). Grouped-query attention: query
// head h reads key/value head h / (Hq / Hkv).
// Results: a row that attends to nothing (every score -inf) is 0 / 0 = NaN,
// as the float64 softmax definition and PyTorch's math path give; S = 0 gives
// zeros (an empty sum). NaN scores make their row NaN. Dropout is not done
// here (the core runs the decomposition when dropout_p > 0).
// scaled_dot_product_attention_forward runs the same bodies and also writes
// each row's logsumexp m + log(l) (-inf for a row attending to nothing, NaN
// for a NaN row), which its backward (attention_backward.cpp) reads.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <new>
#include <vector>

#include "../isa.hpp"
#include "../parallel.hpp"
#include "attention.hpp"
#include "nn_kernels.hpp"

namespace tessera::cpu {
namespace {

constexpr int64_t kQueryBlock = kSdpaQueryBlock;
constexpr int64_t kKeyBlock = 128;

struct sdpa_scratch {
  std::vector<float> scores, acc, row_max, row_sum;
  explicit sdpa_scratch(const sdpa_params& p)
      : scores(static_cast<size_t>(kKeyBlock)),
        acc(static_cast<size_t>(kQueryBlock * std::max<int64_t>(p.ev, 1))),
        row_max(static_cast<size_t>(kQueryBlock)),
        row_sum(static_cast<size_t>(kQueryBlock)) {}
};

inline float dot(const float* a, const float* b, int64_t n) noexcept {
  float acc = 0.0f;
#pragma omp simd reduction(+ : acc)
  for (int64_t i = 0; i < n; ++i) acc += a[i] * b[i];
  return acc;
}

void attend_block(const sdpa_params& p, int64_t task, sdpa_scratch& w) noexcept {
  const int64_t q_blocks = (p.l + kQueryBlock - 1) / kQueryBlock;
  const int64_t bh = task / q_blocks;
  const int64_t b = bh / p.hq, h = bh % p.hq;
  const int64_t i0 = (task % q_blocks) * kQueryBlock;
  const int64_t rows = std::min(kQueryBlock, p.l - i0);
  const int64_t kv_head = h / (p.hq / p.hkv);
  const float* qb = p.q + ((b * p.hq + h) * p.l + i0) * p.e;
  const float* kb = p.k + (b * p.hkv + kv_head) * p.s * p.e;
  const float* vb = p.v + (b * p.hkv + kv_head) * p.s * p.ev;
  float* ob = p.out + ((b * p.hq + h) * p.l + i0) * p.ev;
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();

  std::fill(w.row_max.begin(), w.row_max.begin() + rows, kNegInf);
  std::fill(w.row_sum.begin(), w.row_sum.begin() + rows, 0.0f);
  std::fill(w.acc.begin(), w.acc.begin() + rows * p.ev, 0.0f);
  float* sc = w.scores.data();
  const int64_t key_end = p.causal ? std::min(p.s, i0 + rows) : p.s;
  for (int64_t j0 = 0; j0 < key_end; j0 += kKeyBlock) {
    const int64_t cols = std::min(kKeyBlock, key_end - j0);
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t i = i0 + r;
      const float* qi = qb + r * p.e;
      const int64_t limit = p.causal ? std::min(cols, i - j0 + 1) : cols;
      float block_max = kNegInf;
      for (int64_t c = 0; c < limit; ++c) {
        float s = dot(qi, kb + (j0 + c) * p.e, p.e) * p.scale;
        if (p.mask) {
          const int64_t off = b * p.mask_strides[0] + h * p.mask_strides[1] +
                              i * p.mask_strides[2] + (j0 + c) * p.mask_strides[3];
          if (p.mask_is_bool) {
            if (!reinterpret_cast<const bool*>(p.mask)[off]) s = kNegInf;
          } else {
            s += reinterpret_cast<const float*>(p.mask)[off];
          }
        }
        sc[c] = s;
        block_max = s > block_max ? s : block_max;
      }
      // A NaN score never wins the max; it poisons the row through exp below.
      bool has_nan = false;
      for (int64_t c = 0; c < limit; ++c) has_nan |= std::isnan(sc[c]);
      if (block_max == kNegInf && !has_nan) continue;  // nothing attended in this block
      const float m_old = w.row_max[static_cast<size_t>(r)];
      const float m_new = std::max(m_old, block_max);
      const float shift = m_new == kNegInf ? 0.0f : m_new;
      const float correction = m_old == kNegInf ? 0.0f : std::exp(m_old - shift);
      float* acc = w.acc.data() + r * p.ev;
      float sum = w.row_sum[static_cast<size_t>(r)] * correction;
      if (correction != 1.0f) {
#pragma omp simd
        for (int64_t x = 0; x < p.ev; ++x) acc[x] *= correction;
      }
      for (int64_t c = 0; c < limit; ++c) {
        const float pr = std::exp(sc[c] - shift);
        if (pr == 0.0f) continue;
        sum += pr;
        const float* vj = vb + (j0 + c) * p.ev;
#pragma omp simd
        for (int64_t x = 0; x < p.ev; ++x) acc[x] += pr * vj[x];
      }
      w.row_sum[static_cast<size_t>(r)] = sum;
      w.row_max[static_cast<size_t>(r)] = m_new;
    }
  }
  for (int64_t r = 0; r < rows; ++r) {
    float* o = ob + r * p.ev;
    const float* acc = w.acc.data() + r * p.ev;
    const float sum = w.row_sum[static_cast<size_t>(r)];
    if (p.lse)  // -inf where nothing is attended (S = 0 included); NaN rows stay NaN
      p.lse[(b * p.hq + h) * p.l + i0 + r] =
          sum == 0.0f ? kNegInf : w.row_max[static_cast<size_t>(r)] + std::log(sum);
    if (p.s == 0) {
      std::fill(o, o + p.ev, 0.0f);
    } else if (sum == 0.0f) {
      std::fill(o, o + p.ev, std::numeric_limits<float>::quiet_NaN());  // fully masked row
    } else {
      const float inv = 1.0f / sum;
#pragma omp simd
      for (int64_t x = 0; x < p.ev; ++x) o[x] = acc[x] * inv;
    }
  }
}

// Reads the arguments shared by scaled_dot_product_attention (dropout at
// arg 4: `dropout_index` 4, the others after it) and its _forward variant (no
// dropout: -1); checks them against outs[0] (B, Hq, L, Ev).
sdpa_params parse_sdpa(const tsr_kernel_call& call, int dropout_index) {
  const tsr_tensor_desc& q = sdk::tensor_arg(call, 0, "query");
  const tsr_tensor_desc& k = sdk::tensor_arg(call, 1, "key");
  const tsr_tensor_desc& v = sdk::tensor_arg(call, 2, "value");
  const tsr_tensor_desc* mask = sdk::optional_tensor_arg(call, 3, "attn_mask");
  const int next = dropout_index < 0 ? 4 : dropout_index + 1;
  sdpa_params p;
  if (dropout_index >= 0) {
    const double dropout_p = sdk::float_arg(call, dropout_index, "dropout_p");
    if (dropout_p != 0.0)
      sdk::throw_status(TSR_INVALID_ARGUMENT,
                        "%s: this kernel does not apply dropout (dropout_p = %g); the core runs "
                        "the decomposition for dropout_p > 0",
                        sdk::op_name(call), dropout_p);
  }
  p.causal = sdk::bool_arg(call, next, "is_causal");
  if (sdk::is_none(call, next + 1))
    sdk::throw_status(TSR_INVALID_ARGUMENT, "%s: argument 'scale' must be filled in by the core",
                      sdk::op_name(call));
  p.scale = static_cast<float>(sdk::float_arg(call, next + 1, "scale"));
  const bool gqa = sdk::bool_arg(call, next + 2, "enable_gqa");
  tsr_tensor_desc& out = sdk::out_arg(call, 0);

  const tsr_tensor_desc* all[4] = {&q, &k, &v, &out};
  const char* names[4] = {"query", "key", "value", "out"};
  for (int i = 0; i < 4; ++i) {
    if (all[i]->dtype != TSR_FLOAT32)
      sdk::throw_unsupported_dtype(call, names[i], all[i]->dtype, kPluginName);
    if (all[i]->ndim != 4)
      sdk::throw_status(TSR_INVALID_ARGUMENT,
                        "%s: argument '%s' must be 4-d (B, H, seq, E), got %d dims",
                        sdk::op_name(call), names[i], static_cast<int>(all[i]->ndim));
    sdk::check_contiguous(call, *all[i], names[i]);
  }
  p.batch = q.sizes[0];
  p.hq = q.sizes[1];
  p.l = q.sizes[2];
  p.e = q.sizes[3];
  p.hkv = k.sizes[1];
  p.s = k.sizes[2];
  p.ev = v.sizes[3];
  const bool shapes_ok = k.sizes[0] == p.batch && v.sizes[0] == p.batch && v.sizes[1] == p.hkv &&
                         k.sizes[3] == p.e && v.sizes[2] == p.s && out.sizes[0] == p.batch &&
                         out.sizes[1] == p.hq && out.sizes[2] == p.l && out.sizes[3] == p.ev &&
                         (p.hkv == p.hq || (gqa && p.hkv > 0 && p.hq % p.hkv == 0));
  if (!shapes_ok)
    sdk::throw_status(TSR_INVALID_ARGUMENT,
                      "%s: inconsistent shapes: query (%lld, %lld, %lld, %lld), key (%lld, %lld, "
                      "%lld, %lld), value (.., %lld, %lld, %lld), enable_gqa %d",
                      sdk::op_name(call), static_cast<long long>(p.batch),
                      static_cast<long long>(p.hq), static_cast<long long>(p.l),
                      static_cast<long long>(p.e), static_cast<long long>(k.sizes[0]),
                      static_cast<long long>(p.hkv), static_cast<long long>(p.s),
                      static_cast<long long>(k.sizes[3]), static_cast<long long>(v.sizes[1]),
                      static_cast<long long>(v.sizes[2]), static_cast<long long>(p.ev),
                      gqa ? 1 : 0);
  if (mask) {
    sdk::check_attn_mask(call, *mask, p.batch, p.hq, p.l, p.s, kPluginName);
    p.mask = static_cast<const char*>(mask->data);
    p.mask_is_bool = mask->dtype == TSR_BOOL;
    std::copy_n(mask->strides, 4, p.mask_strides);
  }
  p.q = static_cast<const float*>(q.data);
  p.k = static_cast<const float*>(k.data);
  p.v = static_cast<const float*>(v.data);
  p.out = static_cast<float*>(out.data);
  return p;
}

void run_sdpa(const tsr_plugin_context& context, const tsr_kernel_call& call,
              const sdpa_params& p) {
  // Nothing to write (an Ev of 0 still has logsumexp rows when they are asked for).
  if (p.batch * p.hq * p.l == 0 || (p.ev == 0 && p.lse == nullptr)) return;

  const int64_t tasks = sdpa_task_count(p);
  const bool avx2 = use_avx2(context);
  const int64_t cost = kQueryBlock * std::max<int64_t>(p.s, 1) * (p.e + p.ev);
  std::atomic<bool> out_of_memory{false};
  parallel_ranges(thread_count(context), tasks, cost, [&](int64_t begin, int64_t end) {
    try {
#if TESSERA_CPU_HAVE_AVX2
      if (avx2) {
        sdpa_tasks_avx2(p, begin, end);
        return;
      }
#endif
      sdpa_scratch scratch(p);
      for (int64_t t = begin; t < end; ++t) attend_block(p, t, scratch);
    } catch (...) {  // only std::bad_alloc can get here; never leave the OpenMP region
      out_of_memory.store(true);
    }
  });
  if (out_of_memory.load())
    sdk::throw_status(TSR_RESOURCE_EXHAUSTED, "%s: out of memory for the attention scratch",
                      sdk::op_name(call));
}

}  // namespace

void sdpa_kernel(const tsr_plugin_context& context, const tsr_kernel_call* raw_call) {
  const tsr_kernel_call& call = sdk::check_call(raw_call, 8, 1);
  run_sdpa(context, call, parse_sdpa(call, 4));
}

void sdpa_forward_kernel(const tsr_plugin_context& context, const tsr_kernel_call* raw_call) {
  const tsr_kernel_call& call = sdk::check_call(raw_call, 7, 2);
  sdpa_params p = parse_sdpa(call, -1);
  tsr_tensor_desc& lse = sdk::out_arg(call, 1);
  if (lse.dtype != TSR_FLOAT32)
    sdk::throw_unsupported_dtype(call, "logsumexp", lse.dtype, kPluginName);
  if (lse.ndim != 3 || lse.sizes[0] != p.batch || lse.sizes[1] != p.hq || lse.sizes[2] != p.l)
    sdk::throw_status(TSR_INVALID_ARGUMENT,
                      "%s: out 'logsumexp' must have shape (B, Hq, L) = (%lld, %lld, %lld)",
                      sdk::op_name(call), static_cast<long long>(p.batch),
                      static_cast<long long>(p.hq), static_cast<long long>(p.l));
  sdk::check_contiguous(call, lse, "logsumexp");
  p.lse = static_cast<float*>(lse.data);
  run_sdpa(context, call, p);
}

}  // namespace tessera::cpu
