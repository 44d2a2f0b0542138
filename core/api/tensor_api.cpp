// tessera.h: tensor creation, lifetime, metadata, views, copies, DLPack.
#include <dlpack/dlpack.h>

#include <cstdint>
#include <cstring>

#include "api/guard.h"
#include "dispatch/normalise.h"
#include "dispatch/op_api.h"
#include "dispatch/op_call.h"
#include "dispatch/run_op.h"
#include "dispatch/values.h"
#include "ops/op_util.h"
#include "registry/registry.h"
#include "runtime/runtime.h"
#include "tensor/geometry.h"
#include "tensor/grad_mode.h"
#include "tessera/tessera.h"

using namespace tsr;

namespace {

tsr_dtype check_dtype(int32_t dtype, const char* arg) {
  if (!dtype_valid(dtype))
    fail(TSR_INVALID_ARGUMENT, "argument '{}' = {} is not a valid tsr_dtype (0..{})", arg, dtype,
         TSR_DTYPE_COUNT - 1);
  return static_cast<tsr_dtype>(dtype);
}

TensorRef create(tsr_runtime* runtime, int32_t ndim, const int64_t* sizes, const int64_t* strides,
                 int32_t dtype, tsr_device device) {
  Runtime* rt = runtime_from_handle(runtime, "runtime");
  tsr_dtype dt = check_dtype(dtype, "dtype");
  DeviceRecord* dev = rt->device(device, "device");
  check_sizes(ndim, sizes, dtype_size(dt), "sizes");
  if (strides) {
    for (int32_t d = 0; d < ndim; ++d)
      if (strides[d] < 0)
        fail(TSR_INVALID_ARGUMENT, "argument 'strides' has a negative stride {} at dim {}",
             strides[d], d);
    int64_t need = required_storage_elements(ndim, sizes, strides, 0, "strides");
    checked_nbytes(need, dtype_size(dt), "strides");
  }
  return new_tensor(rt, dev, dt, ndim, sizes, strides);
}

// Runs a view op by id on `tensor` with extra args, returning the new handle.
void run_view(OpId id, tsr_tensor* tensor, std::initializer_list<tsr_value> extra, tsr_tensor** out,
              const char* out_name = "out_view") {
  require_out(out, out_name);
  TensorImpl* t = from_handle(tensor, "tensor");
  OpCall c;
  c.runtime = t->runtime;
  c.op = &Registry::get().op(id);
  c.args[0] = v_tensor(t);
  int i = 1;
  for (const tsr_value& v : extra) c.args[i++] = v;
  c.nargs = i;
  fill_defaults(c);
  run_op(c);
  *out = to_handle(c.results[0].take());
}

void check_list(int32_t ndim, const int64_t* p, const char* arg) {
  if (ndim < 0 || ndim > TSR_MAX_DIMS)
    fail(TSR_INVALID_ARGUMENT, "argument 'ndim' is {}; tensors have 0 to {} (TSR_MAX_DIMS) dims",
         ndim, TSR_MAX_DIMS);
  if (ndim > 0 && p == nullptr)
    fail(TSR_INVALID_ARGUMENT, "argument '{}' is NULL but ndim is {}", arg, ndim);
}

size_t nbytes_of(const TensorImpl& t) { return static_cast<size_t>(t.numel) * t.itemsize(); }

// Caller memory [data, data + nbytes) must lie below 2^48, where every x86-64
// and aarch64 user address does (Note [Generational handles] relies on it
// too): a range past it is a wrong size, stride or offset, never memory.
void check_host_range(const void* data, int64_t nbytes, const char* arg, const char* fix) {
  constexpr uintptr_t kUserAddressEnd = uintptr_t{1} << 48;
  const uintptr_t begin = reinterpret_cast<uintptr_t>(data);
  if (nbytes > 0 &&
      (begin >= kUserAddressEnd || static_cast<uint64_t>(nbytes) > kUserAddressEnd - begin))
    fail(TSR_OUT_OF_RANGE,
         "argument '{}': {} bytes from address {} run past the user address space (2^48); {}", arg,
         nbytes, data, fix);
}

// ---- DLPack -------------------------------------------------------------

bool dtype_from_dl(DLDataType t, tsr_dtype* out) {
  if (t.lanes != 1) return false;
  switch (t.code) {
    case kDLInt:
      switch (t.bits) {
        case 8:
          *out = TSR_INT8;
          return true;
        case 16:
          *out = TSR_INT16;
          return true;
        case 32:
          *out = TSR_INT32;
          return true;
        case 64:
          *out = TSR_INT64;
          return true;
      }
      return false;
    case kDLUInt:
      if (t.bits == 8) {
        *out = TSR_UINT8;
        return true;
      }
      if (t.bits == 1) {
        *out = TSR_BOOL;
        return true;
      }
      return false;
    case kDLFloat:
      switch (t.bits) {
        case 16:
          *out = TSR_FLOAT16;
          return true;
        case 32:
          *out = TSR_FLOAT32;
          return true;
        case 64:
          *out = TSR_FLOAT64;
          return true;
      }
      return false;
    case kDLBfloat:
      if (t.bits == 16) {
        *out = TSR_BFLOAT16;
        return true;
      }
      return false;
    case kDLComplex:
      if (t.bits == 64) {
        *out = TSR_COMPLEX64;
        return true;
      }
      if (t.bits == 128) {
        *out = TSR_COMPLEX128;
        return true;
      }
      return false;
  }
  return false;
}

DLDataType dtype_to_dl(tsr_dtype d) {
  DLDataType t{};
  t.lanes = 1;
  t.bits = static_cast<uint8_t>(dtype_size(d) * 8);
  switch (d) {
    case TSR_BOOL:
    case TSR_UINT8:
      t.code = kDLUInt;
      break;  // DLPack 0.6 has no bool
    case TSR_INT8:
    case TSR_INT16:
    case TSR_INT32:
    case TSR_INT64:
      t.code = kDLInt;
      break;
    case TSR_FLOAT16:
    case TSR_FLOAT32:
    case TSR_FLOAT64:
      t.code = kDLFloat;
      break;
    case TSR_BFLOAT16:
      t.code = kDLBfloat;
      break;
    default:
      t.code = kDLComplex;
      break;
  }
  return t;
}

struct DlpackExport {
  DLManagedTensor managed;
  TensorImpl* tensor;
  int64_t shape[TSR_MAX_DIMS];
  int64_t strides[TSR_MAX_DIMS];
};

void dlpack_export_deleter(DLManagedTensor* m) {
  auto* ctx = static_cast<DlpackExport*>(m->manager_ctx);
  ctx->tensor->release();
  delete ctx;
}

void dlpack_import_deleter(void*, void* ctx) {
  auto* m = static_cast<DLManagedTensor*>(ctx);
  if (m->deleter) m->deleter(m);
}

}  // namespace

