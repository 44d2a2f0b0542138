// The pointwise driver (driver.h).
#include "ops/pointwise/driver.h"

#include "dispatch/kernel_call.h"
#include "ops/op_util.h"
#include "runtime/runtime.h"
#include "util/error.h"

namespace tsr::ops {

namespace {

constexpr int32_t kMaxInputs = 4;

const char* kind_word(tsr_dtype d) {
  switch (dtype_category(d)) {
    case 0:
      return "Bool";
    case 1:
      return "integral";
    case 2:
      return "floating";
    default:
      return "complex";
  }
}

}  // namespace

Mode mode_of(const OpCall& c, TensorImpl** target) {
  const int32_t m = c.op->schema.mutated_arg();
  if (m < 0) {
    *target = nullptr;
    return Mode::kFunctional;
  }
  *target = c.tensor(m);
  return m == 0 ? Mode::kInPlace : Mode::kOut;
}

EwInput input_of(const OpCall& c, int i) {
  EwInput in;
  if (c.args[i].tag == TSR_VALUE_TENSOR) {
    in.tensor = c.tensor(i);
    in.dtype = in.tensor->dtype;
  } else {
    in.scalar = c.scalar(i);
    in.dtype = static_cast<tsr_dtype>(in.scalar.kind);
  }
  return in;
}

tsr_dtype result_type(const EwInput* inputs, int32_t n) {
  ResultType rt;
  for (int32_t i = 0; i < n; ++i) {
    if (inputs[i].tensor)
      rt.add_tensor(inputs[i].tensor->dtype, inputs[i].tensor->ndim);
    else
      rt.add_scalar(static_cast<tsr_dtype>(inputs[i].scalar.kind));
  }
  return rt.result();
}

Shape broadcast_inputs(const OpDef& op, const EwInput* inputs, int32_t n) {
  (void)op;
  Shape shape;
  bool first = true;
  for (int32_t i = 0; i < n; ++i) {
    const TensorImpl* t = inputs[i].tensor;
    if (!t) continue;
    if (first) {
      shape = shape_of(*t);
      first = false;
    } else {
      shape = broadcast_shapes(shape.ndim, shape.sizes, t->ndim, t->sizes);
    }
  }
  return shape;
}

void check_devices(const OpDef& op, const EwInput* inputs, int32_t n, TensorImpl* target) {
  const TensorImpl* first = nullptr;
  for (int32_t i = 0; i < n; ++i) {
    if (!inputs[i].tensor) continue;
    if (!first)
      first = inputs[i].tensor;
    else
      check_same_device(op, *first, *inputs[i].tensor, op.schema.args[0].name.c_str(),
                        op.schema.args[i].name.c_str());
  }
  if (target && first && target != first)
    check_same_device(op, *first, *target, op.schema.args[0].name.c_str(), "out");
}

void check_target(const OpDef& op, Mode mode, TensorImpl* target, tsr_dtype result,
                  const Shape& shape, const EwInput* inputs, int32_t n) {
  if (!target) return;
  const char* name = mode == Mode::kOut ? "out" : "self";
  if (!can_cast(result, target->dtype))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': result type {} can't be cast to the desired output type {} ({} to {} loses "
         "information); use a {} {} or convert the inputs",
         op.name, dtype_name(result), dtype_name(target->dtype), kind_word(result),
         kind_word(target->dtype), dtype_name(result), name);
  if (mode == Mode::kInPlace && !same_shape(*target, shape))
    fail(TSR_INVALID_ARGUMENT, "op '{}': output with shape {} doesn't match the broadcast shape {}",
         op.name, shape_str(target->ndim, target->sizes), shape_str(shape.ndim, shape.sizes));
  if (mode == Mode::kOut) resize_output(target, shape);
  assert_no_internal_overlap(*target, op.name.c_str(), name);
  for (int32_t i = 0; i < n; ++i)
    if (inputs[i].tensor) assert_no_partial_overlap(*target, *inputs[i].tensor);
}

void finish(OpCall& c, TensorImpl* target, TensorRef value) {
  if (!target) {
    c.set_result(std::move(value));
    return;
  }
  if (value && value.get() != target) copy_raw(target, value.get());
  target->bump_version();
  c.set_result(TensorRef::borrow(target));
}

void run_pointwise(OpCall& c, Mode mode, TensorImpl* target, const EwInput* inputs, int32_t n,
                   const EwKernel& kernel) {
  const OpDef& op = *c.op;
  if (n < 1 || n > kMaxInputs)
    fail(TSR_INTERNAL, "op '{}': pointwise driver called with {} inputs", op.name, n);
  check_devices(op, inputs, n, target);
  const Shape shape = broadcast_inputs(op, inputs, n);
  check_target(op, mode, target, kernel.result, shape, inputs, n);

  DeviceRecord* dev = nullptr;
  for (int32_t i = 0; i < n && !dev; ++i)
    if (inputs[i].tensor) dev = inputs[i].tensor->device();
  if (!dev) fail(TSR_INTERNAL, "op '{}': pointwise call without a tensor input", op.name);

  if (dev->is_meta) {
    finish(c, target, target ? TensorRef() : new_tensor(c.runtime, dev, kernel.result, shape));
    return;
  }

  // Inputs in their kernel dtypes; inputs already in it are used as they are.
  TensorRef tmp[kMaxInputs];
  TensorImpl* conv[kMaxInputs];
  tsr_dtype dts[kMaxInputs];
  for (int32_t i = 0; i < n; ++i) {
    const EwInput& in = inputs[i];
    dts[i] = in.dtype;
    if (!in.tensor) {
      tmp[i] = scalar_tensor(c.runtime, dev, in.scalar, in.dtype);
      conv[i] = tmp[i].get();
    } else if (in.tensor->dtype != in.dtype) {
      tmp[i] = cast(in.tensor, in.dtype);
      conv[i] = tmp[i].get();
    } else {
      conv[i] = in.tensor;
    }
  }
  TensorRef result;
  TensorImpl* dst = target;
  if (!dst || dst->dtype != kernel.result) {
    result = new_tensor(c.runtime, dev, kernel.result, shape);
    dst = result.get();
  }

  if (shape_numel(shape) > 0) {
    const BoundKernel& k = find_kernel(op, kernel.kernel_op, dev, dts, n, kernel.code);
    tsr_tensor_desc descs[kMaxInputs];
    tsr_value args[kMaxInputs + 8];
    for (int32_t i = 0; i < n; ++i) {
      descs[i] = broadcast_desc(*conv[i], shape);
      args[i] = tsr_value{};
      args[i].tag = TSR_VALUE_TENSOR;
      args[i].u.desc = &descs[i];
    }
    if (kernel.nextra > 8)
      fail(TSR_INTERNAL, "op '{}': too many kernel arguments ({})", op.name, kernel.nextra);
    for (int32_t j = 0; j < kernel.nextra; ++j) args[n + j] = kernel.extra[j];
    tsr_tensor_desc dout = dst->desc();
    invoke_kernel(op, k, dev, args, n + kernel.nextra, &dout, 1);
  }
  finish(c, target, result ? std::move(result) : TensorRef());
}

}  // namespace tsr::ops
