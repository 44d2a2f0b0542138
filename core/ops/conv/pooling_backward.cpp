// Pooling backward (fusable), PyTorch 2.15's schemas:
// max_pool2d_with_indices_backward, avg_pool2d_backward,
// _adaptive_avg_pool2d_backward and adaptive_max_pool2d_backward. The
// pooling formulas (core/autograd/formulas_nn.cpp) call them, so training
// runs a plugin's fused kernel where the device has one (contracts in
// defs/conv.def) and these decompositions everywhere else; under
// create_graph the decompositions record their ops (each is linear in
// grad_output), so higher derivatives see them.
//
// Decompositions, on the input as (N, C, H, W):
//  - max (both): grad_output scatter-added into zeros (N, C, H * W) at the
//    flat indices, reshaped to the input's shape (repeated indices of
//    overlapping windows add up);
//  - avg: grad_output divided by each window's divisor (avg_divisor, the
//    forward's rules), repeated for the window's kH * kW slots and
//    scatter-added at a host-built table of each slot's flat input index;
//    padding slots go to one extra trailing element that is cut off;
//  - adaptive avg: A_h^T grad_output A_w with the forward's averaging
//    matrices (two matmuls).
// float16/bfloat16 accumulate in float32, as the forwards do.
#include <vector>

#include "dispatch/kernel_call.h"
#include "dispatch/op_api.h"
#include "dispatch/values.h"
#include "ops/conv/pooling_params.h"
#include "ops/linalg/linalg_util.h"
#include "ops/op_impls.h"
#include "ops/op_util.h"
#include "runtime/runtime.h"
#include "util/error.h"

namespace tsr::ops {

namespace {

using namespace pool_detail;

tsr_dtype accumulation_dtype(tsr_dtype dt) {
  return dt == TSR_FLOAT16 || dt == TSR_BFLOAT16 ? TSR_FLOAT32 : dt;
}

// grad_output (argument 0) must be what the forward gives for self
// (argument 1): self's leading dims, then (oh, ow); same device and dtype.
void check_grad_output(const OpCall& c, int64_t oh, int64_t ow) {
  const OpDef& op = *c.op;
  const TensorImpl& g = *c.tensor(0);
  const TensorImpl& x = *c.tensor(1);
  check_same_device(op, g, x, "grad_output", "self");
  Shape expected = shape_of(x);
  expected.sizes[x.ndim - 2] = oh;
  expected.sizes[x.ndim - 1] = ow;
  if (!same_shape(g, expected))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'grad_output' of shape {} does not match the pooling output of self "
         "{}, which is {}",
         op.name, shape_str(g.ndim, g.sizes), shape_str(x.ndim, x.sizes),
         shape_str(expected.ndim, expected.sizes));
  if (g.dtype != x.dtype)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'grad_output' has dtype {} but self has {}; convert one with to()",
         op.name, dtype_name(g.dtype), dtype_name(x.dtype));
}

// indices (argument `i`) must be int64, shaped like grad_output, on its device.
void check_indices(const OpCall& c, int i) {
  const OpDef& op = *c.op;
  const TensorImpl& g = *c.tensor(0);
  const TensorImpl& idx = *c.tensor(i);
  check_same_device(op, g, idx, "grad_output", "indices");
  if (idx.dtype != TSR_INT64)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'indices' has dtype {}; expected int64 (the indices the forward "
         "returned)",
         op.name, dtype_name(idx.dtype));
  if (!same_shape(idx, shape_of(g)))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'indices' of shape {} must have grad_output's shape {}", op.name,
         shape_str(idx.ndim, idx.sizes), shape_str(g.ndim, g.sizes));
}

// The plugin kernel's result for `args` (the op's arguments in schema
// order, tensors batched to 4-d), or null when the device has none for the
// dtypes. Empty inputs and meta tensors get an (unfilled or empty) result
// without a kernel.
TensorRef run_kernel(OpCall& c, std::vector<tsr_value> args, int32_t ntensors, bool batched) {
  Runtime* rt = c.runtime;
  TensorImpl* x = c.tensor(1);
  DeviceRecord* dev = x->device();
  TensorRef x4 = batched4(x);
  const Shape out4 = shape_of(*x4);
  if (dev->is_meta || x->numel == 0) return unbatch(new_tensor(rt, dev, x->dtype, out4), batched);
  std::vector<TensorRef> keep;
  std::vector<tsr_dtype> dts;
  std::vector<tsr_tensor_desc> descs;
  descs.reserve(args.size());
  for (tsr_value& v : args) {
    if (v.tag != TSR_VALUE_TENSOR) continue;
    TensorImpl* t = reinterpret_cast<TensorImpl*>(v.u.tensor);
    keep.push_back(batched4(t));
    dts.push_back(t->dtype);
    descs.push_back(keep.back()->desc());
    v.u.desc = &descs.back();
  }
  const BoundKernel* kernel = try_find_kernel(c.op->id, dev, dts.data(), ntensors);
  if (!kernel) return TensorRef();
  TensorRef out = new_tensor(rt, dev, x->dtype, out4);
  tsr_tensor_desc outs[1] = {out->desc()};
  invoke_kernel(*c.op, *kernel, dev, args.data(), static_cast<int32_t>(args.size()), outs, 1);
  return unbatch(std::move(out), batched);
}

