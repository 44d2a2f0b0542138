// plugin.cpp - the Vulkan plugin's entry point and its tsr_plugin_api table.
//
// The entries are the static members of vulkan_entries, which the SDK's
// install_entries (plugin_entries.hpp) turns into noexcept slots that validate
// the context and pointers and run each member under sdk::guard, so no
// exception crosses the ABI. Devices, memory,
// streams and kernels live in device.cpp, memory.cpp, stream.cpp and
// kernels.cpp; this file adds the copies:
//   - host <-> device where device memory is mapped (lavapipe, integrated
//     GPUs): the stream is synchronised, then a host copy (split across
//     threads when large, Note [Host copies] in host_copy.hpp) - ordered
//     after the stream's earlier work and complete on return;
//   - otherwise (not mapped, or an uncached read: Note [Uncached device
//     memory]) through the device's two staging buffers, slices of the copy
//     overlapping on host and device (Note [Pipelined staging], staging.hpp);
//   - device -> device: vkCmdCopyBuffer on the stream, asynchronous.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>

#include "device.hpp"
#include "kernels.hpp"
#include "stream.hpp"
#include "tessera/sdk/plugin_entries.hpp"
#include "tessera/sdk/plugin_table.hpp"
#include "tessera/sdk/status.hpp"
#include "tessera/tessera.h"
#include "vk_util.hpp"

namespace tessera::vulkan {
namespace {

constexpr const char* kPluginName = "vulkan";

tsr_plugin_stream& stream_or_default(Device& d, tsr_plugin_stream* s) {
  return s != nullptr ? *s : *d.default_stream;
}

Allocation& allocation_of(tsr_plugin_buffer b, uint64_t offset, uint64_t nbytes, const char* name) {
  auto* a = static_cast<Allocation*>(b.handle);
  if (a == nullptr)
    sdk::throw_status(TSR_INVALID_ARGUMENT, "vulkan plugin %s: the buffer handle is NULL", name);
  if (offset > a->size || nbytes > a->size - offset)
    sdk::throw_status(
        TSR_OUT_OF_RANGE, "vulkan plugin %s: bytes [%llu, %llu) are outside the %llu-byte buffer",
        name, static_cast<unsigned long long>(offset),
        static_cast<unsigned long long>(offset + nbytes), static_cast<unsigned long long>(a->size));
  return *a;
}

// Note [Pinned host memory] (device.hpp): the pinned block holding
// [ptr, ptr + nbytes) when device `d` maps it, as (buffer, offset); null
// otherwise.
struct PinnedRange {
  VkBuffer buffer = VK_NULL_HANDLE;
  uint64_t offset = 0;
};
PinnedRange pinned_range(tsr_plugin_context& ctx, const Device& d, const void* ptr,
                         uint64_t nbytes) {
  const auto* p = static_cast<const std::byte*>(ptr);
  std::lock_guard<std::mutex> lock(ctx.pinned_mu);
  auto it = ctx.pinned.upper_bound(p);
  if (it == ctx.pinned.begin()) return {};
  --it;
  const uint64_t offset = static_cast<uint64_t>(p - it->first);
  if (it->second.device != &d || offset > it->second.nbytes || nbytes > it->second.nbytes - offset)
    return {};
  return {it->second.staging.buffer, offset};
}

// One copy command between a pinned block and device memory, enqueued on `s`.
void pinned_copy(tsr_plugin_stream& s, const PinnedRange& pinned, Allocation& a, uint64_t offset,
                 uint64_t nbytes, bool to_device) {
  std::lock_guard<std::mutex> lock(s.mu);
  VkCommandBuffer cb = s.record();
  VkBufferCopy region{};
  region.size = nbytes;
  if (to_device) {
    region.srcOffset = pinned.offset;
    region.dstOffset = a.offset + offset;
    vkCmdCopyBuffer(cb, pinned.buffer, a.block->buffer, 1, &region);
  } else {
    region.srcOffset = a.offset + offset;
    region.dstOffset = pinned.offset;
    vkCmdCopyBuffer(cb, a.block->buffer, pinned.buffer, 1, &region);
  }
  s.command_done();
}

// The plugin's entries (sdk/plugin_entries.hpp: the SDK checks the context and
// the pointers, runs each under its guard and writes the results).
struct vulkan_entries {
  static const char* name() noexcept { return kPluginName; }

  // ---- lifecycle and devices ----

  static std::unique_ptr<tsr_plugin_context> init(const tsr_host_api& host) {
    auto context = std::make_unique<tsr_plugin_context>();
    context->host = &host;
    try {
      create_devices(*context);
    } catch (...) {
      destroy_devices(*context);
      throw;
    }
    return context;
  }

  static void shutdown(tsr_plugin_context& ctx) noexcept { destroy_devices(ctx); }

  static int32_t device_count(tsr_plugin_context& ctx) {
    return static_cast<int32_t>(ctx.devices.size());
  }

