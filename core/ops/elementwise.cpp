// Elementwise ops: copy_, fill_, and add/sub/mul/div in their functional,
// in-place and out= forms. One driver (binary_op) holds PyTorch's rules:
// type promotion with wrapped scalars, broadcasting, castability of the result
// into in-place/out targets, overlap checks, and the version bump.
#include "dispatch/kernel_call.h"
#include "ops/op_impls.h"
#include "ops/op_util.h"
#include "runtime/runtime.h"
#include "util/error.h"

namespace tsr::ops {

namespace {

enum class Binary { kAdd, kSub, kMul, kDiv };
enum class Mode { kFunctional, kInPlace, kOut };

OpId kernel_of(Binary k) {
  switch (k) {
    case Binary::kAdd:
      return OpId::add_Tensor;
    case Binary::kSub:
      return OpId::sub_Tensor;
    case Binary::kMul:
      return OpId::mul_Tensor;
    default:
      return OpId::div_Tensor;
  }
}

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

// The binary driver. `b` is null when the other operand is the scalar `bs`.
void binary_op(OpCall& c, Binary kind, Mode mode, TensorImpl* a, TensorImpl* b,
               const tsr_scalar* bs, const tsr_scalar* alpha, TensorImpl* out) {
  const OpDef& op = *c.op;
  if (b) check_same_device(op, *a, *b);
  if (out && mode == Mode::kOut) check_same_device(op, *a, *out, "self", "out");

  ResultType rt;
  rt.add_tensor(a->dtype, a->ndim);
  if (b)
    rt.add_tensor(b->dtype, b->ndim);
  else
    rt.add_scalar(static_cast<tsr_dtype>(bs->kind));
  tsr_dtype compute = rt.result();
  if (kind == Binary::kDiv && is_integral(compute, true)) compute = kDefaultFloat;
  if (kind == Binary::kSub && (a->dtype == TSR_BOOL || (b ? b->dtype : bs->kind) == TSR_BOOL))
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
  Shape shape = b ? broadcast_shapes(a->ndim, a->sizes, b->ndim, b->sizes) : shape_of(*a);

  TensorImpl* target = nullptr;
  if (mode == Mode::kInPlace) target = a;
  if (mode == Mode::kOut) target = out;
  if (target) {
    if (!can_cast(compute, target->dtype))
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': result type {} can't be cast to the desired output type {} ({} to {} "
           "loses information); use a {} output or convert the inputs",
           op.name, dtype_name(compute), dtype_name(target->dtype), kind_word(compute),
           kind_word(target->dtype), dtype_name(compute));
    if (mode == Mode::kInPlace && !same_shape(*a, shape))
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': output with shape {} doesn't match the broadcast shape {}", op.name,
           shape_str(a->ndim, a->sizes), shape_str(shape.ndim, shape.sizes));
    if (mode == Mode::kOut) resize_output(out, shape);
    assert_no_internal_overlap(*target, op.name.c_str(), mode == Mode::kOut ? "out" : "self");
    if (mode == Mode::kOut) assert_no_partial_overlap(*target, *a);
    if (b) assert_no_partial_overlap(*target, *b);
  }

  DeviceRecord* dev = a->device();
  if (dev->is_meta) {
    if (target) {
      target->bump_version();
      c.set_result(TensorRef::borrow(target));
    } else {
      c.set_result(new_tensor(c.runtime, dev, compute, shape));
    }
    return;
  }

  // Inputs in the computation dtype (only those that differ are converted).
  // Inputs already in the computation dtype are used as they are (no refcount traffic).
  TensorRef a_tmp, b_tmp;
  TensorImpl* a_c = a;
  TensorImpl* b_c = b;
  if (a->dtype != compute) {
    a_tmp = cast(a, compute);
    a_c = a_tmp.get();
  }
  if (!b) {
    b_tmp = scalar_tensor(c.runtime, dev, *bs, compute);
    b_c = b_tmp.get();
  } else if (b->dtype != compute) {
    b_tmp = cast(b, compute);
    b_c = b_tmp.get();
  }
  TensorRef result;
  TensorImpl* dst = target;
  if (!dst || dst->dtype != compute) {
    result = new_tensor(c.runtime, dev, compute, shape);
    dst = result.get();
  }

  OpId kop = kernel_of(kind);
  const OpDef& kdef = Registry::get().op(kop);
  tsr_dtype dts[2] = {compute, compute};
  const BoundKernel& k = find_kernel(op, kop, dev, dts, 2);
  tsr_tensor_desc da = broadcast_desc(*a_c, shape);
  tsr_tensor_desc db = broadcast_desc(*b_c, shape);
  tsr_tensor_desc dout = dst->desc();
  tsr_value args[3];
  args[0].tag = TSR_VALUE_TENSOR;
  args[0].len = 0;
  args[0].u.desc = &da;
  args[1].tag = TSR_VALUE_TENSOR;
  args[1].len = 0;
  args[1].u.desc = &db;
  int32_t nargs = 2;
  if (kind == Binary::kAdd || kind == Binary::kSub) {
    args[2] = v_scalar(alpha ? *alpha : scalar_int(1));
    nargs = 3;
  }
  (void)kdef;
  invoke_kernel(op, k, dev, args, nargs, &dout, 1);