// grad_output scatter-added at the flat plane indices into zeros like self.
TensorRef scatter_at_indices(Runtime* rt, TensorImpl* g, TensorImpl* idx, TensorImpl* x) {
  const int32_t nd = x->ndim;
  Shape flat_in = shape_of(*x), flat_out = shape_of(*g);
  flat_in.ndim = flat_out.ndim = nd - 1;
  flat_in.sizes[nd - 2] = x->sizes[nd - 2] * x->sizes[nd - 1];
  flat_out.sizes[nd - 2] = g->sizes[nd - 2] * g->sizes[nd - 1];
  const tsr_dtype acc = accumulation_dtype(g->dtype);
  TensorRef zeros = op::full(rt, x->device(), acc, flat_in, scalar_int(0));
  TensorRef ga = cast(g, acc);
  TensorRef src = op::reshape(ga.get(), flat_out);
  TensorRef at = op::reshape(idx, flat_out);
  TensorRef s = op::call(rt, OpId::scatter_add, zeros, nd - 2, at, src);
  TensorRef r = op::reshape(s.get(), shape_of(*x));
  return cast(r.get(), g->dtype);
}

void max_backward(OpCall& c, std::vector<tsr_value> args, int indices_arg, bool batched) {
  TensorRef r = run_kernel(c, std::move(args), 3, batched);
  if (!r) r = scatter_at_indices(c.runtime, c.tensor(0), c.tensor(indices_arg), c.tensor(1));
  c.set_result(std::move(r));
}

}  // namespace

void max_pool2d_with_indices_backward(OpCall& c) {
  TensorImpl* x = c.tensor(1);
  const Pool2d p = pool_params(c, 1, "max_pool2d_with_indices_backward", 5, 6);
  check_floating(*c.op, *x, "max_pool2d_with_indices_backward", false);
  check_grad_output(c, p.oh, p.ow);
  check_indices(c, 7);
  const int64_t ks[2] = {p.kh, p.kw}, ss[2] = {p.sh, p.sw}, ps[2] = {p.ph, p.pw},
                ds[2] = {p.dh, p.dw};
  max_backward(c,
               {c.args[0], c.args[1], v_ints(ks, 2), v_ints(ss, 2), v_ints(ps, 2), v_ints(ds, 2),
                v_bool(p.ceil_mode), c.args[7]},
               7, p.batched);
}

void adaptive_max_pool2d_backward(OpCall& c) {
  TensorImpl* g = c.tensor(0);
  TensorImpl* x = c.tensor(1);
  if (g->ndim != x->ndim || g->ndim < 3)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'grad_output' of shape {} must have as many dims as self {} (3 or 4)",
         c.op->name, shape_str(g->ndim, g->sizes), shape_str(x->ndim, x->sizes));
  const Adaptive a = adaptive_params(c, 1, g->sizes[g->ndim - 2], g->sizes[g->ndim - 1],
                                     "adaptive_max_pool2d_backward", 0);
  check_floating(*c.op, *x, "adaptive_max_pool2d_backward", false);
  check_grad_output(c, a.oh, a.ow);
  check_indices(c, 2);
  max_backward(c, {c.args[0], c.args[1], c.args[2]}, 2, a.batched);
}

