// plugin.cpp - the GPU plugins' entry point and tsr_plugin_api table (every
// flavour, Note [GPU plugin flavours] in runtime.hpp).
//
// Every entry is a noexcept trampoline that validates its pointers and runs
// under sdk::guard, so no exception crosses the ABI. Device work goes through
// runtime.hpp; kernels come from the family folders
// (kernels.hpp).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>

#include "context.hpp"
#include "kernels.hpp"
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

tsr_status* plugin_init(const tsr_host_api* host, tsr_plugin_context** out_context) noexcept {
  if (host == nullptr) host = sdk::query_host();
  if (host == nullptr) return nullptr;
  return sdk::guard(host, [&] {
    sdk::check_not_null(flavour_name(), "init", "out_context", out_context);
    auto context = std::make_unique<tsr_plugin_context>();
    context->host = host;
    const int count = probe_devices();
    context->devices.resize(static_cast<size_t>(count));
    try {
      for (int i = 0; i < count; ++i) {
        Device& d = context->devices[static_cast<size_t>(i)];
        d.index = i;
        d.info = device_info(i);
        d.default_stream.device = i;
        d.default_stream.native = stream_create(i);
      }
    } catch (...) {
      destroy_devices(*context);
      throw;
    }
    *out_context = context.release();
  });
}

void plugin_shutdown(tsr_plugin_context* context) noexcept {
  if (context == nullptr) return;
  destroy_devices(*context);
  delete context;
}

tsr_status* plugin_device_count(tsr_plugin_context* context, int32_t* out_count) noexcept {
  return sdk::context_entry(context, flavour_name(), "device_count", [&](tsr_plugin_context& ctx) {
    sdk::check_not_null(flavour_name(), "device_count", "out_count", out_count);
    *out_count = static_cast<int32_t>(ctx.devices.size());
  });
}

tsr_status* plugin_device_properties(tsr_plugin_context* context, int32_t device,
                                     tsr_plugin_device_properties* out) noexcept {
  return sdk::context_entry(
      context, flavour_name(), "device_properties", [&](tsr_plugin_context& ctx) {
        sdk::check_not_null(flavour_name(), "device_properties", "out_properties", out);
        Device& d = device_at(ctx, device, "device_properties");
        tsr_plugin_device_properties p;
        std::memset(&p, 0, sizeof p);
        // "NVIDIA H200 (sm_90)": the name with its architecture
        std::snprintf(p.name, sizeof p.name, "%s (%s)", d.info.name.c_str(), d.info.arch.c_str());
        p.total_memory = d.info.total_memory;
        p.dtypes = kernel_dtypes();
        p.max_allocation = 0;
        p.features = TSR_FEATURE_PINNED_HOST | TSR_FEATURE_TIMESTAMPS;
        if (flavour() != Flavour::kHost) p.features |= TSR_FEATURE_ASYNC;
        p.compute_units = d.info.multiprocessors;
        p.alignment = 256;
        sdk::write_device_properties(p, out);
      });
}

// ---- memory ----

tsr_status* plugin_alloc(tsr_plugin_context* context, int32_t device, size_t nbytes,
                         tsr_plugin_buffer* out) noexcept {
  return sdk::context_entry(context, flavour_name(), "alloc", [&](tsr_plugin_context& ctx) {
    sdk::check_not_null(flavour_name(), "alloc", "out_buffer", out);
    Device& d = device_at(ctx, device, "alloc");
    *out = tsr_plugin_buffer{nullptr, nullptr};
    if (nbytes == 0) return;
    void* p = allocate(d.index, nbytes);
    if (p == nullptr) {
      uint64_t free_bytes = 0, total = 0;
      try {
        memory_info(d.index, &free_bytes, &total);
      } catch (...) {  // NOLINT(bugprone-empty-catch): the sizes are a courtesy
      }
      sdk::throw_status(TSR_RESOURCE_EXHAUSTED,
                        "%s:%d is out of memory: %zu bytes requested, %llu of %llu bytes free",
                        flavour_name(), d.index, nbytes,
                        static_cast<unsigned long long>(free_bytes),
                        static_cast<unsigned long long>(total));
    }
    *out = tsr_plugin_buffer{p, p};
  });
}

