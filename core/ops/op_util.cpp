#include "ops/op_util.h"

#include <cstddef>

#include <cstring>
#include <vector>

#include "dispatch/kernel_call.h"
#include "dispatch/op_api.h"
#include "dispatch/values.h"
#include "runtime/runtime.h"
#include "runtime/stream.h"
#include "tensor/grad_mode.h"
#include "util/error.h"

namespace tsr {

Shape shape_of(const TensorImpl& t) {
  Shape s;
  s.ndim = t.ndim;
  for (int32_t d = 0; d < t.ndim; ++d) s.sizes[d] = t.sizes[d];
  return s;
}

bool same_shape(const TensorImpl& t, const Shape& s) {
  if (t.ndim != s.ndim) return false;
  for (int32_t d = 0; d < t.ndim; ++d)
    if (t.sizes[d] != s.sizes[d]) return false;
  return true;
}

TensorRef new_tensor(Runtime* rt, DeviceRecord* device, tsr_dtype dtype, int32_t ndim,
                     const int64_t* sizes, const int64_t* strides) {
  // Op code computes result sizes from arguments; refusing an overflowing one
  // here keeps a wrapped byte count from reaching the allocator (Note [Checked
  // size arithmetic]). Ops check their own arguments first for a sharper message.
  check_sizes(ndim, sizes, dtype_size(dtype), "size");
  int64_t st[TSR_MAX_DIMS];
  if (strides == nullptr) {
    contiguous_strides(ndim, sizes, st);
    strides = st;
  }
  int64_t elems = required_storage_elements(ndim, sizes, strides, 0, "stride");
  int64_t nbytes = checked_nbytes(elems, dtype_size(dtype), "size");
  Storage* storage = Storage::allocate(device, static_cast<size_t>(nbytes));
  return TensorRef(make_tensor(rt, storage, nullptr, dtype, ndim, sizes, strides, 0));
}

TensorRef make_alias(TensorImpl* base, int32_t ndim, const int64_t* sizes, const int64_t* strides,
                     int64_t offset) {
  base->storage->retain();
  base->version->retain();
  TensorRef view(make_tensor(base->runtime, base->storage, base->version, base->dtype, ndim, sizes,
                             strides, offset));
  view->is_view = true;
  view->is_inference = base->is_inference;
  view->view_base = base->view_base != nullptr ? base->view_base : base;
  view->view_base->retain();
  return view;
}

tsr_tensor_desc broadcast_desc(const TensorImpl& t, const Shape& shape) {
  tsr_tensor_desc d = t.desc();
  if (same_shape(t, shape)) return d;
  int32_t lead = shape.ndim - t.ndim;
  d.ndim = shape.ndim;
  for (int32_t i = shape.ndim - 1; i >= 0; --i) {
    int32_t src = i - lead;
    d.sizes[i] = shape.sizes[i];
    d.strides[i] = (src >= 0 && t.sizes[src] == shape.sizes[i]) ? t.strides[src] : 0;
  }
  return d;
}

void check_same_device(const OpDef& op, const TensorImpl& a, const TensorImpl& b,
                       const char* a_name, const char* b_name) {
  if (a.device() != b.device())
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': expected all tensors to be on the same device, but found at least two "
         "devices, {} (argument '{}') and {} (argument '{}'); move them with to()",
         op.name, a.device()->label, a_name, b.device()->label, b_name);
}

void fill_raw(TensorImpl* t, const tsr_scalar& value) {
  DeviceRecord* dev = t->device();
  if (dev->is_meta || t->numel == 0) return;
  const OpDef& op = Registry::get().op(OpId::fill__Scalar);
  tsr_dtype dt = t->dtype;
  const BoundKernel& k = find_kernel(op, OpId::fill__Scalar, dev, &dt, 1);
  tsr_tensor_desc d = t->desc();
  tsr_value args[2];
  args[0].tag = TSR_VALUE_TENSOR;
  args[0].len = 0;
  args[0].u.desc = &d;
  args[1] = v_scalar(value);
  tsr_tensor_desc out = d;
  invoke_kernel(op, k, dev, args, 2, &out, 1);
}

