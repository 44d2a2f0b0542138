// Pooling: max_pool2d(_with_indices), avg_pool2d, _adaptive_avg_pool2d and
// adaptive_max_pool2d (fusable), their 1-d forms (a height-1 2-d pool) and
// adaptive_avg_pool2d (routes to _adaptive_avg_pool2d).
//
// Shapes follow PyTorch: 3-d (C, H, W) or 4-d (N, C, H, W) input; out =
// floor_or_ceil((in + 2 pad - dilation (k - 1) - 1) / stride) + 1, and in
// ceil mode the last window must start inside the input or the left padding
// (else one fewer). Decompositions (devices without a fused kernel):
//  - max: the input in a -inf buffer big enough for every window (ceil mode
//    windows may run past the right padding), an as_strided window view
//    copied to (N, C, Ho, Wo, kH * kW), _arg_reduce(argmax) over the last dim,
//    gather of the values, and gather of a host-built table mapping each
//    window slot to its flat input index h * W + w (padding slots map to the
//    window's first in-bounds element, PyTorch's index for an all -inf window);
//  - avg: the sum over the windows of a zero-padded buffer (accumulating in
//    float32 for float16/bfloat16, float64 for int64) divided by a host-built
//    table of per-window divisors (PyTorch's count_include_pad and
//    divisor_override rules), converted back (int64 truncates, as PyTorch);
//  - adaptive avg: two matmuls with averaging matrices (Ho, H) and (Wo, W);
//  - adaptive max: gather of every window (padded to the widest window by
//    repeating its first element) from the flattened input, then as max.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "dispatch/kernel_call.h"
#include "dispatch/op_api.h"
#include "dispatch/values.h"
#include "ops/conv/pooling_params.h"
#include "ops/linalg/linalg_util.h"
#include "ops/op_impls.h"
#include "runtime/runtime.h"
#include "util/checked_math.h"
#include "util/error.h"

namespace tsr::ops {

namespace {

using namespace pool_detail;

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int64_t pooling_output_size(int64_t in, int64_t k, int64_t pad, int64_t s, int64_t d,
                            bool ceil_mode) {
  int64_t out = floor_div(in + 2 * pad - d * (k - 1) - 1 + (ceil_mode ? s - 1 : 0), s) + 1;
  if (ceil_mode && (out - 1) * s >= in + pad) --out;
  return out;
}

// A 2-entry parameter from an int list of 1 or 2 entries (0 allowed for
// stride: it means the kernel size).
bool two(const tsr_value& v, bool allow_empty, int64_t& a, int64_t& b) {
  if (v.tag != TSR_VALUE_INT_LIST) return false;
  if (v.len == 0) return allow_empty;
  if (v.len != 1 && v.len != 2) return false;
  a = v.u.ints[0];
  b = v.u.ints[v.len == 2 ? 1 : 0];
  return true;
}

void check_input_dims(const OpDef& op, const TensorImpl& x) {
  bool ok = x.ndim == 3 || x.ndim == 4;
  for (int32_t d = x.ndim == 4 ? 1 : 0; ok && d < x.ndim; ++d) ok = x.sizes[d] != 0;
  if (!ok)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for "
         "input, but got:{}",
         op.name, shape_str(x.ndim, x.sizes));
}

}  // namespace

