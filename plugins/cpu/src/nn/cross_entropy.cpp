// cross_entropy.cpp - cross_entropy_loss for float32 logits and int64 class
// targets: log_softmax and nll fused, one pass set per row, no log-probability
// tensor.
//
// self is (N, C, D...) (or (C) with a 0-d target); position p = (n, d) has
// logits x[n, :, d]. Per position: m = max_c x, lse = m + log sum_c exp(x - m),
//   nll    = -w[t] (x[t] - lse)                 (0 when t == ignore_index)
//   smooth = -sum_c w_c (x_c - lse) = lse * sum_c w_c - sum_c w_c x_c
//   loss   = (1 - ls) nll + ls / C * smooth     (weight sum w[t], 0 if ignored)
// mean = sum loss / sum w[t]; sum = sum loss; none writes loss per position.
// When D == 1 rows are contiguous and reduced with vectorised lanes (the
// logsumexp in the AVX-512 or AVX2+FMA body of
// reduction/softmax_backward_lines.hpp where allowed); for D > 1
// a chunk of 64 positions is processed together, reading each class's 64
// adjacent values. Reductions over positions use fixed blocks whose partial
// sums (float64) are added in block order: the result does not depend on the
// thread count. Targets are range-checked first (PyTorch's "Target 5 is out of
// bounds."), before any logit is read.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "../isa.hpp"
#include "../parallel.hpp"
#include "../reduction/softmax_backward_lines.hpp"
#include "nn_kernels.hpp"

