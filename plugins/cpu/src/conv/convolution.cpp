// convolution.cpp - the convolution kernel (schema in conv_table.cpp,
// contract in core/registry/defs/conv.def) and the argument readers of conv_kernels.hpp.
//
// float32 goes to oneDNN (onednn_conv.hpp); operands with zero or negative
// strides are first packed contiguous, since oneDNN describes positive
// strides only. float64, and float32 problems oneDNN refuses (a transposed
// convolution whose output_padding exceeds its padding), run direct loops:
// one (batch, output channel) plane per task, accumulating in double, over 3
// spatial dims (1-d and 2-d problems get leading size-1 dims). The transposed
// loops gather: output position x receives input position i through kernel
// tap t when x + padding - t * dilation = i * stride.
#include <algorithm>
#include <cstring>
#include <vector>

#include "../parallel.hpp"
#include "conv_kernels.hpp"
#include "onednn_conv.hpp"
#include "tessera/sdk/kernel_args.hpp"
#include "tessera/sdk/op_checks.hpp"
#include "tessera/sdk/status.hpp"

namespace tessera::cpu {

namespace conv_detail {

void require(const tsr_kernel_call& call, bool ok, const char* what) {
  if (!ok) sdk::throw_status(TSR_INVALID_ARGUMENT, "%s: %s", sdk::op_name(call), what);
}

void int_list_arg(const tsr_kernel_call& call, int index, const char* name, int n, int64_t* out) {
  const auto list = sdk::optional_int_list_arg(call, index, name);
  if (!list || static_cast<int>(list->size()) != n)
    sdk::throw_status(TSR_INVALID_ARGUMENT,
                      "%s: argument '%s' must be a list of %d ints (one per spatial dim); the "
                      "host resolves single values",
                      sdk::op_name(call), name, n);
  std::copy(list->begin(), list->end(), out);
}

}  // namespace conv_detail

namespace {

using conv_detail::call_scratch;
using conv_detail::require;

// A convolution canonicalised to 3 spatial dims (leading size-1 dims added).
struct conv_geometry {
  int64_t n = 0, c = 0, o = 0, groups = 1;
  int64_t in[3] = {1, 1, 1}, kernel[3] = {1, 1, 1}, out[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1}, padding[3] = {}, dilation[3] = {1, 1, 1};
  int64_t xs[5] = {}, ws[5] = {}, ys[5] = {}, bs = 0;  // element strides
  bool transposed = false;
};

// Copies the 5-d-or-less strided float tensor into a contiguous buffer.
template <class T>
void pack(const tsr_tensor_desc& d, std::vector<T>& buffer) {
  int64_t numel = 1;
  for (int i = 0; i < d.ndim; ++i) numel *= d.sizes[i];
  buffer.resize(static_cast<size_t>(numel));
  const T* base = static_cast<const T*>(d.data);
  int64_t idx[TSR_MAX_DIMS] = {};
  for (int64_t e = 0; e < numel; ++e) {
    int64_t off = 0;
    for (int i = 0; i < d.ndim; ++i) off += idx[i] * d.strides[i];
    buffer[static_cast<size_t>(e)] = base[off];
    for (int i = d.ndim - 1; i >= 0; --i) {
      if (++idx[i] < d.sizes[i]) break;
      idx[i] = 0;
    }
  }
}

// True when oneDNN can describe `d` in place: positive strides on dims > 1.
bool positive_strides(const tsr_tensor_desc& d) {
  for (int i = 0; i < d.ndim; ++i)
    if (d.sizes[i] > 1 && d.strides[i] <= 0) return false;
  return true;
}

// Strides of `d` with size-1 dims given their contiguous value (oneDNN only
// reads them through sizes, but rejects non-positive ones).
void normalized_strides(const tsr_tensor_desc& d, int64_t* out) {
  int64_t running = 1;
  for (int i = d.ndim - 1; i >= 0; --i) {
    out[i] = d.sizes[i] == 1 ? running : d.strides[i];
    running *= d.sizes[i];
  }
}

// Row-major strides for `d`'s sizes (after packing it).
void contiguous_of(tsr_tensor_desc& d) {
  int64_t running = 1;
  for (int i = d.ndim - 1; i >= 0; --i) {
    d.strides[i] = running;
    running *= d.sizes[i];
  }
}

void fill_geometry(conv_geometry& g, const conv_problem& p) {
  const int off = 3 - p.spatial;
  g.n = p.n;
  g.c = p.c;
  g.o = p.o;
  g.groups = p.groups;
  g.transposed = p.transposed;
  g.bs = 1;
  for (int i = 0; i < 2; ++i) {
    g.xs[i] = p.src_strides[i];
    g.ws[i] = p.weight_strides[i];
    g.ys[i] = p.dst_strides[i];
  }
  for (int i = 0; i < p.spatial; ++i) {
    g.in[off + i] = p.in[i];
    g.kernel[off + i] = p.kernel[i];
    g.out[off + i] = p.out[i];
    g.stride[off + i] = p.stride[i];
    g.padding[off + i] = p.padding[i];
    g.dilation[off + i] = p.dilation[i];
    g.xs[2 + off + i] = p.src_strides[2 + i];
    g.ws[2 + off + i] = p.weight_strides[2 + i];
    g.ys[2 + off + i] = p.dst_strides[2 + i];
  }
}

template <class T>
void conv_loops(const tsr_plugin_context& context, const conv_geometry& g, const T* x, const T* w,
                const T* b, T* y) {
  const int64_t og = g.o / g.groups, cg = g.c / g.groups;
  const int64_t plane = g.out[0] * g.out[1] * g.out[2];
  const int64_t taps = g.kernel[0] * g.kernel[1] * g.kernel[2];
  parallel_ranges(thread_count(context), g.n * g.o, plane * cg * taps, [&](int64_t t0, int64_t t1) {
    for (int64_t task = t0; task < t1; ++task) {
      const int64_t n = task / g.o, oc = task % g.o, grp = oc / og;
      for (int64_t z = 0; z < g.out[0]; ++z) {
        for (int64_t yy = 0; yy < g.out[1]; ++yy) {
          for (int64_t xx = 0; xx < g.out[2]; ++xx) {
            const int64_t pos[3] = {z, yy, xx};
            double acc = b ? static_cast<double>(b[oc * g.bs]) : 0.0;
            for (int64_t k0 = 0; k0 < g.kernel[0]; ++k0) {
              int64_t i0;
              if (!g.transposed) {
                i0 = pos[0] * g.stride[0] - g.padding[0] + k0 * g.dilation[0];
              } else {
                const int64_t t = pos[0] + g.padding[0] - k0 * g.dilation[0];
                if (t < 0 || t % g.stride[0] != 0) continue;
                i0 = t / g.stride[0];
              }
              if (i0 < 0 || i0 >= g.in[0]) continue;
              for (int64_t k1 = 0; k1 < g.kernel[1]; ++k1) {
                int64_t i1;
                if (!g.transposed) {
                  i1 = pos[1] * g.stride[1] - g.padding[1] + k1 * g.dilation[1];
                } else {
                  const int64_t t = pos[1] + g.padding[1] - k1 * g.dilation[1];
                  if (t < 0 || t % g.stride[1] != 0) continue;
                  i1 = t / g.stride[1];
                }
                if (i1 < 0 || i1 >= g.in[1]) continue;
                for (int64_t k2 = 0; k2 < g.kernel[2]; ++k2) {
                  int64_t i2;
                  if (!g.transposed) {
                    i2 = pos[2] * g.stride[2] - g.padding[2] + k2 * g.dilation[2];
                  } else {
                    const int64_t t = pos[2] + g.padding[2] - k2 * g.dilation[2];
                    if (t < 0 || t % g.stride[2] != 0) continue;
                    i2 = t / g.stride[2];
                  }
                  if (i2 < 0 || i2 >= g.in[2]) continue;
                  const int64_t xoff = n * g.xs[0] + i0 * g.xs[2] + i1 * g.xs[3] + i2 * g.xs[4];
                  const int64_t woff = k0 * g.ws[2] + k1 * g.ws[3] + k2 * g.ws[4];
                  for (int64_t ci = 0; ci < cg; ++ci) {
                    const int64_t ch = grp * cg + ci;
                    const T wv = g.transposed ? w[woff + ch * g.ws[0] + (oc - grp * og) * g.ws[1]]
                                              : w[woff + oc * g.ws[0] + ci * g.ws[1]];
                    acc += static_cast<double>(x[xoff + ch * g.xs[1]]) * static_cast<double>(wv);
                  }
                }
              }
            }
            y[n * g.ys[0] + oc * g.ys[1] + z * g.ys[2] + yy * g.ys[3] + xx * g.ys[4]] =
                static_cast<T>(acc);
          }
        }
      }
    }
  });
}

}  // namespace

void convolution_kernel(const tsr_plugin_context& context, const tsr_kernel_call* raw_call) {
  const tsr_kernel_call& call = sdk::check_call(raw_call, 9, 1);
  const sdk::convolution_args a = sdk::read_convolution(call);
  const tsr_tensor_desc& input = *a.input;
  const tsr_tensor_desc& weight = *a.weight;
  const tsr_tensor_desc* bias = a.bias;
  const tsr_tensor_desc& out = *a.output;
  const int k = a.spatial;
  if (input.dtype != TSR_FLOAT32 && input.dtype != TSR_FLOAT64)
    sdk::throw_unsupported_dtype(call, "input", input.dtype, kPluginName);
  conv_problem p;
  p.spatial = k;
  p.n = a.n;
  p.c = a.c;
  p.o = a.o;
  p.groups = a.groups;
  p.transposed = a.transposed;
  p.has_bias = bias != nullptr;
  std::copy_n(a.in, 3, p.in);
  std::copy_n(a.kernel, 3, p.kernel);
  std::copy_n(a.out, 3, p.out);
  std::copy_n(a.stride, 3, p.stride);
  std::copy_n(a.padding, 3, p.padding);
  std::copy_n(a.dilation, 3, p.dilation);
  std::copy_n(a.output_padding, 3, p.output_padding);
  int64_t numel = p.n * p.c * p.o;
  for (int i = 0; i < k; ++i) numel *= p.in[i] * p.out[i];
  if (numel == 0) {
    // Empty operands: out (non-empty only when input/weight are empty) is bias or 0.
    require(call, false, "empty operands reach the kernel; the host handles them");
  }

  if (input.dtype == TSR_FLOAT32) {
    std::vector<float> xp, wp, yp;
    const float* x = static_cast<const float*>(input.data);
    const float* w = static_cast<const float*>(weight.data);
    float* y = static_cast<float*>(out.data);
    tsr_tensor_desc xd = input, wd = weight, yd = out;
    if (!positive_strides(input)) {
      pack(input, xp);
      x = xp.data();
      xd.data = xp.data();
      contiguous_of(xd);
    }
    if (!positive_strides(weight)) {
      pack(weight, wp);
      w = wp.data();
      wd.data = wp.data();
      contiguous_of(wd);
    }
    const bool direct_out = positive_strides(out);
    if (!direct_out) {
      int64_t total = 1;
      for (int i = 0; i < out.ndim; ++i) total *= out.sizes[i];
      yp.resize(static_cast<size_t>(total));
      y = yp.data();
      contiguous_of(yd);
    }
    normalized_strides(xd, p.src_strides);
    normalized_strides(wd, p.weight_strides);
    normalized_strides(yd, p.dst_strides);
    std::vector<float> bp;
    const float* b = nullptr;
    if (bias) {
      b = static_cast<const float*>(bias->data);
      if (bias->strides[0] != 1 && bias->sizes[0] > 1) {
        pack(*bias, bp);
        b = bp.data();
      }
    }
    p.threads = thread_count(context);
    apply_thread_count(context);
    call_scratch scratch(call);
    bool done = onednn_convolution(p, x, w, b, y, scratch);
    if (!done) {
      conv_geometry g;
      fill_geometry(g, p);
      conv_loops<float>(context, g, x, w, b, y);
    }
    if (!direct_out) {
      // Scatter the packed result into out's strides.
      const float* src = yp.data();
      int64_t idx[TSR_MAX_DIMS] = {};
      float* base = static_cast<float*>(out.data);
      for (size_t e = 0; e < yp.size(); ++e) {
        int64_t off = 0;
        for (int i = 0; i < out.ndim; ++i) off += idx[i] * out.strides[i];
        base[off] = src[e];
        for (int i = out.ndim - 1; i >= 0; --i) {
          if (++idx[i] < out.sizes[i]) break;
          idx[i] = 0;
        }
      }
    }
    return;
  }
  // float64: direct loops over the caller's strides.
  for (int i = 0; i < input.ndim; ++i) {
    p.src_strides[i] = input.strides[i];
    p.weight_strides[i] = weight.strides[i];
    p.dst_strides[i] = out.strides[i];
  }
  conv_geometry g;
  fill_geometry(g, p);
  if (bias) g.bs = bias->strides[0];
  conv_loops<double>(
      context, g, static_cast<const double*>(input.data), static_cast<const double*>(weight.data),
      bias ? static_cast<const double*>(bias->data) : nullptr, static_cast<double*>(out.data));
}

}  // namespace tessera::cpu
