// tessera/sdk/host_device.hpp - the entries of a device whose memory is host
// memory and whose work is done when each call returns: the CPU plugin's
// memory, streams, events and copies, and the starting point of a bring-up (a
// vendor replaces the members one at a time with driver calls).
//
//   struct acme_traits {
//     static constexpr const char* name = "acme";
//     static constexpr int32_t device_count = 1;
//     static constexpr size_t alignment = 64;
//   };
//   struct acme_entries : sdk::host_device<acme_traits> {
//     static std::unique_ptr<tsr_plugin_context> init(const tsr_host_api& host);
//     static tsr_plugin_device_properties device_properties(tsr_plugin_context&, int32_t);
//   };
//   sdk::install_entries<acme_entries>(table);  // plugin_entries.hpp
//
// host_device<Traits> is a set of entries for install_entries
// (plugin_entries.hpp, which checks the context and pointers): a plugin
// derives its entries from it and adds or hides members. What they do:
//  - device_count: Traits::device_count; every member checks its device index
//    (OUT_OF_RANGE naming the index and the plugin's devices);
//  - alloc: aligned_alloc of Traits::alignment (`data` = `handle` = the
//    address; 0 bytes gives NULL); buffers of 2 MiB or more are 2 MiB-aligned
//    and advised for transparent huge pages (Linux MADV_HUGEPAGE: streaming
//    loops over large tensors miss the TLB far less; measured on the CPU
//    plugin, a 64 MiB float32 sum on one thread 20.6 -> 22.4 GB/s); more than
//    the machine's physical memory is refused up front (Linux would promise it
//    and fail later), RESOURCE_EXHAUSTED naming the size; memory_info from
//    sysconf;
//  - streams: distinct handles; synchronize, query and wait are immediate;
//  - events: record takes steady_clock::now() (all prior work has finished);
//    query is always done (recorded or not); elapsed_ms needs both recorded
//    (FAILED_PRECONDITION naming the one that was not); record may race with
//    query from another thread (atomic fields);
//  - copies: memmove (ranges may overlap); a NULL source or destination with
//    a non-zero byte count is INVALID_ARGUMENT naming it.
#ifndef TESSERA_SDK_HOST_DEVICE_HPP_
#define TESSERA_SDK_HOST_DEVICE_HPP_

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "tessera/plugin.h"
#include "tessera/sdk/plugin_entries.hpp"
#include "tessera/sdk/plugin_table.hpp"
#include "tessera/sdk/status.hpp"

namespace tessera::sdk {

template <class Traits>
struct host_device {
  using Ctx = tsr_plugin_context;

  // Bytes of physical memory (`_SC_PHYS_PAGES`) or of it free
  // (`_SC_AVPHYS_PAGES`); 0 when unknown.
  static uint64_t physical_bytes(int name) noexcept {
    const long pages = sysconf(name);
    const long page_size = sysconf(_SC_PAGESIZE);
    return pages > 0 && page_size > 0
               ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size)
               : 0;
  }

  // Throws OUT_OF_RANGE unless `device` is one of Traits::device_count.
  static void check_device(const char* entry, int32_t device) {
    check_device_index(Traits::name, entry, device, Traits::device_count);
  }

  // ---- devices and memory ----

  static int32_t device_count(Ctx&) { return Traits::device_count; }

  static tsr_plugin_buffer alloc(Ctx&, int32_t device, size_t nbytes) {
    check_device("alloc", device);
    if (nbytes == 0) return tsr_plugin_buffer{nullptr, nullptr};
    const size_t align = nbytes >= kHugePage ? kHugePage : Traits::alignment;
    static const uint64_t total = physical_bytes(_SC_PHYS_PAGES);  // a syscall: read once
    void* memory = nullptr;
    if ((total == 0 || nbytes <= total) && nbytes <= std::numeric_limits<size_t>::max() - align) {
      const size_t rounded = (nbytes + align - 1) / align * align;  // aligned_alloc's rule
      memory = std::aligned_alloc(align, rounded);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
      if (memory != nullptr && align == kHugePage) madvise(memory, rounded, MADV_HUGEPAGE);
#endif
    }
    if (memory == nullptr) {
      throw_status(TSR_RESOURCE_EXHAUSTED,
                   "%s:%d could not allocate %zu bytes (%.3g GiB) of host memory; %llu bytes are "
                   "available of %llu; free tensors, use smaller ones or add memory",
                   Traits::name, static_cast<int>(device), nbytes,
                   static_cast<double>(nbytes) / (1024.0 * 1024.0 * 1024.0),
                   static_cast<unsigned long long>(physical_bytes(_SC_AVPHYS_PAGES)),
                   static_cast<unsigned long long>(total));
    }
    return tsr_plugin_buffer{memory, memory};
  }

  static void free(Ctx&, int32_t, tsr_plugin_buffer buffer) noexcept { std::free(buffer.handle); }

  static memory_numbers memory_info(Ctx&, int32_t device) {
    check_device("memory_info", device);
    return {physical_bytes(_SC_AVPHYS_PAGES), physical_bytes(_SC_PHYS_PAGES)};
  }

  // ---- streams and events ----