Pool2d pool_detail::pool_params(const OpCall& c, int self_arg, const char* name, int dilation_arg,
                                int ceil_arg) {
  const OpDef& op = *c.op;
  const TensorImpl& x = *c.tensor(self_arg);
  Pool2d p;
  if (!two(c.args[self_arg + 1], false, p.kh, p.kw))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': {}: kernel_size must either be a single int, or a tuple of two ints", op.name,
         name);
  p.sh = p.kh;
  p.sw = p.kw;
  if (!two(c.args[self_arg + 2], true, p.sh, p.sw))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': {}: stride must either be omitted, a single int, or a tuple of two ints",
         op.name, name);
  if (!two(c.args[self_arg + 3], false, p.ph, p.pw))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': {}: padding must either be a single int, or a tuple of two ints", op.name, name);
  if (dilation_arg >= 0 && !two(c.args[dilation_arg], false, p.dh, p.dw))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': {}: dilation must be either a single int, or a tuple of two ints", op.name,
         name);
  p.ceil_mode = c.bool_arg(ceil_arg);
  if (p.kh <= 0 || p.kw <= 0)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': kernel size should be greater than zero, but got kH: {} kW: {}", op.name, p.kh,
         p.kw);
  if (p.sh <= 0 || p.sw <= 0)
    fail(TSR_INVALID_ARGUMENT, "op '{}': stride should be greater than zero, but got dH: {} dW: {}",
         op.name, p.sh, p.sw);
  if (p.dh <= 0 || p.dw <= 0)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': dilation should be greater than zero, but got dilationH: {} dilationW: {}",
         op.name, p.dh, p.dw);
  if (p.ph < 0 || p.pw < 0)
    fail(TSR_INVALID_ARGUMENT, "op '{}': pad must be non-negative, but got pad: {}", op.name,
         std::min(p.ph, p.pw));
  if (p.ph > p.kh / 2 || p.pw > p.kw / 2)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': pad should be at most half of kernel size, but got pad={} and kernel_size={}",
         op.name, p.ph > p.kh / 2 ? p.ph : p.pw, p.ph > p.kh / 2 ? p.kh : p.kw);
  check_input_dims(op, x);
  p.batched = x.ndim == 4;
  const int32_t o = p.batched ? 1 : 0;
  p.n = p.batched ? x.sizes[0] : 1;
  p.c = x.sizes[o];
  p.h = x.sizes[o + 1];
  p.w = x.sizes[o + 2];
  p.oh = pooling_output_size(p.h, p.kh, p.ph, p.sh, p.dh, p.ceil_mode);
  p.ow = pooling_output_size(p.w, p.kw, p.pw, p.sw, p.dw, p.ceil_mode);
  if (p.oh < 1 || p.ow < 1)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': Given input size: ({}x{}x{}). Calculated output size: ({}x{}x{}). Output size "
         "is too small",
         op.name, p.c, p.h, p.w, p.c, p.oh, p.ow);
  return p;
}

void pool_detail::check_floating(const OpDef& op, const TensorImpl& x, const char* torch_name,
                                 bool allow_int64) {
  if (is_floating(x.dtype) || (allow_int64 && x.dtype == TSR_INT64)) return;
  fail(TSR_UNIMPLEMENTED,
       "op '{}': \"{}\" not implemented for dtype {}; convert the input to a floating dtype "
       "with to()",
       op.name, torch_name, dtype_name(x.dtype));
}

TensorRef pool_detail::batched4(TensorImpl* x) {
  return x->ndim == 4 ? TensorRef::borrow(x) : op::unsqueeze(x, 0);
}

Shape pool_detail::nchw(int64_t n, int64_t c, int64_t h, int64_t w) {
  Shape s;
  s.ndim = 4;
  s.sizes[0] = n;
  s.sizes[1] = c;
  s.sizes[2] = h;
  s.sizes[3] = w;
  return s;
}

TensorRef pool_detail::unbatch(TensorRef r, bool batched) {
  return batched ? std::move(r) : op::squeeze(r.get(), 0);
}

int64_t pool_detail::avg_divisor(const Pool2d& p, int64_t oh, int64_t ow, bool count_include_pad,
                                 bool has_divisor, int64_t divisor) {
  int64_t hs = oh * p.sh - p.ph, ws = ow * p.sw - p.pw;
  int64_t he = std::min(hs + p.kh, p.h + p.ph), we = std::min(ws + p.kw, p.w + p.pw);
  const int64_t pool_size = (he - hs) * (we - ws);
  hs = std::max<int64_t>(hs, 0);
  ws = std::max<int64_t>(ws, 0);
  he = std::min(he, p.h);
  we = std::min(we, p.w);
  const int64_t count = std::max<int64_t>(he - hs, 0) * std::max<int64_t>(we - ws, 0);
  const int64_t d = has_divisor ? divisor : count_include_pad ? pool_size : count;
  return d == 0 ? 1 : d;  // empty window: 0 / 1
}