void plugin_free(tsr_plugin_context* context, int32_t device, tsr_plugin_buffer buffer) noexcept {
  if (context == nullptr || buffer.handle == nullptr) return;
  if (device < 0 || static_cast<size_t>(device) >= context->devices.size()) return;
  // cudaFree / hipFree wait for work still using the memory.
  release(device, buffer.handle);
}

tsr_status* plugin_memory_info(tsr_plugin_context* context, int32_t device, uint64_t* out_free,
                               uint64_t* out_total) noexcept {
  return sdk::context_entry(context, flavour_name(), "memory_info", [&](tsr_plugin_context& ctx) {
    sdk::check_not_null(flavour_name(), "memory_info", "out_free", out_free);
    sdk::check_not_null(flavour_name(), "memory_info", "out_total", out_total);
    Device& d = device_at(ctx, device, "memory_info");
    memory_info(d.index, out_free, out_total);
  });
}

tsr_status* plugin_host_alloc_pinned(tsr_plugin_context* context, size_t nbytes,
                                     void** out_ptr) noexcept {
  return sdk::context_entry(context, flavour_name(), "host_alloc_pinned", [&](tsr_plugin_context&) {
    sdk::check_not_null(flavour_name(), "host_alloc_pinned", "out_ptr", out_ptr);
    *out_ptr = allocate_pinned(std::max<size_t>(nbytes, 1));
    if (*out_ptr == nullptr)
      sdk::throw_status(TSR_RESOURCE_EXHAUSTED,
                        "%s plugin host_alloc_pinned: %zu bytes of page-locked memory are not "
                        "available",
                        flavour_name(), nbytes);
  });
}

void plugin_host_free_pinned(tsr_plugin_context* context, void* ptr) noexcept {
  if (context == nullptr || ptr == nullptr) return;
  release_pinned(ptr);  // cudaFreeHost waits for copies still using it
}

// ---- streams and events ----

tsr_status* plugin_stream_create(tsr_plugin_context* context, int32_t device,
                                 tsr_plugin_stream** out) noexcept {
  return sdk::context_entry(context, flavour_name(), "stream_create", [&](tsr_plugin_context& ctx) {
    sdk::check_not_null(flavour_name(), "stream_create", "out_stream", out);
    Device& d = device_at(ctx, device, "stream_create");
    auto s = std::make_unique<tsr_plugin_stream>();
    s->device = d.index;
    s->native = stream_create(d.index);
    *out = s.release();
  });
}

void plugin_stream_destroy(tsr_plugin_context* context, int32_t,
                           tsr_plugin_stream* stream) noexcept {
  if (context == nullptr || stream == nullptr) return;
  stream_destroy(stream->device, stream->native);
  delete stream;
}

tsr_status* plugin_stream_synchronize(tsr_plugin_context* context, int32_t device,
                                      tsr_plugin_stream* stream) noexcept {
  return sdk::context_entry(context, flavour_name(), "stream_synchronize",
                            [&](tsr_plugin_context& ctx) {
                              Device& d = device_at(ctx, device, "stream_synchronize");
                              stream_synchronize(d.index, stream_or_default(d, stream).native);
                            });
}

tsr_status* plugin_stream_query(tsr_plugin_context* context, int32_t device,
                                tsr_plugin_stream* stream, bool* out_done) noexcept {
  return sdk::context_entry(context, flavour_name(), "stream_query", [&](tsr_plugin_context& ctx) {
    sdk::check_not_null(flavour_name(), "stream_query", "out_done", out_done);
    Device& d = device_at(ctx, device, "stream_query");
    *out_done = stream_query(d.index, stream_or_default(d, stream).native);
  });
}

tsr_status* plugin_event_create(tsr_plugin_context* context, int32_t device, uint32_t flags,
                                tsr_plugin_event** out) noexcept {
  return sdk::context_entry(context, flavour_name(), "event_create", [&](tsr_plugin_context& ctx) {
    sdk::check_not_null(flavour_name(), "event_create", "out_event", out);
    Device& d = device_at(ctx, device, "event_create");
    auto e = std::make_unique<tsr_plugin_event>();
    e->device = d.index;
    e->timing = (flags & TSR_EVENT_TIMING) != 0;
    e->native = event_create(d.index, e->timing);
    *out = e.release();
  });
}

