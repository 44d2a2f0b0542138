// Storage and VersionCounter (storage.h): allocation through a device's
// caching allocator, wrapping caller memory, and release.
#include "tensor/storage.h"

#include <new>

#include "runtime/device.h"
#include "runtime/runtime.h"
#include "runtime/stream.h"
#include "util/object_pool.h"

namespace tsr {

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

}  // namespace tsr