  if (target) {
    if (dst != target) copy_raw(target, dst);
    target->bump_version();
    c.set_result(TensorRef::borrow(target));
  } else {
    c.set_result(std::move(result));
  }
}

}  // namespace

void add_Tensor(OpCall& c) {
  binary_op(c, Binary::kAdd, Mode::kFunctional, c.tensor(0), c.tensor(1), nullptr, &c.scalar(2),
            nullptr);
}
void sub_Tensor(OpCall& c) {
  binary_op(c, Binary::kSub, Mode::kFunctional, c.tensor(0), c.tensor(1), nullptr, &c.scalar(2),
            nullptr);
}
void mul_Tensor(OpCall& c) {
  binary_op(c, Binary::kMul, Mode::kFunctional, c.tensor(0), c.tensor(1), nullptr, nullptr,
            nullptr);
}
void div_Tensor(OpCall& c) {
  binary_op(c, Binary::kDiv, Mode::kFunctional, c.tensor(0), c.tensor(1), nullptr, nullptr,
            nullptr);
}
void add_Scalar(OpCall& c) {
  binary_op(c, Binary::kAdd, Mode::kFunctional, c.tensor(0), nullptr, &c.scalar(1), &c.scalar(2),
            nullptr);
}
void sub_Scalar(OpCall& c) {
  binary_op(c, Binary::kSub, Mode::kFunctional, c.tensor(0), nullptr, &c.scalar(1), &c.scalar(2),
            nullptr);
}
void mul_Scalar(OpCall& c) {
  binary_op(c, Binary::kMul, Mode::kFunctional, c.tensor(0), nullptr, &c.scalar(1), nullptr,
            nullptr);
}
void div_Scalar(OpCall& c) {
  binary_op(c, Binary::kDiv, Mode::kFunctional, c.tensor(0), nullptr, &c.scalar(1), nullptr,
            nullptr);
}
void add__Tensor(OpCall& c) {
  binary_op(c, Binary::kAdd, Mode::kInPlace, c.tensor(0), c.tensor(1), nullptr, &c.scalar(2),
            nullptr);
}
void sub__Tensor(OpCall& c) {
  binary_op(c, Binary::kSub, Mode::kInPlace, c.tensor(0), c.tensor(1), nullptr, &c.scalar(2),
            nullptr);
}
void mul__Tensor(OpCall& c) {
  binary_op(c, Binary::kMul, Mode::kInPlace, c.tensor(0), c.tensor(1), nullptr, nullptr, nullptr);
}
void div__Tensor(OpCall& c) {
  binary_op(c, Binary::kDiv, Mode::kInPlace, c.tensor(0), c.tensor(1), nullptr, nullptr, nullptr);
}
void add__Scalar(OpCall& c) {
  binary_op(c, Binary::kAdd, Mode::kInPlace, c.tensor(0), nullptr, &c.scalar(1), &c.scalar(2),
            nullptr);
}
void sub__Scalar(OpCall& c) {
  binary_op(c, Binary::kSub, Mode::kInPlace, c.tensor(0), nullptr, &c.scalar(1), &c.scalar(2),
            nullptr);
}
void mul__Scalar(OpCall& c) {
  binary_op(c, Binary::kMul, Mode::kInPlace, c.tensor(0), nullptr, &c.scalar(1), nullptr, nullptr);
}
void div__Scalar(OpCall& c) {
  binary_op(c, Binary::kDiv, Mode::kInPlace, c.tensor(0), nullptr, &c.scalar(1), nullptr, nullptr);
}
void add_out(OpCall& c) {
  binary_op(c, Binary::kAdd, Mode::kOut, c.tensor(0), c.tensor(1), nullptr, &c.scalar(2),
            c.tensor(3));
}
void sub_out(OpCall& c) {
  binary_op(c, Binary::kSub, Mode::kOut, c.tensor(0), c.tensor(1), nullptr, &c.scalar(2),
            c.tensor(3));
}
void mul_out(OpCall& c) {
  binary_op(c, Binary::kMul, Mode::kOut, c.tensor(0), c.tensor(1), nullptr, nullptr, c.tensor(2));
}
void div_out(OpCall& c) {
  binary_op(c, Binary::kDiv, Mode::kOut, c.tensor(0), c.tensor(1), nullptr, nullptr, c.tensor(2));
}

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
