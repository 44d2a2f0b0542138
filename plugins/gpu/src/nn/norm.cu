// norm.cu - fused row kernels: native_layer_norm and cross_entropy_loss
// (float32, contiguous inputs), with the CPU plugin's semantics
// (plugins/cpu/src/nn/layer_norm.cpp, nn/cross_entropy.cpp).
//
//   - layer norm: one work item per row; mean, then the biased variance as the
//     mean of squared deviations (two passes, no E[x^2] - E[x]^2
//     cancellation), both accumulated in float64; rstd = 1 / sqrt(var + eps).
//   - cross entropy: pass 1 is one work item per position (log-sum-exp over
//     the classes, the weighted nll and label smoothing) writing the loss
//     (into out for reduction none) and its weight; pass 2 sums chunks of
//     positions in float64; pass 3 (one item) adds the chunks in order (so the
//     result is deterministic), writes the mean or sum, and the first
//     out-of-range target, which the host reads back to fail with the CPU
//     plugin's message.
// Device builds (TSR_DEVICE_COMPILER) run long lines (>= kRowMinLength
// elements) with one block of kRowThreads threads per line and shared-memory
// tree reductions instead (reduction/lines.hpp); the same arithmetic in
// another order. That path cannot run in the host emulation.
#include <cstdint>
#include <limits>
#include <span>
#include <type_traits>

#include "dtypes.hpp"
#include "indexer.hpp"
#include "kernel_util.hpp"
#include "reduction/lines.hpp"
#include "tessera/sdk/op_checks.hpp"

