// Matrix products: mm and bmm (primitives) with out= forms, and matmul (with
// out=), which decomposes into them following torch.matmul's rules for 1-d,
// 2-d and broadcast-batched operands. The other products are in linalg/.
#include <algorithm>

#include "dispatch/kernel_call.h"
#include "dispatch/op_api.h"
#include "ops/linalg/linalg_util.h"
#include "ops/op_impls.h"
#include "ops/op_util.h"
#include "runtime/runtime.h"
#include "util/error.h"

namespace tsr::ops {

namespace {

void product(OpCall& c, bool batched, TensorImpl* out) {
  TensorImpl* a = c.tensor(0);
  TensorImpl* b = c.tensor(1);
  const OpDef& op = *c.op;
  int32_t nd = batched ? 3 : 2;
  if (a->ndim != nd)
    fail(TSR_INVALID_ARGUMENT, "op '{}': self must be a {}-D tensor, got {}-D of shape {}", op.name,
         nd, a->ndim, shape_str(a->ndim, a->sizes));
  if (b->ndim != nd)
    fail(TSR_INVALID_ARGUMENT, "op '{}': mat2 must be a {}-D tensor, got {}-D of shape {}", op.name,
         nd, b->ndim, shape_str(b->ndim, b->sizes));
  check_same_device(op, *a, *b, "self", "mat2");
  if (a->dtype != b->dtype)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': expected self and mat2 to have the same dtype, but got: {} != {}", op.name,
         dtype_name(a->dtype), dtype_name(b->dtype));
  int32_t o = batched ? 1 : 0;
  if (batched && a->sizes[0] != b->sizes[0])
    fail(TSR_INVALID_ARGUMENT, "op '{}': batch sizes differ: self {} vs mat2 {}", op.name,
         shape_str(3, a->sizes), shape_str(3, b->sizes));
  if (a->sizes[o + 1] != b->sizes[o])
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})", op.name,
         a->sizes[o], a->sizes[o + 1], b->sizes[o], b->sizes[o + 1]);
  Shape shape;
  shape.ndim = nd;
  if (batched) shape.sizes[0] = a->sizes[0];
  shape.sizes[o] = a->sizes[o];
  shape.sizes[o + 1] = b->sizes[o + 1];
  if (out) {
    check_same_device(op, *a, *out, "self", "out");
    if (out->dtype != a->dtype)
      fail(TSR_INVALID_ARGUMENT, "op '{}': expected out to have dtype {}, got {}", op.name,
           dtype_name(a->dtype), dtype_name(out->dtype));
    resize_output(out, shape);
    assert_no_internal_overlap(*out, op.name.c_str(), "out");
    assert_no_partial_overlap(*out, *a);
    assert_no_partial_overlap(*out, *b);
  }
  DeviceRecord* dev = a->device();
  TensorRef result;
  TensorImpl* dst = out;
  if (!dst) {
    result = new_tensor(c.runtime, dev, a->dtype, shape);
    dst = result.get();
  }
  if (!dev->is_meta && dst->numel > 0) {
    OpId kop = batched ? OpId::bmm : OpId::mm;
    tsr_dtype dts[2] = {a->dtype, b->dtype};
    const BoundKernel& k = find_kernel(op, kop, dev, dts, 2);
    tsr_tensor_desc da = a->desc(), db = b->desc(), dout = dst->desc();
    tsr_value args[2];
    args[0].tag = TSR_VALUE_TENSOR;
    args[0].len = 0;
    args[0].u.desc = &da;
    args[1].tag = TSR_VALUE_TENSOR;
    args[1].len = 0;
    args[1].u.desc = &db;
    invoke_kernel(op, k, dev, args, 2, &dout, 1);
  }
  if (out) {
    out->bump_version();
    c.set_result(TensorRef::borrow(out));
  } else {
    c.set_result(std::move(result));
  }
}

}  // namespace

void mm(OpCall& c) { product(c, false, nullptr); }
void bmm(OpCall& c) { product(c, true, nullptr); }
void mm_out(OpCall& c) { product(c, false, c.tensor(2)); }
void bmm_out(OpCall& c) { product(c, true, c.tensor(2)); }