  static tsr_plugin_device_properties device_properties(tsr_plugin_context& ctx, int32_t device) {
    Device& d = device_at(ctx, device, "device_properties");
    auto p = sdk::zeroed_struct<tsr_plugin_device_properties>();
    const size_t n = std::min(std::strlen(d.properties.deviceName), sizeof p.name - 1);
    std::memcpy(p.name, d.properties.deviceName, n);
    p.total_memory = d.heap_size;
    p.dtypes = d.dtypes;
    p.max_allocation = d.max_allocation;
    p.features =
        TSR_FEATURE_ASYNC | TSR_FEATURE_PINNED_HOST | (d.timestamps ? TSR_FEATURE_TIMESTAMPS : 0u);
    p.compute_units = 0;
    p.alignment = static_cast<uint32_t>(Allocator::kAlignment);
    return p;
  }

  // ---- memory ----

  static tsr_plugin_buffer alloc(tsr_plugin_context& ctx, int32_t device, size_t nbytes) {
    Device& d = device_at(ctx, device, "alloc");
    tsr_plugin_buffer out{nullptr, nullptr};
    if (nbytes != 0) out.handle = d.allocator->allocate(nbytes);
    return out;
  }

  static void free(tsr_plugin_context& ctx, int32_t device, tsr_plugin_buffer buffer) noexcept {
    if (device < 0 || static_cast<size_t>(device) >= ctx.devices.size()) return;
    Device& d = *ctx.devices[static_cast<size_t>(device)];
    try {
      d.synchronize_all();  // work still queued may use the memory
    } catch (...) {
      vkDeviceWaitIdle(d.device);
    }
    d.allocator->release(static_cast<Allocation*>(buffer.handle));
  }

  static sdk::memory_numbers memory_info(tsr_plugin_context& ctx, int32_t device) {
    Device& d = device_at(ctx, device, "memory_info");
    const uint64_t used = d.allocator->reserved_bytes();
    return {used < d.heap_size ? d.heap_size - used : 0, d.heap_size};
  }

  // Note [Pinned host memory] (device.hpp).
  static void* host_alloc_pinned(tsr_plugin_context& ctx, size_t nbytes) {
    Device& d = device_at(ctx, 0, "host_alloc_pinned");
    PinnedBlock block;
    block.device = &d;
    block.nbytes = nbytes;
    block.staging = d.create_staging(std::max<uint64_t>(nbytes, 1));
    auto* address = static_cast<std::byte*>(block.staging.mapped);
    std::lock_guard<std::mutex> lock(ctx.pinned_mu);
    ctx.pinned.emplace(address, block);
    return address;
  }

  static void host_free_pinned(tsr_plugin_context& ctx, void* ptr) noexcept {
    PinnedBlock block;
    {
      std::lock_guard<std::mutex> lock(ctx.pinned_mu);
      auto it = ctx.pinned.find(static_cast<const std::byte*>(ptr));
      if (it == ctx.pinned.end()) return;  // not ours: nothing to free
      block = it->second;
      ctx.pinned.erase(it);
    }
    // A copy enqueued from or into the block may still be in flight.
    try {
      block.device->synchronize_all();
    } catch (...) {  // NOLINT(bugprone-empty-catch): a failed stream already reported its error
    }
    block.device->destroy_staging(block.staging);
  }

  // ---- streams and events ----

  static std::unique_ptr<tsr_plugin_stream> stream_create(tsr_plugin_context& ctx, int32_t device) {
    return std::make_unique<tsr_plugin_stream>(device_at(ctx, device, "stream_create"));
  }

  static void stream_destroy(tsr_plugin_context&, int32_t, tsr_plugin_stream* stream) noexcept {
    delete stream;
  }

  static void stream_synchronize(tsr_plugin_context& ctx, int32_t device,
                                 tsr_plugin_stream* stream) {
    Device& d = device_at(ctx, device, "stream_synchronize");
    stream_or_default(d, stream).synchronize();
    check_validation(ctx);
  }

  static bool stream_query(tsr_plugin_context& ctx, int32_t device, tsr_plugin_stream* stream) {
    Device& d = device_at(ctx, device, "stream_query");
    return stream_or_default(d, stream).query();
  }

  // Flags: every event can be timed when the device has timestamps.
  static std::unique_ptr<tsr_plugin_event> event_create(tsr_plugin_context& ctx, int32_t device,
                                                        uint32_t) {
    Device& d = device_at(ctx, device, "event_create");
    auto e = std::make_unique<tsr_plugin_event>();
    e->device = &d;
    if (d.timestamps) {
      auto qi = vk_struct<VkQueryPoolCreateInfo>(VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO);
      qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
      qi.queryCount = 1;
      vk_check(vkCreateQueryPool(d.device, &qi, nullptr, &e->queries), "vkCreateQueryPool");
    }
    return e;
  }

  static void event_destroy(tsr_plugin_context&, int32_t, tsr_plugin_event* event) noexcept {
    try {
      if (event->recorded) event_wait(*event);
    } catch (...) {
    }
    if (event->queries != VK_NULL_HANDLE)
      vkDestroyQueryPool(event->device->device, event->queries, nullptr);
    delete event;
  }

