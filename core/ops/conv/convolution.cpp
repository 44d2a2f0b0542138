// convolution (fusable) and its front doors conv1d/2d/3d (numeric and
// 'same'/'valid' padding) and conv_transpose1d/2d/3d.
//
// convolution validates like PyTorch (messages included), computes the output
// shape and runs the device's fused kernel when it has one for the dtypes
// (contract in defs/conv.def). Otherwise it decomposes:
//  - forward: the input is zero-padded (zeros + copy_ into the interior), an
//    as_strided view exposes every window as (G, C/G, k..., N, out...), one
//    contiguous copy of it is the im2col matrix (G, C/G * K, N * L), and one
//    bmm with the weight viewed as (G, O/G, C/G * K) gives (G, O/G, N * L),
//    permuted to (N, O, out...). With 3 spatial dims and groups > 1 the
//    window view would need 9 dims, so each group runs its own mm.
//  - transposed (the gradient of a convolution with respect to its input):
//    cols = W^T x per group by bmm, then col2im: for each kernel offset the
//    matching (strided) slice of a zero-initialised full-size output gets
//    add_ of that offset's columns; the padding is cropped at the end.
//  - bias: add_ of bias viewed as (O, 1, ...) on the fresh result.
#include <algorithm>
#include <string>

#include "dispatch/kernel_call.h"
#include "dispatch/op_api.h"
#include "dispatch/values.h"
#include "ops/linalg/linalg_util.h"
#include "ops/op_impls.h"
#include "runtime/runtime.h"
#include "util/error.h"

