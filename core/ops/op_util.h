// Building blocks shared by op implementations: tensor creation, aliasing,
// scalar wrapping, casts, broadcasting descriptors, copies across devices, and
// resizing out= tensors.
#pragma once

#include "dispatch/op_call.h"
#include "registry/registry.h"
#include "runtime/device.h"
#include "tensor/geometry.h"
#include "tensor/tensor_impl.h"

namespace tsr {

// A new tensor on `device` (storage from its caching allocator). `strides`
// null means row-major. Sizes must already be validated.
TensorRef new_tensor(Runtime* rt, DeviceRecord* device, tsr_dtype dtype, int32_t ndim,
                     const int64_t* sizes, const int64_t* strides = nullptr);
inline TensorRef new_tensor(Runtime* rt, DeviceRecord* device, tsr_dtype dtype,
                            const Shape& shape) {
  return new_tensor(rt, device, dtype, shape.ndim, shape.sizes);
}
// A tensor sharing `base`'s storage and version counter.
TensorRef make_alias(TensorImpl* base, int32_t ndim, const int64_t* sizes, const int64_t* strides,
                     int64_t offset);
// Descriptor of `t` broadcast to `shape` (stride 0 on broadcast and new dims).
tsr_tensor_desc broadcast_desc(const TensorImpl& t, const Shape& shape);
// Fills `t` with `value` through the device's fill_ kernel (no version bump).
void fill_raw(TensorImpl* t, const tsr_scalar& value);
// dst.copy_(src) with broadcasting, dtype conversion, across devices (no
// version bump, no overlap checks).
void copy_raw(TensorImpl* dst, TensorImpl* src);
// A 0-d tensor of `dtype` on `device` holding `value`.
TensorRef scalar_tensor(Runtime* rt, DeviceRecord* device, const tsr_scalar& value,
                        tsr_dtype dtype);
// `t` converted to `dtype` (a new tensor; `t` itself when it already has it).
TensorRef cast(TensorImpl* t, tsr_dtype dtype);
// Contiguous version of `t` (itself when already contiguous).
TensorRef contiguous_of(TensorImpl* t);
// Resizes an out= tensor to `shape` as PyTorch does (reallocating its storage
// when too small; version counter kept).
void resize_output(TensorImpl* out, const Shape& shape);
// Copies `t` (any strides) row-major into host memory `dst` (synchronizes).
void read_to_host(TensorImpl* t, void* dst);
// Overwrites `t` (any strides) from row-major host memory (synchronizes; no
// version bump, no overlap check).
void write_from_host(TensorImpl* t, const void* src);
// Throws unless both tensors are on one device (PyTorch's message).
void check_same_device(const OpDef& op, const TensorImpl& a, const TensorImpl& b,
                       const char* a_name = "self", const char* b_name = "other");
Shape shape_of(const TensorImpl& t);
bool same_shape(const TensorImpl& t, const Shape& s);

}  // namespace tsr
