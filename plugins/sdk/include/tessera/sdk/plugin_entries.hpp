// tessera/sdk/plugin_entries.hpp - a plugin's non-kernel entries written as
// plain C++, and the tsr_plugin_api slots filled from them.
//
// A plugin describes its entries as the static members of one struct; each
// member is optional and takes the plugin's context by reference, returns its
// result instead of writing an out-pointer, and throws sdk::status_error (or
// anything) on failure:
//
//   struct acme_entries {
//     static const char* name() noexcept { return "acme"; }
//     static std::unique_ptr<tsr_plugin_context> init(const tsr_host_api& host);
//     static tsr_plugin_device_properties device_properties(tsr_plugin_context&, int32_t device);
//     ...
//   };
//   tsr_plugin_api make_table() noexcept {
//     tsr_plugin_api t = sdk::plugin_table("acme", "0.1.0", "acme");
//     sdk::install_entries<acme_entries>(t);
//     t.kernels = ...;
//     return t;
//   }
//
// install_entries<Impl>(t) sets each slot whose member Impl has (one overload
// each, with the signature listed below) to a noexcept trampoline that
//   - rejects a NULL context (INVALID_ARGUMENT "<plugin> plugin <entry>: the
//     context is NULL"), NULL out-pointers and NULL required inputs
//     ("<plugin> plugin <entry>: <argument> is NULL"), naming the argument as
//     plugin.h does;
//   - clears every out-pointer, runs the member under guard (status.hpp), and
//     writes the result only when it returned;
//   - for the void slots (shutdown, free, *_destroy, host_free_pinned), which
//     cannot report, ignores a NULL context or object and calls the member,
//     which must be noexcept.
// Slots Impl lacks stay as they were (NULL in a fresh plugin_table()). Copies
// and options pass their arguments through: what a NULL source or value means
// depends on the byte count or the option, so the member checks those.
//
// The members (Ctx = tsr_plugin_context, defined by the plugin with a
// `const tsr_host_api* host` member; "device" is the caller's index, which the
// member checks, e.g. with check_device_index):
//   const char* name() noexcept                                  plugin name for messages
//   std::unique_ptr<Ctx> init(const tsr_host_api& host)           also fills shutdown
//   void shutdown(Ctx&) noexcept                                  before the context is deleted
//   int32_t device_count(Ctx&)
//   tsr_plugin_device_properties device_properties(Ctx&, int32_t device)
//                                  (written with write_device_properties: older hosts' sizes)
//   tsr_plugin_buffer alloc(Ctx&, int32_t device, size_t nbytes)
//   void free(Ctx&, int32_t device, tsr_plugin_buffer) noexcept   (never a NULL handle)
//   memory_numbers memory_info(Ctx&, int32_t device)
//   void* host_alloc_pinned(Ctx&, size_t nbytes)
//   void host_free_pinned(Ctx&, void* ptr) noexcept
//   std::unique_ptr<tsr_plugin_stream> stream_create(Ctx&, int32_t device)  (or a raw
//                                  pointer, for init and event_create too)
//   void stream_destroy(Ctx&, int32_t device, tsr_plugin_stream*) noexcept
//   void stream_synchronize(Ctx&, int32_t device, tsr_plugin_stream*)  (NULL: default)
//   bool stream_query(Ctx&, int32_t device, tsr_plugin_stream*)
//   std::unique_ptr<tsr_plugin_event> event_create(Ctx&, int32_t device, uint32_t flags)
//   void event_destroy(Ctx&, int32_t device, tsr_plugin_event*) noexcept
//   void event_record(Ctx&, int32_t device, tsr_plugin_event&, tsr_plugin_stream*)
//   void stream_wait_event(Ctx&, int32_t device, tsr_plugin_stream*, tsr_plugin_event&)
//   bool event_query(Ctx&, int32_t device, tsr_plugin_event&)
//   void event_synchronize(Ctx&, int32_t device, tsr_plugin_event&)
//   double event_elapsed_ms(Ctx&, int32_t device, tsr_plugin_event& start, tsr_plugin_event& end)
//   void copy_host_to_device / copy_device_to_host / copy_device_to_device /
//        copy_peer(Ctx&, ...the slot's other arguments)
//   void set_option(Ctx&, const char* key, const char* value)    (key non-NULL; value as given)
#ifndef TESSERA_SDK_PLUGIN_ENTRIES_HPP_
#define TESSERA_SDK_PLUGIN_ENTRIES_HPP_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "tessera/plugin.h"
#include "tessera/sdk/plugin_table.hpp"
#include "tessera/sdk/status.hpp"

