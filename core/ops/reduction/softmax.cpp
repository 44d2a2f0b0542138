// Softmax and log-softmax. _softmax / _log_softmax are fusable composites:
// a device with a kernel for them (the CPU plugin: one row at a time, max,
// exp-sum, scale) runs it; any other device runs the decomposition
//   m = amax(x, dim, keepdim); e = exp(x - m); softmax = e / sum(e, dim)
//   log_softmax = (x - m) - log(sum(e, dim)).
// softmax.int / log_softmax.int take PyTorch's `dtype` argument: the input is
// converted to it first. Only floating dtypes are accepted (PyTorch's CPU has
// no integer softmax either). half_to_float (float16/bfloat16 in, float32 out)
// is supported by the decomposition and the CPU kernel.
#include "dispatch/kernel_call.h"
#include "dispatch/op_api.h"
#include "dispatch/values.h"
#include "ops/op_impls.h"
#include "ops/reduction/reduce_common.h"
#include "runtime/runtime.h"
#include "util/error.h"

namespace tsr::ops {

namespace {

using namespace reduction;

TensorRef softmax_of(OpCall& c, bool log) {
  const OpDef& op = *c.op;
  Runtime* rt = c.runtime;
  TensorImpl* self = c.tensor(0);
  if (!is_floating(self->dtype))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'self' has dtype {}, but softmax needs a floating point tensor; "
         "pass dtype=float32 (softmax(x, dim, dtype)) or convert it with to()",
         op.name, dtype_name(self->dtype));
  const int32_t dim = wrap_dim_of(op, c.int_arg(1), self->ndim);
  const bool half_to_float = c.bool_arg(2);
  if (half_to_float && self->dtype != TSR_FLOAT16 && self->dtype != TSR_BFLOAT16)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': half_to_float=True needs a float16 or bfloat16 input, got {}; pass "
         "half_to_float=False",
         op.name, dtype_name(self->dtype));
  const tsr_dtype out_dtype = half_to_float ? TSR_FLOAT32 : self->dtype;
  DeviceRecord* dev = self->device();
  tsr_dtype dt = self->dtype;
  const BoundKernel* k = try_find_kernel(op.id, dev, &dt, 1);
  if (k || dev->is_meta || self->numel == 0) {
    TensorRef out = new_tensor(rt, dev, out_dtype, self->ndim, self->sizes);
    if (!k || self->numel == 0) return out;
    const tsr_tensor_desc din = self->desc();
    tsr_tensor_desc dout = out->desc();
    tsr_value args[3] = {v_none(), v_int(dim), v_bool(half_to_float)};
    args[0].tag = TSR_VALUE_TENSOR;
    args[0].u.desc = &din;
    invoke_kernel(op, *k, dev, args, 3, &dout, 1);
    return out;
  }
  // The decomposition.
  constexpr OpId exp = OpId::exp;
  constexpr OpId log_op = OpId::log;
  TensorRef x = cast(self, out_dtype);
  const uint32_t mask = self->ndim == 0 ? 0u : 1u << dim;
  TensorRef m = run_reduce(op, x.get(), TSR_REDUCE_AMAX, mask, true);
  TensorRef shifted = op::call(rt, OpId::sub_Tensor, x, m);
  TensorRef e = op::call(rt, exp, shifted);
  TensorRef s = run_reduce(op, e.get(), TSR_REDUCE_SUM, mask, true);
  if (!log) return op::call(rt, OpId::div_Tensor, e, s);
  TensorRef ls = op::call(rt, log_op, s);
  return op::call(rt, OpId::sub_Tensor, shifted, ls);
}

// softmax.int / log_softmax.int: (self, dim, dtype?) -> _softmax(x, dim, False).
TensorRef softmax_int_of(OpCall& c, bool log) {
  TensorImpl* self = c.tensor(0);
  TensorRef x =
      c.is_none(2) ? TensorRef::borrow(self) : cast(self, static_cast<tsr_dtype>(c.int_arg(2)));
  if (!is_floating(x->dtype))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'self' has dtype {}, but softmax needs a floating point tensor; "
         "pass dtype=float32 or convert it with to()",
         c.op->name, dtype_name(x->dtype));
  const int32_t dim = wrap_dim_of(*c.op, c.int_arg(1), self->ndim);
  return op::call(c.runtime, log ? OpId::_log_softmax : OpId::_softmax, x, dim, false);
}

}  // namespace

void softmax_primitive(OpCall& c) { c.set_result(softmax_of(c, false)); }
void log_softmax_primitive(OpCall& c) { c.set_result(softmax_of(c, true)); }
void softmax_int(OpCall& c) { c.set_result(softmax_int_of(c, false)); }
void log_softmax_int(OpCall& c) { c.set_result(softmax_int_of(c, true)); }
void softmax_int_out(OpCall& c) {
  TensorRef r = softmax_int_of(c, false);
  c.set_result(write_out(*c.op, c.tensor(3), r.get(), true));
}
void log_softmax_int_out(OpCall& c) {
  TensorRef r = softmax_int_of(c, true);
  c.set_result(write_out(*c.op, c.tensor(3), r.get(), true));
}

}  // namespace tsr::ops
