// layer_norm_backward.cpp - native_layer_norm_backward for float32 (the
// formula in core/ops/nn/norm_backward.cpp), in two passes over the data.
//
// Pass 1, OpenMP over rows: per row of n elements, with x^ = (x - mean) rstd
// and gx = g w (g without weight), the two sums a = sum gx and b = sum gx x^
// (16 float32 lanes each), then dx = rstd (gx - a / n - x^ b / n) in one
// vectorised sweep; the row is in L1/L2 for the second sweep.
// Pass 2, OpenMP over blocks of columns: dw = sum over rows of g x^ and db =
// sum over rows of g, each column summed in row order, so the result does not
// depend on the thread count.
// output_mask says which of (dx, dw, db) to compute; the others are left
// untouched (the core drops them). mean and rstd are read as given.
#include <algorithm>
#include <cmath>
#include <span>

#include "../parallel.hpp"
#include "nn_kernels.hpp"

namespace tessera::cpu {
namespace {

constexpr int kLanes = 16;
constexpr int64_t kColumnBlock = 256;

// Sets sum_gx = sum gx and sum_gx_xhat = sum gx x^ over one row; gx = g w,
// or g when w is null.
inline void row_sums(const float* g, const float* x, const float* w, int64_t n, float mu, float rs,
                     float& sum_gx, float& sum_gx_xhat) noexcept {
  float a[kLanes] = {}, b[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
#pragma omp simd
    for (int l = 0; l < kLanes; ++l) {
      const float gx = w ? g[i + l] * w[i + l] : g[i + l];
      a[l] += gx;
      b[l] += gx * ((x[i + l] - mu) * rs);
    }
  }
  for (; i < n; ++i) {
    const float gx = w ? g[i] * w[i] : g[i];
    a[0] += gx;
    b[0] += gx * ((x[i] - mu) * rs);
  }
  for (int width = kLanes / 2; width >= 1; width /= 2) {
    for (int l = 0; l < width; ++l) {
      a[l] += a[l + width];
      b[l] += b[l + width];
    }
  }
  sum_gx = a[0];
  sum_gx_xhat = b[0];
}

}  // namespace

void layer_norm_backward_kernel(const tsr_plugin_context& context,
                                const tsr_kernel_call* raw_call) {
  const tsr_kernel_call& call = sdk::check_call(raw_call, 8, 3);
  const tsr_tensor_desc& grad = sdk::tensor_arg(call, 0, "grad_out");
  const tsr_tensor_desc& input = sdk::tensor_arg(call, 1, "input");
  const std::span<const int64_t> normalized = sdk::int_list_arg(call, 2, "normalized_shape");
  const tsr_tensor_desc& mean = sdk::tensor_arg(call, 3, "mean");
  const tsr_tensor_desc& rstd = sdk::tensor_arg(call, 4, "rstd");
  const tsr_tensor_desc* weight = sdk::optional_tensor_arg(call, 5, "weight");
  const std::span<const int32_t> mask = sdk::bool_list_arg(call, 7, "output_mask", 3);
  const bool want_dx = mask[0] != 0;
  const bool want_dw = mask[1] != 0;
  const bool want_db = mask[2] != 0;
  tsr_tensor_desc& dx = sdk::out_arg(call, 0);
  tsr_tensor_desc& dw = sdk::out_arg(call, 1);
  tsr_tensor_desc& db = sdk::out_arg(call, 2);

  const tsr_tensor_desc* floats[7] = {&grad, &input, &mean, &rstd, &dx, &dw, &db};
  const char* names[7] = {"grad_out",   "input",       "mean",     "rstd",
                          "grad_input", "grad_weight", "grad_bias"};
  for (int i = 0; i < 7; ++i) {
    sdk::check_dtype(call, *floats[i], names[i], TSR_FLOAT32);
    sdk::check_contiguous(call, *floats[i], names[i]);
  }
  const sdk::norm_rows shape = sdk::check_normalized_shape(call, input, normalized);
  const int64_t n = shape.n, rows = shape.rows;
  sdk::check_same_sizes(call, grad, "grad_out", input, "input");
  sdk::check_same_sizes(call, dx, "grad_input", input, "input");
  for (const tsr_tensor_desc* stat : {&mean, &rstd})
    if (sdk::numel(*stat) != rows)
      sdk::throw_status(TSR_INVALID_ARGUMENT,
                        "%s: argument '%s' has %lld elements, expected one per row (%lld)",
                        sdk::op_name(call), stat == &mean ? "mean" : "rstd",
                        static_cast<long long>(sdk::numel(*stat)), static_cast<long long>(rows));
  for (const tsr_tensor_desc* p : {weight, static_cast<const tsr_tensor_desc*>(&dw),
                                   static_cast<const tsr_tensor_desc*>(&db)}) {
    if (p == nullptr) continue;
    const char* name = p == weight ? "weight" : p == &dw ? "grad_weight" : "grad_bias";
    if (p == weight) {
      sdk::check_dtype(call, *p, name, TSR_FLOAT32);
      sdk::check_contiguous(call, *p, name);
    }
    if (sdk::numel(*p) != n)
      sdk::throw_status(TSR_INVALID_ARGUMENT, "%s: argument '%s' has %lld elements, expected %lld",
                        sdk::op_name(call), name, static_cast<long long>(sdk::numel(*p)),
                        static_cast<long long>(n));
  }

  const float* g = static_cast<const float*>(grad.data);
  const float* x = static_cast<const float*>(input.data);
  const float* mu = static_cast<const float*>(mean.data);
  const float* rs = static_cast<const float*>(rstd.data);
  const float* w = weight ? static_cast<const float*>(weight->data) : nullptr;
  float* gi = static_cast<float*>(dx.data);
  float* gw = static_cast<float*>(dw.data);
  float* gb = static_cast<float*>(db.data);
  const int threads = thread_count(context);

  if (want_dx && rows > 0 && n > 0) {  // n == 0 or rows == 0: dx has no elements
    const float inv_n = 1.0f / static_cast<float>(n);
    parallel_ranges(threads, rows, 2 * n, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const float* gr = g + r * n;
        const float* xr = x + r * n;
        float* dr = gi + r * n;
        const float m = mu[r], s = rs[r];
        float a = 0.0f, b = 0.0f;
        row_sums(gr, xr, w, n, m, s, a, b);
        a *= inv_n;
        b *= inv_n;
        if (w) {
#pragma omp simd
          for (int64_t i = 0; i < n; ++i) dr[i] = s * (gr[i] * w[i] - a - (xr[i] - m) * s * b);
        } else {
#pragma omp simd
          for (int64_t i = 0; i < n; ++i) dr[i] = s * (gr[i] - a - (xr[i] - m) * s * b);
        }
      }
    });
  }
  if (!(want_dw || want_db) || n == 0) return;
  const int64_t blocks = (n + kColumnBlock - 1) / kColumnBlock;
  parallel_ranges(threads, blocks, rows * kColumnBlock * 2, [&](int64_t begin, int64_t end) {
    for (int64_t blk = begin; blk < end; ++blk) {
      const int64_t c0 = blk * kColumnBlock;
      const int64_t width = std::min(kColumnBlock, n - c0);
      float sw[kColumnBlock] = {}, sb[kColumnBlock] = {};
      for (int64_t r = 0; r < rows; ++r) {
        const float* gr = g + r * n + c0;
        const float* xr = x + r * n + c0;
        const float m = mu[r], s = rs[r];
#pragma omp simd
        for (int64_t i = 0; i < width; ++i) {
          sw[i] += gr[i] * ((xr[i] - m) * s);
          sb[i] += gr[i];
        }
      }
      if (want_dw) std::copy(sw, sw + width, gw + c0);
      if (want_db) std::copy(sb, sb + width, gb + c0);
    }
  });
}

}  // namespace tessera::cpu
