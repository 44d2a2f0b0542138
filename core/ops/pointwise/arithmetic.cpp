// copy_, fill_, and add/sub/mul/div in their functional, in-place and out=
// forms (basic.def). The arithmetic runs through the shared pointwise
// driver (ops/pointwise/driver.h), which holds PyTorch's rules: type promotion
// with wrapped scalars, broadcasting, castability of the result into
// in-place/out targets, overlap checks, and the version bump. This file adds
// the arithmetic's own rules (true division of integers, bool subtraction,
// alpha kinds).
#include "dispatch/kernel_call.h"
#include "dispatch/values.h"
#include "ops/op_impls.h"
#include "ops/op_util.h"
#include "ops/pointwise/arith.h"
#include "ops/pointwise/driver.h"
#include "runtime/runtime.h"
#include "util/error.h"

namespace tsr::ops {

void arith_op(OpCall& c, OpId kernel_op, EwInput a, EwInput b, const tsr_scalar* alpha) {
  const OpDef& op = *c.op;
  TensorImpl* target = nullptr;
  const Mode mode = mode_of(c, &target);
  EwInput in[2] = {a, b};
  tsr_dtype compute = result_type(in, 2);
  if (kernel_op == OpId::div_Tensor && is_integral(compute, true)) compute = kDefaultFloat;
  if (kernel_op == OpId::sub_Tensor && (a.dtype == TSR_BOOL || b.dtype == TSR_BOOL))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': subtraction, the `-` operator, with a bool tensor is not supported. If you "
         "are trying to invert a mask, use the `~` or `logical_not()` operator instead.",
         op.name);
  if (alpha) {
    if (alpha->kind == TSR_COMPLEX128 && !is_complex(compute))
      fail(TSR_INVALID_ARGUMENT, "op '{}': complex alpha requires a complex result, not {}",
           op.name, dtype_name(compute));
    if (alpha->kind == TSR_FLOAT64 && is_integral(compute, true))
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': for integral input tensors, argument alpha must not be a floating point "
           "number.",
           op.name);
    if (compute == TSR_BOOL && alpha->kind != TSR_BOOL && !(alpha->v.i == 1))
      fail(TSR_INVALID_ARGUMENT, "op '{}': boolean alpha only supported for Boolean results.",
           op.name);
  }
  in[0].dtype = compute;
  in[1].dtype = compute;
  tsr_value extra[1];
  EwKernel k;
  k.kernel_op = kernel_op;
  k.result = compute;
  if (kernel_op == OpId::add_Tensor || kernel_op == OpId::sub_Tensor) {
    extra[0] = v_scalar(alpha ? *alpha : scalar_int(1));
    k.extra = extra;
    k.nextra = 1;
  }
  run_pointwise(c, mode, target, in, 2, k);
}

namespace {

// The arithmetic overloads: (self, other[, alpha][, out]) with other a Tensor or a Scalar.
void arith_overload(OpCall& c, OpId kernel_op, bool has_alpha) {
  arith_op(c, kernel_op, input_of(c, 0), input_of(c, 1), has_alpha ? &c.scalar(2) : nullptr);
}

}  // namespace

void add_Tensor(OpCall& c) { arith_overload(c, OpId::add_Tensor, true); }
void sub_Tensor(OpCall& c) { arith_overload(c, OpId::sub_Tensor, true); }
void mul_Tensor(OpCall& c) { arith_overload(c, OpId::mul_Tensor, false); }
void div_Tensor(OpCall& c) { arith_overload(c, OpId::div_Tensor, false); }
void add_Scalar(OpCall& c) { arith_overload(c, OpId::add_Tensor, true); }
void sub_Scalar(OpCall& c) { arith_overload(c, OpId::sub_Tensor, true); }
void mul_Scalar(OpCall& c) { arith_overload(c, OpId::mul_Tensor, false); }
void div_Scalar(OpCall& c) { arith_overload(c, OpId::div_Tensor, false); }
void add__Tensor(OpCall& c) { arith_overload(c, OpId::add_Tensor, true); }
void sub__Tensor(OpCall& c) { arith_overload(c, OpId::sub_Tensor, true); }
void mul__Tensor(OpCall& c) { arith_overload(c, OpId::mul_Tensor, false); }
void div__Tensor(OpCall& c) { arith_overload(c, OpId::div_Tensor, false); }
void add__Scalar(OpCall& c) { arith_overload(c, OpId::add_Tensor, true); }
void sub__Scalar(OpCall& c) { arith_overload(c, OpId::sub_Tensor, true); }
void mul__Scalar(OpCall& c) { arith_overload(c, OpId::mul_Tensor, false); }
void div__Scalar(OpCall& c) { arith_overload(c, OpId::div_Tensor, false); }
void add_out(OpCall& c) { arith_overload(c, OpId::add_Tensor, true); }
void sub_out(OpCall& c) { arith_overload(c, OpId::sub_Tensor, true); }
void mul_out(OpCall& c) { arith_overload(c, OpId::mul_Tensor, false); }
void div_out(OpCall& c) { arith_overload(c, OpId::div_Tensor, false); }

void fill_(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  assert_no_internal_overlap(*self, c.op->name.c_str());
  fill_raw(self, c.scalar(1));
  self->bump_version();
  c.set_result(TensorRef::borrow(self));
}

void copy_(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  TensorImpl* src = c.tensor(1);
  bool ok = src->ndim <= self->ndim;
  for (int32_t i = 1; ok && i <= src->ndim; ++i) {
    int64_t s = src->sizes[src->ndim - i], d = self->sizes[self->ndim - i];
    ok = s == d || s == 1;
  }
  if (!ok)
    fail(TSR_INVALID_ARGUMENT,
         "op 'copy_': argument 'src' of shape {} cannot be broadcast to the shape {} of "
         "argument 'self'",
         shape_str(src->ndim, src->sizes), shape_str(self->ndim, self->sizes));
  assert_no_internal_overlap(*self, c.op->name.c_str());
  assert_no_partial_overlap(*self, *src);
  copy_raw(self, src);
  self->bump_version();
  c.set_result(TensorRef::borrow(self));
}

}  // namespace tsr::ops
