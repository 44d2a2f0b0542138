// Backward of softmax and log-softmax, as PyTorch's ops of the same schema:
//   _softmax_backward_data(g, y, dim, input_dtype)     = y (g - sum(g y, dim))
//   _log_softmax_backward_data(g, y, dim, input_dtype) = g - exp(y) sum(g, dim)
// where y is the forward's output (softmax, or log_softmax) and the sums keep
// `dim`. They are fusable composites: a device with a kernel (the CPU plugin:
// one line at a time, a sum then one sweep writing the result) runs it; any
// other device runs the decomposition above over registry ops. The autograd
// formulas of _softmax/_log_softmax call them when no graph is being built
// (core/autograd/formulas_basic.cpp).
//
// Note [Softmax backward dtypes]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// grad_output and output have one floating dtype, which is the computing one.
// input_dtype is the dtype of the forward's input, and the result's: equal to
// grad_output's, or float16/bfloat16 with float32 grad_output and output (the
// backward of a half_to_float forward: computed in float32, rounded once).
// That is the contract of PyTorch's CUDA kernels; PyTorch 2.15's CPU kernels
// refuse a half input_dtype ("expected scalar type Float but found Half") and
// ignore a float64 one (the result stays float32). Tessera follows the CUDA
// contract on every device and refuses any other pair, naming both dtypes.
// Both ops require output to have grad_output's shape; PyTorch 2.15's CPU
// _log_softmax_backward_data checks no shapes at all (it reads a smaller
// output out of bounds), its _softmax_backward_data refuses, as Tessera does
// for both.
//
// Kernel contract (what the core passes): grad_output and output of one
// shape and dtype, any strides; dim resolved (0 <= dim < max(ndim, 1)); the
// input_dtype value as given; out contiguous, of input_dtype and the shape.
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

TensorRef softmax_backward_of(OpCall& c, bool log) {
  const OpDef& op = *c.op;
  Runtime* rt = c.runtime;
  TensorImpl* grad = c.tensor(0);
  TensorImpl* output = c.tensor(1);
  const auto input_dtype = static_cast<tsr_dtype>(c.args[3].u.i);
  if (!is_floating(grad->dtype))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'grad_output' has dtype {}, but softmax backward needs a floating "
         "point tensor; convert it with to()",
         op.name, dtype_name(grad->dtype));
  if (output->dtype != grad->dtype)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'output': expected scalar type {} (the dtype of 'grad_output') but "
         "found {}",
         op.name, dtype_name(grad->dtype), dtype_name(output->dtype));
  check_same_device(op, *grad, *output, "grad_output", "output");
  if (!same_shape(*output, shape_of(*grad)))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': Expected tensor for argument 'grad_output' to have same size as tensor for "
         "argument 'output'; but {} does not equal {}",
         op.name, shape_str(grad->ndim, grad->sizes), shape_str(output->ndim, output->sizes));
  const bool half_input =
      (input_dtype == TSR_FLOAT16 || input_dtype == TSR_BFLOAT16) && grad->dtype == TSR_FLOAT32;
  if (input_dtype != grad->dtype && !half_input)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'input_dtype' = {} does not fit grad_output of dtype {}: pass the "
         "grad_output's dtype, or float16/bfloat16 with float32 gradients (the backward of a "
         "half_to_float softmax)",
         op.name, dtype_name(input_dtype), dtype_name(grad->dtype));
  const int32_t dim = wrap_dim_of(op, c.int_arg(2), grad->ndim);
  DeviceRecord* dev = grad->device();
  const tsr_dtype dts[2] = {grad->dtype, output->dtype};
  const BoundKernel* k = try_find_kernel(op.id, dev, dts, 2);
  if (k || dev->is_meta || grad->numel == 0) {
    TensorRef out = new_tensor(rt, dev, input_dtype, grad->ndim, grad->sizes);
    if (!k || grad->numel == 0) return out;
    const tsr_tensor_desc dg = grad->desc();
    const tsr_tensor_desc dy = output->desc();
    tsr_tensor_desc dout = out->desc();
    tsr_value args[4] = {v_none(), v_none(), v_int(dim), c.args[3]};
    args[0].tag = TSR_VALUE_TENSOR;
    args[0].u.desc = &dg;
    args[1].tag = TSR_VALUE_TENSOR;
    args[1].u.desc = &dy;
    invoke_kernel(op, *k, dev, args, 4, &dout, 1);
    return out;
  }
  // The decomposition, in float32 for float16/bfloat16 gradients (as the
  // CPU kernel) and else in their dtype, rounded once to input_dtype.
  constexpr OpId exp = OpId::exp;
  const bool reduced = grad->dtype == TSR_FLOAT16 || grad->dtype == TSR_BFLOAT16;
  TensorRef g_acc = reduced ? cast(grad, TSR_FLOAT32) : TensorRef::borrow(grad);
  TensorRef y_acc = reduced ? cast(output, TSR_FLOAT32) : TensorRef::borrow(output);
  grad = g_acc.get();
  output = y_acc.get();
  // Registry ops only (sum.dim_IntList, not the _reduce kernel directly), so
  // that a differentiated call records every step.
  const int64_t dims[1] = {dim};
  const int32_t ndims = grad->ndim == 0 ? 0 : 1;
  auto sum_keep = [&](TensorImpl* t) {
    return op::call(rt, OpId::sum_dim_IntList, t, op::ints(dims, ndims), true);
  };
  TensorRef r;
  if (log) {
    TensorRef s = sum_keep(grad);
    TensorRef p = op::call(rt, exp, output);
    TensorRef ps = op::call(rt, OpId::mul_Tensor, p, s);
    r = op::call(rt, OpId::sub_Tensor, grad, ps);
  } else {
    TensorRef gy = op::call(rt, OpId::mul_Tensor, grad, output);
    TensorRef s = sum_keep(gy.get());
    TensorRef d = op::call(rt, OpId::sub_Tensor, grad, s);
    r = op::call(rt, OpId::mul_Tensor, output, d);
  }
  return cast(r.get(), input_dtype);
}

}  // namespace

void softmax_backward_data(OpCall& c) { c.set_result(softmax_backward_of(c, false)); }
void log_softmax_backward_data(OpCall& c) { c.set_result(softmax_backward_of(c, true)); }

}  // namespace tsr::ops
