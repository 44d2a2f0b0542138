#include "ops/indexing/helpers.h"

#include "dispatch/kernel_call.h"
#include "dispatch/op_api.h"
#include "dispatch/values.h"
#include "ops/indexing/two_phase.h"
#include "runtime/runtime.h"
#include "util/error.h"

namespace tsr::ops::ix {

namespace {

// A kernel argument for `d`.
tsr_value v_desc(tsr_tensor_desc* d) {
  tsr_value v{};
  v.tag = TSR_VALUE_TENSOR;
  v.u.desc = d;
  return v;
}

// The descriptor a kernel sees: 0-d as 1-d of one element.
tsr_tensor_desc kernel_desc(const TensorImpl& t) {
  tsr_tensor_desc d = t.desc();
  if (d.ndim == 0) {
    d.ndim = 1;
    d.sizes[0] = 1;
    d.strides[0] = 1;
  }
  return d;
}

}  // namespace

TensorRef scalar(TensorImpl* like, const tsr_scalar& value, tsr_dtype dtype) {
  return scalar_tensor(like->runtime, like->device(), value, dtype);
}
void gather_into(const OpDef& op, TensorImpl* self, int32_t dim, TensorImpl* index,
                 TensorImpl* out) {
  DeviceRecord* dev = self->device();
  if (dev->is_meta || out->numel == 0) return;
  tsr_dtype dts[2] = {self->dtype, TSR_INT64};
  const BoundKernel& k = find_kernel(op, OpId::gather, dev, dts, 2);
  tsr_tensor_desc ds = kernel_desc(*self), di = kernel_desc(*index), dout = kernel_desc(*out);
  tsr_value args[4] = {v_desc(&ds), v_int(dim), v_desc(&di), v_bool(false)};
  invoke_kernel(op, k, dev, args, 4, &dout, 1);
}

void scatter_into(const OpDef& op, TensorImpl* self, int32_t dim, TensorImpl* index,
                  TensorImpl* src, int32_t code) {
  DeviceRecord* dev = self->device();
  if (dev->is_meta || index->numel == 0) return;
  tsr_dtype dts[3] = {self->dtype, TSR_INT64, src->dtype};
  const BoundKernel& k = find_kernel(op, OpId::_scatter_, dev, dts, 3, code);
  tsr_tensor_desc ds = kernel_desc(*self), di = kernel_desc(*index), dsrc = kernel_desc(*src);
  tsr_tensor_desc dout = ds;
  tsr_value args[5] = {v_desc(&ds), v_int(dim), v_desc(&di), v_desc(&dsrc), v_int(code)};
  invoke_kernel(op, k, dev, args, 5, &dout, 1);
}

TensorRef nonzero_of(const OpDef& op, TensorImpl* self) {
  tsr_tensor_desc ds = self->desc();
  tsr_value args[1] = {v_desc(&ds)};
  tsr_dtype dt = self->dtype;
  tsr_dtype out_dt = TSR_INT64;
  TensorRef result;
  if (self->numel == 0 && !self->device()->is_meta) {
    Shape s;
    s.ndim = 2;
    s.sizes[0] = 0;
    s.sizes[1] = self->ndim;
    return op::empty(self, TSR_INT64, s);
  }
  TwoPhaseShapeRule rule;  // [n, self.ndim], n <= numel
  rule.expected_ndim[0] = 2;
  rule.max_size[0] = self->numel;
  rule.fixed[1] = self->ndim;
  run_two_phase(op, OpId::nonzero, self->device(), &dt, 1, args, 1, &out_dt, 1, &result, &rule);
  return result;
}

void sort_of(const OpDef& op, TensorImpl* self, int32_t dim, bool descending, TensorRef* values,
             TensorRef* indices) {
  Shape s = shape_of(*self);
  *values = op::empty(self, self->dtype, s);
  *indices = op::empty(self, TSR_INT64, s);
  DeviceRecord* dev = self->device();
  if (dev->is_meta || self->numel == 0) return;
  tsr_dtype dt = self->dtype;
  const BoundKernel& k = find_kernel(op, OpId::sort_stable, dev, &dt, 1);
  tsr_tensor_desc ds = kernel_desc(*self);
  tsr_tensor_desc outs[2] = {kernel_desc(**values), kernel_desc(**indices)};
  tsr_value args[4] = {v_desc(&ds), v_bool(true), v_int(self->ndim == 0 ? 0 : dim),
                       v_bool(descending)};
  invoke_kernel(op, k, dev, args, 4, outs, 2);
}

TensorRef long_index(const OpDef& op, TensorImpl* index, const char* arg) {
  if (index->dtype == TSR_INT64) return TensorRef::borrow(index);
  if (index->dtype == TSR_INT32) return cast(index, TSR_INT64);
  fail(TSR_INVALID_ARGUMENT,
       "op '{}': argument '{}' must be an int64 (or int32) tensor of indices, got {}; convert "
       "it with to(int64)",
       op.name, arg, dtype_name(index->dtype));
}

void check_no_overlap(const OpDef& op, const TensorImpl& out, const char* out_name,
                      const TensorImpl& in, const char* in_name) {
  if (out.storage != in.storage || out.numel == 0 || in.numel == 0) return;
  int64_t out_end = required_storage_elements(out.ndim, out.sizes, out.strides, out.offset);
  int64_t in_end = required_storage_elements(in.ndim, in.sizes, in.strides, in.offset);
  if (out.offset < in_end && in.offset < out_end)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': unsupported operation: some elements of the input tensor '{}' and the "
         "written-to tensor '{}' refer to a single memory location; clone() the input first",
         op.name, in_name, out_name);
}

Shape kernel_shape(const TensorImpl& t) {
  Shape s = shape_of(t);
  if (s.ndim == 0) {
    s.ndim = 1;
    s.sizes[0] = 1;
  }
  return s;
}

}  // namespace tsr::ops::ix
