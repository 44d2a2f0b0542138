// convolution_backward (fusable): the gradients of convolution, PyTorch's
// schema. The derivative formula (core/autograd/formulas_nn.cpp) calls it, so
// training runs a plugin's fused backward kernel where the device has one
// (contract in defs/conv.def) and this decomposition everywhere else; under
// create_graph the decomposition records its ops, so higher derivatives see
// them.
//
// The decomposition: a transposed convolution is the adjoint of the plain one
// with the same weight, so each case's input gradient is the other case's
// forward, and its weight gradient the plain weight gradient with the roles of
// input and output gradient exchanged. The plain weight gradient is itself a
// convolution with batch and channels exchanged (per group the input's
// channels become the batch, its batch the channels, and the output gradient
// the kernel; stride and dilation swap), cut to the kernel's size where the
// forward's floor division dropped input columns. grad_bias sums grad_output
// over every dim but the channels. A result whose output_mask entry is false
// is None.
#include <vector>

#include "dispatch/kernel_call.h"
#include "dispatch/op_api.h"
#include "dispatch/values.h"
#include "ops/op_impls.h"
#include "ops/op_util.h"
#include "runtime/runtime.h"
#include "util/checked_math.h"
#include "util/error.h"

namespace tsr::ops {

namespace {

tsr_value ints_value(const std::vector<int64_t>& v) {
  return v_ints(v.data(), static_cast<int32_t>(v.size()));
}

// An int[] argument with `k` entries (a single value applies to every dim).
std::vector<int64_t> per_dim(const tsr_value& v, int32_t k) {
  std::vector<int64_t> out(static_cast<size_t>(k));
  for (int32_t i = 0; i < k; ++i)
    out[static_cast<size_t>(i)] = v.len == 1 ? v.u.ints[0] : v.u.ints[i];
  return out;
}

struct Conv {
  Runtime* rt;
  TensorRef run(const TensorRef& x, const TensorRef& w, const std::vector<int64_t>& stride,
                const std::vector<int64_t>& pad, const std::vector<int64_t>& dil, bool transposed,
                const std::vector<int64_t>& out_pad, int64_t groups) const {
    return op::call(rt, OpId::convolution, x, w, op::none, ints_value(stride), ints_value(pad),
                    ints_value(dil), transposed, ints_value(out_pad), groups);
  }
  TensorRef reshape(const TensorRef& x, const std::vector<int64_t>& shape) const {
    return op::call(rt, OpId::reshape, x, ints_value(shape));
  }
  TensorRef permute(const TensorRef& x, const std::vector<int64_t>& perm) const {
    return op::call(rt, OpId::permute, x, ints_value(perm));
  }