extern "C" {

TSR_API tsr_status* tsr_tensor_empty(tsr_runtime* runtime, int32_t ndim, const int64_t* sizes,
                                     tsr_dtype dtype, tsr_device device, tsr_tensor** out_tensor) {
  return api_guard([&] {
    require_out(out_tensor, "out_tensor");
    *out_tensor = to_handle(create(runtime, ndim, sizes, nullptr, dtype, device).take());
  });
}

TSR_API tsr_status* tsr_tensor_empty_strided(tsr_runtime* runtime, int32_t ndim,
                                             const int64_t* sizes, const int64_t* strides,
                                             tsr_dtype dtype, tsr_device device,
                                             tsr_tensor** out_tensor) {
  return api_guard([&] {
    require_out(out_tensor, "out_tensor");
    if (ndim > 0 && strides == nullptr)
      fail(TSR_INVALID_ARGUMENT, "argument 'strides' is NULL but ndim is {}", ndim);
    *out_tensor = to_handle(create(runtime, ndim, sizes, strides, dtype, device).take());
  });
}

TSR_API tsr_status* tsr_tensor_zeros(tsr_runtime* runtime, int32_t ndim, const int64_t* sizes,
                                     tsr_dtype dtype, tsr_device device, tsr_tensor** out_tensor) {
  return api_guard([&] {
    require_out(out_tensor, "out_tensor");
    TensorRef t = create(runtime, ndim, sizes, nullptr, dtype, device);
    fill_raw(t.get(), scalar_int(0));
    *out_tensor = to_handle(t.take());
  });
}

TSR_API tsr_status* tsr_tensor_from_host(tsr_runtime* runtime, const void* data, size_t nbytes,
                                         int32_t ndim, const int64_t* sizes, tsr_dtype dtype,
                                         tsr_device device, tsr_tensor** out_tensor) {
  return api_guard([&] {
    require_out(out_tensor, "out_tensor");
    TensorRef t = create(runtime, ndim, sizes, nullptr, dtype, device);
    if (nbytes != nbytes_of(*t))
      fail(TSR_INVALID_ARGUMENT,
           "argument 'nbytes' = {} does not match the tensor: {} elements of {} ({} bytes) need "
           "{} bytes",
           nbytes, t->numel, dtype_name(t->dtype), t->itemsize(), nbytes_of(*t));
    if (data == nullptr && nbytes > 0)
      fail(TSR_INVALID_ARGUMENT, "argument 'data' is NULL but nbytes is {}", nbytes);
    write_from_host(t.get(), data);
    *out_tensor = to_handle(t.take());
  });
}

TSR_API tsr_status* tsr_tensor_from_blob(tsr_runtime* runtime, void* data, int32_t ndim,
                                         const int64_t* sizes, const int64_t* strides,
                                         tsr_dtype dtype, tsr_device device,
                                         tsr_blob_deleter deleter, void* deleter_context,
                                         tsr_tensor** out_tensor) {
  tsr_status* st = api_guard([&] {
    require_out(out_tensor, "out_tensor");
    Runtime* rt = runtime_from_handle(runtime, "runtime");
    tsr_dtype dt = check_dtype(dtype, "dtype");
    DeviceRecord* dev = rt->device(device, "device");
    int64_t numel = check_sizes(ndim, sizes, dtype_size(dt), "sizes");
    if (!dev->host_addressable)
      fail(TSR_UNIMPLEMENTED,
           "tsr_tensor_from_blob: device {} does not expose addressable memory; copy with "
           "tsr_tensor_from_host instead",
           dev->label);
    int64_t st_[TSR_MAX_DIMS];
    if (strides == nullptr) {
      contiguous_strides(ndim, sizes, st_);
      strides = st_;
    }
    for (int32_t d = 0; d < ndim; ++d)
      if (strides[d] < 0)
        fail(TSR_INVALID_ARGUMENT, "argument 'strides' has a negative stride {} at dim {}",
             strides[d], d);
    if (data == nullptr && numel > 0)
      fail(TSR_INVALID_ARGUMENT, "argument 'data' is NULL for a tensor of {} elements", numel);
    int64_t elems = required_storage_elements(ndim, sizes, strides, 0, "strides");
    int64_t nbytes = checked_nbytes(elems, dtype_size(dt), "strides");
    if (numel > 0)
      check_host_range(data, nbytes, "sizes",
                       "sizes and strides must address the caller's memory at 'data'");
    Storage* s = Storage::wrap(dev, data, static_cast<size_t>(nbytes), deleter, deleter_context);
    *out_tensor = to_handle(make_tensor(rt, s, nullptr, dt, ndim, sizes, strides, 0));
  });
  if (st && deleter) deleter(data, deleter_context);
  return st;
}

namespace {
// Returns pinned memory to the plugin that pinned it (the storage's deleter).
void free_pinned(void* data, void* context) noexcept {
  auto* plugin = static_cast<PluginRecord*>(context);
  plugin->api.host_free_pinned(plugin->context, data);
}
}  // namespace

TSR_API tsr_status* tsr_tensor_pin_memory(const tsr_tensor* tensor, tsr_device device,
                                          tsr_tensor** out_tensor) {
  return api_guard([&] {
    TensorImpl* t = from_handle(tensor, "tensor");
    require_out(out_tensor, "out_tensor");
    Runtime* rt = t->runtime;
    DeviceRecord* dev = rt->device(device, "device");
    if (t->device()->device.type != TSR_DEVICE_CPU)
      fail(TSR_INVALID_ARGUMENT,
           "argument 'tensor' is on {}; pin_memory copies a host (cpu) tensor: bring it to the "
           "host first",
           t->device()->label);
    PluginRecord* plugin = dev->plugin;
    if (plugin == nullptr || plugin->api.host_alloc_pinned == nullptr ||
        plugin->api.host_free_pinned == nullptr)
      fail(TSR_UNIMPLEMENTED,
           "argument 'device' = {}: its plugin has no pinned host memory (it copies from "
           "ordinary host memory directly or through its own staging); use the unpinned tensor",
           dev->label);
    const size_t nbytes = static_cast<size_t>(t->numel) * t->itemsize();
    void* data = nullptr;
    if (tsr_status* st = plugin->api.host_alloc_pinned(plugin->context, nbytes, &data)) {
      const std::string message = tsr_status_message(st);
      const tsr_status_code code = tsr_status_code_of(st);
      tsr_status_free(st);
      fail(code, "pinning {} bytes for {}: {}", nbytes, dev->label, message);
    }
    if (data == nullptr && nbytes > 0)
      fail(TSR_INTERNAL, "plugin '{}' host_alloc_pinned returned NULL for {} bytes", plugin->name,
           nbytes);
    DeviceRecord* cpu = t->device();
    Storage* s = Storage::wrap(cpu, data, nbytes, free_pinned, plugin);
    s->pinned_for = dev;
    int64_t strides[TSR_MAX_DIMS];
    contiguous_strides(t->ndim, t->sizes, strides);
    TensorRef out(make_tensor(rt, s, nullptr, t->dtype, t->ndim, t->sizes, strides, 0));
    {
      autograd::GradModeGuard no_grad(false);
      op::call(rt, OpId::copy_, out, t);
    }
    *out_tensor = to_handle(out.take());
  });
}

TSR_API tsr_status* tsr_tensor_is_pinned(const tsr_tensor* tensor, int32_t* out_pinned) {
  return api_guard([&] {
    TensorImpl* t = from_handle(tensor, "tensor");
    require_out(out_pinned, "out_pinned");
    *out_pinned = t->storage->pinned_for != nullptr ? 1 : 0;
  });
}

TSR_API tsr_status* tsr_tensor_from_dlpack(tsr_runtime* runtime, struct DLManagedTensor* managed,
                                           tsr_tensor** out_tensor) {
  return api_guard([&] {
    require_out(out_tensor, "out_tensor");
    Runtime* rt = runtime_from_handle(runtime, "runtime");
    if (managed == nullptr) fail(TSR_INVALID_ARGUMENT, "argument 'managed' is NULL");
    const DLTensor& t = managed->dl_tensor;
    if (t.device.device_type != kDLCPU && t.device.device_type != kDLCUDAHost)
      fail(TSR_UNIMPLEMENTED,
           "argument 'managed': DLPack device type {} is not importable yet (CPU memory only)",
           static_cast<int>(t.device.device_type));
    tsr_dtype dt;
    if (!dtype_from_dl(t.dtype, &dt))
      fail(TSR_INVALID_ARGUMENT,
           "argument 'managed': DLPack dtype (code {}, bits {}, lanes {}) has no Tessera dtype",
           t.dtype.code, t.dtype.bits, t.dtype.lanes);
    DeviceRecord* dev = rt->device(tsr_device{TSR_DEVICE_CPU, 0}, "device");
    int64_t numel = check_sizes(t.ndim, t.shape, dtype_size(dt), "managed->dl_tensor.shape");
    int64_t strides[TSR_MAX_DIMS];
    if (t.strides) {
      for (int32_t d = 0; d < t.ndim; ++d) {
        if (t.strides[d] < 0)
          fail(TSR_UNIMPLEMENTED, "argument 'managed': negative DLPack strides are not supported");
        strides[d] = t.strides[d];
      }
    } else {
      contiguous_strides(t.ndim, t.shape, strides);
    }
    if (t.byte_offset % dtype_size(dt) != 0)
      fail(TSR_INVALID_ARGUMENT,
           "argument 'managed': byte_offset {} is not a multiple of the "
           "element size {}",
           t.byte_offset, dtype_size(dt));
    // The offset becomes a signed element offset; the addressed bytes (offset
    // included) must fit int64 and the address space.
    if (t.byte_offset > static_cast<uint64_t>(INT64_MAX))
      fail(TSR_OUT_OF_RANGE,
           "argument 'managed': dl_tensor.byte_offset = {} exceeds INT64_MAX ({}); pass an "
           "offset within the buffer (or fold it into dl_tensor.data)",
           t.byte_offset, INT64_MAX);
    int64_t offset = static_cast<int64_t>(t.byte_offset / dtype_size(dt));
    int64_t elems =
        required_storage_elements(t.ndim, t.shape, strides, offset, "managed->dl_tensor.strides");
    int64_t nbytes = checked_nbytes(elems, dtype_size(dt), "managed->dl_tensor.shape");
    if (t.data == nullptr && numel > 0)
      fail(TSR_INVALID_ARGUMENT, "argument 'managed': data is NULL");
    if (numel > 0)
      check_host_range(t.data, nbytes, "managed",
                       fmt::format("dl_tensor.shape, strides and byte_offset ({}) must address "
                                   "the producer's memory",
                                   t.byte_offset)
                           .c_str());
    Storage* s =
        Storage::wrap(dev, t.data, static_cast<size_t>(nbytes), dlpack_import_deleter, managed);
    *out_tensor = to_handle(make_tensor(rt, s, nullptr, dt, t.ndim, t.shape, strides, offset));
  });
}

TSR_API tsr_status* tsr_tensor_to_dlpack(tsr_tensor* tensor, struct DLManagedTensor** out_managed) {
  return api_guard([&] {
    TensorImpl* t = from_handle(tensor, "tensor");
    require_out(out_managed, "out_managed");
    if (!t->device()->host_addressable)
      fail(TSR_UNIMPLEMENTED,
           "tsr_tensor_to_dlpack: device {} memory is not host addressable; "
           "copy the tensor to cpu first",
           t->device()->label);
    auto* ctx = new DlpackExport{};
    t->retain();
    ctx->tensor = t;
    for (int32_t d = 0; d < t->ndim; ++d) {
      ctx->shape[d] = t->sizes[d];
      ctx->strides[d] = t->strides[d];
    }
    DLTensor& dl = ctx->managed.dl_tensor;
    dl.data = t->storage->buffer.data;
    dl.device = DLDevice{kDLCPU, 0};
    dl.ndim = t->ndim;
    dl.dtype = dtype_to_dl(t->dtype);
    dl.shape = ctx->shape;
    dl.strides = ctx->strides;
    dl.byte_offset = static_cast<uint64_t>(t->offset) * t->itemsize();
    ctx->managed.manager_ctx = ctx;
    ctx->managed.deleter = dlpack_export_deleter;
    *out_managed = &ctx->managed;
  });
}

TSR_API void tsr_tensor_retain(tsr_tensor* tensor) {
  try {
    from_handle(tensor, "tensor")->retain();
  } catch (...) {
  }
}

TSR_API void tsr_tensor_release(tsr_tensor* tensor) {
  if (tensor == nullptr) return;
  try {
    from_handle(tensor, "tensor")->release();
  } catch (...) {
  }
}

// ---- metadata -------------------------------------------------------------

TSR_API tsr_status* tsr_tensor_get_info(const tsr_tensor* tensor, tsr_tensor_info* out_info) {
  return api_guard([&] {
    TensorImpl* t = from_handle(tensor, "tensor");
    require_out(out_info, "out_info");
    tsr_tensor_info info{};
    info.struct_size = sizeof info;
    info.dtype = t->dtype;
    info.ndim = t->ndim;
    for (int32_t d = 0; d < t->ndim; ++d) {
      info.sizes[d] = t->sizes[d];
      info.strides[d] = t->strides[d];
    }
    info.storage_offset = t->offset;
    info.numel = t->numel;
    info.device = t->device()->device;
    size_t n = out_info->struct_size ? std::min(out_info->struct_size, sizeof info) : sizeof info;
    std::memcpy(out_info, &info, n);
    out_info->struct_size = n;
  });
}

TSR_API tsr_status* tsr_tensor_dtype(const tsr_tensor* tensor, tsr_dtype* out_dtype) {
  return api_guard([&] {
    TensorImpl* t = from_handle(tensor, "tensor");
    require_out(out_dtype, "out_dtype");
    *out_dtype = t->dtype;
  });
}

TSR_API tsr_status* tsr_tensor_device(const tsr_tensor* tensor, tsr_device* out_device) {
  return api_guard([&] {
    TensorImpl* t = from_handle(tensor, "tensor");
    require_out(out_device, "out_device");
    *out_device = t->device()->device;
  });
}

TSR_API tsr_status* tsr_tensor_ndim(const tsr_tensor* tensor, int32_t* out_ndim) {
  return api_guard([&] {
    TensorImpl* t = from_handle(tensor, "tensor");
    require_out(out_ndim, "out_ndim");
    *out_ndim = t->ndim;
  });
}

TSR_API tsr_status* tsr_tensor_sizes(const tsr_tensor* tensor, int64_t* out_sizes) {
  return api_guard([&] {
    TensorImpl* t = from_handle(tensor, "tensor");
    require_out(out_sizes, "out_sizes");
    std::memcpy(out_sizes, t->sizes, sizeof(int64_t) * t->ndim);
  });
}

TSR_API tsr_status* tsr_tensor_strides(const tsr_tensor* tensor, int64_t* out_strides) {
  return api_guard([&] {
    TensorImpl* t = from_handle(tensor, "tensor");
    require_out(out_strides, "out_strides");
    std::memcpy(out_strides, t->strides, sizeof(int64_t) * t->ndim);
  });
}

TSR_API tsr_status* tsr_tensor_storage_offset(const tsr_tensor* tensor, int64_t* out_offset) {
  return api_guard([&] {
    TensorImpl* t = from_handle(tensor, "tensor");
    require_out(out_offset, "out_offset");
    *out_offset = t->offset;
  });
}

TSR_API tsr_status* tsr_tensor_numel(const tsr_tensor* tensor, int64_t* out_numel) {
  return api_guard([&] {
    TensorImpl* t = from_handle(tensor, "tensor");
    require_out(out_numel, "out_numel");
    *out_numel = t->numel;
  });
}

TSR_API tsr_status* tsr_tensor_is_contiguous(const tsr_tensor* tensor, tsr_memory_format format,
                                             bool* out_contiguous) {
  return api_guard([&] {
    TensorImpl* t = from_handle(tensor, "tensor");
    require_out(out_contiguous, "out_contiguous");
    if (format < TSR_CONTIGUOUS_FORMAT || format > TSR_PRESERVE_FORMAT)
      fail(TSR_INVALID_ARGUMENT, "argument 'format' = {} is not a tsr_memory_format",
           static_cast<int>(format));
    *out_contiguous = is_contiguous_as(*t, format);
  });
}

TSR_API tsr_status* tsr_tensor_storage_id(const tsr_tensor* tensor, uint64_t* out_id) {
  return api_guard([&] {
    TensorImpl* t = from_handle(tensor, "tensor");
    require_out(out_id, "out_id");
    *out_id = t->storage->id;
  });
}

TSR_API tsr_status* tsr_tensor_version(const tsr_tensor* tensor, uint64_t* out_version) {
  return api_guard([&] {
    TensorImpl* t = from_handle(tensor, "tensor");
    require_out(out_version, "out_version");
    if (t->is_inference)
      fail(TSR_FAILED_PRECONDITION,
           "Inference tensors do not track version counter (this tensor was made in inference "
           "mode)");
    *out_version = t->version->version.load(std::memory_order_relaxed);
  });
}

TSR_API tsr_status* tsr_tensor_data_ptr(const tsr_tensor* tensor, void** out_data) {
  return api_guard([&] {
    TensorImpl* t = from_handle(tensor, "tensor");
    require_out(out_data, "out_data");
    if (!t->device()->host_addressable)
      fail(TSR_FAILED_PRECONDITION,
           "tensor on {} has no host address; copy it with tsr_tensor_copy_to_host",
           t->device()->label);
    *out_data = t->desc().data;
  });
}

TSR_API tsr_status* tsr_tensor_describe(const tsr_tensor* tensor, tsr_tensor_desc* out_desc) {
  return api_guard([&] {
    TensorImpl* t = from_handle(tensor, "tensor");
    require_out(out_desc, "out_desc");
    *out_desc = t->desc();
  });
}

// ---- views ------------------------------------------------------------------

TSR_API tsr_status* tsr_tensor_view(tsr_tensor* tensor, int32_t ndim, const int64_t* sizes,
                                    tsr_tensor** out_view) {
  return api_guard([&] {
    check_list(ndim, sizes, "sizes");
    run_view(OpId::view, tensor, {v_ints(sizes, ndim)}, out_view);
  });
}

TSR_API tsr_status* tsr_tensor_reshape(tsr_tensor* tensor, int32_t ndim, const int64_t* sizes,
                                       tsr_tensor** out_tensor) {
  return api_guard([&] {
    check_list(ndim, sizes, "sizes");
    run_view(OpId::reshape, tensor, {v_ints(sizes, ndim)}, out_tensor, "out_tensor");
  });
}

TSR_API tsr_status* tsr_tensor_transpose(tsr_tensor* tensor, int32_t dim0, int32_t dim1,
                                         tsr_tensor** out_view) {
  return api_guard([&] {
    run_view(OpId::transpose_int, tensor, {v_int(dim0), v_int(dim1)}, out_view);
  });
}

TSR_API tsr_status* tsr_tensor_permute(tsr_tensor* tensor, int32_t ndim, const int64_t* dims,
                                       tsr_tensor** out_view) {
  return api_guard([&] {
    check_list(ndim, dims, "dims");
    run_view(OpId::permute, tensor, {v_ints(dims, ndim)}, out_view);
  });
}

TSR_API tsr_status* tsr_tensor_slice(tsr_tensor* tensor, int32_t dim, int64_t start, int64_t end,
                                     int64_t step, tsr_tensor** out_view) {
  return api_guard([&] {
    run_view(OpId::slice_Tensor, tensor, {v_int(dim), v_int(start), v_int(end), v_int(step)},
             out_view);
  });
}

TSR_API tsr_status* tsr_tensor_select(tsr_tensor* tensor, int32_t dim, int64_t index,
                                      tsr_tensor** out_view) {
  return api_guard([&] {
    run_view(OpId::select_int, tensor, {v_int(dim), v_int(index)}, out_view);
  });
}

TSR_API tsr_status* tsr_tensor_expand(tsr_tensor* tensor, int32_t ndim, const int64_t* sizes,
                                      tsr_tensor** out_view) {
  return api_guard([&] {
    check_list(ndim, sizes, "sizes");
    run_view(OpId::expand, tensor, {v_ints(sizes, ndim)}, out_view);
  });
}

TSR_API tsr_status* tsr_tensor_squeeze(tsr_tensor* tensor, int32_t dim, tsr_tensor** out_view) {
  return api_guard([&] {
    if (dim == TSR_MAX_DIMS)
      run_view(OpId::squeeze, tensor, {}, out_view);
    else
      run_view(OpId::squeeze_dim, tensor, {v_int(dim)}, out_view);
  });
}

TSR_API tsr_status* tsr_tensor_unsqueeze(tsr_tensor* tensor, int32_t dim, tsr_tensor** out_view) {
  return api_guard([&] { run_view(OpId::unsqueeze, tensor, {v_int(dim)}, out_view); });
}

TSR_API tsr_status* tsr_tensor_as_strided(tsr_tensor* tensor, int32_t ndim, const int64_t* sizes,
                                          const int64_t* strides, int64_t storage_offset,
                                          tsr_tensor** out_view) {
  return api_guard([&] {
    check_list(ndim, sizes, "sizes");
    check_list(ndim, strides, "strides");
    run_view(OpId::as_strided, tensor,
             {v_ints(sizes, ndim), v_ints(strides, ndim),
              storage_offset < 0 ? v_none() : v_int(storage_offset)},
             out_view);
  });
}

TSR_API tsr_status* tsr_tensor_detach(tsr_tensor* tensor, tsr_tensor** out_view) {
  return api_guard([&] { run_view(OpId::detach, tensor, {}, out_view); });
}

// ---- copies -----------------------------------------------------------------

TSR_API tsr_status* tsr_tensor_copy_to_host(const tsr_tensor* tensor, void* dst, size_t nbytes) {
  return api_guard([&] {
    TensorImpl* t = from_handle(tensor, "tensor");
    if (nbytes != nbytes_of(*t))
      fail(TSR_INVALID_ARGUMENT,
           "argument 'nbytes' = {} does not match the tensor's {} elements of {} ({} bytes)",
           nbytes, t->numel, dtype_name(t->dtype), nbytes_of(*t));
    if (dst == nullptr && nbytes > 0) fail(TSR_INVALID_ARGUMENT, "argument 'dst' is NULL");
    read_to_host(t, dst);
  });
}

TSR_API tsr_status* tsr_tensor_copy_from_host(tsr_tensor* tensor, const void* src, size_t nbytes) {
  return api_guard([&] {
    TensorImpl* t = from_handle(tensor, "tensor");
    if (nbytes != nbytes_of(*t))
      fail(TSR_INVALID_ARGUMENT,
           "argument 'nbytes' = {} does not match the tensor's {} elements of {} ({} bytes)",
           nbytes, t->numel, dtype_name(t->dtype), nbytes_of(*t));
    if (src == nullptr && nbytes > 0) fail(TSR_INVALID_ARGUMENT, "argument 'src' is NULL");
    if (t->is_inference && !inference_mode())
      fail(TSR_FAILED_PRECONDITION,
           "Inplace update to inference tensor outside InferenceMode is not allowed; make a "
           "clone to get a normal tensor first");
    assert_no_internal_overlap(*t);
    write_from_host(t, src);
    t->bump_version();
  });
}

TSR_API tsr_status* tsr_tensor_copy_(tsr_tensor* dst, tsr_tensor* src) {
  return api_guard([&] {
    TensorImpl* d = from_handle(dst, "dst");
    TensorImpl* s = from_handle(src, "src");
    if (d->runtime != s->runtime)
      fail(TSR_INVALID_ARGUMENT, "arguments 'dst' and 'src' belong to different runtimes");
    op::call(d->runtime, OpId::copy_, d, s);
  });
}

TSR_API tsr_status* tsr_tensor_to_device(tsr_tensor* tensor, tsr_device device,
                                         tsr_tensor** out_tensor) {
  return api_guard([&] {
    TensorImpl* t = from_handle(tensor, "tensor");
    require_out(out_tensor, "out_tensor");
    t->runtime->device(device, "device");
    TensorRef r = op::call(t->runtime, OpId::_to_copy, t, op::none, device, false, [] {
      tsr_value v{};
      v.tag = TSR_VALUE_MEMORY_FORMAT;
      v.u.i = TSR_CONTIGUOUS_FORMAT;
      return v;
    }());
    *out_tensor = to_handle(r.take());
  });
}

TSR_API tsr_status* tsr_tensor_to_dtype(tsr_tensor* tensor, tsr_dtype dtype,
                                        tsr_tensor** out_tensor) {
  return api_guard([&] {
    TensorImpl* t = from_handle(tensor, "tensor");
    require_out(out_tensor, "out_tensor");
    tsr_dtype dt = check_dtype(dtype, "dtype");
    if (t->dtype == dt) {
      t->retain();
      *out_tensor = to_handle(t);
      return;
    }
    TensorRef r = op::call(t->runtime, OpId::_to_copy, t, static_cast<tsr_dtype>(dt));
    *out_tensor = to_handle(r.take());
  });
}

TSR_API tsr_status* tsr_tensor_item(const tsr_tensor* tensor, tsr_scalar* out_value) {
  return api_guard([&] {
    TensorImpl* t = from_handle(tensor, "tensor");
    require_out(out_value, "out_value");
    if (t->numel != 1)
      fail(TSR_INVALID_ARGUMENT,
           "a tensor with {} elements cannot be converted to a scalar (item() needs exactly one)",
           t->numel);
    // Convert on the device to the scalar's widest type of the same kind (the
    // copy_ kernel's conversion rules), then read 1 or 8 or 16 bytes.
    const tsr_dtype kind = scalar_kind_of(t->dtype);
    TensorRef wide = cast(t, kind);
    alignas(16) unsigned char buf[16] = {};
    read_to_host(wide.get(), buf);
    tsr_scalar s{};
    s.kind = kind;
    switch (kind) {
      case TSR_BOOL:
        s.v.i = buf[0] != 0;
        break;
      case TSR_INT64:
        std::memcpy(&s.v.i, buf, sizeof s.v.i);
        break;
      case TSR_FLOAT64:
        std::memcpy(&s.v.f, buf, sizeof s.v.f);
        break;
      default:
        std::memcpy(&s.v.c.re, buf, sizeof(double));
        std::memcpy(&s.v.c.im, buf + sizeof(double), sizeof(double));
    }
    *out_value = s;
  });
}

}  // extern "C"