TensorRef scalar_tensor(Runtime* rt, DeviceRecord* device, const tsr_scalar& value,
                        tsr_dtype dtype) {
  TensorRef t = new_tensor(rt, device, dtype, 0, nullptr);
  fill_raw(t.get(), value);
  return t;
}

namespace {

// Same-device copy through the device's copy_ kernel.
void copy_same_device(TensorImpl* dst, TensorImpl* src) {
  DeviceRecord* dev = dst->device();
  if (dev->is_meta || dst->numel == 0) return;
  const OpDef& op = Registry::get().op(OpId::copy_);
  tsr_dtype dts[2] = {dst->dtype, src->dtype};
  const BoundKernel& k = find_kernel(op, OpId::copy_, dev, dts, 2);
  tsr_tensor_desc d = dst->desc();
  tsr_tensor_desc s = broadcast_desc(*src, shape_of(*dst));
  tsr_value args[3];
  args[0].tag = TSR_VALUE_TENSOR;
  args[0].len = 0;
  args[0].u.desc = &d;
  args[1].tag = TSR_VALUE_TENSOR;
  args[1].len = 0;
  args[1].u.desc = &s;
  args[2] = v_bool(false);
  tsr_tensor_desc out = d;
  invoke_kernel(op, k, dev, args, 3, &out, 1);
}

void check_stream(DeviceRecord* dev, tsr_status* st, const char* what) {
  if (st) current_stream(dev)->fail_with(st, what);
}

// Bytes of a contiguous tensor from its device into host memory (synchronizes).
void device_to_host(TensorImpl* t, void* dst) {
  DeviceRecord* dev = t->device();
  size_t nbytes = static_cast<size_t>(t->numel) * t->itemsize();
  if (nbytes == 0) return;
  const tsr_plugin_api& api = dev->plugin->api;
  Stream* stream = current_stream(dev);
  stream->check_sticky();
  check_stream(
      dev,
      api.copy_device_to_host(dev->plugin->context, dev->plugin_index, stream->plugin_stream,
                              t->storage->buffer, static_cast<uint64_t>(t->offset) * t->itemsize(),
                              dst, nbytes),
      "copy_device_to_host");
  stream->synchronize();
}

// Bytes of host memory into a contiguous tensor (synchronizes: `src` may die).
void host_to_device(const void* src, TensorImpl* t) {
  DeviceRecord* dev = t->device();
  size_t nbytes = static_cast<size_t>(t->numel) * t->itemsize();
  if (nbytes == 0) return;
  const tsr_plugin_api& api = dev->plugin->api;
  Stream* stream = current_stream(dev);
  stream->check_sticky();
  check_stream(dev,
               api.copy_host_to_device(dev->plugin->context, dev->plugin_index,
                                       stream->plugin_stream, src, t->storage->buffer,
                                       static_cast<uint64_t>(t->offset) * t->itemsize(), nbytes),
               "copy_host_to_device");
  stream->synchronize();
}

// Bytes of a contiguous tensor into a contiguous tensor on another device of
// the same plugin (plugin ABI 1.2 copy_peer): the source device's stream is
// synchronized first, the copy is enqueued on the destination's stream.
void peer_copy(TensorImpl* src, TensorImpl* dst) {
  DeviceRecord* sd = src->device();
  DeviceRecord* dd = dst->device();
  size_t nbytes = static_cast<size_t>(src->numel) * src->itemsize();
  if (nbytes == 0) return;
  current_stream(sd)->synchronize();
  Stream* stream = current_stream(dd);
  stream->check_sticky();
  const tsr_plugin_api& api = dd->plugin->api;
  check_stream(
      dd,
      api.copy_peer(dd->plugin->context, dd->plugin_index, stream->plugin_stream,
                    dst->storage->buffer, static_cast<uint64_t>(dst->offset) * dst->itemsize(),
                    sd->plugin_index, src->storage->buffer,
                    static_cast<uint64_t>(src->offset) * src->itemsize(), nbytes),
      "copy_peer");
}

}  // namespace

