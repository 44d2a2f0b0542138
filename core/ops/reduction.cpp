// Reductions: sum and mean over a dim list, with keepdim and dtype. The kernel
// sees the keepdim layout (size 1, stride 0 on reduced dims) whatever keepdim
// is; the core views the result down when keepdim is false.
#include "dispatch/kernel_call.h"
#include "ops/op_impls.h"
#include "ops/op_util.h"
#include "runtime/runtime.h"
#include "util/error.h"

namespace tsr::ops {

namespace {

// Resolved dims as a bit mask over self's dims; none/empty means all dims.
uint32_t reduced_mask(const OpCall& c, const TensorImpl& self, int dim_arg) {
  if (c.is_none(dim_arg) || c.args[dim_arg].len == 0) return (1u << self.ndim) - 1u;
  uint32_t mask = 0;
  const tsr_value& v = c.args[dim_arg];
  for (int32_t i = 0; i < v.len; ++i) {
    int32_t d = wrap_dim(v.u.ints[i], self.ndim, "dim");
    if (self.ndim == 0) continue;  // a scalar reduces over nothing
    if (mask & (1u << d))
      fail(TSR_INVALID_ARGUMENT, "op '{}': dim {} appears multiple times in the list of dims",
           c.op->name, d);
    mask |= 1u << d;
  }
  return mask;
}

void reduce(OpCall& c, bool is_mean, int dim_arg, int keepdim_arg, int dtype_arg) {
  TensorImpl* self = c.tensor(0);
  uint32_t mask = reduced_mask(c, *self, dim_arg);
  bool keepdim = keepdim_arg >= 0 && c.bool_arg(keepdim_arg);
  tsr_dtype out_dtype;
  if (!c.is_none(dtype_arg)) {
    out_dtype = static_cast<tsr_dtype>(c.int_arg(dtype_arg));
  } else if (is_integral(self->dtype, true)) {
    if (is_mean)
      fail(TSR_INVALID_ARGUMENT,
           "mean(): could not infer output dtype. Input dtype must be either a floating point or "
           "complex dtype. Got: {}; pass dtype= or convert the input with to()",
           dtype_name(self->dtype));
    out_dtype = TSR_INT64;
  } else {
    out_dtype = self->dtype;
  }
  if (is_mean && is_integral(out_dtype, true))
    fail(TSR_INVALID_ARGUMENT,
         "mean(): could not infer output dtype. Optional dtype must be either a floating point "
         "or complex dtype. Got: {}",
         dtype_name(out_dtype));

  Shape keep;
  keep.ndim = self->ndim;
  int64_t dims[TSR_MAX_DIMS];
  int32_t ndims = 0;
  Shape final_shape;
  for (int32_t d = 0; d < self->ndim; ++d) {
    bool r = mask & (1u << d);
    keep.sizes[d] = r ? 1 : self->sizes[d];
    if (r) dims[ndims++] = d;
    if (!r || keepdim) final_shape.sizes[final_shape.ndim++] = keep.sizes[d];
  }
  DeviceRecord* dev = self->device();
  TensorRef out = new_tensor(c.runtime, dev, out_dtype, keep);
  if (!dev->is_meta) {
    TensorRef in = cast(self, out_dtype);
    OpId kop = is_mean ? OpId::mean_dim : OpId::sum_dim_IntList;
    const BoundKernel& k = find_kernel(*c.op, kop, dev, &out_dtype, 1);
    tsr_tensor_desc din = in->desc();
    tsr_tensor_desc dout = out->desc();
    for (int32_t i = 0; i < ndims; ++i) dout.strides[dims[i]] = 0;
    tsr_value args[4];
    args[0].tag = TSR_VALUE_TENSOR;
    args[0].len = 0;
    args[0].u.desc = &din;
    args[1] = v_ints(dims, ndims);
    args[2] = v_bool(keepdim);
    args[3] = v_dtype(out_dtype);
    invoke_kernel(*c.op, k, dev, args, 4, &dout, 1);
  }
  if (keepdim) {
    c.set_result(std::move(out));
    return;
  }
  int64_t strides[TSR_MAX_DIMS];
  contiguous_strides(final_shape.ndim, final_shape.sizes, strides);
  c.set_result(make_alias(out.get(), final_shape.ndim, final_shape.sizes, strides, 0));
}

}  // namespace

void sum_dim(OpCall& c) { reduce(c, false, 1, 2, 3); }
void mean_dim(OpCall& c) { reduce(c, true, 1, 2, 3); }
void sum(OpCall& c) {
  // sum(self, *, dtype): every dim, no keepdim. Arg 1 is dtype; dims are None.
  OpCall inner;
  inner.runtime = c.runtime;
  inner.op = c.op;
  inner.args[0] = c.args[0];
  inner.args[1] = v_none();
  inner.args[2] = v_bool(false);
  inner.args[3] = c.args[1];
  inner.nargs = 4;
  reduce(inner, false, 1, 2, 3);
  c.set_result(std::move(inner.results[0]));
}
void mean(OpCall& c) {
  OpCall inner;
  inner.runtime = c.runtime;
  inner.op = c.op;
  inner.args[0] = c.args[0];
  inner.args[1] = v_none();
  inner.args[2] = v_bool(false);
  inner.args[3] = c.args[1];
  inner.nargs = 4;
  reduce(inner, true, 1, 2, 3);
  c.set_result(std::move(inner.results[0]));
}

}  // namespace tsr::ops