namespace {

tsr_value desc_value(tsr_tensor_desc* d) {
  tsr_value v{};
  v.tag = TSR_VALUE_TENSOR;
  v.u.desc = d;
  return v;
}

// The input inside a buffer filled with `fill` that every window fits in.
TensorRef window_buffer(Runtime* rt, TensorImpl* x4, const Pool2d& p, const tsr_scalar& fill) {
  const int64_t need_h = (p.oh - 1) * p.sh + p.dh * (p.kh - 1) + 1;
  const int64_t need_w = (p.ow - 1) * p.sw + p.dw * (p.kw - 1) + 1;
  const int64_t hb = std::max(need_h, p.ph + p.h), wb = std::max(need_w, p.pw + p.w);
  if (p.ph == 0 && p.pw == 0 && hb == p.h && wb == p.w) return TensorRef::borrow(x4);
  TensorRef buf = op::full(rt, x4->device(), x4->dtype, nchw(p.n, p.c, hb, wb), fill);
  const int64_t off = buf->offset + p.ph * buf->strides[2] + p.pw * buf->strides[3];
  TensorRef interior =
      op::as_strided(buf.get(), op::ints(x4->sizes, 4), op::ints(buf->strides, 4), off);
  op::call(rt, OpId::copy_, interior, x4);
  return buf;
}

// (N, C, Ho, Wo, kH, kW) windows of a window_buffer.
TensorRef windows(TensorImpl* buf, const Pool2d& p) {
  const int64_t sizes[6] = {p.n, p.c, p.oh, p.ow, p.kh, p.kw};
  const int64_t strides[6] = {buf->strides[0],        buf->strides[1],
                              p.sh * buf->strides[2], p.sw * buf->strides[3],
                              p.dh * buf->strides[2], p.dw * buf->strides[3]};
  return op::as_strided(buf, op::ints(sizes, 6), op::ints(strides, 6), buf->offset);
}

OpId arg_reduce_op() {
  constexpr OpId id = OpId::_arg_reduce;
  return id;
}
OpId gather_op() {
  constexpr OpId id = OpId::gather;
  return id;
}
OpId sum_dim_op() {
  constexpr OpId id = OpId::sum_dim_IntList;
  return id;
}

// An int64 tensor (1, 1, a, b, k) holding `table`, expanded to (N, C, a, b, k).
TensorRef index_table(Runtime* rt, DeviceRecord* dev, const std::vector<int64_t>& table, int64_t n,
                      int64_t c, int64_t a, int64_t b, int64_t k) {
  const int64_t sizes[5] = {1, 1, a, b, k};
  TensorRef t = new_tensor(rt, dev, TSR_INT64, 5, sizes);
  write_from_host(t.get(), table.data());
  const int64_t full[5] = {n, c, a, b, k};
  return op::call(rt, OpId::expand, t, op::ints(full, 5));
}

// values/indices of the max over the last dim of `slots` (N, C, a, b, K),
// with `table` (K flat input indices per window) giving the indices.
void max_over_slots(Runtime* rt, TensorImpl* slots, const std::vector<int64_t>& table,
                    const Shape& out4, TensorRef& values, TensorRef& indices) {
  TensorRef arg = op::call(rt, arg_reduce_op(), slots, TSR_ARG_REDUCE_ARGMAX, 4, true);
  TensorRef vals = op::call(rt, gather_op(), slots, 4, arg);
  values = op::reshape(vals.get(), out4);
  TensorRef tab = index_table(rt, slots->device(), table, out4.sizes[0], out4.sizes[1],
                              out4.sizes[2], out4.sizes[3], slots->sizes[4]);
  TensorRef idx = op::call(rt, gather_op(), tab, 4, arg);
  indices = op::reshape(idx.get(), out4);
}

void max_pool_decomposed(Runtime* rt, TensorImpl* x4, const Pool2d& p, TensorRef& values,
                         TensorRef& indices) {
  const Shape out4 = nchw(p.n, p.c, p.oh, p.ow);
  DeviceRecord* dev = x4->device();
  if (p.n == 0) {
    values = new_tensor(rt, dev, x4->dtype, out4);
    indices = new_tensor(rt, dev, TSR_INT64, out4);
    return;
  }
  TensorRef buf = window_buffer(rt, x4, p, scalar_float(-std::numeric_limits<double>::infinity()));
  TensorRef win = windows(buf.get(), p);
  const int64_t k = p.kh * p.kw;
  TensorRef slots = op::reshape(win.get(), {p.n, p.c, p.oh, p.ow, k});
  std::vector<int64_t> table(static_cast<size_t>(p.oh * p.ow * k));
  for (int64_t oh = 0; oh < p.oh; ++oh) {
    for (int64_t ow = 0; ow < p.ow; ++ow) {
      int64_t hs = oh * p.sh - p.ph, ws = ow * p.sw - p.pw;
      int64_t h0 = hs, w0 = ws;
      while (h0 < 0) h0 += p.dh;
      while (w0 < 0) w0 += p.dw;
      const int64_t first = h0 * p.w + w0;
      int64_t* row = table.data() + (oh * p.ow + ow) * k;
      for (int64_t i = 0; i < p.kh; ++i)
        for (int64_t j = 0; j < p.kw; ++j) {
          const int64_t ih = hs + i * p.dh, iw = ws + j * p.dw;
          const bool inside = ih >= 0 && ih < p.h && iw >= 0 && iw < p.w;
          row[i * p.kw + j] = inside ? ih * p.w + iw : first;
        }
    }
  }
  max_over_slots(rt, slots.get(), table, out4, values, indices);
}

bool invoke_pool_kernel(OpCall& c, OpId id, TensorImpl* x4, const tsr_value* extra, int32_t nextra,
                        TensorImpl* out0, TensorImpl* out1) {
  DeviceRecord* dev = x4->device();
  if (dev->is_meta || out0->numel == 0) return false;
  tsr_dtype dt = x4->dtype;
  const BoundKernel* kernel = try_find_kernel(id, dev, &dt, 1);
  if (!kernel) return false;
  tsr_tensor_desc dx = x4->desc();
  tsr_value args[8];
  args[0] = desc_value(&dx);
  for (int32_t i = 0; i < nextra; ++i) args[1 + i] = extra[i];
  tsr_tensor_desc outs[2] = {out0->desc(), out1 ? out1->desc() : tsr_tensor_desc{}};
  invoke_kernel(*c.op, *kernel, dev, args, 1 + nextra, outs, out1 ? 2 : 1);
  return true;
}

// max_pool2d(_with_indices); `with_indices` selects the op's result arity.
void max_pool2d_impl(OpCall& c, OpId id, bool with_indices) {
  const OpDef& op = *c.op;
  Runtime* rt = c.runtime;
  TensorImpl* x = c.tensor(0);
  Pool2d p = pool_params(c, 0, "max_pool2d", 4, 5);
  check_floating(op, *x, "max_pool2d", false);
  TensorRef x4 = batched4(x);
  const Shape out4 = nchw(p.n, p.c, p.oh, p.ow);
  DeviceRecord* dev = x->device();
  const int64_t ks[2] = {p.kh, p.kw}, ss[2] = {p.sh, p.sw}, ps[2] = {p.ph, p.pw},
                ds[2] = {p.dh, p.dw};
  const tsr_value extra[5] = {v_ints(ks, 2), v_ints(ss, 2), v_ints(ps, 2), v_ints(ds, 2),
                              v_bool(p.ceil_mode)};
  TensorRef values = new_tensor(rt, dev, x->dtype, out4);
  TensorRef indices;
  if (with_indices) indices = new_tensor(rt, dev, TSR_INT64, out4);
  if (!invoke_pool_kernel(c, id, x4.get(), extra, 5, values.get(), indices.get()) &&
      !dev->is_meta) {
    if (!with_indices && p.n > 0) {
      // No fused max_pool2d: the with-indices op (its kernel or decomposition).
      OpResults r = op::call_all(rt, OpId::max_pool2d_with_indices, x4, op::ints(ks, 2),
                                 op::ints(ss, 2), op::ints(ps, 2), op::ints(ds, 2), p.ceil_mode);
      c.set_result(unbatch(std::move(r.r[0]), p.batched));
      return;
    }
    max_pool_decomposed(rt, x4.get(), p, values, indices);
  }
  c.set_result(unbatch(std::move(values), p.batched));
  if (with_indices) c.set_result(unbatch(std::move(indices), p.batched));
}

}  // namespace