namespace tsr::ops {

namespace {

using linalg_detail::IntParams;

struct ConvParams {
  int32_t k = 0;  // spatial dims
  int64_t stride[3] = {1, 1, 1}, padding[3] = {}, dilation[3] = {1, 1, 1}, output_padding[3] = {};
  bool transposed = false;
  int64_t groups = 1;
};

std::string list_str(const int64_t* v, int32_t n, const char* sep) {
  std::string s;
  for (int32_t i = 0; i < n; ++i) s += (i ? sep : "") + std::to_string(v[i]);
  return s;
}

// PyTorch's checks (check_shape_forward and friends); returns the output shape.
Shape conv_output_shape(const OpDef& op, const TensorImpl& in, const TensorImpl& w,
                        const TensorImpl* bias, const ConvParams& p) {
  const int32_t k = p.k;
  for (int32_t i = 0; i < k; ++i) {
    if (p.stride[i] <= 0)
      fail(TSR_INVALID_ARGUMENT, "op '{}': non-positive stride is not supported (stride={})",
           op.name, shape_str(k, p.stride));
    if (p.padding[i] < 0)
      fail(TSR_INVALID_ARGUMENT, "op '{}': negative padding is not supported (padding={})", op.name,
           shape_str(k, p.padding));
    if (p.dilation[i] <= 0)
      fail(TSR_INVALID_ARGUMENT, "op '{}': non-positive dilation is not supported (dilation={})",
           op.name, shape_str(k, p.dilation));
    if (p.transposed && p.output_padding[i] < 0)
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': negative output_padding is not supported (output_padding={})", op.name,
           shape_str(k, p.output_padding));
  }
  if (p.groups <= 0)
    fail(TSR_INVALID_ARGUMENT, "op '{}': non-positive groups is not supported (groups={})", op.name,
         p.groups);
  const std::string wshape = shape_str(w.ndim, w.sizes);
  const std::string ishape = shape_str(in.ndim, in.sizes);
  if (w.sizes[0] < p.groups)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': Given groups={}, expected weight to be at least {} at dimension 0, but got "
         "weight of size {} instead",
         op.name, p.groups, p.groups, wshape);
  if (w.sizes[0] % p.groups != 0)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': Given groups={}, expected weight to be divisible by {} at dimension 0, but "
         "got weight of size {} instead",
         op.name, p.groups, p.groups, wshape);
  for (int32_t i = 0; i < k; ++i)
    if (w.sizes[2 + i] <= 0)
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': kernel size should be greater than zero, but got weight of size {}", op.name,
           wshape);
  int64_t out_channels;
  if (!p.transposed) {
    if (in.sizes[1] != w.sizes[1] * p.groups)
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': Given groups={}, weight of size {}, expected input{} to have {} channels, "
           "but got {} channels instead",
           op.name, p.groups, wshape, ishape, w.sizes[1] * p.groups, in.sizes[1]);
    out_channels = w.sizes[0];
  } else {
    if (in.sizes[1] != w.sizes[0])
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': Given transposed=1, weight of size {}, expected input{} to have {} "
           "channels, but got {} channels instead",
           op.name, wshape, ishape, w.sizes[0], in.sizes[1]);
    out_channels = w.sizes[1] * p.groups;
    for (int32_t i = 0; i < k; ++i)
      if (p.output_padding[i] >= p.stride[i] && p.output_padding[i] >= p.dilation[i])
        fail(TSR_INVALID_ARGUMENT,
             "op '{}': output padding must be smaller than either stride or dilation, but got "
             "output_padding={}, stride={} and dilation={}",
             op.name, shape_str(k, p.output_padding), shape_str(k, p.stride),
             shape_str(k, p.dilation));
  }
  if (bias && (bias->ndim != 1 || bias->sizes[0] != out_channels))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': Given weight of size {}, expected bias to be 1-dimensional with {} elements, "
         "but got bias of size {} instead",
         op.name, wshape, out_channels, shape_str(bias->ndim, bias->sizes));
  bool spatial_empty = false;
  for (int32_t i = 0; i < k; ++i) spatial_empty = spatial_empty || in.sizes[2 + i] == 0;
  if (spatial_empty && in.sizes[0] != 0 && in.sizes[1] != 0)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': Only zero batch or zero channel inputs are supported, but got input shape: {}",
         op.name, ishape);
  Shape out;
  out.ndim = in.ndim;
  out.sizes[0] = in.sizes[0];
  out.sizes[1] = out_channels;
  int64_t padded[3], kernel[3], size[3];
  bool too_small = false;
  for (int32_t i = 0; i < k; ++i) {
    const int64_t ext = p.dilation[i] * (w.sizes[2 + i] - 1) + 1;
    padded[i] = in.sizes[2 + i] + 2 * p.padding[i];
    kernel[i] = ext;
    if (!p.transposed) {
      size[i] = padded[i] < ext ? 0 : (padded[i] - ext) / p.stride[i] + 1;
    } else {
      size[i] = (in.sizes[2 + i] - 1) * p.stride[i] - 2 * p.padding[i] + ext + p.output_padding[i];
    }
    too_small = too_small || (!p.transposed && padded[i] < ext) || (p.transposed && size[i] < 1);
  }
  if (too_small && !p.transposed)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': Calculated padded input size per channel: ({}). Kernel size: ({}). Kernel "
         "size can't be greater than actual input size",
         op.name, list_str(padded, k, " x "), list_str(kernel, k, " x "));
  if (too_small && !spatial_empty)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': Given input size per channel: ({}). Calculated output size per channel: ({}). "
         "Output size is too small",
         op.name, list_str(in.sizes + 2, k, " x "), list_str(size, k, " x "));
  for (int32_t i = 0; i < k; ++i) out.sizes[2 + i] = std::max<int64_t>(size[i], 0);
  return out;
}