namespace tessera::cpu {
namespace {

constexpr int64_t kRowBlock = 64;  // positions per task when D == 1
constexpr int64_t kChunk = 64;     // positions per task when D > 1

struct ce_params {
  const float* x = nullptr;
  const int64_t* target = nullptr;
  const float* weight = nullptr;  // null: every class weighs 1
  float* out = nullptr;           // per position (reduction none) or null
  int64_t n = 0, c = 0, d = 0;
  int64_t ignore_index = -100;
  float smoothing = 0.0f;
  float weight_total = 0.0f;            // sum_c w_c
  isa_level isa = isa_level::baseline;  // the row bodies allowed (isa.hpp)
};

// The loss and weight of one position from its logsumexp and sum_c w_c x_c.
inline void finish_position(const ce_params& p, int64_t pos, float x_t_or_nan, int64_t t, float lse,
                            float wx, double& loss_sum, double& weight_sum) noexcept {
  float loss = 0.0f;
  if (t != p.ignore_index) {
    const float wt = p.weight ? p.weight[t] : 1.0f;
    const float nll = -wt * (x_t_or_nan - lse);
    loss = nll;
    if (p.smoothing > 0.0f) {
      const float smooth = lse * p.weight_total - wx;
      loss = (1.0f - p.smoothing) * nll + p.smoothing / static_cast<float>(p.c) * smooth;
    }
    weight_sum += wt;
  }
  loss_sum += loss;
  if (p.out) p.out[pos] = loss;
}

void rows_contiguous(const ce_params& p, int64_t first, int64_t last, double& loss_sum,
                     double& weight_sum) noexcept {
  constexpr int kLanes = 16;
  const int64_t c = p.c;
  for (int64_t r = first; r < last; ++r) {
    const float* row = p.x + r * c;
    float wx = 0.0f;
    if (p.smoothing > 0.0f) {
      if (p.weight) {
#pragma omp simd reduction(+ : wx)
        for (int64_t j = 0; j < c; ++j) wx += p.weight[j] * row[j];
      } else {
#pragma omp simd reduction(+ : wx)
        for (int64_t j = 0; j < c; ++j) wx += row[j];
      }
    }
#if TESSERA_CPU_HAVE_AVX512
    // The AVX-512 / AVX2 logsumexp (a vectorised exp; the loop below calls
    // libm's scalar expf per element).
    if (p.isa != isa_level::baseline) {
      const float lse = p.isa == isa_level::avx512 ? avx512::logsumexp_line(row, c)
                                                   : avx2::logsumexp_line(row, c);
      const int64_t t = p.target[r];
      finish_position(p, r, t != p.ignore_index ? row[t] : 0.0f, t, lse, wx, loss_sum, weight_sum);
      continue;
    }
#endif
    float mx[kLanes];
    std::fill(mx, mx + kLanes, -std::numeric_limits<float>::infinity());
    int64_t i = 0;
    for (; i + kLanes <= c; i += kLanes) {
#pragma omp simd
      for (int l = 0; l < kLanes; ++l) mx[l] = row[i + l] > mx[l] ? row[i + l] : mx[l];
    }
    for (; i < c; ++i) mx[0] = row[i] > mx[0] ? row[i] : mx[0];
    float m = mx[0];
    for (int l = 1; l < kLanes; ++l) m = mx[l] > m ? mx[l] : m;
    // NaN logits never win a comparison: make them poison the sum instead.
    const float shift = std::isinf(m) ? 0.0f : m;
    float se = 0.0f;
#pragma omp simd reduction(+ : se)
    for (int64_t j = 0; j < c; ++j) se += std::exp(row[j] - shift);
    const float lse = shift + std::log(se);
    const int64_t t = p.target[r];
    finish_position(p, r, t != p.ignore_index ? row[t] : 0.0f, t, lse, wx, loss_sum, weight_sum);
  }
}

void chunk_strided(const ce_params& p, int64_t n, int64_t d0, double& loss_sum,
                   double& weight_sum) noexcept {
  const int64_t len = std::min(kChunk, p.d - d0);
  const float* base = p.x + n * p.c * p.d + d0;
  float mx[kChunk], se[kChunk], wx[kChunk];
  std::fill(mx, mx + len, -std::numeric_limits<float>::infinity());
  for (int64_t k = 0; k < p.c; ++k) {
    const float* v = base + k * p.d;
    for (int64_t j = 0; j < len; ++j) mx[j] = v[j] > mx[j] ? v[j] : mx[j];
  }
  for (int64_t j = 0; j < len; ++j) {
    if (std::isinf(mx[j])) mx[j] = 0.0f;
    se[j] = 0.0f;
    wx[j] = 0.0f;
  }
  for (int64_t k = 0; k < p.c; ++k) {
    const float* v = base + k * p.d;
    const float wk = p.weight ? p.weight[k] : 1.0f;
#pragma omp simd
    for (int64_t j = 0; j < len; ++j) {
      se[j] += std::exp(v[j] - mx[j]);
      wx[j] += wk * v[j];
    }
  }
  for (int64_t j = 0; j < len; ++j) {
    const int64_t pos = n * p.d + d0 + j;
    const int64_t t = p.target[pos];
    const float lse = mx[j] + std::log(se[j]);
    finish_position(p, pos, t != p.ignore_index ? base[t * p.d + j] : 0.0f, t, lse, wx[j], loss_sum,
                    weight_sum);
  }
}

}  // namespace

namespace nn {
sdk::class_dims check_cross_entropy_args(const tsr_kernel_call& call, const tsr_tensor_desc& self,
                                         const tsr_tensor_desc& target,
                                         const tsr_tensor_desc* weight, int64_t reduction,
                                         int64_t ignore_index) {
  if (self.dtype != TSR_FLOAT32)
    sdk::throw_unsupported_dtype(call, "self", self.dtype, kPluginName);
  sdk::check_dtype(call, target, "target", TSR_INT64);
  const sdk::class_dims r = sdk::check_cross_entropy_target(call, self, target, reduction);
  sdk::check_contiguous(call, self, "self");
  sdk::check_contiguous(call, target, "target");
  if (weight) {
    sdk::check_dtype(call, *weight, "weight", TSR_FLOAT32);
    sdk::check_contiguous(call, *weight, "weight");
    if (sdk::numel(*weight) != r.c)
      sdk::throw_status(TSR_INVALID_ARGUMENT,
                        "%s: argument 'weight' has %lld elements; expected one per class (%lld)",
                        sdk::op_name(call), static_cast<long long>(sdk::numel(*weight)),
                        static_cast<long long>(r.c));
  }
  const auto* t = static_cast<const int64_t*>(target.data);
  for (int64_t i = 0, positions = r.n * r.d; i < positions; ++i)
    if (t[i] != ignore_index && (t[i] < 0 || t[i] >= r.c))
      sdk::throw_status(TSR_OUT_OF_RANGE,
                        "argument 'target': Target %lld is out of bounds. Class indices must lie "
                        "in [0, %lld) (or equal ignore_index %lld)",
                        static_cast<long long>(t[i]), static_cast<long long>(r.c),
                        static_cast<long long>(ignore_index));
  return r;
}
}  // namespace nn

void cross_entropy_kernel(const tsr_plugin_context& context, const tsr_kernel_call* raw_call) {
  const tsr_kernel_call& call = sdk::check_call(raw_call, 6, 1);
  const tsr_tensor_desc& self = sdk::tensor_arg(call, 0, "self");
  const tsr_tensor_desc& target = sdk::tensor_arg(call, 1, "target");
  const tsr_tensor_desc* weight = sdk::optional_tensor_arg(call, 2, "weight");
  const int64_t reduction = sdk::int_arg(call, 3, "reduction");
  ce_params p;
  p.ignore_index = sdk::int_arg(call, 4, "ignore_index");
  p.smoothing = static_cast<float>(sdk::float_arg(call, 5, "label_smoothing"));
  tsr_tensor_desc& out = sdk::out_arg(call, 0);

  sdk::check_dtype(call, out, "out", TSR_FLOAT32);
  sdk::check_contiguous(call, out, "out");
  const sdk::class_dims shape =
      nn::check_cross_entropy_args(call, self, target, weight, reduction, p.ignore_index);
  p.n = shape.n;
  p.c = shape.c;
  p.d = shape.d;
  const int64_t positions = p.n * p.d;
  if (reduction == 0 ? sdk::numel(out) != positions : out.ndim != 0)
    sdk::throw_status(TSR_INVALID_ARGUMENT, "%s: out has %lld elements; expected %s",
                      sdk::op_name(call), static_cast<long long>(sdk::numel(out)),
                      reduction == 0 ? "one per target" : "a 0-d result");

  p.x = static_cast<const float*>(self.data);
  p.target = static_cast<const int64_t*>(target.data);
  p.weight = weight ? static_cast<const float*>(weight->data) : nullptr;
  p.out = reduction == 0 ? static_cast<float*>(out.data) : nullptr;
  p.isa = use_avx512(context) ? isa_level::avx512
          : use_avx2(context) ? isa_level::avx2
                              : isa_level::baseline;
  p.weight_total = static_cast<float>(p.c);
  if (p.weight) {
    double total = 0.0;
    for (int64_t k = 0; k < p.c; ++k) total += p.weight[k];
    p.weight_total = static_cast<float>(total);
  }

  const int64_t chunks_per_sample = (p.d + kChunk - 1) / kChunk;
  const int64_t tasks = p.d == 1 ? (p.n + kRowBlock - 1) / kRowBlock : p.n * chunks_per_sample;
  std::vector<double> loss_part(static_cast<size_t>(tasks), 0.0);
  std::vector<double> weight_part(static_cast<size_t>(tasks), 0.0);
  const int64_t cost = (p.d == 1 ? kRowBlock : kChunk) * std::max<int64_t>(p.c, 1) * 4;
  if (positions > 0 && p.c > 0) {
    parallel_ranges(thread_count(context), tasks, cost, [&](int64_t begin, int64_t end) {
      for (int64_t task = begin; task < end; ++task) {
        double ls = 0.0, ws = 0.0;
        if (p.d == 1) {
          rows_contiguous(p, task * kRowBlock, std::min(p.n, (task + 1) * kRowBlock), ls, ws);
        } else {
          chunk_strided(p, task / chunks_per_sample, (task % chunks_per_sample) * kChunk, ls, ws);
        }
        loss_part[static_cast<size_t>(task)] = ls;
        weight_part[static_cast<size_t>(task)] = ws;
      }
    });
  } else if (positions > 0) {
    // No classes: every non-ignored target was rejected above, so all are ignored.
    if (p.out) std::fill(p.out, p.out + positions, 0.0f);
  }
  if (reduction == 0) return;
  double loss_sum = 0.0, weight_sum = 0.0;
  for (int64_t t = 0; t < tasks; ++t) {
    loss_sum += loss_part[static_cast<size_t>(t)];
    weight_sum += weight_part[static_cast<size_t>(t)];
  }
  *static_cast<float*>(out.data) =
      static_cast<float>(reduction == 2 ? loss_sum : loss_sum / weight_sum);
}

}  // namespace tessera::cpu