namespace tessera::sdk {

// What memory_info returns: free and total bytes of the device.
struct memory_numbers {
  uint64_t free = 0;
  uint64_t total = 0;
};

namespace detail {

// What a member that creates an object returns: the object, owned by a
// unique_ptr or (for a type the plugin keeps incomplete) as a raw pointer.
template <class T>
T* owned(T* p) noexcept {
  return p;
}
template <class T, class D>
T* owned(std::unique_ptr<T, D>&& p) noexcept {
  return p.release();
}

// The trampolines of plugin `Impl` (see the top of the file).
template <class Impl>
struct entries {
  using Ctx = tsr_plugin_context;

  template <class F>
  static tsr_status* run(Ctx* context, const char* entry, F&& f) noexcept {
    return context_entry(context, Impl::name(), entry, static_cast<F&&>(f));
  }
  static void not_null(const char* entry, const char* what, const void* pointer) {
    check_not_null(Impl::name(), entry, what, pointer);
  }

  // ---- lifecycle ----

  static tsr_status* init(const tsr_host_api* host, Ctx** out_context) noexcept {
    if (host == nullptr) host = query_host();
    if (host == nullptr) return nullptr;  // cannot happen after a query: nothing to report with
    return guard(host, [&] {
      not_null("init", "out_context", out_context);
      *out_context = nullptr;
      *out_context = owned(Impl::init(*host));
    });
  }
  static void shutdown(Ctx* context) noexcept {
    if (context == nullptr) return;
    if constexpr (requires { &Impl::shutdown; }) Impl::shutdown(*context);
    delete context;
  }

  // ---- devices ----

  static tsr_status* device_count(Ctx* context, int32_t* out_count) noexcept {
    return run(context, "device_count", [&](Ctx& ctx) {
      not_null("device_count", "out_count", out_count);
      *out_count = 0;
      *out_count = Impl::device_count(ctx);
    });
  }
  static tsr_status* device_properties(Ctx* context, int32_t device,
                                       tsr_plugin_device_properties* out) noexcept {
    return run(context, "device_properties", [&](Ctx& ctx) {
      not_null("device_properties", "out_properties", out);
      write_device_properties(Impl::device_properties(ctx, device), out);
    });
  }

  // ---- memory ----

  static tsr_status* alloc(Ctx* context, int32_t device, size_t nbytes,
                           tsr_plugin_buffer* out) noexcept {
    return run(context, "alloc", [&](Ctx& ctx) {
      not_null("alloc", "out_buffer", out);
      *out = tsr_plugin_buffer{nullptr, nullptr};
      *out = Impl::alloc(ctx, device, nbytes);
    });
  }
  static void free(Ctx* context, int32_t device, tsr_plugin_buffer buffer) noexcept {
    if (context == nullptr || buffer.handle == nullptr) return;
    Impl::free(*context, device, buffer);
  }
  static tsr_status* memory_info(Ctx* context, int32_t device, uint64_t* out_free,
                                 uint64_t* out_total) noexcept {
    return run(context, "memory_info", [&](Ctx& ctx) {
      not_null("memory_info", "out_free", out_free);
      not_null("memory_info", "out_total", out_total);
      *out_free = 0;
      *out_total = 0;
      const memory_numbers m = Impl::memory_info(ctx, device);
      *out_free = m.free;
      *out_total = m.total;
    });
  }
  static tsr_status* host_alloc_pinned(Ctx* context, size_t nbytes, void** out_ptr) noexcept {
    return run(context, "host_alloc_pinned", [&](Ctx& ctx) {
      not_null("host_alloc_pinned", "out_ptr", out_ptr);
      *out_ptr = nullptr;
      *out_ptr = Impl::host_alloc_pinned(ctx, nbytes);
    });
  }
  static void host_free_pinned(Ctx* context, void* ptr) noexcept {
    if (context == nullptr || ptr == nullptr) return;
    Impl::host_free_pinned(*context, ptr);
  }

  // ---- streams and events ----