void max_pool2d_with_indices(OpCall& c) { max_pool2d_impl(c, OpId::max_pool2d_with_indices, true); }

void max_pool2d(OpCall& c) { max_pool2d_impl(c, OpId::max_pool2d, false); }

namespace {

// (self, kernel_size, stride, padding, dilation, ceil_mode) of a 1-d pool
// as the 2-d pool of height 1.
OpResults pool1d_as_2d(OpCall& c, OpId pool2d, bool has_dilation, const char* name) {
  const OpDef& op = *c.op;
  TensorImpl* x = c.tensor(0);
  if (x->ndim != 2 && x->ndim != 3)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': {}: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for "
         "input, but got:{}",
         op.name, name, shape_str(x->ndim, x->sizes));
  auto one = [&](int i, bool allow_empty, const char* what) -> int64_t {
    const tsr_value& v = c.args[i];
    if (allow_empty && v.len == 0) return -1;
    if (v.len != 1)
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': {}() {} must be an int, list of ints or tuple of ints of size 1 but got "
           "size {}",
           op.name, name, what, v.len);
    return v.u.ints[0];
  };
  const int64_t k = one(1, false, "kernel_size");
  const int64_t s = one(2, true, "stride");
  const int64_t pad = one(3, false, "padding");
  TensorRef x2 = op::unsqueeze(x, -2);
  const int64_t ks[2] = {1, k}, ss[2] = {1, s < 0 ? k : s}, ps[2] = {0, pad};
  if (has_dilation) {
    const int64_t ds[2] = {1, one(4, false, "dilation")};
    return op::call_all(c.runtime, pool2d, x2, op::ints(ks, 2), op::ints(ss, 2), op::ints(ps, 2),
                        op::ints(ds, 2), c.args[5]);
  }
  return op::call_all(c.runtime, pool2d, x2, op::ints(ks, 2), op::ints(ss, 2), op::ints(ps, 2),
                      c.args[4], c.args[5]);
}

}  // namespace

