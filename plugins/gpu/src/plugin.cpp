// plugin.cpp - the GPU plugins' entry point and tsr_plugin_api table (every
// flavour, Note [GPU plugin flavours] in runtime.hpp).
//
// The entries are the static members of gpu_entries, which the SDK's
// install_entries (plugin_entries.hpp) turns into noexcept slots that validate
// the context and pointers and run each member under sdk::guard, so no
// exception crosses the ABI. Device work goes through
// runtime.hpp; kernels come from the family folders
// (kernels.hpp).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>

#include "context.hpp"
#include "kernels.hpp"
#include "tessera/sdk/plugin_entries.hpp"
#include "tessera/sdk/plugin_table.hpp"
#include "tessera/sdk/status.hpp"
#include "tessera/tessera.h"

namespace tessera::gpu {

Device& device_at(tsr_plugin_context& context, int32_t index, const char* entry) {
  sdk::check_device_index(flavour_name(), entry, index,
                          static_cast<int32_t>(context.devices.size()));
  return context.devices[static_cast<size_t>(index)];
}

namespace {

void* base_of(tsr_plugin_buffer b, uint64_t offset, uint64_t nbytes, const char* name) {
  if (b.handle == nullptr) {
    if (nbytes == 0) return nullptr;
    sdk::throw_status(TSR_INVALID_ARGUMENT, "%s plugin %s: the buffer handle is NULL",
                      flavour_name(), name);
  }
  return static_cast<std::byte*>(b.handle) + offset;
}

// ---- lifecycle and devices ----

void destroy_devices(tsr_plugin_context& ctx) noexcept {
  for (Device& d : ctx.devices) {
    if (d.default_stream.native != nullptr) {
      try {
        stream_synchronize(d.index, d.default_stream.native);
      } catch (...) {  // NOLINT(bugprone-empty-catch): shutting down; the error was reported
      }
      stream_destroy(d.index, d.default_stream.native);
      d.default_stream.native = nullptr;
    }
  }
  std::lock_guard<std::mutex> lock(ctx.state_mu);
  ctx.states.clear();
}

// The plugin's entries (sdk/plugin_entries.hpp: the SDK checks the context and
// the pointers, runs each under its guard and writes the results).
struct gpu_entries {
  static const char* name() noexcept { return flavour_name(); }

  // ---- lifecycle and devices ----