namespace tessera::gpu {
namespace {

// ------------------------------------------------------- native_layer_norm

struct LayerNormOp {
  const float* x;
  float* y;
  float* mean;
  float* rstd;
  const float* w;  // null: 1
  const float* b;  // null: 0
  int64_t n;
  float eps;
  TSR_HD void operator()(int64_t r) const {
    if (n == 0) {
      mean[r] = std::numeric_limits<float>::quiet_NaN();
      rstd[r] = std::numeric_limits<float>::quiet_NaN();
      return;
    }
    const float* xr = x + r * n;
    float* yr = y + r * n;
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += static_cast<double>(xr[i]);
    const float mu = static_cast<float>(s / static_cast<double>(n));
    double q = 0;
    for (int64_t i = 0; i < n; ++i) {
      const float d = xr[i] - mu;
      q += static_cast<double>(d) * static_cast<double>(d);
    }
    const float var = static_cast<float>(q / static_cast<double>(n));
    const float rs = 1.0f / ::sqrtf(var + eps);
    mean[r] = mu;
    rstd[r] = rs;
    for (int64_t i = 0; i < n; ++i) {
      float v = (xr[i] - mu) * rs;
      if (w != nullptr) v *= w[i];
      if (b != nullptr) v += b[i];
      yr[i] = v;
    }
  }
};

#if TSR_DEVICE_COMPILER
// Device-only: one block per long row (see softmax_rows_kernel).
__global__ void layer_norm_rows_kernel(LayerNormOp op, int64_t rows) {
  __shared__ double shm[kRowThreads];
  const int64_t n = op.n;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* xr = op.x + r * n;
    float* yr = op.y + r * n;
    double s = 0;
    for (int64_t i = threadIdx.x; i < n; i += kRowThreads) s += static_cast<double>(xr[i]);
    s = block_reduce(s, shm, Plus{});
    const float mu = static_cast<float>(s / static_cast<double>(n));
    double q = 0;
    for (int64_t i = threadIdx.x; i < n; i += kRowThreads) {
      const float d = xr[i] - mu;
      q += static_cast<double>(d) * static_cast<double>(d);
    }
    q = block_reduce(q, shm, Plus{});
    const float var = static_cast<float>(q / static_cast<double>(n));
    const float rs = 1.0f / ::sqrtf(var + op.eps);
    if (threadIdx.x == 0) {
      op.mean[r] = mu;
      op.rstd[r] = rs;
    }
    for (int64_t i = threadIdx.x; i < n; i += kRowThreads) {
      float v = (xr[i] - mu) * rs;
      if (op.w != nullptr) v *= op.w[i];
      if (op.b != nullptr) v += op.b[i];
      yr[i] = v;
    }
  }
}
#endif

tsr_status* layer_norm_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) noexcept {
  return run_kernel(context, call, [&](const Exec& exec) {
    const tsr_tensor_desc& input = tensor_arg(*call, 0, "input");
    const std::span<const int64_t> shape = int_list_arg(*call, 1, "normalized_shape");
    const tsr_tensor_desc* weight = optional_tensor_arg(*call, 2, "weight");
    const tsr_tensor_desc* bias = optional_tensor_arg(*call, 3, "bias");
    const float eps = static_cast<float>(float_arg(*call, 4, "eps"));
    tsr_tensor_desc& out = out_arg(*call, 0);
    tsr_tensor_desc& mean = out_arg(*call, 1);
    tsr_tensor_desc& rstd = out_arg(*call, 2);
    if (input.dtype != TSR_FLOAT32) unsupported_dtype("native_layer_norm", input.dtype);
    const sdk::norm_rows r = sdk::check_normalized_shape(*call, input, shape);
    const int64_t n = r.n, rows = r.rows;
    sdk::check_contiguous(*call, input, "input");
    sdk::check_same_sizes(*call, out, "out", input, "input");
    sdk::check_contiguous(*call, out, "out");
    sdk::check_dtype(*call, out, "out", TSR_FLOAT32);
    for (tsr_tensor_desc* stat : {&mean, &rstd}) {
      sdk::check_dtype(*call, *stat, "out", TSR_FLOAT32);
      sdk::check_contiguous(*call, *stat, "out");
      if (sdk::numel(*stat) != rows)
        sdk::throw_status(TSR_INVALID_ARGUMENT,
                          "%s: mean/rstd outputs have %lld elements, expected one per row (%lld)",
                          call->op_name, static_cast<long long>(sdk::numel(*stat)),
                          static_cast<long long>(rows));
    }
    for (const tsr_tensor_desc* p : {weight, bias}) {
      if (p == nullptr) continue;
      const char* pname = p == weight ? "weight" : "bias";
      sdk::check_dtype(*call, *p, pname, TSR_FLOAT32);
      sdk::check_contiguous(*call, *p, pname);
      if (sdk::numel(*p) != n)
        sdk::throw_status(TSR_INVALID_ARGUMENT,
                          "%s: argument '%s' has %lld elements, expected %lld", call->op_name,
                          pname, static_cast<long long>(sdk::numel(*p)), static_cast<long long>(n));
    }
    if (rows == 0) return;
    const LayerNormOp op{reinterpret_cast<const float*>(data_of(input)),
                         reinterpret_cast<float*>(data_of(out)),
                         reinterpret_cast<float*>(data_of(mean)),
                         reinterpret_cast<float*>(data_of(rstd)),
                         weight ? reinterpret_cast<const float*>(data_of(*weight)) : nullptr,
                         bias ? reinterpret_cast<const float*>(data_of(*bias)) : nullptr,
                         n,
                         eps};
#if TSR_DEVICE_COMPILER
    if (n >= kRowMinLength) {
      layer_norm_rows_kernel<<<row_blocks(exec, rows), kRowThreads, 0, native_stream(exec)>>>(op,
                                                                                              rows);
      check_launch("native_layer_norm");
      return;
    }
#endif
    parallel_for(exec, rows, op, "native_layer_norm");
  });
}

// ------------------------------------------------------ cross_entropy_loss

constexpr int64_t kCeChunk = 1024;  // positions summed per pass-2 work item

struct CeParams {
  const float* x;
  const int64_t* target;
  const float* weight;  // null: every class weighs 1
  int64_t c, d;
  int64_t ignore_index;
  float smoothing;
};

