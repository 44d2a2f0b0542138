// cross_entropy_backward.cpp - cross_entropy_loss_backward for float32
// logits and int64 class targets (the definition is Note [cross_entropy_loss
// backward] in core/ops/nn/loss.cpp): per position with logits x, target t,
// the gradient s reaching it and v = (t != ignore_index),
//   grad_c = a p_c - b w_c - [c = t] (1 - ls) s w[t]
//   a = s v ((1 - ls) w[t] + ls / C W),  b = s v ls / C,  p = softmax(x)
// (w_c = 1 without weight, W = sum_c w_c; s is grad_output per position for
// reduction none, its scalar for sum, and that over sum_i v_i w[t_i] for
// mean). Targets are range-checked first, as the forward does.
// When D == 1 (self (N, C) or (C)) each row is one call of the
// softmax_affine_line body (AVX-512 or AVX2+FMA where allowed; a baseline
// loop otherwise): max, exp stored, scaled - the row is read twice from
// L1/L2 and written once. For D > 1 a chunk of 64 positions is processed
// together, reading each class's 64 adjacent values. OpenMP over rows/chunks.
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

constexpr int64_t kChunk = 64;  // positions per task when D > 1

struct ceb_params {
  const float* g = nullptr;  // per position (reduction none) or one value
  const float* x = nullptr;
  const int64_t* target = nullptr;
  const float* weight = nullptr;  // null: every class weighs 1
  float* out = nullptr;
  int64_t n = 0, c = 0, d = 0;
  int64_t ignore_index = -100;
  bool per_position = false;
  float smoothing = 0.0f;
  float weight_total = 0.0f;  // W = sum_c w_c
  float scale = 1.0f;         // 1, or 1 / sum_i v_i w[t_i] for mean
};

// The coefficients (a, b, target term) of one position.
struct position_coef {
  float a = 0.0f, b = 0.0f, at_target = 0.0f;
  int64_t t = -1;  // -1: ignored
};

inline position_coef coefficients(const ceb_params& p, int64_t pos) noexcept {
  position_coef k;
  const int64_t t = p.target[pos];
  if (t == p.ignore_index) return k;
  const float s = (p.per_position ? p.g[pos] : p.g[0]) * p.scale;
  const float wt = p.weight ? p.weight[t] : 1.0f;
  const float ls_c = p.smoothing / static_cast<float>(p.c);
  k.a = s * ((1.0f - p.smoothing) * wt + ls_c * p.weight_total);
  k.b = s * ls_c;
  k.at_target = (1.0f - p.smoothing) * s * wt;
  k.t = t;
  return k;
}

// out = a softmax(x) - b w over one contiguous row (baseline body).
void affine_row(const float* x, float* out, int64_t n, float a, const float* w, float b) noexcept {
  float mx = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i) mx = x[i] > mx ? x[i] : mx;
  if (std::isinf(mx)) mx = 0.0f;
  float s = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    out[i] = std::exp(x[i] - mx);
    s += out[i];
  }
  const float sc = a / s;
  for (int64_t i = 0; i < n; ++i) out[i] = out[i] * sc - b * (w ? w[i] : 1.0f);
}

void chunk_strided(const ceb_params& p, int64_t n, int64_t d0) noexcept {
  const int64_t len = std::min(kChunk, p.d - d0);
  const float* base = p.x + n * p.c * p.d + d0;
  float* obase = p.out + n * p.c * p.d + d0;
  float mx[kChunk], se[kChunk];
  position_coef k[kChunk];
  std::fill(mx, mx + len, -std::numeric_limits<float>::infinity());
  for (int64_t cls = 0; cls < p.c; ++cls) {
    const float* v = base + cls * p.d;
    for (int64_t j = 0; j < len; ++j) mx[j] = v[j] > mx[j] ? v[j] : mx[j];
  }
  for (int64_t j = 0; j < len; ++j) {
    if (std::isinf(mx[j])) mx[j] = 0.0f;
    se[j] = 0.0f;
    k[j] = coefficients(p, n * p.d + d0 + j);
  }
  for (int64_t cls = 0; cls < p.c; ++cls) {
    const float* v = base + cls * p.d;
    float* o = obase + cls * p.d;
    for (int64_t j = 0; j < len; ++j) {
      o[j] = std::exp(v[j] - mx[j]);
      se[j] += o[j];
    }
  }
  for (int64_t j = 0; j < len; ++j) se[j] = k[j].a / se[j];
  for (int64_t cls = 0; cls < p.c; ++cls) {
    float* o = obase + cls * p.d;
    const float wc = p.weight ? p.weight[cls] : 1.0f;
    for (int64_t j = 0; j < len; ++j) o[j] = o[j] * se[j] - k[j].b * wc;
  }
  for (int64_t j = 0; j < len; ++j)
    if (k[j].t >= 0) obase[k[j].t * p.d + j] -= k[j].at_target;
}

}  // namespace