  static tsr_status* stream_create(Ctx* context, int32_t device, tsr_plugin_stream** out) noexcept {
    return run(context, "stream_create", [&](Ctx& ctx) {
      not_null("stream_create", "out_stream", out);
      *out = nullptr;
      *out = owned(Impl::stream_create(ctx, device));
    });
  }
  static void stream_destroy(Ctx* context, int32_t device, tsr_plugin_stream* stream) noexcept {
    if (context == nullptr || stream == nullptr) return;
    Impl::stream_destroy(*context, device, stream);
  }
  static tsr_status* stream_synchronize(Ctx* context, int32_t device,
                                        tsr_plugin_stream* stream) noexcept {
    return run(context, "stream_synchronize",
               [&](Ctx& ctx) { Impl::stream_synchronize(ctx, device, stream); });
  }
  static tsr_status* stream_query(Ctx* context, int32_t device, tsr_plugin_stream* stream,
                                  bool* out_done) noexcept {
    return run(context, "stream_query", [&](Ctx& ctx) {
      not_null("stream_query", "out_done", out_done);
      *out_done = false;
      *out_done = Impl::stream_query(ctx, device, stream);
    });
  }
  static tsr_status* event_create(Ctx* context, int32_t device, uint32_t flags,
                                  tsr_plugin_event** out) noexcept {
    return run(context, "event_create", [&](Ctx& ctx) {
      not_null("event_create", "out_event", out);
      *out = nullptr;
      *out = owned(Impl::event_create(ctx, device, flags));
    });
  }
  static void event_destroy(Ctx* context, int32_t device, tsr_plugin_event* event) noexcept {
    if (context == nullptr || event == nullptr) return;
    Impl::event_destroy(*context, device, event);
  }
  static tsr_status* event_record(Ctx* context, int32_t device, tsr_plugin_event* event,
                                  tsr_plugin_stream* stream) noexcept {
    return run(context, "event_record", [&](Ctx& ctx) {
      not_null("event_record", "event", event);
      Impl::event_record(ctx, device, *event, stream);
    });
  }
  static tsr_status* stream_wait_event(Ctx* context, int32_t device, tsr_plugin_stream* stream,
                                       tsr_plugin_event* event) noexcept {
    return run(context, "stream_wait_event", [&](Ctx& ctx) {
      not_null("stream_wait_event", "event", event);
      Impl::stream_wait_event(ctx, device, stream, *event);
    });
  }
  static tsr_status* event_query(Ctx* context, int32_t device, tsr_plugin_event* event,
                                 bool* out_done) noexcept {
    return run(context, "event_query", [&](Ctx& ctx) {
      not_null("event_query", "event", event);
      not_null("event_query", "out_done", out_done);
      *out_done = false;
      *out_done = Impl::event_query(ctx, device, *event);
    });
  }
  static tsr_status* event_synchronize(Ctx* context, int32_t device,
                                       tsr_plugin_event* event) noexcept {
    return run(context, "event_synchronize", [&](Ctx& ctx) {
      not_null("event_synchronize", "event", event);
      Impl::event_synchronize(ctx, device, *event);
    });
  }
  static tsr_status* event_elapsed_ms(Ctx* context, int32_t device, tsr_plugin_event* start,
                                      tsr_plugin_event* end, double* out_ms) noexcept {
    return run(context, "event_elapsed_ms", [&](Ctx& ctx) {
      not_null("event_elapsed_ms", "start", start);
      not_null("event_elapsed_ms", "end", end);
      not_null("event_elapsed_ms", "out_ms", out_ms);
      *out_ms = 0.0;
      *out_ms = Impl::event_elapsed_ms(ctx, device, *start, *end);
    });
  }

  // ---- copies and options ----

