// Composites that make new tensors from old ones: clone, contiguous, _to_copy
// (dtype and device conversion), zeros_like, ones_like.
#include "ops/op_impls.h"
#include "ops/op_util.h"
#include "runtime/runtime.h"
#include "util/error.h"

namespace tsr::ops {

namespace {

// Strides for a new tensor shaped like `t` in `format`.
void strides_for(const TensorImpl& t, tsr_memory_format format, int64_t* strides) {
  switch (format) {
    case TSR_CONTIGUOUS_FORMAT:
      contiguous_strides(t.ndim, t.sizes, strides);
      return;
    case TSR_CHANNELS_LAST:
    case TSR_CHANNELS_LAST_3D: {
      int32_t want = format == TSR_CHANNELS_LAST ? 4 : 5;
      if (t.ndim != want)
        fail(TSR_INVALID_ARGUMENT, "required rank {} tensor to use {} format, got a {}-D tensor",
             want, want == 4 ? "channels_last" : "channels_last_3d", t.ndim);
      channels_last_strides(t.ndim, t.sizes, strides);
      return;
    }
    default:
      preserve_strides(t, strides);
  }
}

tsr_memory_format format_arg(const OpCall& c, int i) {
  return c.is_none(i) ? TSR_PRESERVE_FORMAT : static_cast<tsr_memory_format>(c.int_arg(i));
}

TensorRef like(OpCall& c, TensorImpl* self, int dtype_arg, int device_arg, int format_arg_index) {
  tsr_dtype dtype =
      c.is_none(dtype_arg) ? self->dtype : static_cast<tsr_dtype>(c.int_arg(dtype_arg));
  DeviceRecord* dev = c.is_none(device_arg)
                          ? self->device()
                          : c.runtime->device(c.args[device_arg].u.device, "device");
  int64_t strides[TSR_MAX_DIMS];
  strides_for(*self, format_arg(c, format_arg_index), strides);
  return new_tensor(c.runtime, dev, dtype, self->ndim, self->sizes, strides);
}

}  // namespace

void clone(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  int64_t strides[TSR_MAX_DIMS];
  strides_for(*self, format_arg(c, 1), strides);
  TensorRef out =
      new_tensor(c.runtime, self->device(), self->dtype, self->ndim, self->sizes, strides);
  copy_raw(out.get(), self);
  c.set_result(std::move(out));
}

void contiguous(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  auto format = static_cast<tsr_memory_format>(c.int_arg(1));
  if (format == TSR_PRESERVE_FORMAT)
    fail(TSR_INVALID_ARGUMENT, "contiguous: preserve_format is not supported by contiguous()");
  if (is_contiguous_as(*self, format)) {
    c.set_result(TensorRef::borrow(self));
    return;
  }
  int64_t strides[TSR_MAX_DIMS];
  strides_for(*self, format, strides);
  TensorRef out =
      new_tensor(c.runtime, self->device(), self->dtype, self->ndim, self->sizes, strides);
  copy_raw(out.get(), self);
  c.set_result(std::move(out));
}

void to_copy(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  TensorRef out = like(c, self, 1, 2, 4);
  copy_raw(out.get(), self);
  c.set_result(std::move(out));
}

void zeros_like(OpCall& c) {
  TensorRef out = like(c, c.tensor(0), 1, 2, 3);
  fill_raw(out.get(), scalar_int(0));
  c.set_result(std::move(out));
}

void ones_like(OpCall& c) {
  TensorRef out = like(c, c.tensor(0), 1, 2, 3);
  fill_raw(out.get(), scalar_int(1));
  c.set_result(std::move(out));
}

}  // namespace tsr::ops