void max_pool1d_with_indices(OpCall& c) {
  OpResults r = pool1d_as_2d(c, OpId::max_pool2d_with_indices, true, "max_pool1d");
  c.set_result(op::squeeze(r.r[0].get(), -2));
  c.set_result(op::squeeze(r.r[1].get(), -2));
}

void max_pool1d(OpCall& c) {
  OpResults r = pool1d_as_2d(c, OpId::max_pool2d, true, "max_pool1d");
  c.set_result(op::squeeze(r.r[0].get(), -2));
}

void avg_pool1d(OpCall& c) {
  OpResults r = pool1d_as_2d(c, OpId::avg_pool2d, false, "avg_pool1d");
  c.set_result(op::squeeze(r.r[0].get(), -2));
}

void avg_pool2d(OpCall& c) {
  const OpDef& op = *c.op;
  Runtime* rt = c.runtime;
  TensorImpl* x = c.tensor(0);
  Pool2d p = pool_params(c, 0, "avg_pool2d", -1, 4);
  const bool count_include_pad = c.bool_arg(5);
  const bool has_divisor = !c.is_none(6);
  const int64_t divisor = has_divisor ? c.int_arg(6) : 0;
  if (has_divisor && divisor == 0)
    fail(TSR_INVALID_ARGUMENT, "op '{}': divisor must be not zero (divisor_override=0)", op.name);
  check_floating(op, *x, "avg_pool2d", true);
  TensorRef x4 = batched4(x);
  const Shape out4 = nchw(p.n, p.c, p.oh, p.ow);
  DeviceRecord* dev = x->device();
  const int64_t ks[2] = {p.kh, p.kw}, ss[2] = {p.sh, p.sw}, ps[2] = {p.ph, p.pw};
  const tsr_value extra[6] = {v_ints(ks, 2),
                              v_ints(ss, 2),
                              v_ints(ps, 2),
                              v_bool(p.ceil_mode),
                              v_bool(count_include_pad),
                              has_divisor ? v_int(divisor) : v_none()};
  TensorRef out = new_tensor(rt, dev, x->dtype, out4);
  if (invoke_pool_kernel(c, OpId::avg_pool2d, x4.get(), extra, 6, out.get(), nullptr)) {
    c.set_result(unbatch(std::move(out), p.batched));
    return;
  }
  if (p.n == 0 || dev->is_meta) {
    c.set_result(unbatch(std::move(out), p.batched));
    return;
  }
  const tsr_dtype acc = x->dtype == TSR_FLOAT16 || x->dtype == TSR_BFLOAT16 ? TSR_FLOAT32
                        : x->dtype == TSR_INT64                             ? TSR_FLOAT64
                                                                            : x->dtype;
  TensorRef buf = window_buffer(rt, x4.get(), p, scalar_int(0));
  TensorRef win = windows(buf.get(), p);
  const int64_t dims[2] = {4, 5};
  TensorRef sums =
      op::call(rt, sum_dim_op(), win, op::ints(dims, 2), false, static_cast<tsr_dtype>(acc));
  std::vector<double> divisors(static_cast<size_t>(p.oh * p.ow));
  for (int64_t oh = 0; oh < p.oh; ++oh)
    for (int64_t ow = 0; ow < p.ow; ++ow)
      divisors[oh * p.ow + ow] =
          static_cast<double>(avg_divisor(p, oh, ow, count_include_pad, has_divisor, divisor));
  const int64_t dsz[2] = {p.oh, p.ow};
  TensorRef dt64 = new_tensor(rt, dev, TSR_FLOAT64, 2, dsz);
  write_from_host(dt64.get(), divisors.data());
  TensorRef dv = cast(dt64.get(), acc);
  TensorRef q = op::call(rt, OpId::div_Tensor, sums, dv);
  c.set_result(unbatch(cast(q.get(), x->dtype), p.batched));
}