void cross_entropy_backward_kernel(const tsr_plugin_context& context,
                                   const tsr_kernel_call* raw_call) {
  const tsr_kernel_call& call = sdk::check_call(raw_call, 7, 1);
  const tsr_tensor_desc& grad = sdk::tensor_arg(call, 0, "grad_output");
  const tsr_tensor_desc& self = sdk::tensor_arg(call, 1, "self");
  const tsr_tensor_desc& target = sdk::tensor_arg(call, 2, "target");
  const tsr_tensor_desc* weight = sdk::optional_tensor_arg(call, 3, "weight");
  const int64_t reduction = sdk::int_arg(call, 4, "reduction");
  ceb_params p;
  p.ignore_index = sdk::int_arg(call, 5, "ignore_index");
  p.smoothing = static_cast<float>(sdk::float_arg(call, 6, "label_smoothing"));
  tsr_tensor_desc& out = sdk::out_arg(call, 0);

  sdk::check_dtype(call, grad, "grad_output", TSR_FLOAT32);
  sdk::check_dtype(call, out, "out", TSR_FLOAT32);
  sdk::check_contiguous(call, grad, "grad_output");
  sdk::check_contiguous(call, out, "out");
  sdk::check_same_sizes(call, out, "out", self, "self");
  const sdk::class_dims shape =
      nn::check_cross_entropy_args(call, self, target, weight, reduction, p.ignore_index);
  p.n = shape.n;
  p.c = shape.c;
  p.d = shape.d;
  const int64_t positions = p.n * p.d;
  p.per_position = reduction == 0;
  if (p.per_position ? sdk::numel(grad) != positions : sdk::numel(grad) != 1)
    sdk::throw_status(TSR_INVALID_ARGUMENT, "%s: grad_output has %lld elements; expected %s",
                      sdk::op_name(call), static_cast<long long>(sdk::numel(grad)),
                      p.per_position ? "one per target" : "one");
  p.g = static_cast<const float*>(grad.data);
  p.x = static_cast<const float*>(self.data);
  p.target = static_cast<const int64_t*>(target.data);
  p.weight = weight ? static_cast<const float*>(weight->data) : nullptr;
  p.out = static_cast<float*>(out.data);
  double weight_of_targets = 0.0;
  for (int64_t i = 0; i < positions; ++i) {
    const int64_t t = p.target[i];
    if (t == p.ignore_index) continue;  // the others are in range (checked above)
    weight_of_targets += p.weight ? p.weight[t] : 1.0;
  }
  // mean over an all-ignored batch divides by 0, as the forward: 0 * inf = NaN.
  if (reduction == 1) p.scale = static_cast<float>(1.0 / weight_of_targets);
  p.weight_total = static_cast<float>(p.c);
  if (p.weight) {
    double total = 0.0;
    for (int64_t k = 0; k < p.c; ++k) total += p.weight[k];
    p.weight_total = static_cast<float>(total);
  }
  if (positions == 0 || p.c == 0) return;

  const int threads = thread_count(context);
  if (p.d == 1) {
    [[maybe_unused]] const bool avx512 = use_avx512(context);
    [[maybe_unused]] const bool avx2 = use_avx2(context);
    parallel_ranges(threads, p.n, p.c * 4, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const position_coef k = coefficients(p, r);
        const float* row = p.x + r * p.c;
        float* o = p.out + r * p.c;
#if TESSERA_CPU_HAVE_AVX512
        if (avx512) {
          avx512::softmax_affine_line(row, o, p.c, k.a, p.weight, k.b);
        } else if (avx2) {
          avx2::softmax_affine_line(row, o, p.c, k.a, p.weight, k.b);
        } else {
          affine_row(row, o, p.c, k.a, p.weight, k.b);
        }
#else
        affine_row(row, o, p.c, k.a, p.weight, k.b);
#endif
        if (k.t >= 0) o[k.t] -= k.at_target;
      }
    });
    return;
  }
  const int64_t chunks_per_sample = (p.d + kChunk - 1) / kChunk;
  parallel_ranges(
      threads, p.n * chunks_per_sample, kChunk * p.c * 6, [&](int64_t begin, int64_t end) {
        for (int64_t task = begin; task < end; ++task)
          chunk_strided(p, task / chunks_per_sample, (task % chunks_per_sample) * kChunk);
      });
}

}  // namespace tessera::cpu