void plugin_event_destroy(tsr_plugin_context* context, int32_t, tsr_plugin_event* event) noexcept {
  if (context == nullptr || event == nullptr) return;
  event_destroy(event->device, event->native);
  delete event;
}

tsr_status* plugin_event_record(tsr_plugin_context* context, int32_t device,
                                tsr_plugin_event* event, tsr_plugin_stream* stream) noexcept {
  return sdk::context_entry(context, flavour_name(), "event_record", [&](tsr_plugin_context& ctx) {
    sdk::check_not_null(flavour_name(), "event_record", "event", event);
    Device& d = device_at(ctx, device, "event_record");
    event_record(d.index, event->native, stream_or_default(d, stream).native);
  });
}

tsr_status* plugin_stream_wait_event(tsr_plugin_context* context, int32_t device,
                                     tsr_plugin_stream* stream, tsr_plugin_event* event) noexcept {
  return sdk::context_entry(
      context, flavour_name(), "stream_wait_event", [&](tsr_plugin_context& ctx) {
        sdk::check_not_null(flavour_name(), "stream_wait_event", "event", event);
        Device& d = device_at(ctx, device, "stream_wait_event");
        stream_wait_event(d.index, stream_or_default(d, stream).native, event->native);
      });
}

tsr_status* plugin_event_query(tsr_plugin_context* context, int32_t, tsr_plugin_event* event,
                               bool* out_done) noexcept {
  return sdk::context_entry(context, flavour_name(), "event_query", [&](tsr_plugin_context&) {
    sdk::check_not_null(flavour_name(), "event_query", "event", event);
    sdk::check_not_null(flavour_name(), "event_query", "out_done", out_done);
    *out_done = event_query(event->device, event->native);
  });
}

tsr_status* plugin_event_synchronize(tsr_plugin_context* context, int32_t,
                                     tsr_plugin_event* event) noexcept {
  return sdk::context_entry(context, flavour_name(), "event_synchronize", [&](tsr_plugin_context&) {
    sdk::check_not_null(flavour_name(), "event_synchronize", "event", event);
    event_synchronize(event->device, event->native);
  });
}

tsr_status* plugin_event_elapsed_ms(tsr_plugin_context* context, int32_t, tsr_plugin_event* start,
                                    tsr_plugin_event* end, double* out_ms) noexcept {
  return sdk::context_entry(context, flavour_name(), "event_elapsed_ms", [&](tsr_plugin_context&) {
    sdk::check_not_null(flavour_name(), "event_elapsed_ms", "start", start);
    sdk::check_not_null(flavour_name(), "event_elapsed_ms", "end", end);
    sdk::check_not_null(flavour_name(), "event_elapsed_ms", "out_ms", out_ms);
    if (!start->timing || !end->timing)
      sdk::throw_status(TSR_FAILED_PRECONDITION,
                        "%s plugin event_elapsed_ms: both events need TSR_EVENT_TIMING at "
                        "creation",
                        flavour_name());
    *out_ms = event_elapsed_ms(start->device, start->native, end->native);
  });
}

// ---- copies ----

tsr_status* plugin_copy_h2d(tsr_plugin_context* context, int32_t device, tsr_plugin_stream* stream,
                            const void* src, tsr_plugin_buffer dst, uint64_t dst_offset,
                            uint64_t nbytes) noexcept {
  return sdk::context_entry(
      context, flavour_name(), "copy_host_to_device", [&](tsr_plugin_context& ctx) {
        Device& d = device_at(ctx, device, "copy_host_to_device");
        if (nbytes == 0) return;
        sdk::check_not_null(flavour_name(), "copy_host_to_device", "src", src);
        copy_async(d.index, base_of(dst, dst_offset, nbytes, "copy_host_to_device"), src, nbytes,
                   CopyKind::kHostToDevice, stream_or_default(d, stream).native);
      });
}

tsr_status* plugin_copy_d2h(tsr_plugin_context* context, int32_t device, tsr_plugin_stream* stream,
                            tsr_plugin_buffer src, uint64_t src_offset, void* dst,
                            uint64_t nbytes) noexcept {
  return sdk::context_entry(
      context, flavour_name(), "copy_device_to_host", [&](tsr_plugin_context& ctx) {
        Device& d = device_at(ctx, device, "copy_device_to_host");
        if (nbytes == 0) return;
        sdk::check_not_null(flavour_name(), "copy_device_to_host", "dst", dst);
        copy_async(d.index, dst, base_of(src, src_offset, nbytes, "copy_device_to_host"), nbytes,
                   CopyKind::kDeviceToHost, stream_or_default(d, stream).native);
      });
}

