// attention.cu - fused scaled_dot_product_attention for float32 (the CPU
// plugin's schema and semantics, nn/attention.cpp): no L x S matrix is made.
//
// One work item per (batch, query head, query row) walks the keys with an
// online softmax: it keeps the running max m and the running sum l of
// exp(s - m), and accumulates sum exp(s - m) v directly in its output row
// (which only it writes), rescaling l and the row by exp(m_old - m_new) when
// the max grows; at the end the row is divided by l.
//  - masks: bool (true = attend) or float32 (added), any strides, shaped
//    (B, Hq, L, S) (broadcast dims with stride 0); is_causal keeps keys
//    j <= i (top-left aligned);
//  - grouped-query attention: query head h reads key/value head h / (Hq / Hkv);
//  - a row attending to nothing (every score -inf) is 0 / 0 = NaN, S = 0
//    gives zeros, a NaN score makes its row NaN (it never wins the max and
//    poisons l and the row through exp), as the CPU kernel gives;
//  - dropout is not done here (the core decomposes when dropout_p > 0).
// query, key, value and out may have any strides.
#include <limits>

#include "dtypes.hpp"
#include "kernel_util.hpp"
#include "tessera/sdk/op_checks.hpp"

namespace tessera::gpu {
namespace {

constexpr uint64_t kF32 = TSR_DTYPE_BIT(TSR_FLOAT32);
constexpr uint64_t kBoolOrF32 = TSR_DTYPE_BIT(TSR_BOOL) | kF32;

struct SdpaOp {
  const float* q;
  const float* k;
  const float* v;
  float* out;
  const char* mask;  // bool or float32 elements; null: none
  bool mask_is_bool;
  bool causal;
  float scale;
  int64_t hq, group, l, s, e, ev;             // group = Hq / Hkv
  int64_t qs[4], ks[4], vs[4], os[4], ms[4];  // element strides

