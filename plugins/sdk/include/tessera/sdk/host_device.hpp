// tessera/sdk/host_device.hpp - complete table slots for a device whose
// memory is host memory and whose work is done when each call returns: the
// starting point of a bring-up (a vendor replaces the slots one at a time
// with driver calls) and the device of the vendor sample.
//
//   struct acme_traits {
//     static constexpr const char* name = "acme";
//     static constexpr int32_t device_count = 1;
//     static constexpr size_t alignment = 64;
//   };
//   sdk::host_device<acme_traits>::install(table);  // memory, streams, events, copies
//
// What the slots do:
//  - device_count: Traits::device_count; every slot checks its device index
//    (OUT_OF_RANGE) and its out pointers (INVALID_ARGUMENT);
//  - alloc: aligned_alloc of Traits::alignment (`data` = `handle` = the
//    address; 0 bytes gives NULL), refusing more than the machine's physical
//    memory up front (RESOURCE_EXHAUSTED naming the size); memory_info from
//    sysconf;
//  - streams: distinct handles; synchronize, query and wait are immediate;
//  - events: record takes steady_clock::now() (all prior work has finished);
//    query is always done; elapsed_ms needs both recorded
//    (FAILED_PRECONDITION); record may race with query (atomic fields);
//  - copies: memcpy, memmove for device to device (ranges may overlap).
// Every slot runs under context_entry (plugin_table.hpp): never throws.
#ifndef TESSERA_SDK_HOST_DEVICE_HPP_
#define TESSERA_SDK_HOST_DEVICE_HPP_

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "tessera/plugin.h"
#include "tessera/sdk/plugin_table.hpp"
#include "tessera/sdk/status.hpp"

namespace tessera::sdk {

template <class Traits>
class host_device {
 public:
  // Sets the device_count, memory, stream, event and copy slots of `t`.
  static void install(tsr_plugin_api& t) noexcept {
    t.device_count = device_count;
    t.alloc = alloc;
    t.free = free;
    t.memory_info = memory_info;
    t.stream_create = stream_create;
    t.stream_destroy = stream_destroy;
    t.stream_synchronize = stream_synchronize;
    t.stream_query = stream_query;
    t.event_create = event_create;
    t.event_destroy = event_destroy;
    t.event_record = event_record;
    t.stream_wait_event = stream_wait_event;
    t.event_query = event_query;
    t.event_synchronize = event_synchronize;
    t.event_elapsed_ms = event_elapsed_ms;
    t.copy_host_to_device = copy_host_to_device;
    t.copy_device_to_host = copy_device_to_host;
    t.copy_device_to_device = copy_device_to_device;
  }

  // Bytes of physical memory (`_SC_PHYS_PAGES`) or of it free
  // (`_SC_AVPHYS_PAGES`); 0 when unknown.
  static uint64_t physical_bytes(int name) noexcept {
    const long pages = sysconf(name);
    const long page_size = sysconf(_SC_PAGESIZE);
    return pages > 0 && page_size > 0
               ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size)
               : 0;
  }

 private:
  struct stream {
    int32_t device;
  };
  struct event {
    std::atomic<bool> recorded{false};
    std::atomic<int64_t> time_ns{0};  // steady_clock at the last record
  };
  static constexpr const char* kName = Traits::name;

  // Runs f() for slot `entry` on `device` under context_entry.
  template <class F>
  static tsr_status* on_device(tsr_plugin_context* context, const char* entry, int32_t device,
                               F&& f) noexcept {
    return context_entry(context, kName, entry, [&](tsr_plugin_context&) {
      check_device_index(kName, entry, device, Traits::device_count);
      f();
    });
  }
  static event& event_of(const char* entry, tsr_plugin_event* e) {
    check_not_null(kName, entry, "event", e);
    return *reinterpret_cast<event*>(e);
  }

  static tsr_status* device_count(tsr_plugin_context* context, int32_t* out_count) noexcept {
    return context_entry(context, kName, "device_count", [&](tsr_plugin_context&) {
      check_not_null(kName, "device_count", "out_count", out_count);
      *out_count = Traits::device_count;
    });
  }

  static tsr_status* alloc(tsr_plugin_context* context, int32_t device, size_t nbytes,
                           tsr_plugin_buffer* out) noexcept {
    return on_device(context, "alloc", device, [&] {
      check_not_null(kName, "alloc", "out_buffer", out);
      out->handle = out->data = nullptr;
      if (nbytes == 0) return;
      // More than the machine has is refused up front (Linux would promise it
      // and fail later); aligned_alloc wants a multiple of the alignment.
      constexpr size_t a = Traits::alignment;
      const uint64_t total = physical_bytes(_SC_PHYS_PAGES);
      void* memory = nullptr;
      if ((total == 0 || nbytes <= total) && nbytes <= SIZE_MAX - a) {
        memory = std::aligned_alloc(a, (nbytes + a - 1) / a * a);
      }
      if (memory == nullptr) {
        throw_status(TSR_RESOURCE_EXHAUSTED,
                     "%s: cannot allocate %zu bytes on %s:%d (%llu bytes of memory in all); free "
                     "tensors or use smaller ones",
                     kName, nbytes, kName, static_cast<int>(device),
                     static_cast<unsigned long long>(total));
      }
      out->handle = out->data = memory;
    });
  }

  static void free(tsr_plugin_context*, int32_t, tsr_plugin_buffer buffer) noexcept {
    std::free(buffer.handle);
  }