void copy_raw(TensorImpl* dst, TensorImpl* src) {
  DeviceRecord* dd = dst->device();
  DeviceRecord* sd = src->device();
  if (dd == sd) {
    copy_same_device(dst, src);
    return;
  }
  if (dd->is_meta) return;
  if (sd->is_meta)
    fail(TSR_FAILED_PRECONDITION, "cannot copy from a meta tensor to {}: meta tensors have no data",
         dd->label);
  // Across devices: make src contiguous where it lives, move the bytes, then let
  // the destination's copy_ kernel broadcast, convert and scatter into dst.
  TensorRef s = contiguous_of(src);
  bool direct = dst->contiguous && dst->dtype == src->dtype && same_shape(*dst, shape_of(*src));
  TensorRef staging;
  TensorImpl* target = dst;
  if (!direct) {
    staging = new_tensor(dst->runtime, dd, src->dtype, src->ndim, src->sizes);
    target = staging.get();
  }
  const tsr_plugin_api* peer = sd->plugin == dd->plugin ? &dd->plugin->api : nullptr;
  if (peer != nullptr && peer->copy_peer != nullptr &&
      peer->struct_size >= offsetof(tsr_plugin_api, copy_peer) + sizeof(void*)) {
    peer_copy(s.get(), target);
  } else if (sd->host_addressable && !dd->is_meta) {
    host_to_device(s->desc().data, target);
  } else if (dd->host_addressable) {
    device_to_host(s.get(), target->desc().data);
  } else {
    std::vector<char> host(static_cast<size_t>(s->numel) * s->itemsize());
    device_to_host(s.get(), host.data());
    host_to_device(host.data(), target);
  }
  if (!direct) copy_same_device(dst, staging.get());
}

void read_to_host(TensorImpl* t, void* dst) {
  if (t->device()->is_meta)
    fail(TSR_FAILED_PRECONDITION, "cannot read a meta tensor: meta tensors have shapes, not data");
  if (t->numel == 0) return;
  TensorRef c = contiguous_of(t);
  device_to_host(c.get(), dst);
}

void write_from_host(TensorImpl* t, const void* src) {
  if (t->device()->is_meta) return;
  if (t->numel == 0) return;
  if (t->contiguous) {
    host_to_device(src, t);
    return;
  }
  TensorRef staging = new_tensor(t->runtime, t->device(), t->dtype, t->ndim, t->sizes);
  host_to_device(src, staging.get());
  copy_raw(t, staging.get());
}

TensorRef cast(TensorImpl* t, tsr_dtype dtype) {
  if (t->dtype == dtype) return TensorRef::borrow(t);
  // A composite differentiated through its decomposition (softmax.int with
  // dtype=, ...) must record the conversion, or its result is cut off from
  // the input's graph; _to_copy has a derivative.
  if (autograd::grad_enabled() && t->requires_grad)
    return op::call(t->runtime, OpId::_to_copy, t, dtype);
  int64_t strides[TSR_MAX_DIMS];
  preserve_strides(*t, strides);
  TensorRef out = new_tensor(t->runtime, t->device(), dtype, t->ndim, t->sizes, strides);
  copy_raw(out.get(), t);
  return out;
}

TensorRef contiguous_of(TensorImpl* t) {
  if (t->contiguous) return TensorRef::borrow(t);
  TensorRef out = new_tensor(t->runtime, t->device(), t->dtype, t->ndim, t->sizes);
  copy_raw(out.get(), t);
  return out;
}

void resize_output(TensorImpl* out, const Shape& shape) {
  if (same_shape(*out, shape)) return;
  const int64_t numel = check_sizes(shape.ndim, shape.sizes, out->itemsize(), "out");
  int64_t strides[TSR_MAX_DIMS];
  contiguous_strides(shape.ndim, shape.sizes, strides);
  int64_t need = required_storage_elements(shape.ndim, shape.sizes, strides, out->offset, "out");
  int64_t need_bytes = checked_nbytes(need, out->itemsize(), "out");
  if (static_cast<uint64_t>(need_bytes) > out->storage->nbytes) {
    Storage* fresh = Storage::allocate(
        out->device(), static_cast<size_t>(checked_nbytes(numel, out->itemsize(), "out")));
    out->storage->release();
    out->storage = fresh;
    out->offset = 0;
  }
  out->ndim = shape.ndim;
  for (int32_t d = 0; d < shape.ndim; ++d) {
    out->sizes[d] = shape.sizes[d];
    out->strides[d] = strides[d];
  }
  out->refresh();
}

}  // namespace tsr