Adaptive pool_detail::adaptive_params(const OpCall& c, int self_arg, int64_t oh, int64_t ow,
                                      const char* name, int size_arg) {
  const OpDef& op = *c.op;
  const TensorImpl& x = *c.tensor(self_arg);
  if (oh < 0 || ow < 0)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': {}: elements of output_size must be greater than or equal to 0 but received "
         "{{{}, {}}}",
         op.name, name, oh, ow);
  bool ok = x.ndim == 3 || x.ndim == 4;
  int32_t bad = -1;
  for (int32_t d = x.ndim == 4 ? 1 : 0; ok && d < x.ndim; ++d)
    if (x.sizes[d] == 0) bad = d;
  if (!ok)
    fail(TSR_INVALID_ARGUMENT, "op '{}': {}(): Expected 3D or 4D tensor, but got {}", op.name, name,
         shape_str(x.ndim, x.sizes));
  if (bad >= 0)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': {}(): Expected input to have non-zero size for non-batch dimensions, but "
         "input has sizes {} with dimension {} being empty",
         op.name, name, shape_str(x.ndim, x.sizes), bad);
  Adaptive a;
  a.batched = x.ndim == 4;
  const int32_t o = a.batched ? 1 : 0;
  a.n = a.batched ? x.sizes[0] : 1;
  a.c = x.sizes[o];
  a.h = x.sizes[o + 1];
  a.w = x.sizes[o + 2];
  a.oh = oh;
  a.ow = ow;
  // The result's size, and the window bounds ((i + 1) * in over out) and the
  // host tables (in * out entries) below, must fit int64 (Note [Checked size
  // arithmetic]).
  const Shape out4{4, {a.n, a.c, oh, ow}};
  const char* arg = c.arg_name(size_arg);
  check_sizes(out4.ndim, out4.sizes, x.itemsize(), arg);
  int64_t span = 0;
  if (!mul_ok(oh, a.h, &span) || !add_ok(span, oh, &span) || !mul_ok(ow, a.w, &span) ||
      !add_ok(span, ow, &span) ||
      !mul_ok(oh * ow, (a.h / std::max<int64_t>(oh, 1) + 2) * (a.w / std::max<int64_t>(ow, 1) + 2),
              &span))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument '{}' = [{}, {}]: the adaptive windows over an input of {} x {} "
         "overflow int64; pass a smaller output_size",
         op.name, arg, oh, ow, a.h, a.w);
  return a;
}

