#include "ops/linalg/linalg_util.h"

#include "dispatch/call.h"
#include "registry/out_variant.h"

#include "registry/op_impls.h"
#include "runtime/runtime.h"
#include "util/error.h"

namespace tsr::ops::linalg_detail {

namespace {

void build_frame(OpCall& frame, Runtime* runtime, OpId id, const tsr_value* args, int32_t nargs) {
  frame.runtime = runtime;
  frame.op = &Registry::get().op(id);
  for (int32_t i = 0; i < nargs; ++i) frame.args[i] = args[i];
  frame.nargs = nargs;
  fill_defaults(frame);
}

}  // namespace

TensorRef call_op_array(Runtime* runtime, OpId id, const tsr_value* args, int32_t nargs) {
  OpCall frame;
  build_frame(frame, runtime, id, args, nargs);
  run_op(frame);
  return frame.nresults > 0 ? std::move(frame.results[0]) : TensorRef();
}

OpResults call_op_all_array(Runtime* runtime, OpId id, const tsr_value* args, int32_t nargs) {
  OpCall frame;
  build_frame(frame, runtime, id, args, nargs);
  run_op(frame);
  OpResults r;
  for (int32_t k = 0; k < frame.nresults; ++k) r.r[k] = std::move(frame.results[k]);
  r.n = frame.nresults;
  return r;
}

TensorRef reshaped(TensorImpl* t, const Shape& shape) {
  return call_op(t->runtime, OpId::reshape, {v_tensor(t), v_ints(shape.sizes, shape.ndim)});
}

TensorRef reshaped(TensorImpl* t, std::initializer_list<int64_t> sizes) {
  return call_op(t->runtime, OpId::reshape,
                 {v_tensor(t), v_ints(sizes.begin(), static_cast<int32_t>(sizes.size()))});
}

TensorRef strided_view(TensorImpl* t, int32_t ndim, const int64_t* sizes, const int64_t* strides,
                       int64_t offset) {
  return call_op(t->runtime, OpId::as_strided,
                 {v_tensor(t), v_ints(sizes, ndim), v_ints(strides, ndim), v_int(offset)});
}

TensorRef unsqueezed(TensorImpl* t, int64_t dim) {
  return call_op(t->runtime, OpId::unsqueeze, {v_tensor(t), v_int(dim)});
}

TensorRef squeezed(TensorImpl* t, int64_t dim) {
  return call_op(t->runtime, OpId::squeeze_dim, {v_tensor(t), v_int(dim)});
}

TensorRef permuted(TensorImpl* t, const int64_t* dims, int32_t ndim) {
  return call_op(t->runtime, OpId::permute, {v_tensor(t), v_ints(dims, ndim)});
}

TensorRef contiguous(TensorImpl* t) {
  if (t->contiguous) return TensorRef::borrow(t);
  return call_op(t->runtime, OpId::contiguous, {v_tensor(t)});
}

TensorRef filled(Runtime* rt, DeviceRecord* dev, tsr_dtype dtype, const Shape& shape,
                 const tsr_scalar& value) {
  TensorRef t = new_tensor(rt, dev, dtype, shape);
  call_op(rt, OpId::fill__Scalar, {v_tensor(t.get()), v_scalar(value)});
  return t;
}

void finish_out(OpCall& c, TensorImpl* result, TensorImpl* out) {
  c.set_result(write_out(*c.op, out, result, /*exact_dtype=*/true));
}

void finish_in_place(OpCall& c, TensorImpl* result, TensorImpl* self) {
  const OpDef& op = *c.op;
  if (!same_shape(*self, shape_of(*result)))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': output with shape {} doesn't match the broadcast shape {}; use the "
         "functional form",
         op.name, shape_str(self->ndim, self->sizes), shape_str(result->ndim, result->sizes));
  assert_no_internal_overlap(*self, op.name.c_str(), "self");
  copy_raw(self, result);
  self->bump_version();
  c.set_result(TensorRef::borrow(self));
}

IntParams int_params(const OpCall& c, int i, int32_t n) {
  const tsr_value& v = c.args[i];
  IntParams p;
  p.n = n;
  if (v.tag != TSR_VALUE_INT_LIST || (v.len != 1 && v.len != n)) {
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': expected {} to be a single integer value or a list of {} values to match the "
         "number of spatial dimensions, but got {}={}",
         c.op->name, c.arg_name(i), n, c.arg_name(i),
         v.tag == TSR_VALUE_INT_LIST ? shape_str(v.len, v.u.ints) : std::string("None"));
  }
  for (int32_t d = 0; d < n; ++d) p.v[d] = v.u.ints[v.len == 1 ? 0 : d];
  return p;
}

bool scalar_is(const tsr_scalar& s, int64_t value) {
  switch (s.kind) {
    case TSR_BOOL:
    case TSR_INT64:
      return s.v.i == value;
    case TSR_FLOAT64:
      return s.v.f == static_cast<double>(value);
    case TSR_COMPLEX128:
      return s.v.c.re == static_cast<double>(value) && s.v.c.im == 0.0;
    default:
      return false;
  }
}

}  // namespace tsr::ops::linalg_detail
