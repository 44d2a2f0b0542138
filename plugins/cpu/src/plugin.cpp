// plugin.cpp - the CPU plugin's entry point and its tsr_plugin_api table.
//
// tsr_plugin_query is the SDK's query() (plugin_table.hpp): it checks the
// host's plugin ABI major version (logging both versions and returning NULL on
// a mismatch) and returns a static table. Every entry runs under the SDK's
// guard: it validates its pointers, runs the implementation (exceptions become
// host statuses) and never lets anything cross the ABI. One device, cpu:0; NULL streams mean the
// default stream; all work is synchronous (see streams.hpp).
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "context.hpp"
#include "factory/random_fill.hpp"
#include "isa.hpp"
#include "kernels.hpp"
#include "memory.hpp"
#include "streams.hpp"
#include "tessera/plugin.h"
#include "tessera/sdk/plugin_table.hpp"
#include "tessera/sdk/status.hpp"

namespace tessera::cpu {
namespace {

// The SDK's entry guard and checks (plugin_table.hpp), for this plugin.
template <class F>
tsr_status* entry(tsr_plugin_context* context, const char* name, F&& f) noexcept {
  return sdk::context_entry(context, kPluginName, name, std::forward<F>(f));
}

void check_device(const char* name, int32_t device) {
  sdk::check_device_index(kPluginName, name, device, 1);
}

template <class T>
void check_out(const char* name, const char* what, T* out) {
  sdk::check_not_null(kPluginName, name, what, out);
}

// ---- lifecycle ----

tsr_status* plugin_init(const tsr_host_api* host, tsr_plugin_context** out_context) noexcept {
  if (host == nullptr) host = sdk::query_host();
  if (host == nullptr) return nullptr;  // cannot happen after a query; nothing to report with
  return sdk::guard(host, [&] {
    check_out("init", "out_context", out_context);
    auto context = std::make_unique<tsr_plugin_context>();
    context->host = host;
    context->device = device_info::detect();
    context->threads.store(std::max(1, omp_get_max_threads()));
    context->isa.store(static_cast<int>(detected_isa()));
    context->matmul = std::make_unique<onednn_matmul>();
    if (const char* wrong = std::getenv("TESSERA_CPU_TEST_WRONG_KERNEL")) {
      context->wrong_kernel = wrong;
      if (context->wrong_kernel.ends_with(":nan")) {
        context->wrong_kernel.resize(context->wrong_kernel.size() - 4);
        context->wrong_nan = true;
      }
      const std::string message = std::string("TESSERA_CPU_TEST_WRONG_KERNEL is set: kernel '") +
                                  wrong + "' returns wrong values (a test switch; unset it)";
      if (host->log != nullptr) host->log(TSR_LOG_WARNING, "cpu", message.c_str());
    }
    *out_context = context.release();
  });
}

void plugin_shutdown(tsr_plugin_context* context) noexcept { delete context; }

// ---- devices ----

tsr_status* plugin_device_count(tsr_plugin_context* context, int32_t* out_count) noexcept {
  return entry(context, "device_count", [&](tsr_plugin_context&) {
    check_out("device_count", "out_count", out_count);
    *out_count = 1;
  });
}

tsr_status* plugin_device_properties(tsr_plugin_context* context, int32_t device,
                                     tsr_plugin_device_properties* out_properties) noexcept {
  return entry(context, "device_properties", [&](tsr_plugin_context& ctx) {
    check_device("device_properties", device);
    check_out("device_properties", "out_properties", out_properties);
    fill_device_properties(ctx.device, out_properties);
  });
}

// ---- memory ----

tsr_status* plugin_alloc(tsr_plugin_context* context, int32_t device, size_t nbytes,
                         tsr_plugin_buffer* out_buffer) noexcept {
  return entry(context, "alloc", [&](tsr_plugin_context&) {
    check_device("alloc", device);
    check_out("alloc", "out_buffer", out_buffer);
    *out_buffer = allocate_buffer(nbytes);
  });
}

void plugin_free(tsr_plugin_context*, int32_t, tsr_plugin_buffer buffer) noexcept {
  free_buffer(buffer);
}

tsr_status* plugin_memory_info(tsr_plugin_context* context, int32_t device, uint64_t* out_free,
                               uint64_t* out_total) noexcept {
  return entry(context, "memory_info", [&](tsr_plugin_context&) {
    check_device("memory_info", device);
    check_out("memory_info", "out_free", out_free);
    check_out("memory_info", "out_total", out_total);
    const memory_snapshot memory = read_memory();
    *out_free = memory.free;
    *out_total = memory.total;
  });
}

// ---- streams and events ----

tsr_status* plugin_stream_create(tsr_plugin_context* context, int32_t device,
                                 tsr_plugin_stream** out_stream) noexcept {
  return entry(context, "stream_create", [&](tsr_plugin_context&) {
    check_device("stream_create", device);
    check_out("stream_create", "out_stream", out_stream);
    *out_stream = new tsr_plugin_stream{device};
  });
}

void plugin_stream_destroy(tsr_plugin_context*, int32_t, tsr_plugin_stream* stream) noexcept {
  delete stream;
}

tsr_status* plugin_stream_synchronize(tsr_plugin_context* context, int32_t device,
                                      tsr_plugin_stream*) noexcept {
  return entry(context, "stream_synchronize",
               [&](tsr_plugin_context&) { check_device("stream_synchronize", device); });
}

tsr_status* plugin_stream_query(tsr_plugin_context* context, int32_t device, tsr_plugin_stream*,
                                bool* out_done) noexcept {
  return entry(context, "stream_query", [&](tsr_plugin_context&) {
    check_device("stream_query", device);
    check_out("stream_query", "out_done", out_done);
    *out_done = true;
  });
}

tsr_status* plugin_event_create(tsr_plugin_context* context, int32_t device, uint32_t flags,
                                tsr_plugin_event** out_event) noexcept {
  return entry(context, "event_create", [&](tsr_plugin_context&) {
    check_device("event_create", device);
    check_out("event_create", "out_event", out_event);
    auto* event = new tsr_plugin_event;
    event->flags = flags;
    *out_event = event;
  });
}

void plugin_event_destroy(tsr_plugin_context*, int32_t, tsr_plugin_event* event) noexcept {
  delete event;
}

tsr_status* plugin_event_record(tsr_plugin_context* context, int32_t device,
                                tsr_plugin_event* event, tsr_plugin_stream*) noexcept {
  return entry(context, "event_record", [&](tsr_plugin_context&) {
    check_device("event_record", device);
    check_out("event_record", "event", event);
    record_event(*event);
  });
}

tsr_status* plugin_stream_wait_event(tsr_plugin_context* context, int32_t device,
                                     tsr_plugin_stream*, tsr_plugin_event* event) noexcept {
  return entry(context, "stream_wait_event", [&](tsr_plugin_context&) {
    check_device("stream_wait_event", device);
    check_out("stream_wait_event", "event", event);
  });
}

tsr_status* plugin_event_query(tsr_plugin_context* context, int32_t device, tsr_plugin_event* event,
                               bool* out_done) noexcept {
  return entry(context, "event_query", [&](tsr_plugin_context&) {
    check_device("event_query", device);
    check_out("event_query", "event", event);
    check_out("event_query", "out_done", out_done);
    *out_done = true;
  });
}

tsr_status* plugin_event_synchronize(tsr_plugin_context* context, int32_t device,
                                     tsr_plugin_event* event) noexcept {
  return entry(context, "event_synchronize", [&](tsr_plugin_context&) {
    check_device("event_synchronize", device);
    check_out("event_synchronize", "event", event);
  });
}

tsr_status* plugin_event_elapsed_ms(tsr_plugin_context* context, int32_t device,
                                    tsr_plugin_event* start, tsr_plugin_event* end,
                                    double* out_ms) noexcept {
  return entry(context, "event_elapsed_ms", [&](tsr_plugin_context&) {
    check_device("event_elapsed_ms", device);
    check_out("event_elapsed_ms", "start", start);
    check_out("event_elapsed_ms", "end", end);
    check_out("event_elapsed_ms", "out_ms", out_ms);
    *out_ms = elapsed_ms(*start, *end);
  });
}

// ---- copies ----

tsr_status* plugin_copy_host_to_device(tsr_plugin_context* context, int32_t device,
                                       tsr_plugin_stream*, const void* src, tsr_plugin_buffer dst,
                                       uint64_t dst_offset, uint64_t nbytes) noexcept {
  return entry(context, "copy_host_to_device", [&](tsr_plugin_context&) {
    check_device("copy_host_to_device", device);
    copy_bytes("copy_host_to_device", buffer_address(dst, dst_offset), src, nbytes);
  });
}

tsr_status* plugin_copy_device_to_host(tsr_plugin_context* context, int32_t device,
                                       tsr_plugin_stream*, tsr_plugin_buffer src,
                                       uint64_t src_offset, void* dst, uint64_t nbytes) noexcept {
  return entry(context, "copy_device_to_host", [&](tsr_plugin_context&) {
    check_device("copy_device_to_host", device);
    copy_bytes("copy_device_to_host", dst, buffer_address(src, src_offset), nbytes);
  });
}

tsr_status* plugin_copy_device_to_device(tsr_plugin_context* context, int32_t device,
                                         tsr_plugin_stream*, tsr_plugin_buffer src,
                                         uint64_t src_offset, tsr_plugin_buffer dst,
                                         uint64_t dst_offset, uint64_t nbytes) noexcept {
  return entry(context, "copy_device_to_device", [&](tsr_plugin_context&) {
    check_device("copy_device_to_device", device);
    copy_bytes("copy_device_to_device", buffer_address(dst, dst_offset),
               buffer_address(src, src_offset), nbytes);
  });
}

// ---- options ----

// "isa": "auto" (the widest bodies the processor runs), "avx512", "avx2" (at
// most that level; refused where the processor lacks it) or "baseline" (SSE2
// loops only); isa.hpp.
void set_isa_option(tsr_plugin_context& ctx, const char* text) {
  isa_level level = isa_level::baseline;
  switch (sdk::choice_option(kPluginName, "isa", text, {"auto", "avx512", "avx2", "baseline"})) {
    case 0:
      level = detected_isa();
      break;
    case 1:
      if (!cpu_has_avx512()) {
        sdk::throw_status(TSR_FAILED_PRECONDITION,
                          "cpu plugin option 'isa' = 'avx512': this processor (or OS) lacks one "
                          "of AVX-512 F, BW, DQ, VL; use 'auto', 'avx2' or 'baseline'");
      }
      level = isa_level::avx512;
      break;
    case 2:
      if (!cpu_has_avx2_fma()) {
        sdk::throw_status(TSR_FAILED_PRECONDITION,
                          "cpu plugin option 'isa' = 'avx2': this processor lacks AVX2 or FMA; "
                          "use 'auto' or 'baseline'");
      }
      level = isa_level::avx2;
      break;
    default:
      break;
  }
  ctx.isa.store(static_cast<int>(level));
}

tsr_status* plugin_set_option(tsr_plugin_context* context, const char* key,
                              const char* value) noexcept {
  return entry(context, "set_option", [&](tsr_plugin_context& ctx) {
    check_out("set_option", "key", key);
    const char* text = value != nullptr ? value : "";
    if (std::strcmp(key, "isa") == 0) {
      set_isa_option(ctx, text);
      return;
    }
    if (std::strcmp(key, "threads") != 0) {
      sdk::throw_unknown_option(kPluginName, key, "'threads' and 'isa'");
    }
    const int threads = static_cast<int>(sdk::int_option(kPluginName, "threads", text, 1, 4096));
    ctx.threads.store(threads);
    omp_set_num_threads(threads);
  });
}

tsr_plugin_api make_table() noexcept {
  tsr_plugin_api api = sdk::plugin_table(kPluginName, "0.1.0", "cpu");
  api.init = plugin_init;
  api.shutdown = plugin_shutdown;
  api.device_count = plugin_device_count;
  api.device_properties = plugin_device_properties;
  api.alloc = plugin_alloc;
  api.free = plugin_free;
  api.memory_info = plugin_memory_info;
  api.host_alloc_pinned = nullptr;  // host memory is already what the device reads
  api.host_free_pinned = nullptr;
  api.stream_create = plugin_stream_create;
  api.stream_destroy = plugin_stream_destroy;
  api.stream_synchronize = plugin_stream_synchronize;
  api.stream_query = plugin_stream_query;
  api.event_create = plugin_event_create;
  api.event_destroy = plugin_event_destroy;
  api.event_record = plugin_event_record;
  api.stream_wait_event = plugin_stream_wait_event;
  api.event_query = plugin_event_query;
  api.event_synchronize = plugin_event_synchronize;
  api.event_elapsed_ms = plugin_event_elapsed_ms;
  api.copy_host_to_device = plugin_copy_host_to_device;
  api.copy_device_to_host = plugin_copy_device_to_host;
  api.copy_device_to_device = plugin_copy_device_to_device;
  api.set_option = plugin_set_option;
  const auto kernels = kernel_entries();
  api.kernels = kernels.data();
  api.kernel_count = kernels.size();
  api.random_fill = random_fill;  // factory/random_fill.hpp (Note [Random mapping])
  api.collectives = nullptr;
  return api;
}

}  // namespace

}  // namespace tessera::cpu

extern "C" TSR_PLUGIN_EXPORT const tsr_plugin_api* tsr_plugin_query(
    const tsr_host_api* host) noexcept {
  return tessera::sdk::query(host, tessera::cpu::kPluginName, tessera::cpu::make_table);
}
