// Storage: the bytes behind one or more tensors, and the shared version counter.
//
// Invariant: a Storage owns `nbytes` bytes of `buffer` on `device` until its
// reference count reaches zero; every TensorImpl viewing it holds one reference.
// Meta storages have no buffer.
//
// Note [Storage identity]
// ~~~~~~~~~~~~~~~~~~~~~~~
// Two tensors alias iff they hold the same Storage; `id` is unique within the
// process and never reused, which is what tsr_tensor_storage_id reports.
//
// Note [Version counter]
// ~~~~~~~~~~~~~~~~~~~~~~
// Views and detach share one VersionCounter with their
// base; every in-place write through any alias bumps it, so autograd can tell a
// saved tensor was modified. It is separate from Storage because a later
// `.data`-style alias shares storage but not history.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "runtime/caching_allocator.h"
#include "tessera/tessera.h"

namespace tsr {

struct DeviceRecord;

struct Storage {
  std::atomic<int32_t> refs{1};
  DeviceRecord* device = nullptr;
  tsr_plugin_buffer buffer{};
  size_t nbytes = 0;
  uint64_t id = 0;
  Block* block = nullptr;              // from the caching allocator, or
  tsr_blob_deleter deleter = nullptr;  // a user blob's deleter (may be null)
  void* deleter_context = nullptr;
  // Host memory pinned by this device's plugin (tsr_tensor_pin_memory); null
  // otherwise. The deleter returns it to the plugin.
  DeviceRecord* pinned_for = nullptr;

  // New storage of `nbytes` from `device`'s caching allocator (meta: no bytes).
  // Returned with one reference. Throws tsr::Error.
  static Storage* allocate(DeviceRecord* device, size_t nbytes);
  // Wraps caller memory (from_blob, DLPack). Returned with one reference.
  static Storage* wrap(DeviceRecord* device, void* data, size_t nbytes, tsr_blob_deleter deleter,
                       void* deleter_context);
  void retain() noexcept { refs.fetch_add(1, std::memory_order_relaxed); }
  void release() noexcept;
};

struct VersionCounter {
  std::atomic<int32_t> refs{1};
  std::atomic<uint64_t> version{0};

  static VersionCounter* create();
  void retain() noexcept { refs.fetch_add(1, std::memory_order_relaxed); }
  void release() noexcept;
  void bump() noexcept { version.fetch_add(1, std::memory_order_relaxed); }
};

}  // namespace tsr
