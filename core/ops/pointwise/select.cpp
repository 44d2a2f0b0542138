// Pointwise ops built on selection and on other pointwise ops: where.self (a
// primitive) and its Scalar overloads, masked_fill, clamp/clip with Tensor
// bounds, lerp, addcmul and addcdiv.
#include <cmath>

#include "dispatch/op_api.h"
#include "ops/op_impls.h"
#include "ops/op_util.h"
#include "ops/pointwise/driver.h"
#include "util/error.h"

namespace tsr::ops {

namespace {

void check_bool_condition(const OpDef& op, const TensorImpl& t, const char* what) {
  if (t.dtype != TSR_BOOL)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': {} expected {} to be a boolean tensor, but got a tensor with dtype {}; "
         "compare it (ne(0)) or convert it with to(bool)",
         op.name, op.schema.name, what, dtype_name(t.dtype));
}

// where(condition, x, y) over inputs x, y (tensors or scalars) of `dtype`.
void run_where(OpCall& c, TensorImpl* condition, EwInput x, EwInput y, tsr_dtype dtype) {
  TensorImpl* target = nullptr;
  const Mode mode = mode_of(c, &target);
  EwInput in[3];
  in[0].tensor = condition;
  in[0].dtype = TSR_BOOL;
  x.dtype = dtype;
  y.dtype = dtype;
  in[1] = x;
  in[2] = y;
  EwKernel k;
  k.kernel_op = OpId::where_self;
  k.result = dtype;
  run_pointwise(c, mode, target, in, 3, k);
}

}  // namespace

// where.self and where.ScalarSelf / ScalarOther / Scalar / self_out: the two
// value operands promote together (the condition does not take part).
void where_self(OpCall& c) {
  TensorImpl* condition = c.tensor(0);
  check_bool_condition(*c.op, *condition, "condition");
  const EwInput values[2] = {input_of(c, 1), input_of(c, 2)};
  run_where(c, condition, values[0], values[1], result_type(values, 2));
}

void where_op(OpCall& c) { where_self(c); }

// masked_fill(self, mask, value): value (a Scalar or a 0-d tensor) where mask
// is true, in self's dtype; the result has the broadcast shape of self and mask.
void masked_fill_op(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  TensorImpl* mask = c.tensor(1);
  if (mask->dtype != TSR_BOOL)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': masked_fill_ only supports boolean masks, but got mask with dtype {}; "
         "convert 'mask' with to(bool)",
         c.op->name, dtype_name(mask->dtype));
  EwInput value = input_of(c, 2);
  if (value.tensor && value.tensor->ndim != 0)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
         "{} dimension(s).",
         c.op->name, value.tensor->ndim);
  EwInput s;
  s.tensor = self;
  run_where(c, mask, value, s, self->dtype);
}

// clamp / clip with Tensor? bounds: maximum with min, then minimum with max,
// in the dtype all three promote to (NaN bounds propagate, max wins over min).
void clamp_tensor_op(OpCall& c) {
  const OpDef& op = *c.op;
  TensorImpl* lo = c.opt_tensor(1);
  TensorImpl* hi = c.opt_tensor(2);
  if (!lo && !hi)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': torch.clamp: At least one of 'min' or 'max' must not be None; pass a bound",
         op.name);
  EwInput in[3] = {input_of(c, 0)};
  int32_t n = 1;
  if (lo) in[n++] = input_of(c, 1);
  if (hi) in[n++] = input_of(c, 2);
  const tsr_dtype dtype = result_type(in, n);
  if (dtype == TSR_BOOL)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': clamping bool values is not supported; convert 'self' with to(int64)", op.name);
  TensorImpl* target = nullptr;
  const Mode mode = mode_of(c, &target);
  check_devices(op, in, n, target);
  const Shape shape = broadcast_inputs(op, in, n);
  check_target(op, mode, target, dtype, shape, in, n);
  DeviceRecord* dev = c.tensor(0)->device();
  if (dev->is_meta) {
    finish(c, target, target ? TensorRef() : new_tensor(c.runtime, dev, dtype, shape));
    return;
  }
  TensorRef r = cast(c.tensor(0), dtype);
  if (lo) {
    TensorRef b = cast(lo, dtype);
    r = op::call(c.runtime, OpId::maximum, r, b);
  }
  if (hi) {
    TensorRef b = cast(hi, dtype);
    r = op::call(c.runtime, OpId::minimum, r, b);
  }
  if (!same_shape(*r, shape)) {  // self alone, or bounds smaller than self
    TensorRef full = new_tensor(c.runtime, dev, dtype, shape);
    copy_raw(full.get(), r.get());
    r = full;
  }
  finish(c, target, std::move(r));
}