// The forward decomposition (see the file comment).
TensorRef conv_forward_decomposed(Runtime* rt, TensorImpl* in, TensorImpl* w, const ConvParams& p,
                                  const Shape& out_shape) {
  const int32_t k = p.k;
  const int64_t n = in->sizes[0], c = in->sizes[1], g = p.groups, cg = c / g, o = w->sizes[0],
                og = o / g;
  int64_t kprod = 1, l = 1;
  for (int32_t i = 0; i < k; ++i) {
    kprod *= w->sizes[2 + i];
    l *= out_shape.sizes[2 + i];
  }
  DeviceRecord* dev = in->device();
  TensorRef x = TensorRef::borrow(in);
  bool padded = false;
  for (int32_t i = 0; i < k; ++i) padded = padded || p.padding[i] > 0;
  if (padded) {
    Shape ps = shape_of(*in);
    for (int32_t i = 0; i < k; ++i) ps.sizes[2 + i] += 2 * p.padding[i];
    TensorRef xp = op::full(rt, dev, in->dtype, ps, scalar_int(0));
    int64_t offset = xp->offset;
    for (int32_t i = 0; i < k; ++i) offset += p.padding[i] * xp->strides[2 + i];
    TensorRef interior = op::as_strided(xp.get(), op::ints(in->sizes, in->ndim),
                                        op::ints(xp->strides, in->ndim), offset);
    op::call(rt, OpId::copy_, interior, in);
    x = xp;
  }
  // Window view dims: [G,] C/G, k..., N, out...
  const bool batched_groups = 3 + 2 * k <= TSR_MAX_DIMS;
  auto window_view = [&](int64_t group, bool with_group_dim) {
    int64_t sizes[TSR_MAX_DIMS], strides[TSR_MAX_DIMS];
    int32_t nd = 0;
    if (with_group_dim) {
      sizes[nd] = g;
      strides[nd++] = cg * x->strides[1];
    }
    sizes[nd] = cg;
    strides[nd++] = x->strides[1];
    for (int32_t i = 0; i < k; ++i) {
      sizes[nd] = w->sizes[2 + i];
      strides[nd++] = p.dilation[i] * x->strides[2 + i];
    }
    sizes[nd] = n;
    strides[nd++] = x->strides[0];
    for (int32_t i = 0; i < k; ++i) {
      sizes[nd] = out_shape.sizes[2 + i];
      strides[nd++] = p.stride[i] * x->strides[2 + i];
    }
    return op::as_strided(x.get(), op::ints(sizes, nd), op::ints(strides, nd),
                          x->offset + group * cg * x->strides[1]);
  };
  TensorRef r;  // (G, O/G, N * L)
  if (batched_groups) {
    TensorRef win = window_view(0, true);
    TensorRef cols = op::reshape(op::contiguous(win.get()).get(), {g, cg * kprod, n * l});
    TensorRef w3 = op::reshape(w, {g, og, cg * kprod});
    r = op::call(rt, OpId::bmm, w3, cols);
  } else {
    Shape rs;
    rs.ndim = 3;
    rs.sizes[0] = g;
    rs.sizes[1] = og;
    rs.sizes[2] = n * l;
    r = new_tensor(rt, dev, in->dtype, rs);
    TensorRef w3 = op::reshape(w, {g, og, cg * kprod});
    for (int64_t gi = 0; gi < g; ++gi) {
      TensorRef win = window_view(gi, false);
      TensorRef cols = op::reshape(op::contiguous(win.get()).get(), {cg * kprod, n * l});
      TensorRef wg = op::call(rt, OpId::select_int, w3, 0, gi);
      TensorRef part = op::call(rt, OpId::mm, wg, cols);
      TensorRef dst = op::call(rt, OpId::select_int, r, 0, gi);
      op::call(rt, OpId::copy_, dst, part);
    }
  }
  // (G, O/G, N, L) -> (N, G, O/G, L) -> (N, O, out...)
  TensorRef r4 = op::reshape(r.get(), {g, og, n, l});
  const int64_t perm[4] = {2, 0, 1, 3};
  TensorRef rp = op::permute(r4.get(), op::ints(perm, 4));
  TensorRef rc = op::contiguous(rp.get());
  return op::reshape(rc.get(), out_shape);
}