tsr_status* plugin_copy_d2d(tsr_plugin_context* context, int32_t device, tsr_plugin_stream* stream,
                            tsr_plugin_buffer src, uint64_t src_offset, tsr_plugin_buffer dst,
                            uint64_t dst_offset, uint64_t nbytes) noexcept {
  return sdk::context_entry(
      context, flavour_name(), "copy_device_to_device", [&](tsr_plugin_context& ctx) {
        Device& d = device_at(ctx, device, "copy_device_to_device");
        if (nbytes == 0) return;
        copy_async(d.index, base_of(dst, dst_offset, nbytes, "copy_device_to_device"),
                   base_of(src, src_offset, nbytes, "copy_device_to_device"), nbytes,
                   CopyKind::kDeviceToDevice, stream_or_default(d, stream).native);
      });
}

// Plugin ABI 1.2: between two devices of this plugin; peer access where the
// runtime has it (cudaMemcpyPeerAsync stages through the host otherwise).
tsr_status* plugin_copy_peer(tsr_plugin_context* context, int32_t dst_device,
                             tsr_plugin_stream* stream, tsr_plugin_buffer dst, uint64_t dst_offset,
                             int32_t src_device, tsr_plugin_buffer src, uint64_t src_offset,
                             uint64_t nbytes) noexcept {
  return sdk::context_entry(context, flavour_name(), "copy_peer", [&](tsr_plugin_context& ctx) {
    Device& d = device_at(ctx, dst_device, "copy_peer");
    Device& s = device_at(ctx, src_device, "copy_peer");
    if (nbytes == 0) return;
    copy_peer_async(d.index, base_of(dst, dst_offset, nbytes, "copy_peer"), s.index,
                    base_of(src, src_offset, nbytes, "copy_peer"), nbytes,
                    stream_or_default(d, stream).native);
  });
}

tsr_status* plugin_set_option(tsr_plugin_context* context, const char* key,
                              const char* value) noexcept {
  return sdk::context_entry(context, flavour_name(), "set_option", [&](tsr_plugin_context& ctx) {
    sdk::check_not_null(flavour_name(), "set_option", "key", key);
    sdk::check_not_null(flavour_name(), "set_option", "value", value);
    if (std::strcmp(key, "allow_tf32") == 0) {
      ctx.allow_tf32.store(sdk::bool_option(flavour_name(), key, value));
      return;
    }
    sdk::throw_unknown_option(flavour_name(), key, "'allow_tf32'");
  });
}

tsr_plugin_api make_table() {
  tsr_plugin_api t = sdk::plugin_table(flavour_name(), "0.1.0", flavour_name());
  t.init = plugin_init;
  t.shutdown = plugin_shutdown;
  t.device_count = plugin_device_count;
  t.device_properties = plugin_device_properties;
  t.alloc = plugin_alloc;
  t.free = plugin_free;
  t.memory_info = plugin_memory_info;
  t.host_alloc_pinned = plugin_host_alloc_pinned;
  t.host_free_pinned = plugin_host_free_pinned;
  t.stream_create = plugin_stream_create;
  t.stream_destroy = plugin_stream_destroy;
  t.stream_synchronize = plugin_stream_synchronize;
  t.stream_query = plugin_stream_query;
  t.event_create = plugin_event_create;
  t.event_destroy = plugin_event_destroy;
  t.event_record = plugin_event_record;
  t.stream_wait_event = plugin_stream_wait_event;
  t.event_query = plugin_event_query;
  t.event_synchronize = plugin_event_synchronize;
  t.event_elapsed_ms = plugin_event_elapsed_ms;
  t.copy_host_to_device = plugin_copy_h2d;
  t.copy_device_to_host = plugin_copy_d2h;
  t.copy_device_to_device = plugin_copy_d2d;
  t.set_option = plugin_set_option;
  t.copy_peer = plugin_copy_peer;
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