  // d(conv(x, w))/dw of a plain convolution whose weight has sizes `w`.
  TensorRef weight_grad(const TensorRef& x, const TensorRef& g, const TensorImpl& w,
                        const std::vector<int64_t>& stride, const std::vector<int64_t>& pad,
                        const std::vector<int64_t>& dil, int64_t groups) const {
    const int32_t k = x->ndim - 2;
    const int64_t n = x->sizes[0], cin_g = x->sizes[1] / groups, cout_g = g->sizes[1] / groups;
    // x: (N, G*Cin_g, S...) -> (Cin_g, G*N, S...); g: (N, G*Cout_g, S...) -> (G*Cout_g, N, S...)
    std::vector<int64_t> x5 = {n, groups, cin_g}, g5 = {n, groups, cout_g};
    std::vector<int64_t> perm_x = {2, 1, 0}, perm_g = {1, 2, 0};
    std::vector<int64_t> xs_shape = {cin_g, groups * n}, gs_shape = {groups * cout_g, n};
    for (int32_t d = 0; d < k; ++d) {
      x5.push_back(x->sizes[2 + d]);
      g5.push_back(g->sizes[2 + d]);
      perm_x.push_back(3 + d);
      perm_g.push_back(3 + d);
      xs_shape.push_back(x->sizes[2 + d]);
      gs_shape.push_back(g->sizes[2 + d]);
    }
    TensorRef xs = reshape(permute(reshape(x, x5), perm_x), xs_shape);
    TensorRef gs = reshape(permute(reshape(g, g5), perm_g), gs_shape);
    const std::vector<int64_t> zeros(static_cast<size_t>(k), 0);
    TensorRef gw = run(xs, gs, dil, pad, stride, false, zeros, groups);  // (Cin_g, G*Cout_g, K'...)
    for (int32_t d = 0; d < k; ++d) {
      if (gw->sizes[2 + d] != w.sizes[2 + d])
        gw = op::call(rt, OpId::narrow, gw, 2 + d, 0, w.sizes[2 + d]);
    }
    return op::call(rt, OpId::transpose_int, gw, 0, 1);
  }
};

}  // namespace

void convolution_backward(OpCall& c) {
  Runtime* rt = c.runtime;
  const OpDef& op = *c.op;
  TensorImpl* g = c.tensor(0);
  TensorImpl* x = c.tensor(1);
  TensorImpl* w = c.tensor(2);
  const bool transposed = c.bool_arg(7);
  const int64_t groups = c.int_arg(9);
  const tsr_value& mask = c.args[10];
  if (mask.len != 3)
    fail(TSR_INVALID_ARGUMENT, "op '{}': argument 'output_mask' has {} entries; expected 3",
         op.name, mask.len);
  const bool want[3] = {mask.u.bools[0] != 0, mask.u.bools[1] != 0,
                        mask.u.bools[2] != 0 && !c.is_none(3)};
  check_same_device(op, *g, *x, "grad_output", "input");
  check_same_device(op, *g, *w, "grad_output", "weight");
  if (x->ndim < 3 || x->ndim > 5 || w->ndim != x->ndim || g->ndim != x->ndim)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': grad_output {}, input {} and weight {} must all be (N, C, 1 to 3 spatial "
         "dims) with the same number of dims",
         op.name, shape_str(g->ndim, g->sizes), shape_str(x->ndim, x->sizes),
         shape_str(w->ndim, w->sizes));
  if (g->dtype != x->dtype || w->dtype != x->dtype || !is_floating(x->dtype))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': grad_output ({}), input ({}) and weight ({}) must share one floating dtype",
         op.name, dtype_name(g->dtype), dtype_name(x->dtype), dtype_name(w->dtype));
  const int32_t k = x->ndim - 2;
  for (int i : {4, 5, 6, 8})
    if (c.args[i].len != 1 && c.args[i].len != k)
      fail(TSR_INVALID_ARGUMENT, "op '{}': argument '{}' has {} entries; expected 1 or {}", op.name,
           c.arg_name(i), c.args[i].len, k);
  const std::vector<int64_t> stride = per_dim(c.args[4], k), pad = per_dim(c.args[5], k),
                             dil = per_dim(c.args[6], k), out_pad = per_dim(c.args[8], k);
  if (groups <= 0 || x->sizes[1] % groups != 0 || g->sizes[1] % groups != 0)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': groups = {} must be positive and divide the channels of input ({}) and "
         "grad_output ({})",
         op.name, groups, x->sizes[1], g->sizes[1]);
  // grad_output's shape must be what convolution gives for input and weight.
  Shape expected;
  expected.ndim = x->ndim;
  expected.sizes[0] = x->sizes[0];
  expected.sizes[1] = transposed ? w->sizes[1] * groups : w->sizes[0];
  for (int32_t d = 0; d < k; ++d) {
    const size_t i = static_cast<size_t>(d);
    if (stride[i] <= 0 || dil[i] <= 0 || pad[i] < 0 || out_pad[i] < 0)
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': stride ({}) and dilation ({}) must be positive and padding ({}) and "
           "output_padding ({}) non-negative in spatial dim {}",
           op.name, stride[i], dil[i], pad[i], out_pad[i], d);
    // Each step checked: hostile strides, paddings or dilations must be
    // refused, not wrap (Note [Checked size arithmetic]).
    int64_t ext = 0, pad2 = 0, size = 0;
    bool ok = mul_ok(dil[i], w->sizes[2 + d] - 1, &ext) && add_ok(ext, 1, &ext) &&
              mul_ok(pad[i], 2, &pad2);
    if (ok && transposed)
      ok = mul_ok(x->sizes[2 + d] - 1, stride[i], &size) && sub_ok(size, pad2, &size) &&
           add_ok(size, ext, &size) && add_ok(size, out_pad[i], &size);
    else if (ok)
      ok = add_ok(x->sizes[2 + d], pad2, &size) && sub_ok(size, ext, &size);
    if (!ok)
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': the output size of spatial dim {} overflows int64 (stride {}, padding {}, "
           "dilation {}, output_padding {}); use smaller values",
           op.name, d, stride[i], pad[i], dil[i], out_pad[i]);
    expected.sizes[2 + d] = transposed ? size : size / stride[i] + 1;
  }
  if (!same_shape(*g, expected))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'grad_output' of shape {} does not match the convolution of input "
         "{} and weight {}, which gives {}",
         op.name, shape_str(g->ndim, g->sizes), shape_str(x->ndim, x->sizes),
         shape_str(w->ndim, w->sizes), shape_str(expected.ndim, expected.sizes));

  DeviceRecord* dev = x->device();
  const bool empty = g->numel == 0 || x->numel == 0 || w->numel == 0;
  const tsr_dtype dts[3] = {g->dtype, x->dtype, w->dtype};
  const BoundKernel* kernel = !transposed && !empty ? try_find_kernel(op.id, dev, dts, 3) : nullptr;
  if (kernel) {
    TensorRef gc = contiguous_of(g), xc = contiguous_of(x), wc = contiguous_of(w);
    TensorRef dx = new_tensor(rt, dev, x->dtype, shape_of(*x));
    TensorRef dw = new_tensor(rt, dev, w->dtype, shape_of(*w));
    const int64_t o = g->sizes[1];
    TensorRef db = new_tensor(rt, dev, g->dtype, 1, &o);
    const int32_t kernel_mask[3] = {want[0] ? 1 : 0, want[1] ? 1 : 0, want[2] ? 1 : 0};
    tsr_value mask_value{};
    mask_value.tag = TSR_VALUE_BOOL_LIST;
    mask_value.len = 3;
    mask_value.u.bools = kernel_mask;
    std::vector<tsr_value> args = {v_tensor(gc.get()),  v_tensor(xc.get()),
                                   v_tensor(wc.get()),  want[2] ? v_ints(&o, 1) : v_none(),
                                   ints_value(stride),  ints_value(pad),
                                   ints_value(dil),     v_bool(false),
                                   ints_value(out_pad), v_int(groups),
                                   mask_value};
    std::vector<tsr_tensor_desc> descs;
    descs.reserve(3);
    for (int i = 0; i < 3; ++i) {
      descs.push_back(reinterpret_cast<TensorImpl*>(args[static_cast<size_t>(i)].u.tensor)->desc());
      args[static_cast<size_t>(i)].u.desc = &descs.back();
    }
    tsr_tensor_desc outs[3] = {dx->desc(), dw->desc(), db->desc()};
    invoke_kernel(op, *kernel, dev, args.data(), static_cast<int32_t>(args.size()), outs, 3);
    c.set_result(want[0] ? dx : TensorRef());
    c.set_result(want[1] ? dw : TensorRef());
    c.set_result(want[2] ? db : TensorRef());
    return;
  }

  const Conv conv{rt};
  TensorRef gr = TensorRef::borrow(g), xr = TensorRef::borrow(x), wr = TensorRef::borrow(w);
  TensorRef dx, dw, db;
  if (want[0]) {
    if (transposed) {
      const std::vector<int64_t> zeros(static_cast<size_t>(k), 0);
      dx = conv.run(gr, wr, stride, pad, dil, false, zeros, groups);
    } else {
      // The output padding that gives back the input's size: what the
      // forward's floor division by the stride dropped.
      std::vector<int64_t> op_back(static_cast<size_t>(k));
      for (int32_t d = 0; d < k; ++d) {
        const size_t i = static_cast<size_t>(d);
        op_back[i] = x->sizes[2 + d] + 2 * pad[i] - dil[i] * (w->sizes[2 + d] - 1) - 1 -
                     (g->sizes[2 + d] - 1) * stride[i];
      }
      dx = conv.run(gr, wr, stride, pad, dil, true, op_back, groups);
    }
  }
  if (want[1])
    dw = transposed ? conv.weight_grad(gr, xr, *w, stride, pad, dil, groups)
                    : conv.weight_grad(xr, gr, *w, stride, pad, dil, groups);
  if (want[2]) {
    std::vector<int64_t> dims = {0};
    for (int32_t d = 0; d < k; ++d) dims.push_back(2 + d);
    db = op::call(rt, OpId::sum_dim_IntList, g, ints_value(dims), false);
  }
  c.set_result(dx);
  c.set_result(dw);
  c.set_result(db);
}

}  // namespace tsr::ops