// The transposed decomposition (see the file comment).
TensorRef conv_transposed_decomposed(Runtime* rt, TensorImpl* in, TensorImpl* w,
                                     const ConvParams& p, const Shape& out_shape) {
  const int32_t k = p.k;
  const int64_t n = in->sizes[0], cin = in->sizes[1], g = p.groups, cg = cin / g, og = w->sizes[1];
  int64_t kprod = 1, lin = 1;
  for (int32_t i = 0; i < k; ++i) {
    kprod *= w->sizes[2 + i];
    lin *= in->sizes[2 + i];
  }
  DeviceRecord* dev = in->device();
  // x as (G, C/G, N * Lin).
  TensorRef x4 = op::reshape(in, {n, g, cg, lin});
  const int64_t perm[4] = {1, 2, 0, 3};
  TensorRef xp = op::permute(x4.get(), op::ints(perm, 4));
  TensorRef x3 = op::reshape(xp.get(), {g, cg, n * lin});
  // W^T per group: (G, O/G * K, C/G).
  TensorRef w3 = op::reshape(w, {g, cg, og * kprod});
  TensorRef wt = op::call(rt, OpId::transpose_int, w3, 1, 2);
  TensorRef cols = op::call(rt, OpId::bmm, wt, x3);
  // cols is contiguous (G, O/G, k..., N, in...).
  int64_t col_strides[2 + 3 + 1 + 3];
  {
    int64_t sizes[2 + 3 + 1 + 3];
    int32_t nd = 0;
    sizes[nd++] = g;
    sizes[nd++] = og;
    for (int32_t i = 0; i < k; ++i) sizes[nd++] = w->sizes[2 + i];
    sizes[nd++] = n;
    for (int32_t i = 0; i < k; ++i) sizes[nd++] = in->sizes[2 + i];
    contiguous_strides(nd, sizes, col_strides);
  }
  // Full output before cropping: (N, G, O/G, full...).
  Shape fs;
  fs.ndim = 3 + k;
  fs.sizes[0] = n;
  fs.sizes[1] = g;
  fs.sizes[2] = og;
  for (int32_t i = 0; i < k; ++i) fs.sizes[3 + i] = out_shape.sizes[2 + i] + 2 * p.padding[i];
  TensorRef full = op::full(rt, dev, in->dtype, fs, scalar_int(0));
  const int64_t* ys = full->strides;
  int64_t src_sizes[6], src_strides[6], dst_strides[6];
  src_sizes[0] = n;
  src_sizes[1] = g;
  src_sizes[2] = og;
  src_strides[0] = col_strides[2 + k];
  src_strides[1] = col_strides[0];
  src_strides[2] = col_strides[1];
  dst_strides[0] = ys[0];
  dst_strides[1] = ys[1];
  dst_strides[2] = ys[2];
  for (int32_t i = 0; i < k; ++i) {
    src_sizes[3 + i] = in->sizes[2 + i];
    src_strides[3 + i] = col_strides[3 + k + i];
    dst_strides[3 + i] = p.stride[i] * ys[3 + i];
  }
  int64_t kidx[3] = {0, 0, 0};
  for (int64_t flat = 0; flat < kprod; ++flat) {
    int64_t rem = flat, src_off = cols->offset, dst_off = full->offset;
    for (int32_t i = k - 1; i >= 0; --i) {
      kidx[i] = rem % w->sizes[2 + i];
      rem /= w->sizes[2 + i];
    }
    for (int32_t i = 0; i < k; ++i) {
      src_off += kidx[i] * col_strides[2 + i];
      dst_off += kidx[i] * p.dilation[i] * ys[3 + i];
    }
    TensorRef src = op::as_strided(cols.get(), op::ints(src_sizes, 3 + k),
                                   op::ints(src_strides, 3 + k), src_off);
    TensorRef dst = op::as_strided(full.get(), op::ints(src_sizes, 3 + k),
                                   op::ints(dst_strides, 3 + k), dst_off);
    op::call(rt, OpId::add__Tensor, dst, src);
  }
  // Crop the padding: (N, O, out...) with O = G * O/G merged.
  int64_t crop_strides[5];
  int64_t crop_off = full->offset;
  crop_strides[0] = ys[0];
  crop_strides[1] = ys[2];
  for (int32_t i = 0; i < k; ++i) {
    crop_strides[2 + i] = ys[3 + i];
    crop_off += p.padding[i] * ys[3 + i];
  }
  TensorRef cropped = op::as_strided(full.get(), op::ints(out_shape.sizes, out_shape.ndim),
                                     op::ints(crop_strides, out_shape.ndim), crop_off);
  return op::contiguous(cropped.get());
}