TensorRef pool_detail::averaging_matrix_t(Runtime* rt, DeviceRecord* dev, tsr_dtype dtype,
                                          int64_t in, int64_t out) {
  std::vector<double> m(static_cast<size_t>(in * out), 0.0);
  for (int64_t i = 0; i < out; ++i) {
    const int64_t s = window_start(i, in, out), e = window_end(i, in, out);
    for (int64_t j = s; j < e; ++j) m[j * out + i] = 1.0 / static_cast<double>(e - s);
  }
  const int64_t sizes[2] = {in, out};
  TensorRef t = new_tensor(rt, dev, TSR_FLOAT64, 2, sizes);
  write_from_host(t.get(), m.data());
  return cast(t.get(), dtype);
}

namespace {

// adaptive_params of a forward op: self, then output_size.
Adaptive adaptive_forward_params(const OpCall& c, const char* name) {
  int64_t oh = 0, ow = 0;
  if (!two(c.args[1], false, oh, ow))
    fail(TSR_INVALID_ARGUMENT, "op '{}': {}: output_size must be 2, got {} entries", c.op->name,
         name, c.args[1].len);
  return adaptive_params(c, 0, oh, ow, name, 1);
}

}  // namespace

void adaptive_avg_pool2d_primitive(OpCall& c) {
  const OpDef& op = *c.op;
  Runtime* rt = c.runtime;
  TensorImpl* x = c.tensor(0);
  Adaptive a = adaptive_forward_params(c, "adaptive_avg_pool2d");
  check_floating(op, *x, "adaptive_avg_pool2d", false);
  TensorRef x4 = batched4(x);
  DeviceRecord* dev = x->device();
  const Shape out4 = nchw(a.n, a.c, a.oh, a.ow);
  const int64_t os[2] = {a.oh, a.ow};
  const tsr_value extra[1] = {v_ints(os, 2)};
  TensorRef out = new_tensor(rt, dev, x->dtype, out4);
  if (invoke_pool_kernel(c, OpId::_adaptive_avg_pool2d, x4.get(), extra, 1, out.get(), nullptr) ||
      out->numel == 0 || dev->is_meta) {
    c.set_result(unbatch(std::move(out), a.batched));
    return;
  }
  const tsr_dtype acc =
      x->dtype == TSR_FLOAT16 || x->dtype == TSR_BFLOAT16 ? TSR_FLOAT32 : x->dtype;
  TensorRef xa = cast(x4.get(), acc);
  TensorRef aht = averaging_matrix_t(rt, dev, acc, a.h, a.oh);
  TensorRef awt = averaging_matrix_t(rt, dev, acc, a.w, a.ow);
  TensorRef xt = op::call(rt, OpId::transpose_int, xa, 2, 3);
  TensorRef t1 = op::call(rt, OpId::matmul, xt, aht);
  TensorRef t1t = op::call(rt, OpId::transpose_int, t1, 2, 3);
  TensorRef t2 = op::call(rt, OpId::matmul, t1t, awt);
  c.set_result(unbatch(cast(t2.get(), x->dtype), a.batched));
}

