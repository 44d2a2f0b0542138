#include "tensor/tensor_impl.h"

#include <cstring>
#include <mutex>
#include <new>
#include <vector>

#include "autograd/meta.h"
#include "runtime/device.h"
#include "runtime/runtime.h"
#include "runtime/stream.h"
#include "util/error.h"
#include "util/object_pool.h"

namespace tsr {

namespace {
constexpr uintptr_t kAddressMask = (uintptr_t{1} << 48) - 1;
constexpr int kGenerationShift = 48;
}  // namespace

// A TensorImpl slot whose handle generation wrapped is never reused (Note
// [Generational handles]); its memory stays a dead TensorImpl, held here so
// that leak checkers see it kept, not lost. Once per 65,536 reuses of a slot;
// must not throw: if the list cannot grow, the memory is simply kept.
namespace {
void retire_slot(TensorImpl* t) noexcept {
  // Never destroyed: tensors outlive static teardown.
  static auto* mu = new std::mutex();
  static auto* retired = new std::vector<TensorImpl*>();
  std::lock_guard<std::mutex> lock(*mu);
  try {
    retired->push_back(t);
  } catch (...) {
  }
}
}  // namespace

// ---- Storage ------------------------------------------------------------

PluginEntry::PluginEntry(PluginRecord* plugin, std::atomic<int64_t>& counter, const char* what,
                         const std::string& device_label)
    : counter_(&counter) {
  counter.fetch_add(1, std::memory_order_seq_cst);
  if (plugin == nullptr) return;
  uint8_t state = plugin->unload_state.load(std::memory_order_seq_cst);
  // An unload is counting: our count is visible to it or it is not; wait for
  // its decision rather than guess (a refused unload must not fail us).
  while (state == kUnloadDeciding) {
    plugin->unload_state.wait(kUnloadDeciding, std::memory_order_seq_cst);
    state = plugin->unload_state.load(std::memory_order_seq_cst);
  }
  if (state == kUnloadCommitted) {
    counter.fetch_sub(1, std::memory_order_seq_cst);
    counter_ = nullptr;
    fail(TSR_FAILED_PRECONDITION,
         "cannot make a {} on {}: its plugin '{}' is being unloaded by another thread; finish "
         "using a device before unloading its plugin",
         what, device_label, plugin->name);
  }
}

PluginEntry::~PluginEntry() {
  if (counter_ != nullptr) counter_->fetch_sub(1, std::memory_order_seq_cst);
}

// A maker that fails after entering gives its count back through the entry;
// the runtime cannot reach its last reference there (the maker holds it, or an
// input tensor that does), so no storage_released() is owed.
Storage* Storage::allocate(DeviceRecord* device, size_t nbytes) {
  // Counted before the allocator reaches the plugin (Note [Unload against use]).
  PluginEntry entry(device->plugin, device->live_storages, "tensor", device->label);
  Block* block = nullptr;
  if (!device->is_meta && nbytes > 0)
    block = device->allocator->allocate(nbytes, current_stream(device));
  void* mem = nullptr;
  try {
    mem = ObjectPool<Storage>::acquire();
  } catch (...) {
    if (block) device->allocator->free(block);
    throw;
  }
  Storage* s = new (mem) Storage();
  s->device = device;
  s->nbytes = nbytes;
  s->block = block;
  if (block) s->buffer = block->buffer;
  s->id = device->runtime->next_storage_id();
  entry.keep();
  return s;
}

Storage* Storage::wrap(DeviceRecord* device, void* data, size_t nbytes, tsr_blob_deleter deleter,
                       void* deleter_context) {
  PluginEntry entry(device->plugin, device->live_storages, "tensor", device->label);
  void* mem = ObjectPool<Storage>::acquire();
  Storage* s = new (mem) Storage();
  s->device = device;
  s->nbytes = nbytes;
  s->buffer.handle = data;
  s->buffer.data = data;
  s->deleter = deleter;
  s->deleter_context = deleter_context;
  s->id = device->runtime->next_storage_id();
  entry.keep();
  return s;
}

// Sole-owner fast path in the releases below: a count of 1 seen by the owner
// cannot change under it (nobody else holds a reference to retain with).
void Storage::release() noexcept {
  if (refs.load(std::memory_order_acquire) != 1 &&
      refs.fetch_sub(1, std::memory_order_acq_rel) != 1)
    return;
  DeviceRecord* dev = device;
  if (block) {
    dev->allocator->free(block);
  } else if (deleter) {
    deleter(buffer.data, deleter_context);
  }
  this->~Storage();
  ObjectPool<Storage>::recycle(this);
  Runtime* rt = dev->runtime;
  dev->live_storages.fetch_sub(1, std::memory_order_seq_cst);
  rt->storage_released();
}

VersionCounter* VersionCounter::create() {
  void* mem = ObjectPool<VersionCounter>::acquire();
  return new (mem) VersionCounter();
}

void VersionCounter::release() noexcept {
  if (refs.load(std::memory_order_acquire) != 1 &&
      refs.fetch_sub(1, std::memory_order_acq_rel) != 1)
    return;
  this->~VersionCounter();
  ObjectPool<VersionCounter>::recycle(this);
}

// ---- TensorImpl ---------------------------------------------------------

void TensorImpl::refresh() noexcept {
  int64_t n = 1;
  bool contig = true;
  int64_t expected = 1;
  for (int32_t d = ndim - 1; d >= 0; --d) {
    n *= sizes[d];
    if (sizes[d] != 1) {
      if (strides[d] != expected) contig = false;
      expected *= sizes[d];
    }
  }
  numel = n;
  contiguous = contig || n == 0;
}

tsr_tensor_desc TensorImpl::desc() const {
  tsr_tensor_desc d;
  d.dtype = dtype;
  d.ndim = ndim;
  // Entries past ndim are zero in a TensorImpl (make_tensor value-initialises
  // them), so whole-array copies are exact and branch-free.
  std::memcpy(d.sizes, sizes, sizeof sizes);
  std::memcpy(d.strides, strides, sizeof strides);
  d.buffer = storage->buffer.handle;
  d.byte_offset = offset * static_cast<int64_t>(dtype_size(dtype));
  d.data =
      storage->buffer.data ? static_cast<char*>(storage->buffer.data) + d.byte_offset : nullptr;
  d.device = storage->device->device;
  return d;
}

void TensorImpl::release() noexcept {
  // The last owner skips the atomic decrement: nobody else can reach the
  // tensor - except through try_retain, which only tensors with autograd
  // state are exposed to, so those always count down.
  const bool last = autograd == nullptr ? refs.load(std::memory_order_acquire) == 1 ||
                                              refs.fetch_sub(1, std::memory_order_acq_rel) == 1
                                        : refs.fetch_sub(1, std::memory_order_acq_rel) == 1;
  if (!last) return;
  if (autograd != nullptr) {
    autograd::destroy_meta(autograd);  // may release other tensors (grad, graph)
    autograd = nullptr;
  }
  TensorImpl* base = view_base;
  view_base = nullptr;
  Storage* s = storage;
  VersionCounter* v = version;
  magic = kDead;
  storage = nullptr;
  version = nullptr;
  // A slot whose generation would wrap is retired, never reused: no handle
  // value is ever given out twice (Note [Generational handles]).
  if (++generation != 0)
    ObjectPool<TensorImpl>::recycle(this);  // memory stays a TensorImpl: see tensor_impl.h
  else
    retire_slot(this);
  if (v) v->release();
  s->release();
  if (base) base->release();
}

TensorImpl* make_tensor(Runtime* runtime, Storage* storage, VersionCounter* version,
                        tsr_dtype dtype, int32_t ndim, const int64_t* sizes, const int64_t* strides,
                        int64_t offset) {
  void* mem = ObjectPool<TensorImpl>::acquire();
  TensorImpl* t = static_cast<TensorImpl*>(mem);
  // Pool objects keep their generation across reuse (Note [Generational handles]);
  // a fresh allocation starts from an indeterminate value, which is fine: only
  // equality with the handle's tag matters.
  uint16_t generation = t->magic == TensorImpl::kDead ? t->generation : 0;
  new (mem) TensorImpl();
  t->generation = generation;
  t->runtime = runtime;
  t->storage = storage;
  t->version = version ? version : VersionCounter::create();
  t->dtype = dtype;
  t->ndim = ndim;
  for (int32_t i = 0; i < ndim; ++i) {
    t->sizes[i] = sizes[i];
    t->strides[i] = strides[i];
  }
  t->offset = offset;
  t->is_inference = version == nullptr && inference_mode();
  t->refresh();
  return t;
}

namespace {
thread_local bool t_inference_mode = false;
}  // namespace

bool inference_mode() noexcept { return t_inference_mode; }

bool set_inference_mode_flag(bool on) noexcept {
  const bool previous = t_inference_mode;
  t_inference_mode = on;
  return previous;
}

tsr_tensor* to_handle(TensorImpl* impl) {
  uintptr_t p = reinterpret_cast<uintptr_t>(impl);
  return reinterpret_cast<tsr_tensor*>(p | (uintptr_t{impl->generation} << kGenerationShift));
}

TensorImpl* from_handle(const tsr_tensor* handle, const char* arg) {
  if (handle == nullptr)
    fail(TSR_INVALID_ARGUMENT, "argument '{}' is NULL; pass a tensor handle", arg);
  uintptr_t h = reinterpret_cast<uintptr_t>(handle);
  TensorImpl* t = reinterpret_cast<TensorImpl*>(h & kAddressMask);
  uint16_t generation = static_cast<uint16_t>(h >> kGenerationShift);
  if ((h & (alignof(TensorImpl) - 1)) != 0 || t->magic != TensorImpl::kAlive ||
      t->generation != generation) {
    if (t->magic == TensorImpl::kDead || t->magic == TensorImpl::kAlive)
      fail(TSR_INVALID_ARGUMENT,
           "argument '{}' is a released tensor handle ({}); it was used after "
           "tsr_tensor_release dropped its last reference - keep a reference (tsr_tensor_retain) "
           "while you use it",
           arg, static_cast<const void*>(handle));
    fail(TSR_INVALID_ARGUMENT, "argument '{}' ({}) is not a tensor handle", arg,
         static_cast<const void*>(handle));
  }
  return t;
}

}  // namespace tsr
