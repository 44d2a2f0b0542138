// Stream and Event: the core's handles over plugin streams and events.
//
// Note [Streams]
// ~~~~~~~~~~~~~~
// Each thread has a current stream per device (default: the
// device's default stream). An error from asynchronous work is sticky: once a
// stream has failed, every later enqueue, query or synchronize on it returns
// FAILED_PRECONDITION carrying the original error (which names the op), until
// the stream is destroyed. Default streams are owned by their DeviceRecord and
// do not count as live plugin objects.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "tessera/plugin.h"
#include "tessera/tessera.h"
#include "util/object_pool.h"

namespace tsr {

struct DeviceRecord;

// Streams and events live in object pools (class operator new/delete): their
// memory is never returned to the system, so a released handle is detected by
// its cleared magic instead of being a use-after-free (Note [Generational
// handles] explains the same for tensors).
struct Stream {
  static constexpr uint32_t kAlive = 0x5354524du;
  static void* operator new(size_t) { return ObjectPool<Stream>::acquire(); }
  static void operator delete(void* p) { ObjectPool<Stream>::recycle(p); }
  ~Stream() { magic = 0; }
  uint32_t magic = kAlive;
  std::atomic<int32_t> refs{1};
  DeviceRecord* device = nullptr;
  tsr_plugin_stream* plugin_stream = nullptr;
  bool is_default = false;
  std::atomic<bool> failed{false};
  std::mutex mu;  // guards the sticky error
  tsr_status_code sticky_code = TSR_OK;
  std::string sticky_message;

  // Throws the sticky error if the stream has failed.
  void check_sticky() const {
    if (failed.load(std::memory_order_acquire)) throw_sticky();
  }
  [[noreturn]] void throw_sticky() const;
  // Records `status` (non-null, consumed) as the sticky error and throws it.
  [[noreturn]] void fail_with(tsr_status* status, const char* what);
  void synchronize();
  void retain() noexcept { refs.fetch_add(1, std::memory_order_relaxed); }
  // Retains unless the stream is already being destroyed (count 0).
  bool try_retain() noexcept {
    int32_t n = refs.load(std::memory_order_relaxed);
    while (n > 0)
      if (refs.compare_exchange_weak(n, n + 1, std::memory_order_acq_rel)) return true;
    return false;
  }
  void release() noexcept;
};

struct Event {
  static constexpr uint32_t kAlive = 0x45564e54u;
  static void* operator new(size_t) { return ObjectPool<Event>::acquire(); }
  static void operator delete(void* p) { ObjectPool<Event>::recycle(p); }
  ~Event() { magic = 0; }
  uint32_t magic = kAlive;
  DeviceRecord* device = nullptr;
  tsr_plugin_event* plugin_event = nullptr;
  uint32_t flags = 0;
  bool recorded = false;
};

// The calling thread's current stream for `device` (borrowed).
Stream* current_stream(DeviceRecord* device);
void set_current_stream(Stream* stream);

Stream* stream_from_handle(const tsr_stream* handle, const char* arg);
Event* event_from_handle(const tsr_event* handle, const char* arg);

}  // namespace tsr