void adaptive_avg_pool2d(OpCall& c) {
  c.set_result(op::call(c.runtime, OpId::_adaptive_avg_pool2d, c.args[0], c.args[1]));
}

void adaptive_avg_pool1d(OpCall& c) {
  const OpDef& op = *c.op;
  TensorImpl* x = c.tensor(0);
  if (x->ndim != 2 && x->ndim != 3)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': adaptive_avg_pool1d(): Expected 2D or 3D tensor, but got {}", op.name,
         shape_str(x->ndim, x->sizes));
  if (c.args[1].len != 1)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': adaptive_avg_pool1d: output_size must be a single int, got {} entries", op.name,
         c.args[1].len);
  TensorRef x2 = op::unsqueeze(x, -2);
  const int64_t os[2] = {1, c.args[1].u.ints[0]};
  TensorRef r = op::call(c.runtime, OpId::_adaptive_avg_pool2d, x2, op::ints(os, 2));
  c.set_result(op::squeeze(r.get(), -2));
}

void adaptive_max_pool2d(OpCall& c) {
  const OpDef& op = *c.op;
  Runtime* rt = c.runtime;
  TensorImpl* x = c.tensor(0);
  Adaptive a = adaptive_forward_params(c, "adaptive_max_pool2d");
  check_floating(op, *x, "adaptive_max_pool2d", false);
  TensorRef x4 = batched4(x);
  DeviceRecord* dev = x->device();
  const Shape out4 = nchw(a.n, a.c, a.oh, a.ow);
  const int64_t os[2] = {a.oh, a.ow};
  const tsr_value extra[1] = {v_ints(os, 2)};
  TensorRef values = new_tensor(rt, dev, x->dtype, out4);
  TensorRef indices = new_tensor(rt, dev, TSR_INT64, out4);
  if (!invoke_pool_kernel(c, OpId::adaptive_max_pool2d, x4.get(), extra, 1, values.get(),
                          indices.get()) &&
      values->numel > 0 && !dev->is_meta) {
    // Every window's flat indices, padded to the widest window with its first.
    int64_t kh = 0, kw = 0;
    for (int64_t i = 0; i < a.oh; ++i)
      kh = std::max(kh, window_end(i, a.h, a.oh) - window_start(i, a.h, a.oh));
    for (int64_t j = 0; j < a.ow; ++j)
      kw = std::max(kw, window_end(j, a.w, a.ow) - window_start(j, a.w, a.ow));
    const int64_t k = kh * kw;
    std::vector<int64_t> table(static_cast<size_t>(a.oh * a.ow * k));
    for (int64_t i = 0; i < a.oh; ++i) {
      const int64_t hs = window_start(i, a.h, a.oh), he = window_end(i, a.h, a.oh);
      for (int64_t j = 0; j < a.ow; ++j) {
        const int64_t ws = window_start(j, a.w, a.ow), we = window_end(j, a.w, a.ow);
        int64_t* row = table.data() + (i * a.ow + j) * k;
        int64_t slot = 0;
        for (int64_t ih = hs; ih < he; ++ih)
          for (int64_t iw = ws; iw < we; ++iw) row[slot++] = ih * a.w + iw;
        for (; slot < k; ++slot) row[slot] = hs * a.w + ws;
      }
    }
    TensorRef flat = op::reshape(x4.get(), {a.n, a.c, a.h * a.w});
    TensorRef tab = index_table(rt, dev, table, a.n, a.c, a.oh, a.ow, k);
    TensorRef tab3 = op::reshape(tab.get(), {a.n, a.c, a.oh * a.ow * k});
    TensorRef gathered = op::call(rt, gather_op(), flat, 2, tab3);
    TensorRef slots = op::reshape(gathered.get(), {a.n, a.c, a.oh, a.ow, k});
    max_over_slots(rt, slots.get(), table, out4, values, indices);
  }
  c.set_result(unbatch(std::move(values), a.batched));
  c.set_result(unbatch(std::move(indices), a.batched));
}

}  // namespace tsr::ops