  static tsr_status* memory_info(tsr_plugin_context* context, int32_t device, uint64_t* out_free,
                                 uint64_t* out_total) noexcept {
    return on_device(context, "memory_info", device, [&] {
      check_not_null(kName, "memory_info", "out_free", out_free);
      check_not_null(kName, "memory_info", "out_total", out_total);
      *out_total = physical_bytes(_SC_PHYS_PAGES);
      *out_free = physical_bytes(_SC_AVPHYS_PAGES);
    });
  }

  static tsr_status* stream_create(tsr_plugin_context* context, int32_t device,
                                   tsr_plugin_stream** out) noexcept {
    return on_device(context, "stream_create", device, [&] {
      check_not_null(kName, "stream_create", "out_stream", out);
      *out = reinterpret_cast<tsr_plugin_stream*>(new stream{device});
    });
  }
  static void stream_destroy(tsr_plugin_context*, int32_t, tsr_plugin_stream* s) noexcept {
    delete reinterpret_cast<stream*>(s);
  }
  static tsr_status* stream_synchronize(tsr_plugin_context* context, int32_t device,
                                        tsr_plugin_stream*) noexcept {
    return on_device(context, "stream_synchronize", device, [] {});
  }
  static tsr_status* stream_query(tsr_plugin_context* context, int32_t device, tsr_plugin_stream*,
                                  bool* out_done) noexcept {
    return on_device(context, "stream_query", device, [&] {
      check_not_null(kName, "stream_query", "out_done", out_done);
      *out_done = true;
    });
  }

  static tsr_status* event_create(tsr_plugin_context* context, int32_t device, uint32_t,
                                  tsr_plugin_event** out) noexcept {
    return on_device(context, "event_create", device, [&] {
      check_not_null(kName, "event_create", "out_event", out);
      *out = reinterpret_cast<tsr_plugin_event*>(new event);
    });
  }
  static void event_destroy(tsr_plugin_context*, int32_t, tsr_plugin_event* e) noexcept {
    delete reinterpret_cast<event*>(e);
  }
  // The work before the event has run, so "now" is when the stream reached it.
  static tsr_status* event_record(tsr_plugin_context* context, int32_t device, tsr_plugin_event* e,
                                  tsr_plugin_stream*) noexcept {
    return on_device(context, "event_record", device, [&] {
      event& ev = event_of("event_record", e);
      const auto now = std::chrono::steady_clock::now().time_since_epoch();
      ev.time_ns.store(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count());
      ev.recorded.store(true);
    });
  }
  static tsr_status* stream_wait_event(tsr_plugin_context* context, int32_t device,
                                       tsr_plugin_stream*, tsr_plugin_event* e) noexcept {
    return on_device(context, "stream_wait_event", device,
                     [&] { (void)event_of("stream_wait_event", e); });
  }
  static tsr_status* event_query(tsr_plugin_context* context, int32_t device, tsr_plugin_event* e,
                                 bool* out_done) noexcept {
    return on_device(context, "event_query", device, [&] {
      (void)event_of("event_query", e);
      check_not_null(kName, "event_query", "out_done", out_done);
      *out_done = true;
    });
  }
  static tsr_status* event_synchronize(tsr_plugin_context* context, int32_t device,
                                       tsr_plugin_event* e) noexcept {
    return on_device(context, "event_synchronize", device,
                     [&] { (void)event_of("event_synchronize", e); });
  }
  static tsr_status* event_elapsed_ms(tsr_plugin_context* context, int32_t device,
                                      tsr_plugin_event* start, tsr_plugin_event* end,
                                      double* out_ms) noexcept {
    return on_device(context, "event_elapsed_ms", device, [&] {
      const event& a = event_of("event_elapsed_ms", start);
      const event& b = event_of("event_elapsed_ms", end);
      check_not_null(kName, "event_elapsed_ms", "out_ms", out_ms);
      if (!a.recorded.load() || !b.recorded.load()) {
        throw_status(TSR_FAILED_PRECONDITION,
                     "%s: event_elapsed_ms needs two recorded events; record both first", kName);
      }
      *out_ms = static_cast<double>(b.time_ns.load() - a.time_ns.load()) / 1e6;
    });
  }

  static tsr_status* copy_host_to_device(tsr_plugin_context* context, int32_t device,
                                         tsr_plugin_stream*, const void* src, tsr_plugin_buffer dst,
                                         uint64_t dst_offset, uint64_t nbytes) noexcept {
    return on_device(context, "copy_host_to_device", device, [&] {
      if (nbytes != 0) std::memcpy(static_cast<char*>(dst.data) + dst_offset, src, nbytes);
    });
  }
  static tsr_status* copy_device_to_host(tsr_plugin_context* context, int32_t device,
                                         tsr_plugin_stream*, tsr_plugin_buffer src,
                                         uint64_t src_offset, void* dst, uint64_t nbytes) noexcept {
    return on_device(context, "copy_device_to_host", device, [&] {
      if (nbytes != 0) std::memcpy(dst, static_cast<const char*>(src.data) + src_offset, nbytes);
    });
  }
  static tsr_status* copy_device_to_device(tsr_plugin_context* context, int32_t device,
                                           tsr_plugin_stream*, tsr_plugin_buffer src,
                                           uint64_t src_offset, tsr_plugin_buffer dst,
                                           uint64_t dst_offset, uint64_t nbytes) noexcept {
    return on_device(context, "copy_device_to_device", device, [&] {
      if (nbytes == 0) return;
      std::memmove(static_cast<char*>(dst.data) + dst_offset,
                   static_cast<const char*>(src.data) + src_offset, nbytes);
    });
  }
};

}  // namespace tessera::sdk

#endif  // TESSERA_SDK_HOST_DEVICE_HPP_