void add_bias(Runtime* rt, TensorImpl* out, TensorImpl* bias) {
  Shape bs;  // (O, 1, ...): broadcasts over the spatial dims
  bs.ndim = out->ndim - 1;
  bs.sizes[0] = bias->sizes[0];
  for (int32_t d = 1; d < bs.ndim; ++d) bs.sizes[d] = 1;
  TensorRef b = op::reshape(bias, bs);
  op::call(rt, OpId::add__Tensor, out, b);
}

void convolution_impl(OpCall& c, TensorImpl* in, TensorImpl* w, TensorImpl* bias,
                      const ConvParams& p) {
  const OpDef& op = *c.op;
  Runtime* rt = c.runtime;
  Shape out_shape = conv_output_shape(op, *in, *w, bias, p);
  DeviceRecord* dev = in->device();
  int64_t in_numel = in->numel, w_numel = w->numel, out_numel = shape_numel(out_shape);
  if (!dev->is_meta && in_numel > 0 && w_numel > 0 && out_numel > 0) {
    tsr_dtype dts[3] = {in->dtype, w->dtype, bias ? bias->dtype : in->dtype};
    if (const BoundKernel* kernel = try_find_kernel(OpId::convolution, dev, dts, bias ? 3 : 2)) {
      TensorRef out = new_tensor(rt, dev, in->dtype, out_shape);
      tsr_tensor_desc din = in->desc(), dw = w->desc(), db{}, dout = out->desc();
      if (bias) db = bias->desc();
      int64_t op_zero[3] = {0, 0, 0};
      tsr_value args[9];
      args[0].tag = TSR_VALUE_TENSOR;
      args[0].u.desc = &din;
      args[1].tag = TSR_VALUE_TENSOR;
      args[1].u.desc = &dw;
      if (bias) {
        args[2].tag = TSR_VALUE_TENSOR;
        args[2].u.desc = &db;
      } else {
        args[2] = v_none();
      }
      args[3] = v_ints(p.stride, p.k);
      args[4] = v_ints(p.padding, p.k);
      args[5] = v_ints(p.dilation, p.k);
      args[6] = v_bool(p.transposed);
      args[7] = v_ints(p.transposed ? p.output_padding : op_zero, p.k);
      args[8] = v_int(p.groups);
      invoke_kernel(op, *kernel, dev, args, 9, &dout, 1);
      c.set_result(std::move(out));
      return;
    }
  }
  TensorRef out;
  if (out_numel == 0) {
    out = new_tensor(rt, dev, in->dtype, out_shape);
  } else if (in_numel == 0 || w_numel == 0) {
    out = op::full(rt, dev, in->dtype, out_shape, scalar_int(0));  // an empty sum
  } else if (p.transposed) {
    out = conv_transposed_decomposed(rt, in, w, p, out_shape);
  } else {
    out = conv_forward_decomposed(rt, in, w, p, out_shape);
  }
  if (bias && out_numel > 0) add_bias(rt, out.get(), bias);
  c.set_result(std::move(out));
}