// lerp(self, end, weight) = self + weight * (end - self), computed from the
// nearer end point (end - (1 - weight) * (end - self) once |weight| >= 0.5) as
// PyTorch does, so weight 1 gives end exactly.
void lerp_op(OpCall& c) {
  const OpDef& op = *c.op;
  TensorImpl* self = c.tensor(0);
  TensorImpl* end = c.tensor(1);
  const EwInput weight = input_of(c, 2);
  if (end->dtype != self->dtype)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': expected dtype {} for `end` but got dtype {}; convert it with to({})", op.name,
         dtype_name(self->dtype), dtype_name(end->dtype), dtype_name(self->dtype));
  if (weight.tensor && weight.tensor->dtype != self->dtype)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': expected dtype {} for `weight` but got dtype {}; convert it with to({})",
         op.name, dtype_name(self->dtype), dtype_name(weight.tensor->dtype),
         dtype_name(self->dtype));
  if (is_integral(self->dtype, true))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'self' has dtype {}, but lerp is defined for floating-point tensors "
         "only; convert the inputs with to(float32)",
         op.name, dtype_name(self->dtype));
  EwInput in[3] = {input_of(c, 0), input_of(c, 1), weight};
  TensorImpl* target = nullptr;
  const Mode mode = mode_of(c, &target);
  check_devices(op, in, 3, target);
  const Shape shape = broadcast_inputs(op, in, 3);
  check_target(op, mode, target, self->dtype, shape, in, 3);
  DeviceRecord* dev = self->device();
  if (dev->is_meta) {
    finish(c, target, target ? TensorRef() : new_tensor(c.runtime, dev, self->dtype, shape));
    return;
  }
  TensorRef diff = op::call(c.runtime, OpId::sub_Tensor, end, self);
  TensorRef r;
  if (!weight.tensor) {
    const tsr_scalar& w = weight.scalar;
    const double wd = w.kind == TSR_FLOAT64 ? w.v.f : static_cast<double>(w.v.i);
    if (std::fabs(wd) < 0.5)
      r = op::call(c.runtime, OpId::add_Tensor, self, diff, w);
    else
      r = op::call(c.runtime, OpId::sub_Tensor, end, diff, static_cast<double>(1.0 - wd));
  } else {
    TensorImpl* w = weight.tensor;
    TensorRef scaled = op::call(c.runtime, OpId::mul_Tensor, w, diff);
    TensorRef low = op::call(c.runtime, OpId::add_Tensor, self, scaled);
    TensorRef rest = op::call(c.runtime, OpId::rsub_Scalar, w, int64_t{1});
    TensorRef back = op::call(c.runtime, OpId::mul_Tensor, diff, rest);
    TensorRef high = op::call(c.runtime, OpId::sub_Tensor, end, back);
    TensorRef magnitude = op::call(c.runtime, OpId::abs, w);
    TensorRef near_self = op::call(c.runtime, OpId::lt_Scalar, magnitude, 0.5);
    r = op::call(c.runtime, OpId::where_self, near_self, low, high);
  }
  if (!same_shape(*r, shape)) {
    TensorRef full = new_tensor(c.runtime, dev, self->dtype, shape);
    copy_raw(full.get(), r.get());
    r = full;
  }
  finish(c, target, std::move(r));
}

namespace {

// self + value * (t1 op t2), with op's result `term`, through add's in-place,
// out= or functional form (which apply the promotion and target rules).
void add_scaled(OpCall& c, TensorImpl* term) {
  TensorImpl* target = nullptr;
  const Mode mode = mode_of(c, &target);
  const tsr_value self = c.args[0];
  const tsr_value value = c.args[3];
  TensorRef r;
  if (mode == Mode::kInPlace)
    r = op::call(c.runtime, OpId::add__Tensor, self, term, value);
  else if (mode == Mode::kOut)
    r = op::call(c.runtime, OpId::add_out, self, term, value, target);
  else
    r = op::call(c.runtime, OpId::add_Tensor, self, term, value);
  c.set_result(std::move(r));
}

}  // namespace

void addcmul_op(OpCall& c) {
  TensorRef product = op::call(c.runtime, OpId::mul_Tensor, c.args[1], c.args[2]);
  add_scaled(c, product.get());
}

void addcdiv_op(OpCall& c) {
  if (is_integral(c.tensor(1)->dtype, true) && is_integral(c.tensor(2)->dtype, true))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': Integer division with addcdiv is no longer supported, and in a future "
         "release addcdiv will perform a true division of tensor1 and tensor2. The historic "
         "addcdiv behavior can be implemented as (input + value * torch.trunc(tensor1 / "
         "tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / "
         "tensor2) for float inputs. The future addcdiv behavior is just the latter "
         "implementation: (input + value * tensor1 / tensor2), for all dtypes.",
         c.op->name);
  TensorRef quotient = op::call(c.runtime, OpId::div_Tensor, c.args[1], c.args[2]);
  add_scaled(c, quotient.get());
}

}  // namespace tsr::ops