void matmul(OpCall& c) {
  TensorImpl* a = c.tensor(0);
  TensorImpl* b = c.tensor(1);
  Runtime* rt = c.runtime;
  if (a->ndim == 0 || b->ndim == 0)
    fail(TSR_INVALID_ARGUMENT,
         "op 'matmul': both arguments need at least 1 dimension, but got {}-D and {}-D tensors",
         a->ndim, b->ndim);
  check_same_device(*c.op, *a, *b, "self", "other");
  if (a->dtype != b->dtype)
    fail(TSR_INVALID_ARGUMENT,
         "op 'matmul': expected both arguments to have the same dtype, but got {} and {}; "
         "convert one with to()",
         dtype_name(a->dtype), dtype_name(b->dtype));
  if (a->ndim <= 2 && b->ndim <= 2) {
    const int64_t ka = a->sizes[a->ndim - 1], kb = b->sizes[0];
    if (ka != kb)
      fail(TSR_INVALID_ARGUMENT,
           "op 'matmul': shapes {} and {} cannot be multiplied (inner sizes {} and {})",
           shape_str(a->ndim, a->sizes), shape_str(b->ndim, b->sizes), ka, kb);
    // 1-d operands become a row (left) or column (right) and are removed again.
    TensorRef a2 = a->ndim == 1 ? op::call(rt, OpId::unsqueeze, a, 0) : TensorRef::borrow(a);
    TensorRef b2 = b->ndim == 1 ? op::call(rt, OpId::unsqueeze, b, 1) : TensorRef::borrow(b);
    TensorRef r = op::call(rt, OpId::mm, a2, b2);
    if (b->ndim == 1) r = op::call(rt, OpId::squeeze_dim, r, -1);
    if (a->ndim == 1) r = op::call(rt, OpId::squeeze_dim, r, -2 + (b->ndim == 1));
    c.set_result(std::move(r));
    return;
  }
  // Batched: (..., n, k) @ (..., k, m) with broadcast batch dims.
  TensorRef a2 = a->ndim == 1 ? op::call(rt, OpId::unsqueeze, a, 0) : TensorRef::borrow(a);
  TensorRef b2 = b->ndim == 1 ? op::call(rt, OpId::unsqueeze, b, 1) : TensorRef::borrow(b);
  int64_t n = a2->sizes[a2->ndim - 2], k = a2->sizes[a2->ndim - 1];
  int64_t k2 = b2->sizes[b2->ndim - 2], m = b2->sizes[b2->ndim - 1];
  if (k != k2)
    fail(TSR_INVALID_ARGUMENT,
         "op 'matmul': shapes {} and {} cannot be multiplied (inner sizes {} and {})",
         shape_str(a->ndim, a->sizes), shape_str(b->ndim, b->sizes), k, k2);
  Shape batch = broadcast_shapes(a2->ndim - 2, a2->sizes, b2->ndim - 2, b2->sizes);
  int64_t nb = shape_numel(batch);
  Shape ea = batch, eb = batch;
  ea.sizes[ea.ndim++] = n;
  ea.sizes[ea.ndim++] = k;
  eb.sizes[eb.ndim++] = k;
  eb.sizes[eb.ndim++] = m;
  if (b2->ndim == 2 && a2->ndim > 2) {
    // Fold a's batch into rows: one mm instead of a bmm over a broadcast b.
    Shape fold;
    fold.ndim = 2;
    fold.sizes[0] = nb * n;
    fold.sizes[1] = k;
    TensorRef af = op::call(OpId::reshape, a2.get(), fold);
    TensorRef r = op::call(rt, OpId::mm, af, b2);
    Shape rs = batch;
    rs.sizes[rs.ndim++] = n;
    rs.sizes[rs.ndim++] = m;
    r = op::call(OpId::reshape, r.get(), rs);
    if (b->ndim == 1) r = op::call(rt, OpId::squeeze_dim, r, -1);
    c.set_result(std::move(r));
    return;
  }
  TensorRef ax = op::call(rt, OpId::expand, a2, ea);
  TensorRef bx = op::call(rt, OpId::expand, b2, eb);
  Shape a3, b3;
  a3.ndim = b3.ndim = 3;
  a3.sizes[0] = b3.sizes[0] = nb;
  a3.sizes[1] = n;
  a3.sizes[2] = k;
  b3.sizes[1] = k;
  b3.sizes[2] = m;
  TensorRef ar = op::call(OpId::reshape, ax.get(), a3);
  TensorRef br = op::call(OpId::reshape, bx.get(), b3);
  TensorRef r = op::call(rt, OpId::bmm, ar, br);
  Shape rs = batch;
  rs.sizes[rs.ndim++] = n;
  rs.sizes[rs.ndim++] = m;
  r = op::call(OpId::reshape, r.get(), rs);
  if (b->ndim == 1) r = op::call(rt, OpId::squeeze_dim, r, -1);
  if (a->ndim == 1) r = op::call(rt, OpId::squeeze_dim, r, -2 + (b->ndim == 1));
  c.set_result(std::move(r));
}

void matmul_out(OpCall& c) {
  TensorRef r = op::call(c.runtime, OpId::matmul, c.args[0], c.args[1]);
  linalg_detail::finish_out(c, r.get(), c.tensor(2));
}

}  // namespace tsr::ops