void avg_pool2d_backward(OpCall& c) {
  const OpDef& op = *c.op;
  Runtime* rt = c.runtime;
  TensorImpl* x = c.tensor(1);
  const Pool2d p = pool_params(c, 1, "avg_pool2d_backward", -1, 5);
  const bool count_include_pad = c.bool_arg(6);
  const bool has_divisor = !c.is_none(7);
  const int64_t divisor = has_divisor ? c.int_arg(7) : 0;
  if (has_divisor && divisor == 0)
    fail(TSR_INVALID_ARGUMENT, "op '{}': divisor must be not zero (divisor_override=0)", op.name);
  check_floating(op, *x, "avg_pool2d_backward", false);
  check_grad_output(c, p.oh, p.ow);
  const int64_t ks[2] = {p.kh, p.kw}, ss[2] = {p.sh, p.sw}, ps[2] = {p.ph, p.pw};
  TensorRef r = run_kernel(
      c,
      {c.args[0], c.args[1], v_ints(ks, 2), v_ints(ss, 2), v_ints(ps, 2), v_bool(p.ceil_mode),
       v_bool(count_include_pad), has_divisor ? v_int(divisor) : v_none()},
      2, p.batched);
  if (r) {
    c.set_result(std::move(r));
    return;
  }
  DeviceRecord* dev = x->device();
  const int64_t k = p.kh * p.kw, plane = p.h * p.w, windows = p.oh * p.ow;
  std::vector<double> divisors(static_cast<size_t>(windows));
  std::vector<int64_t> table(static_cast<size_t>(windows * k));
  for (int64_t oh = 0; oh < p.oh; ++oh)
    for (int64_t ow = 0; ow < p.ow; ++ow) {
      divisors[oh * p.ow + ow] =
          static_cast<double>(avg_divisor(p, oh, ow, count_include_pad, has_divisor, divisor));
      const int64_t hs = oh * p.sh - p.ph, ws = ow * p.sw - p.pw;
      int64_t* row = table.data() + (oh * p.ow + ow) * k;
      for (int64_t i = 0; i < p.kh; ++i)
        for (int64_t j = 0; j < p.kw; ++j) {
          const int64_t ih = hs + i, iw = ws + j;
          const bool inside = ih >= 0 && ih < p.h && iw >= 0 && iw < p.w;
          row[i * p.kw + j] = inside ? ih * p.w + iw : plane;
        }
    }
  const tsr_dtype acc = accumulation_dtype(x->dtype);
  TensorRef g4 = batched4(c.tensor(0));
  TensorRef ga = cast(g4.get(), acc);
  const int64_t dsz[2] = {p.oh, p.ow};
  TensorRef d64 = new_tensor(rt, dev, TSR_FLOAT64, 2, dsz);
  write_from_host(d64.get(), divisors.data());
  TensorRef dv = cast(d64.get(), acc);
  TensorRef q = op::call(rt, OpId::div_Tensor, ga, dv);
  TensorRef q5 = op::unsqueeze(q.get(), 4);
  const int64_t full[5] = {p.n, p.c, p.oh, p.ow, k};
  TensorRef src5 = op::call(rt, OpId::expand, q5, op::ints(full, 5));
  TensorRef src = op::reshape(src5.get(), {p.n, p.c, windows * k});
  const int64_t tsz[3] = {1, 1, windows * k};
  TensorRef tab = new_tensor(rt, dev, TSR_INT64, 3, tsz);
  write_from_host(tab.get(), table.data());
  const int64_t idx_full[3] = {p.n, p.c, windows * k};
  TensorRef at = op::call(rt, OpId::expand, tab, op::ints(idx_full, 3));
  TensorRef zeros = op::full(rt, dev, acc, Shape{3, {p.n, p.c, plane + 1}}, scalar_int(0));
  TensorRef s = op::call(rt, OpId::scatter_add, zeros, 2, at, src);
  TensorRef cut = op::call(rt, OpId::narrow, s, 2, 0, plane);
  TensorRef r4 = op::reshape(cut.get(), nchw(p.n, p.c, p.h, p.w));
  c.set_result(unbatch(cast(r4.get(), x->dtype), p.batched));
}

void adaptive_avg_pool2d_backward(OpCall& c) {
  Runtime* rt = c.runtime;
  TensorImpl* g = c.tensor(0);
  TensorImpl* x = c.tensor(1);
  if (g->ndim != x->ndim || g->ndim < 3)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'grad_output' of shape {} must have as many dims as self {} (3 or 4)",
         c.op->name, shape_str(g->ndim, g->sizes), shape_str(x->ndim, x->sizes));
  const Adaptive a = adaptive_params(c, 1, g->sizes[g->ndim - 2], g->sizes[g->ndim - 1],
                                     "adaptive_avg_pool2d_backward", 0);
  check_floating(*c.op, *x, "adaptive_avg_pool2d_backward", false);
  check_grad_output(c, a.oh, a.ow);
  TensorRef r = run_kernel(c, {c.args[0], c.args[1]}, 2, a.batched);
  if (r) {
    c.set_result(std::move(r));
    return;
  }
  DeviceRecord* dev = x->device();
  const tsr_dtype acc = accumulation_dtype(x->dtype);
  TensorRef g4 = batched4(g);
  TensorRef ga = cast(g4.get(), acc);
  TensorRef aht = averaging_matrix_t(rt, dev, acc, a.h, a.oh);  // (H, Ho)
  TensorRef awt = averaging_matrix_t(rt, dev, acc, a.w, a.ow);  // (W, Wo)
  TensorRef aw = op::call(rt, OpId::transpose_int, awt, 0, 1);
  TensorRef t1 = op::call(rt, OpId::matmul, aht, ga);
  TensorRef t2 = op::call(rt, OpId::matmul, t1, aw);
  c.set_result(unbatch(cast(t2.get(), x->dtype), a.batched));
}

}  // namespace tsr::ops