  static void event_record(tsr_plugin_context& ctx, int32_t device, tsr_plugin_event& event,
                           tsr_plugin_stream* stream) {
    Device& d = device_at(ctx, device, "event_record");
    record_event(event, stream_or_default(d, stream));
  }

  static void stream_wait_event(tsr_plugin_context& ctx, int32_t device, tsr_plugin_stream* stream,
                                tsr_plugin_event& event) {
    Device& d = device_at(ctx, device, "stream_wait_event");
    if (!event.recorded || event.value == 0) return;
    stream_or_default(d, stream).wait_for(event.semaphore, event.value);
  }

  // Events remember their device: the index argument is not needed.
  static bool event_query(tsr_plugin_context&, int32_t, tsr_plugin_event& event) {
    return !event.recorded || event.value == 0 || event_done(event);
  }

  static void event_synchronize(tsr_plugin_context& ctx, int32_t, tsr_plugin_event& event) {
    if (event.recorded) event_wait(event);
    check_validation(ctx);
  }

  static double event_elapsed_ms(tsr_plugin_context&, int32_t, tsr_plugin_event& start,
                                 tsr_plugin_event& end) {
    return elapsed_ms(start, end);
  }

  // ---- copies ----

  static void copy_host_to_device(tsr_plugin_context& ctx, int32_t device,
                                  tsr_plugin_stream* stream, const void* src, tsr_plugin_buffer dst,
                                  uint64_t dst_offset, uint64_t nbytes) {
    if (nbytes == 0) return;
    sdk::check_not_null(kPluginName, "copy_host_to_device", "src", src);
    Device& d = device_at(ctx, device, "copy_host_to_device");
    Allocation& a = allocation_of(dst, dst_offset, nbytes, "copy_host_to_device");
    tsr_plugin_stream& s = stream_or_default(d, stream);
    if (const PinnedRange pinned = pinned_range(ctx, d, src, nbytes); pinned.buffer) {
      pinned_copy(s, pinned, a, dst_offset, nbytes, true);  // stream-ordered, no host wait
      return;
    }
    write_to(d, s, a, dst_offset, src, nbytes);
  }

  static void copy_device_to_host(tsr_plugin_context& ctx, int32_t device,
                                  tsr_plugin_stream* stream, tsr_plugin_buffer src,
                                  uint64_t src_offset, void* dst, uint64_t nbytes) {
    if (nbytes == 0) return;
    sdk::check_not_null(kPluginName, "copy_device_to_host", "dst", dst);
    Device& d = device_at(ctx, device, "copy_device_to_host");
    Allocation& a = allocation_of(src, src_offset, nbytes, "copy_device_to_host");
    tsr_plugin_stream& s = stream_or_default(d, stream);
    if (const PinnedRange pinned = pinned_range(ctx, d, dst, nbytes); pinned.buffer) {
      // Enqueued: the bytes are in `dst` once the stream reaches the copy
      // (the host synchronizes before reading them).
      pinned_copy(s, pinned, a, src_offset, nbytes, false);
      return;
    }
    read_back(d, s, a, src_offset, dst, nbytes);
    check_validation(ctx);
  }

  static void copy_device_to_device(tsr_plugin_context& ctx, int32_t device,
                                    tsr_plugin_stream* stream, tsr_plugin_buffer src,
                                    uint64_t src_offset, tsr_plugin_buffer dst, uint64_t dst_offset,
                                    uint64_t nbytes) {
    if (nbytes == 0) return;
    Device& d = device_at(ctx, device, "copy_device_to_device");
    Allocation& from = allocation_of(src, src_offset, nbytes, "copy_device_to_device");
    Allocation& to = allocation_of(dst, dst_offset, nbytes, "copy_device_to_device");
    tsr_plugin_stream& s = stream_or_default(d, stream);
    std::lock_guard<std::mutex> lock(s.mu);
    VkCommandBuffer cb = s.record();
    VkBufferCopy region{};
    region.srcOffset = from.offset + src_offset;
    region.dstOffset = to.offset + dst_offset;
    region.size = nbytes;
    vkCmdCopyBuffer(cb, from.block->buffer, to.block->buffer, 1, &region);
    s.command_done();
  }
};

tsr_plugin_api make_table() {
  tsr_plugin_api t = sdk::plugin_table(kPluginName, "0.1.0", "vulkan");
  sdk::install_entries<vulkan_entries>(t);
  t.kernels = kernel_table(&t.kernel_count);
  t.random_fill = random_fill_kernel();
  return t;
}

}  // namespace
}  // namespace tessera::vulkan

extern "C" TSR_PLUGIN_EXPORT const tsr_plugin_api* tsr_plugin_query(
    const tsr_host_api* host) noexcept {
  return tessera::sdk::query(host, tessera::vulkan::kPluginName, tessera::vulkan::make_table);
}