  static tsr_plugin_stream* stream_create(Ctx&, int32_t device) {
    check_device("stream_create", device);
    return reinterpret_cast<tsr_plugin_stream*>(new stream{device});
  }
  static void stream_destroy(Ctx&, int32_t, tsr_plugin_stream* s) noexcept {
    delete reinterpret_cast<stream*>(s);
  }
  static void stream_synchronize(Ctx&, int32_t device, tsr_plugin_stream*) {
    check_device("stream_synchronize", device);
  }
  static bool stream_query(Ctx&, int32_t device, tsr_plugin_stream*) {
    check_device("stream_query", device);
    return true;
  }

  static tsr_plugin_event* event_create(Ctx&, int32_t device, uint32_t) {
    check_device("event_create", device);
    return reinterpret_cast<tsr_plugin_event*>(new event);
  }
  static void event_destroy(Ctx&, int32_t, tsr_plugin_event* e) noexcept {
    delete reinterpret_cast<event*>(e);
  }
  // The work before the event has run, so "now" is when the stream reached it.
  static void event_record(Ctx&, int32_t device, tsr_plugin_event& e, tsr_plugin_stream*) {
    check_device("event_record", device);
    event& ev = reinterpret_cast<event&>(e);
    const auto now = std::chrono::steady_clock::now().time_since_epoch();
    ev.time_ns.store(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count(),
                     std::memory_order_relaxed);
    ev.recorded.store(true, std::memory_order_release);
  }
  static void stream_wait_event(Ctx&, int32_t device, tsr_plugin_stream*, tsr_plugin_event&) {
    check_device("stream_wait_event", device);
  }
  static bool event_query(Ctx&, int32_t device, tsr_plugin_event&) {
    check_device("event_query", device);
    return true;
  }
  static void event_synchronize(Ctx&, int32_t device, tsr_plugin_event&) {
    check_device("event_synchronize", device);
  }
  static double event_elapsed_ms(Ctx&, int32_t device, tsr_plugin_event& start,
                                 tsr_plugin_event& end) {
    check_device("event_elapsed_ms", device);
    const event& a = reinterpret_cast<const event&>(start);
    const event& b = reinterpret_cast<const event&>(end);
    const bool a_recorded = a.recorded.load(std::memory_order_acquire);
    const bool b_recorded = b.recorded.load(std::memory_order_acquire);
    if (!a_recorded || !b_recorded) {
      throw_status(TSR_FAILED_PRECONDITION,
                   "%s plugin event_elapsed_ms: the %s event was never recorded; record both "
                   "events on a stream first",
                   Traits::name, a_recorded ? "end" : "start");
    }
    const int64_t ns =
        b.time_ns.load(std::memory_order_relaxed) - a.time_ns.load(std::memory_order_relaxed);
    return static_cast<double>(ns) / 1e6;
  }

  // ---- copies ----

  static void copy_host_to_device(Ctx&, int32_t device, tsr_plugin_stream*, const void* src,
                                  tsr_plugin_buffer dst, uint64_t dst_offset, uint64_t nbytes) {
    check_device("copy_host_to_device", device);
    copy_bytes("copy_host_to_device", address(dst, dst_offset), src, nbytes);
  }
  static void copy_device_to_host(Ctx&, int32_t device, tsr_plugin_stream*, tsr_plugin_buffer src,
                                  uint64_t src_offset, void* dst, uint64_t nbytes) {
    check_device("copy_device_to_host", device);
    copy_bytes("copy_device_to_host", dst, address(src, src_offset), nbytes);
  }
  static void copy_device_to_device(Ctx&, int32_t device, tsr_plugin_stream*, tsr_plugin_buffer src,
                                    uint64_t src_offset, tsr_plugin_buffer dst, uint64_t dst_offset,
                                    uint64_t nbytes) {
    check_device("copy_device_to_device", device);
    copy_bytes("copy_device_to_device", address(dst, dst_offset), address(src, src_offset), nbytes);
  }

 private:
  // Buffers of at least this many bytes are aligned to it and advised for
  // huge pages (top of the file).
  static constexpr size_t kHugePage = size_t{2} << 20;

  struct stream {
    int32_t device;
  };
  struct event {
    std::atomic<bool> recorded{false};  // set by the first record
    std::atomic<int64_t> time_ns{0};    // steady_clock at the last record
  };

  static void* address(tsr_plugin_buffer buffer, uint64_t offset) noexcept {
    return buffer.data != nullptr ? static_cast<char*>(buffer.data) + offset : nullptr;
  }
  static void copy_bytes(const char* entry, void* dst, const void* src, uint64_t nbytes) {
    if (nbytes == 0) return;
    if (dst == nullptr || src == nullptr) {
      throw_status(TSR_INVALID_ARGUMENT,
                   "%s plugin %s: %s is NULL for a copy of %llu bytes; pass a valid buffer",
                   Traits::name, entry, dst == nullptr ? "the destination" : "the source",
                   static_cast<unsigned long long>(nbytes));
    }
    std::memmove(dst, src, nbytes);
  }
};

}  // namespace tessera::sdk

#endif  // TESSERA_SDK_HOST_DEVICE_HPP_