  static tsr_status* copy_host_to_device(Ctx* context, int32_t device, tsr_plugin_stream* stream,
                                         const void* src, tsr_plugin_buffer dst,
                                         uint64_t dst_offset, uint64_t nbytes) noexcept {
    return run(context, "copy_host_to_device", [&](Ctx& ctx) {
      Impl::copy_host_to_device(ctx, device, stream, src, dst, dst_offset, nbytes);
    });
  }
  static tsr_status* copy_device_to_host(Ctx* context, int32_t device, tsr_plugin_stream* stream,
                                         tsr_plugin_buffer src, uint64_t src_offset, void* dst,
                                         uint64_t nbytes) noexcept {
    return run(context, "copy_device_to_host", [&](Ctx& ctx) {
      Impl::copy_device_to_host(ctx, device, stream, src, src_offset, dst, nbytes);
    });
  }
  static tsr_status* copy_device_to_device(Ctx* context, int32_t device, tsr_plugin_stream* stream,
                                           tsr_plugin_buffer src, uint64_t src_offset,
                                           tsr_plugin_buffer dst, uint64_t dst_offset,
                                           uint64_t nbytes) noexcept {
    return run(context, "copy_device_to_device", [&](Ctx& ctx) {
      Impl::copy_device_to_device(ctx, device, stream, src, src_offset, dst, dst_offset, nbytes);
    });
  }
  static tsr_status* copy_peer(Ctx* context, int32_t dst_device, tsr_plugin_stream* stream,
                               tsr_plugin_buffer dst, uint64_t dst_offset, int32_t src_device,
                               tsr_plugin_buffer src, uint64_t src_offset,
                               uint64_t nbytes) noexcept {
    return run(context, "copy_peer", [&](Ctx& ctx) {
      Impl::copy_peer(ctx, dst_device, stream, dst, dst_offset, src_device, src, src_offset,
                      nbytes);
    });
  }
  static tsr_status* set_option(Ctx* context, const char* key, const char* value) noexcept {
    return run(context, "set_option", [&](Ctx& ctx) {
      not_null("set_option", "key", key);
      Impl::set_option(ctx, key, value);
    });
  }
};

}  // namespace detail

// Fills the slots of `t` that Impl has members for (see the top of the file).
// The kernel table, random_fill, collectives and op_defs are data or kernels,
// not entries: the plugin sets those itself.
template <class Impl>
void install_entries(tsr_plugin_api& t) noexcept {
  using E = detail::entries<Impl>;
  static_assert(
      requires { Impl::name(); }, "a plugin's entries need a static name()");
  if constexpr (requires { &Impl::init; }) {
    t.init = &E::init;
    t.shutdown = &E::shutdown;
  }
  if constexpr (requires { &Impl::device_count; }) t.device_count = &E::device_count;
  if constexpr (requires { &Impl::device_properties; }) t.device_properties = &E::device_properties;
  if constexpr (requires { &Impl::alloc; }) t.alloc = &E::alloc;
  if constexpr (requires { &Impl::free; }) t.free = &E::free;
  if constexpr (requires { &Impl::memory_info; }) t.memory_info = &E::memory_info;
  if constexpr (requires { &Impl::host_alloc_pinned; }) t.host_alloc_pinned = &E::host_alloc_pinned;
  if constexpr (requires { &Impl::host_free_pinned; }) t.host_free_pinned = &E::host_free_pinned;
  if constexpr (requires { &Impl::stream_create; }) t.stream_create = &E::stream_create;
  if constexpr (requires { &Impl::stream_destroy; }) t.stream_destroy = &E::stream_destroy;
  if constexpr (requires { &Impl::stream_synchronize; })
    t.stream_synchronize = &E::stream_synchronize;
  if constexpr (requires { &Impl::stream_query; }) t.stream_query = &E::stream_query;
  if constexpr (requires { &Impl::event_create; }) t.event_create = &E::event_create;
  if constexpr (requires { &Impl::event_destroy; }) t.event_destroy = &E::event_destroy;
  if constexpr (requires { &Impl::event_record; }) t.event_record = &E::event_record;
  if constexpr (requires { &Impl::stream_wait_event; }) t.stream_wait_event = &E::stream_wait_event;
  if constexpr (requires { &Impl::event_query; }) t.event_query = &E::event_query;
  if constexpr (requires { &Impl::event_synchronize; }) t.event_synchronize = &E::event_synchronize;
  if constexpr (requires { &Impl::event_elapsed_ms; }) t.event_elapsed_ms = &E::event_elapsed_ms;
  if constexpr (requires { &Impl::copy_host_to_device; })
    t.copy_host_to_device = &E::copy_host_to_device;
  if constexpr (requires { &Impl::copy_device_to_host; })
    t.copy_device_to_host = &E::copy_device_to_host;
  if constexpr (requires { &Impl::copy_device_to_device; })
    t.copy_device_to_device = &E::copy_device_to_device;
  if constexpr (requires { &Impl::copy_peer; }) t.copy_peer = &E::copy_peer;
  if constexpr (requires { &Impl::set_option; }) t.set_option = &E::set_option;
}

}  // namespace tessera::sdk

#endif  // TESSERA_SDK_PLUGIN_ENTRIES_HPP_