  static std::unique_ptr<tsr_plugin_context> init(const tsr_host_api& host) {
    auto context = std::make_unique<tsr_plugin_context>();
    context->host = &host;
    const int count = probe_devices();
    context->devices.resize(static_cast<size_t>(count));
    try {
      for (int i = 0; i < count; ++i) {
        Device& d = context->devices[static_cast<size_t>(i)];
        d.index = i;
        d.info = device_info(i);
        d.default_stream.device = i;
        d.default_stream.native = gpu::stream_create(i);
      }
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
    // "NVIDIA H200 (sm_90)": the name with its architecture
    std::snprintf(p.name, sizeof p.name, "%s (%s)", d.info.name.c_str(), d.info.arch.c_str());
    p.total_memory = d.info.total_memory;
    p.dtypes = kernel_dtypes();
    p.max_allocation = 0;
    p.features = TSR_FEATURE_PINNED_HOST | TSR_FEATURE_TIMESTAMPS;
    if (flavour() != Flavour::kHost) p.features |= TSR_FEATURE_ASYNC;
    p.compute_units = d.info.multiprocessors;
    p.alignment = 256;
    return p;
  }

  // ---- memory ----

  static tsr_plugin_buffer alloc(tsr_plugin_context& ctx, int32_t device, size_t nbytes) {
    Device& d = device_at(ctx, device, "alloc");
    if (nbytes == 0) return tsr_plugin_buffer{nullptr, nullptr};
    void* p = allocate(d.index, nbytes);
    if (p == nullptr) {
      uint64_t free_bytes = 0, total = 0;
      try {
        gpu::memory_info(d.index, &free_bytes, &total);
      } catch (...) {  // NOLINT(bugprone-empty-catch): the sizes are a courtesy
      }
      sdk::throw_status(TSR_RESOURCE_EXHAUSTED,
                        "%s:%d is out of memory: %zu bytes requested, %llu of %llu bytes free",
                        flavour_name(), d.index, nbytes,
                        static_cast<unsigned long long>(free_bytes),
                        static_cast<unsigned long long>(total));
    }
    return tsr_plugin_buffer{p, p};
  }

  static void free(tsr_plugin_context& ctx, int32_t device, tsr_plugin_buffer buffer) noexcept {
    if (device < 0 || static_cast<size_t>(device) >= ctx.devices.size()) return;
    // cudaFree / hipFree wait for work still using the memory.
    release(device, buffer.handle);
  }

  static sdk::memory_numbers memory_info(tsr_plugin_context& ctx, int32_t device) {
    Device& d = device_at(ctx, device, "memory_info");
    sdk::memory_numbers m;
    gpu::memory_info(d.index, &m.free, &m.total);
    return m;
  }

  static void* host_alloc_pinned(tsr_plugin_context&, size_t nbytes) {
    void* p = allocate_pinned(std::max<size_t>(nbytes, 1));
    if (p == nullptr)
      sdk::throw_status(TSR_RESOURCE_EXHAUSTED,
                        "%s plugin host_alloc_pinned: %zu bytes of page-locked memory are not "
                        "available",
                        flavour_name(), nbytes);
    return p;
  }

  static void host_free_pinned(tsr_plugin_context&, void* ptr) noexcept {
    release_pinned(ptr);  // cudaFreeHost waits for copies still using it
  }

  // ---- streams and events ----

  static std::unique_ptr<tsr_plugin_stream> stream_create(tsr_plugin_context& ctx, int32_t device) {
    Device& d = device_at(ctx, device, "stream_create");
    auto s = std::make_unique<tsr_plugin_stream>();
    s->device = d.index;
    s->native = gpu::stream_create(d.index);
    return s;
  }

  static void stream_destroy(tsr_plugin_context&, int32_t, tsr_plugin_stream* stream) noexcept {
    gpu::stream_destroy(stream->device, stream->native);
    delete stream;
  }

  static void stream_synchronize(tsr_plugin_context& ctx, int32_t device,
                                 tsr_plugin_stream* stream) {
    Device& d = device_at(ctx, device, "stream_synchronize");
    gpu::stream_synchronize(d.index, stream_or_default(d, stream).native);
  }

  static bool stream_query(tsr_plugin_context& ctx, int32_t device, tsr_plugin_stream* stream) {
    Device& d = device_at(ctx, device, "stream_query");
    return gpu::stream_query(d.index, stream_or_default(d, stream).native);
  }

  static std::unique_ptr<tsr_plugin_event> event_create(tsr_plugin_context& ctx, int32_t device,
                                                        uint32_t flags) {
    Device& d = device_at(ctx, device, "event_create");
    auto e = std::make_unique<tsr_plugin_event>();
    e->device = d.index;
    e->timing = (flags & TSR_EVENT_TIMING) != 0;
    e->native = gpu::event_create(d.index, e->timing);
    return e;
  }

  static void event_destroy(tsr_plugin_context&, int32_t, tsr_plugin_event* event) noexcept {
    gpu::event_destroy(event->device, event->native);
    delete event;
  }

  static void event_record(tsr_plugin_context& ctx, int32_t device, tsr_plugin_event& event,
                           tsr_plugin_stream* stream) {
    Device& d = device_at(ctx, device, "event_record");
    gpu::event_record(d.index, event.native, stream_or_default(d, stream).native);
  }

  static void stream_wait_event(tsr_plugin_context& ctx, int32_t device, tsr_plugin_stream* stream,
                                tsr_plugin_event& event) {
    Device& d = device_at(ctx, device, "stream_wait_event");
    gpu::stream_wait_event(d.index, stream_or_default(d, stream).native, event.native);
  }

  // Events remember their device: the index argument is not needed.
  static bool event_query(tsr_plugin_context&, int32_t, tsr_plugin_event& event) {
    return gpu::event_query(event.device, event.native);
  }

  static void event_synchronize(tsr_plugin_context&, int32_t, tsr_plugin_event& event) {
    gpu::event_synchronize(event.device, event.native);
  }

  static double event_elapsed_ms(tsr_plugin_context&, int32_t, tsr_plugin_event& start,
                                 tsr_plugin_event& end) {
    if (!start.timing || !end.timing)
      sdk::throw_status(TSR_FAILED_PRECONDITION,
                        "%s plugin event_elapsed_ms: both events need TSR_EVENT_TIMING at "
                        "creation",
                        flavour_name());
    return gpu::event_elapsed_ms(start.device, start.native, end.native);
  }

  // ---- copies ----

  static void copy_host_to_device(tsr_plugin_context& ctx, int32_t device,
                                  tsr_plugin_stream* stream, const void* src, tsr_plugin_buffer dst,
                                  uint64_t dst_offset, uint64_t nbytes) {
    Device& d = device_at(ctx, device, "copy_host_to_device");
    if (nbytes == 0) return;
    sdk::check_not_null(flavour_name(), "copy_host_to_device", "src", src);
    copy_async(d.index, base_of(dst, dst_offset, nbytes, "copy_host_to_device"), src, nbytes,
               CopyKind::kHostToDevice, stream_or_default(d, stream).native);
  }

  static void copy_device_to_host(tsr_plugin_context& ctx, int32_t device,
                                  tsr_plugin_stream* stream, tsr_plugin_buffer src,
                                  uint64_t src_offset, void* dst, uint64_t nbytes) {
    Device& d = device_at(ctx, device, "copy_device_to_host");
    if (nbytes == 0) return;
    sdk::check_not_null(flavour_name(), "copy_device_to_host", "dst", dst);
    copy_async(d.index, dst, base_of(src, src_offset, nbytes, "copy_device_to_host"), nbytes,
               CopyKind::kDeviceToHost, stream_or_default(d, stream).native);
  }

  static void copy_device_to_device(tsr_plugin_context& ctx, int32_t device,
                                    tsr_plugin_stream* stream, tsr_plugin_buffer src,
                                    uint64_t src_offset, tsr_plugin_buffer dst, uint64_t dst_offset,
                                    uint64_t nbytes) {
    Device& d = device_at(ctx, device, "copy_device_to_device");
    if (nbytes == 0) return;
    copy_async(d.index, base_of(dst, dst_offset, nbytes, "copy_device_to_device"),
               base_of(src, src_offset, nbytes, "copy_device_to_device"), nbytes,
               CopyKind::kDeviceToDevice, stream_or_default(d, stream).native);
  }

  // Plugin ABI 1.2: between two devices of this plugin; peer access where the
  // runtime has it (cudaMemcpyPeerAsync stages through the host otherwise).
  static void copy_peer(tsr_plugin_context& ctx, int32_t dst_device, tsr_plugin_stream* stream,
                        tsr_plugin_buffer dst, uint64_t dst_offset, int32_t src_device,
                        tsr_plugin_buffer src, uint64_t src_offset, uint64_t nbytes) {
    Device& d = device_at(ctx, dst_device, "copy_peer");
    Device& s = device_at(ctx, src_device, "copy_peer");
    if (nbytes == 0) return;
    copy_peer_async(d.index, base_of(dst, dst_offset, nbytes, "copy_peer"), s.index,
                    base_of(src, src_offset, nbytes, "copy_peer"), nbytes,
                    stream_or_default(d, stream).native);
  }

  // ---- options: "allow_tf32" ----

  static void set_option(tsr_plugin_context& ctx, const char* key, const char* value) {
    sdk::check_not_null(flavour_name(), "set_option", "value", value);
    if (std::strcmp(key, "allow_tf32") == 0) {
      ctx.allow_tf32.store(sdk::bool_option(flavour_name(), key, value));
      return;
    }
    sdk::throw_unknown_option(flavour_name(), key, "'allow_tf32'");
  }
};

tsr_plugin_api make_table() {
  tsr_plugin_api t = sdk::plugin_table(flavour_name(), "0.1.0", flavour_name());
  sdk::install_entries<gpu_entries>(t);
  t.kernels = kernel_table(&t.kernel_count);
  t.random_fill = random_fill_kernel();
  return t;
}

}  // namespace
}  // namespace tessera::gpu

extern "C" TSR_PLUGIN_EXPORT const tsr_plugin_api* tsr_plugin_query(
    const tsr_host_api* host) noexcept {
  return tessera::sdk::query(host, tessera::gpu::flavour_name(), tessera::gpu::make_table);
}