  TSR_HD void operator()(int64_t item) const {
    const int64_t i = item % l;
    const int64_t bh = item / l;
    const int64_t h = bh % hq, b = bh / hq;
    const int64_t kvh = h / group;
    const float* qi = q + b * qs[0] + h * qs[1] + i * qs[2];
    const float* kb = k + b * ks[0] + kvh * ks[1];
    const float* vb = v + b * vs[0] + kvh * vs[1];
    float* o = out + b * os[0] + h * os[1] + i * os[2];
    const float neg_inf = -std::numeric_limits<float>::infinity();
    for (int64_t x = 0; x < ev; ++x) o[x * os[3]] = 0.0f;
    float m = neg_inf, sum = 0.0f;
    const int64_t key_end = causal ? (i + 1 < s ? i + 1 : s) : s;
    for (int64_t j = 0; j < key_end; ++j) {
      const float* kj = kb + j * ks[2];
      float dot = 0.0f;
      for (int64_t x = 0; x < e; ++x) dot += qi[x * qs[3]] * kj[x * ks[3]];
      float sc = dot * scale;
      if (mask != nullptr) {
        const int64_t off = b * ms[0] + h * ms[1] + i * ms[2] + j * ms[3];
        if (mask_is_bool) {
          if (!reinterpret_cast<const bool*>(mask)[off]) sc = neg_inf;
        } else {
          sc += reinterpret_cast<const float*>(mask)[off];
        }
      }
      if (sc == neg_inf) continue;  // not attended (NaN compares false: it goes on)
      if (sc > m) {
        // m = -inf: nothing accumulated yet (sum and the row are 0).
        const float correction = m == neg_inf ? 0.0f : ::expf(m - sc);
        if (correction != 1.0f) {
          for (int64_t x = 0; x < ev; ++x) o[x * os[3]] *= correction;
          sum *= correction;
        }
        m = sc;
      }
      const float p = ::expf(sc - (m == neg_inf ? 0.0f : m));
      if (p == 0.0f) continue;
      sum += p;
      const float* vj = vb + j * vs[2];
      for (int64_t x = 0; x < ev; ++x) o[x * os[3]] += p * vj[x * vs[3]];
    }
    if (s == 0) return;  // an empty sum: zeros
    if (sum == 0.0f) {
      const float nan = std::numeric_limits<float>::quiet_NaN();
      for (int64_t x = 0; x < ev; ++x) o[x * os[3]] = nan;  // fully masked row
      return;
    }
    const float inv = 1.0f / sum;
    for (int64_t x = 0; x < ev; ++x) o[x * os[3]] *= inv;
  }
};

tsr_status* sdpa_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) noexcept {
  return run_kernel(context, call, [&](const Exec& exec) {
    const tsr_tensor_desc& q = tensor_arg(*call, 0, "query");
    const tsr_tensor_desc& k = tensor_arg(*call, 1, "key");
    const tsr_tensor_desc& v = tensor_arg(*call, 2, "value");
    const tsr_tensor_desc* mask = optional_tensor_arg(*call, 3, "attn_mask");
    const double dropout_p = float_arg(*call, 4, "dropout_p");
    const bool causal = bool_arg(*call, 5, "is_causal");
    if (sdk::is_none(*call, 6))
      sdk::throw_status(TSR_INVALID_ARGUMENT, "%s: argument 'scale' must be filled in by the core",
                        call->op_name);
    const float scale = static_cast<float>(float_arg(*call, 6, "scale"));
    const bool gqa = bool_arg(*call, 7, "enable_gqa");
    tsr_tensor_desc& out = out_arg(*call, 0);
    if (dropout_p != 0.0)
      sdk::throw_status(TSR_INVALID_ARGUMENT,
                        "%s: this kernel does not apply dropout (dropout_p = %g); the core runs "
                        "the decomposition for dropout_p > 0",
                        call->op_name, dropout_p);
    const tsr_tensor_desc* all[4] = {&q, &k, &v, &out};
    const char* names[4] = {"query", "key", "value", "out"};
    for (int i = 0; i < 4; ++i) {
      if (all[i]->dtype != TSR_FLOAT32) unsupported_dtype(call->op_name, all[i]->dtype);
      if (all[i]->ndim != 4)
        sdk::throw_status(TSR_INVALID_ARGUMENT,
                          "%s: argument '%s' must be 4-d (B, H, seq, E), got %d dims",
                          call->op_name, names[i], static_cast<int>(all[i]->ndim));
    }
    const int64_t batch = q.sizes[0], hq = q.sizes[1], l = q.sizes[2], e = q.sizes[3];
    const int64_t hkv = k.sizes[1], s = k.sizes[2], ev = v.sizes[3];
    const bool shapes_ok = k.sizes[0] == batch && v.sizes[0] == batch && v.sizes[1] == hkv &&
                           k.sizes[3] == e && v.sizes[2] == s && out.sizes[0] == batch &&
                           out.sizes[1] == hq && out.sizes[2] == l && out.sizes[3] == ev &&
                           (hkv == hq || (gqa && hkv > 0 && hq % hkv == 0));
    if (!shapes_ok)
      sdk::throw_status(TSR_INVALID_ARGUMENT,
                        "%s: inconsistent shapes: query (%lld, %lld, %lld, %lld), key (%lld, "
                        "%lld, %lld, %lld), value (.., %lld, %lld, %lld), enable_gqa %d",
                        call->op_name, static_cast<long long>(batch), static_cast<long long>(hq),
                        static_cast<long long>(l), static_cast<long long>(e),
                        static_cast<long long>(k.sizes[0]), static_cast<long long>(hkv),
                        static_cast<long long>(s), static_cast<long long>(k.sizes[3]),
                        static_cast<long long>(v.sizes[1]), static_cast<long long>(v.sizes[2]),
                        static_cast<long long>(ev), gqa ? 1 : 0);
    SdpaOp op{};
    if (mask != nullptr) {
      sdk::check_attn_mask(*call, *mask, batch, hq, l, s, flavour_name());
      op.mask = data_of(*mask);
      op.mask_is_bool = mask->dtype == TSR_BOOL;
      for (int i = 0; i < 4; ++i) op.ms[i] = mask->strides[i];
    }
    if (batch * hq * l * ev == 0) return;
    op.q = reinterpret_cast<const float*>(data_of(q));
    op.k = reinterpret_cast<const float*>(data_of(k));
    op.v = reinterpret_cast<const float*>(data_of(v));
    op.out = reinterpret_cast<float*>(data_of(out));
    op.causal = causal;
    op.scale = scale;
    op.hq = hq;
    op.group = hq / hkv;
    op.l = l;
    op.s = s;
    op.e = e;
    op.ev = ev;
    for (int i = 0; i < 4; ++i) {
      op.qs[i] = q.strides[i];
      op.ks[i] = k.strides[i];
      op.vs[i] = v.strides[i];
      op.os[i] = out.strides[i];
    }
    parallel_for(exec, batch * hq * l, op, "scaled_dot_product_attention");
  });
}

}  // namespace

void add_attention_kernels(KernelList& out) {
  out.push_back(make_entry(sdk::schema::kScaledDotProductAttention, {kF32, kF32, kF32, kBoolOrF32},
                           sdpa_kernel));
}

}  // namespace tessera::gpu
