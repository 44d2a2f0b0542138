// Composites that make new tensors from old ones: clone, contiguous, _to_copy
// (dtype and device conversion), zeros_like, ones_like.
//
// Memory formats (PyTorch's): contiguous_format is row-major; channels_last
// gives a 4-d NCHW tensor NHWC strides and channels_last_3d a 5-d one NDHWC
// strides; preserve_format keeps the layout of a dense, non-overlapping input
// (same strides) and otherwise picks channels_last(_3d) when the input's
// strides order its dims that way, else row-major (suggest_memory_format).
#include "ops/op_impls.h"
#include "ops/op_util.h"
#include "runtime/runtime.h"
#include "util/error.h"

namespace tsr::ops {

namespace {

// Whether `t`'s strides order its dims as channels-last (NHWC / NDHWC): the
// strides do not decrease along C, W, H(, D), N; ambiguous layouts (C of
// stride 0, N as fast as C, empty dims) count as row-major.
bool strides_like_channels_last(const TensorImpl& t) {
  if (t.ndim != 4 && t.ndim != 5) return false;
  static const int32_t order4[] = {1, 3, 2, 0};
  static const int32_t order5[] = {1, 4, 3, 2, 0};
  const int32_t* order = t.ndim == 4 ? order4 : order5;
  if (t.strides[1] == 0) return false;
  int64_t min = 0;
  for (int32_t i = 0; i < t.ndim; ++i) {
    int32_t d = order[i];
    if (t.sizes[d] == 0 || t.strides[d] < min) return false;
    if (d == 0 && min == t.strides[1]) return false;
    min = t.sizes[d] > 1 ? t.strides[d] * t.sizes[d] : t.strides[d];
  }
  return true;
}

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
        fail(TSR_INVALID_ARGUMENT,
             "required rank {} tensor to use {} format, got a {}-D tensor; use "
             "contiguous_format for other ranks",
             want, want == 4 ? "channels_last" : "channels_last_3d", t.ndim);
      channels_last_strides(t.ndim, t.sizes, strides);
      return;
    }
    default:
      if (!is_non_overlapping_and_dense(t) && strides_like_channels_last(t)) {
        channels_last_strides(t.ndim, t.sizes, strides);
        return;
      }
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
    fail(TSR_INVALID_ARGUMENT,
         "op 'contiguous': argument 'memory_format' = preserve_format: preserve memory format "
         "is unsupported by the contiguous operator; use clone() to keep the layout");
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