void check_conv_dtypes(const OpDef& op, const TensorImpl& in, const TensorImpl& w,
                       const TensorImpl* bias) {
  if (in.dtype != w.dtype)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': Input type ({}) and weight type ({}) should be the same; convert one with to()",
         op.name, dtype_name(in.dtype), dtype_name(w.dtype));
  if (bias && bias->dtype != in.dtype)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': Input type ({}) and bias type ({}) should be the same; convert one with to()",
         op.name, dtype_name(in.dtype), dtype_name(bias->dtype));
  if (in.dtype == TSR_BOOL)
    fail(TSR_UNIMPLEMENTED,
         "op '{}': not implemented for dtype bool; convert input and weight with to()", op.name);
}

}  // namespace

void convolution(OpCall& c) {
  const OpDef& op = *c.op;
  TensorImpl* in = c.tensor(0);
  TensorImpl* w = c.tensor(1);
  TensorImpl* bias = c.opt_tensor(2);
  if (w->ndim < 3 || w->ndim > 5)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': weight should have 3 to 5 dimensions (1 to 3 spatial dims), but got weight "
         "of size {}",
         op.name, shape_str(w->ndim, w->sizes));
  if (in->ndim != w->ndim)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': Expected {}-dimensional input for {}-dimensional weight {}, but got "
         "{}-dimensional input of size {} instead",
         op.name, w->ndim, w->ndim, shape_str(w->ndim, w->sizes), in->ndim,
         shape_str(in->ndim, in->sizes));
  check_same_device(op, *in, *w, "input", "weight");
  if (bias) check_same_device(op, *in, *bias, "input", "bias");
  check_conv_dtypes(op, *in, *w, bias);
  ConvParams p;
  p.k = w->ndim - 2;
  IntParams s = linalg_detail::int_params(c, 3, p.k), pad = linalg_detail::int_params(c, 4, p.k),
            dil = linalg_detail::int_params(c, 5, p.k), opad = linalg_detail::int_params(c, 7, p.k);
  for (int32_t i = 0; i < p.k; ++i) {
    p.stride[i] = s.v[i];
    p.padding[i] = pad.v[i];
    p.dilation[i] = dil.v[i];
    p.output_padding[i] = opad.v[i];
  }
  p.transposed = c.bool_arg(6);
  p.groups = c.int_arg(8);
  convolution_impl(c, in, w, bias, p);
}

namespace {

OpId conv_op() { return OpId::convolution; }

// conv*/conv_transpose*: the input is (C, spatial...) or (N, C, spatial...)
// and the weight (`weight_dims`, k kernel dims); returns whether the input is
// unbatched. INVALID_ARGUMENT naming the op otherwise.
bool check_conv_ranks(const OpDef& op, const TensorImpl& in, const TensorImpl& w, int32_t k,
                      const char* weight_dims) {
  const std::string base = op.name.substr(0, op.name.find('.'));
  if (in.ndim != k + 1 && in.ndim != k + 2)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': Expected {}D (unbatched) or {}D (batched) input to {}, but got input of "
         "size: {}",
         op.name, k + 1, k + 2, base, shape_str(in.ndim, in.sizes));
  if (w.ndim != k + 2)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': expected weight to be {}-dimensional ({}, {} kernel dims), but got weight of "
         "size {}",
         op.name, k + 2, weight_dims, k, shape_str(w.ndim, w.sizes));
  return in.ndim == k + 1;
}