// Pass 1: the loss and weight of position `pos` (n, d); bad[pos] = 1 for an
// out-of-range target (no logit is read then).
struct CePositionOp {
  CeParams p;
  float* loss;  // per position (out for reduction none)
  float* wsum;  // per position weight (0 when ignored)
  uint8_t* bad;
  TSR_HD void operator()(int64_t pos) const {
    const int64_t t = p.target[pos];
    const bool ignored = t == p.ignore_index;
    bad[pos] = !ignored && (t < 0 || t >= p.c);
    if (ignored || bad[pos]) {
      loss[pos] = 0.0f;
      wsum[pos] = 0.0f;
      return;
    }
    const int64_t nn = pos / p.d;
    const float* base = p.x + nn * p.c * p.d + (pos - nn * p.d);
    float m = -std::numeric_limits<float>::infinity();
    for (int64_t k = 0; k < p.c; ++k) {
      const float v = base[k * p.d];
      m = v > m ? v : m;
    }
    // NaN logits never win a comparison: they poison the sum instead.
    const float shift = (m == std::numeric_limits<float>::infinity() ||
                         m == -std::numeric_limits<float>::infinity())
                            ? 0.0f
                            : m;
    double se = 0, wx = 0, wtotal = 0;
    for (int64_t k = 0; k < p.c; ++k) {
      const float v = base[k * p.d];
      se += static_cast<double>(::expf(v - shift));
      if (p.smoothing > 0.0f) {
        const float wk = p.weight != nullptr ? p.weight[k] : 1.0f;
        wx += static_cast<double>(wk) * static_cast<double>(v);
        wtotal += static_cast<double>(wk);
      }
    }
    const float lse = shift + static_cast<float>(::log(se));
    const float wt = p.weight != nullptr ? p.weight[t] : 1.0f;
    const float nll = -wt * (base[t * p.d] - lse);
    float l = nll;
    if (p.smoothing > 0.0f) {
      const float smooth = lse * static_cast<float>(wtotal) - static_cast<float>(wx);
      l = (1.0f - p.smoothing) * nll + p.smoothing / static_cast<float>(p.c) * smooth;
    }
    loss[pos] = l;
    wsum[pos] = wt;
  }
};

// Pass 2: chunk j's loss and weight sums and its first bad position (-1: none).
struct CeChunkOp {
  const float* loss;
  const float* wsum;
  const uint8_t* bad;
  int64_t positions;
  double* loss_part;
  double* weight_part;
  int64_t* first_bad;
  TSR_HD void operator()(int64_t j) const {
    const int64_t begin = j * kCeChunk;
    const int64_t end = begin + kCeChunk < positions ? begin + kCeChunk : positions;
    double ls = 0, ws = 0;
    int64_t fb = -1;
    for (int64_t i = begin; i < end; ++i) {
      ls += static_cast<double>(loss[i]);
      ws += static_cast<double>(wsum[i]);
      if (fb < 0 && bad[i]) fb = i;
    }
    loss_part[j] = ls;
    weight_part[j] = ws;
    first_bad[j] = fb;
  }
};

// Pass 3 (one item): the result and the first bad position's target.
struct CeFinishOp {
  const double* loss_part;
  const double* weight_part;
  const int64_t* first_bad;
  int64_t chunks;
  const int64_t* target;
  int64_t reduction;
  float* out;         // the 0-d result, or null for reduction none
  int64_t* bad_info;  // [0]: 1 when a target is out of range, [1]: that target
  TSR_HD void operator()(int64_t) const {
    double ls = 0, ws = 0;
    int64_t fb = -1;
    for (int64_t j = 0; j < chunks; ++j) {
      ls += loss_part[j];
      ws += weight_part[j];
      if (fb < 0 && first_bad[j] >= 0) fb = first_bad[j];
    }
    if (out != nullptr) *out = static_cast<float>(reduction == 2 ? ls : ls / ws);
    bad_info[0] = fb >= 0 ? 1 : 0;
    bad_info[1] = fb >= 0 ? target[fb] : 0;
  }
};

