// layer_norm.cpp - native_layer_norm for float32: one row (the normalized
// dims, flattened) at a time, OpenMP over rows.
//
// Per row of n elements: the mean (16 float32 lanes, added pairwise), then the
// biased variance as the mean of squared deviations (two passes over a row
// that is in L1/L2 by then, so memory traffic stays one read and one write),
// rstd = 1 / sqrt(var + eps), and out = (x - mean) * rstd * w + b in one
// vectorised pass. Two passes avoid the cancellation of E[x^2] - E[x]^2.
// Empty rows (n = 0) give mean and rstd NaN, as the decomposition does.
// Where the processor and the "isa" option allow, rows run the AVX-512 body
// (avx512_lines.hpp: the same arithmetic, bit for bit, 16 lanes wide), which
// streams an output larger than the last-level cache (isa.hpp).
#include <cmath>
#include <limits>

#include "../avx512_lines.hpp"
#include "../isa.hpp"
#include "../parallel.hpp"
#include "nn_kernels.hpp"

namespace tessera::cpu {
namespace {

constexpr int kLanes = 16;

float row_sum(const float* x, int64_t n) noexcept {
  float lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
#pragma omp simd
    for (int l = 0; l < kLanes; ++l) lanes[l] += x[i + l];
  }
  for (; i < n; ++i) lanes[0] += x[i];
  for (int w = kLanes / 2; w >= 1; w /= 2)
    for (int l = 0; l < w; ++l) lanes[l] += lanes[l + w];
  return lanes[0];
}

float row_sq_dev(const float* x, int64_t n, float mean) noexcept {
  float lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
#pragma omp simd
    for (int l = 0; l < kLanes; ++l) {
      const float d = x[i + l] - mean;
      lanes[l] += d * d;
    }
  }
  for (; i < n; ++i) {
    const float d = x[i] - mean;
    lanes[0] += d * d;
  }
  for (int w = kLanes / 2; w >= 1; w /= 2)
    for (int l = 0; l < w; ++l) lanes[l] += lanes[l + w];
  return lanes[0];
}

}  // namespace

void layer_norm_kernel(const tsr_plugin_context& context, const tsr_kernel_call* raw_call) {
  const tsr_kernel_call& call = sdk::check_call(raw_call, 5, 3);
  const tsr_tensor_desc& input = sdk::tensor_arg(call, 0, "input");
  const std::span<const int64_t> normalized = sdk::int_list_arg(call, 1, "normalized_shape");
  const tsr_tensor_desc* weight = sdk::optional_tensor_arg(call, 2, "weight");
  const tsr_tensor_desc* bias = sdk::optional_tensor_arg(call, 3, "bias");
  const float eps = static_cast<float>(sdk::float_arg(call, 4, "eps"));
  tsr_tensor_desc& out = sdk::out_arg(call, 0);
  tsr_tensor_desc& mean = sdk::out_arg(call, 1);
  tsr_tensor_desc& rstd = sdk::out_arg(call, 2);

  if (input.dtype != TSR_FLOAT32)
    sdk::throw_unsupported_dtype(call, "input", input.dtype, kPluginName);
  const sdk::norm_rows shape = sdk::check_normalized_shape(call, input, normalized);
  const int64_t n = shape.n, rows = shape.rows;
  sdk::check_contiguous(call, input, "input");
  sdk::check_same_sizes(call, out, "out", input, "input");
  sdk::check_contiguous(call, out, "out");
  sdk::check_dtype(call, out, "out", TSR_FLOAT32);
  for (tsr_tensor_desc* stat : {&mean, &rstd}) {
    sdk::check_dtype(call, *stat, "out", TSR_FLOAT32);
    sdk::check_contiguous(call, *stat, "out");
    if (sdk::numel(*stat) != rows)
      sdk::throw_status(TSR_INVALID_ARGUMENT,
                        "%s: mean/rstd outputs have %lld elements, expected one per row (%lld)",
                        sdk::op_name(call), static_cast<long long>(sdk::numel(*stat)),
                        static_cast<long long>(rows));
  }
  for (const tsr_tensor_desc* p : {weight, bias}) {
    if (p == nullptr) continue;
    const char* name = p == weight ? "weight" : "bias";
    sdk::check_dtype(call, *p, name, TSR_FLOAT32);
    sdk::check_contiguous(call, *p, name);
    if (sdk::numel(*p) != n)
      sdk::throw_status(TSR_INVALID_ARGUMENT, "%s: argument '%s' has %lld elements, expected %lld",
                        sdk::op_name(call), name, static_cast<long long>(sdk::numel(*p)),
                        static_cast<long long>(n));
  }
  if (rows == 0) return;

  const float* x = static_cast<const float*>(input.data);
  float* y = static_cast<float*>(out.data);
  float* mean_out = static_cast<float*>(mean.data);
  float* rstd_out = static_cast<float*>(rstd.data);
  const float* w = weight ? static_cast<const float*>(weight->data) : nullptr;
  const float* b = bias ? static_cast<const float*>(bias->data) : nullptr;
  if (n == 0) {
    for (int64_t r = 0; r < rows; ++r) {
      mean_out[r] = std::numeric_limits<float>::quiet_NaN();
      rstd_out[r] = std::numeric_limits<float>::quiet_NaN();
    }
    return;
  }
  [[maybe_unused]] const bool avx512 = use_avx512(context);
  [[maybe_unused]] const bool stream =
      stream_output(context, rows * n * static_cast<int64_t>(sizeof(float)));
  parallel_ranges(thread_count(context), rows, n, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* xr = x + r * n;
      float* yr = y + r * n;
#if TESSERA_CPU_HAVE_AVX512
      if (avx512) {
        avx512::layer_norm_row(xr, yr, n, w, b, eps, mean_out + r, rstd_out + r, stream);
        continue;
      }
#endif
      const float mu = row_sum(xr, n) / static_cast<float>(n);
      const float var = row_sq_dev(xr, n, mu) / static_cast<float>(n);
      const float rs = 1.0f / std::sqrt(var + eps);
      mean_out[r] = mu;
      rstd_out[r] = rs;
      if (w && b) {
#pragma omp simd
        for (int64_t i = 0; i < n; ++i) yr[i] = (xr[i] - mu) * rs * w[i] + b[i];
      } else if (w) {
#pragma omp simd
        for (int64_t i = 0; i < n; ++i) yr[i] = (xr[i] - mu) * rs * w[i];
      } else if (b) {
#pragma omp simd
        for (int64_t i = 0; i < n; ++i) yr[i] = (xr[i] - mu) * rs + b[i];
      } else {
#pragma omp simd
        for (int64_t i = 0; i < n; ++i) yr[i] = (xr[i] - mu) * rs;
      }
    }
  });
}

}  // namespace tessera::cpu