// conv1d/2d/3d and their padding-string forms. `k` spatial dims.
void conv_nd(OpCall& c, int32_t k, bool string_padding) {
  const OpDef& op = *c.op;
  Runtime* rt = c.runtime;
  TensorImpl* in = c.tensor(0);
  TensorImpl* w = c.tensor(1);
  TensorImpl* bias = c.opt_tensor(2);
  const bool unbatched = check_conv_ranks(op, *in, *w, k, "out_channels, in_channels/groups");
  TensorRef x = unbatched ? op::unsqueeze(in, 0) : TensorRef::borrow(in);
  IntParams stride = linalg_detail::int_params(c, 3, k),
            dilation = linalg_detail::int_params(c, 5, k);
  IntParams padding;
  padding.n = k;
  if (!string_padding) {
    padding = linalg_detail::int_params(c, 4, k);
  } else {
    const std::string mode = c.args[4].u.str;
    if (mode == "same") {
      for (int32_t i = 0; i < k; ++i)
        if (stride.v[i] != 1)
          fail(TSR_INVALID_ARGUMENT,
               "op '{}': padding='same' is not supported for strided convolutions (stride={})",
               op.name, shape_str(k, stride.v));
      // Total padding d * (kernel - 1): left gets half, the right the rest.
      bool odd = false;
      int64_t extra[3] = {0, 0, 0};
      for (int32_t i = 0; i < k; ++i) {
        const int64_t total = dilation.v[i] * (w->sizes[2 + i] - 1);
        padding.v[i] = total / 2;
        extra[i] = total % 2;
        odd = odd || extra[i] != 0;
      }
      if (odd) {
        // One more zero on the right where the total is odd.
        Shape ps = shape_of(*x);
        for (int32_t i = 0; i < k; ++i) ps.sizes[2 + i] += extra[i];
        TensorRef xp = op::full(rt, x->device(), x->dtype, ps, scalar_int(0));
        TensorRef interior = op::as_strided(xp.get(), op::ints(x->sizes, x->ndim),
                                            op::ints(xp->strides, x->ndim), xp->offset);
        op::call(rt, OpId::copy_, interior, x);
        x = xp;
      }
    } else if (mode != "valid") {
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': Invalid padding string: '{}'; use 'valid' (no padding) or 'same'", op.name,
           mode);
    }
  }
  int64_t zeros[3] = {0, 0, 0};
  TensorRef r = op::call(rt, conv_op(), x, w, bias, op::ints(stride.v, k), op::ints(padding.v, k),
                         op::ints(dilation.v, k), false, op::ints(zeros, k), c.int_arg(6));
  c.set_result(unbatched ? op::squeeze(r.get(), 0) : std::move(r));
}

// conv_transpose1d/2d/3d: (input, weight, bias, stride, padding,
// output_padding, groups, dilation).
void conv_transpose_nd(OpCall& c, int32_t k) {
  const OpDef& op = *c.op;
  TensorImpl* in = c.tensor(0);
  TensorImpl* w = c.tensor(1);
  TensorImpl* bias = c.opt_tensor(2);
  const bool unbatched = check_conv_ranks(op, *in, *w, k, "in_channels, out_channels/groups");
  TensorRef x = unbatched ? op::unsqueeze(in, 0) : TensorRef::borrow(in);
  IntParams stride = linalg_detail::int_params(c, 3, k),
            padding = linalg_detail::int_params(c, 4, k), opad = linalg_detail::int_params(c, 5, k),
            dilation = linalg_detail::int_params(c, 7, k);
  TensorRef r =
      op::call(c.runtime, conv_op(), x, w, bias, op::ints(stride.v, k), op::ints(padding.v, k),
               op::ints(dilation.v, k), true, op::ints(opad.v, k), c.int_arg(6));
  c.set_result(unbatched ? op::squeeze(r.get(), 0) : std::move(r));
}

}  // namespace

void conv1d(OpCall& c) { conv_nd(c, 1, false); }
void conv2d(OpCall& c) { conv_nd(c, 2, false); }
void conv3d(OpCall& c) { conv_nd(c, 3, false); }
void conv1d_padding(OpCall& c) { conv_nd(c, 1, true); }
void conv2d_padding(OpCall& c) { conv_nd(c, 2, true); }
void conv3d_padding(OpCall& c) { conv_nd(c, 3, true); }
void conv_transpose1d(OpCall& c) { conv_transpose_nd(c, 1); }
void conv_transpose2d(OpCall& c) { conv_transpose_nd(c, 2); }
void conv_transpose3d(OpCall& c) { conv_transpose_nd(c, 3); }

}  // namespace tsr::ops