tsr_status* cross_entropy_kernel(tsr_plugin_context* context,
                                 const tsr_kernel_call* call) noexcept {
  return run_kernel(context, call, [&](const Exec& exec) {
    const tsr_tensor_desc& self = tensor_arg(*call, 0, "self");
    const tsr_tensor_desc& target = tensor_arg(*call, 1, "target");
    const tsr_tensor_desc* weight = optional_tensor_arg(*call, 2, "weight");
    const int64_t reduction = int_arg(*call, 3, "reduction");
    CeParams p{};
    p.ignore_index = int_arg(*call, 4, "ignore_index");
    p.smoothing = static_cast<float>(float_arg(*call, 5, "label_smoothing"));
    tsr_tensor_desc& out = out_arg(*call, 0);
    if (self.dtype != TSR_FLOAT32) unsupported_dtype("cross_entropy_loss", self.dtype);
    sdk::check_dtype(*call, target, "target", TSR_INT64);
    sdk::check_dtype(*call, out, "out", TSR_FLOAT32);
    const sdk::class_dims dims = sdk::check_cross_entropy_target(*call, self, target, reduction);
    sdk::check_contiguous(*call, self, "self");
    sdk::check_contiguous(*call, target, "target");
    sdk::check_contiguous(*call, out, "out");
    const int64_t n = dims.n;
    p.c = dims.c;
    p.d = dims.d;
    const int64_t positions = n * p.d;
    if (reduction == 0 ? sdk::numel(out) != positions : out.ndim != 0)
      sdk::throw_status(TSR_INVALID_ARGUMENT, "%s: out has %lld elements; expected %s",
                        call->op_name, static_cast<long long>(sdk::numel(out)),
                        reduction == 0 ? "one per target" : "a 0-d result");
    if (weight != nullptr) {
      sdk::check_dtype(*call, *weight, "weight", TSR_FLOAT32);
      sdk::check_contiguous(*call, *weight, "weight");
      if (sdk::numel(*weight) != p.c)
        sdk::throw_status(TSR_INVALID_ARGUMENT,
                          "%s: argument 'weight' has %lld elements; expected one per class (%lld)",
                          call->op_name, static_cast<long long>(sdk::numel(*weight)),
                          static_cast<long long>(p.c));
    }
    p.x = reinterpret_cast<const float*>(data_of(self));
    p.target = reinterpret_cast<const int64_t*>(data_of(target));
    p.weight = weight != nullptr ? reinterpret_cast<const float*>(data_of(*weight)) : nullptr;

    const size_t np = static_cast<size_t>(positions);
    const int64_t chunks = (positions + kCeChunk - 1) / kCeChunk;
    const size_t nc = static_cast<size_t>(chunks);
    float* loss = reduction == 0 ? reinterpret_cast<float*>(data_of(out))
                                 : static_cast<float*>(scratch(*call, np * sizeof(float)));
    auto* wsum = static_cast<float*>(scratch(*call, np * sizeof(float)));
    auto* bad = static_cast<uint8_t*>(scratch(*call, np));
    auto* loss_part = static_cast<double*>(scratch(*call, nc * sizeof(double)));
    auto* weight_part = static_cast<double*>(scratch(*call, nc * sizeof(double)));
    auto* first_bad = static_cast<int64_t*>(scratch(*call, nc * sizeof(int64_t)));
    auto* bad_info = static_cast<int64_t*>(scratch(*call, 2 * sizeof(int64_t)));
    parallel_for(exec, positions, CePositionOp{p, loss, wsum, bad}, "cross_entropy_loss");
    parallel_for(exec, chunks,
                 CeChunkOp{loss, wsum, bad, positions, loss_part, weight_part, first_bad},
                 "cross_entropy_loss");
    parallel_for(
        exec, 1,
        CeFinishOp{loss_part, weight_part, first_bad, chunks, p.target, reduction,
                   reduction == 0 ? nullptr : reinterpret_cast<float*>(data_of(out)), bad_info},
        "cross_entropy_loss");
    int64_t info[2] = {0, 0};
    read_back(exec, info, bad_info, sizeof info);
    if (info[0] != 0)
      sdk::throw_status(TSR_OUT_OF_RANGE,
                        "argument 'target': Target %lld is out of bounds. Class indices must lie "
                        "in [0, %lld) (or equal ignore_index %lld)",
                        static_cast<long long>(info[1]), static_cast<long long>(p.c),
                        static_cast<long long>(p.ignore_index));
  });
}

}  // namespace

void add_norm_kernels(KernelList& out) {
  constexpr uint64_t kF32 = TSR_DTYPE_BIT(TSR_FLOAT32);
  out.push_back(make_entry(sdk::schema::kNativeLayerNorm, {kF32, kF32, kF32}, layer_norm_kernel, {},
                           TSR_KERNEL_CONTIGUOUS_INPUTS));
  out.push_back(make_entry(sdk::schema::kCrossEntropyLoss, {kF32, sdk::kInt64Dtype, kF32},
                           cross_entropy_kernel, {}, TSR_KERNEL_CONTIGUOUS_INPUTS));
}

}  // namespace tessera::gpu
