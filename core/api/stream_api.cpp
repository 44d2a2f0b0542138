// tessera.h: streams and events (Note [Streams] in runtime/stream.h).
#include <memory>
#include <optional>

#include "api/guard.h"
#include "runtime/runtime.h"
#include "runtime/stream.h"
#include "tessera/tessera.h"

using namespace tsr;

namespace {
DeviceRecord* real_device(tsr_runtime* runtime, tsr_device device) {
  DeviceRecord* d = runtime_from_handle(runtime, "runtime")->device(device, "device");
  return d;
}
void check(DeviceRecord* d, tsr_status* st, const char* what) {
  throw_if_error(st, fmt::format("{} on {}", what, d->label));
}
}  // namespace

extern "C" {

TSR_API tsr_status* tsr_stream_create(tsr_runtime* runtime, tsr_device device,
                                      tsr_stream** out_stream) {
  return api_guard([&] {
    DeviceRecord* d = real_device(runtime, device);
    require_out(out_stream, "out_stream");
    std::optional<PluginEntry> entry;
    if (!d->is_meta) entry.emplace(d->plugin, d->plugin->live_objects, "stream", d->label);
    auto s = std::make_unique<Stream>();
    s->device = d;
    if (!d->is_meta)
      check(d, d->plugin->api.stream_create(d->plugin->context, d->plugin_index, &s->plugin_stream),
            "stream_create");
    try {
      std::lock_guard<std::mutex> lock(d->streams_mu);
      d->streams.insert(s.get());
    } catch (...) {
      if (!d->is_meta)
        d->plugin->api.stream_destroy(d->plugin->context, d->plugin_index, s->plugin_stream);
      throw;
    }
    if (entry) entry->keep();
    d->runtime->retain();
    *out_stream = reinterpret_cast<tsr_stream*>(s.release());
  });
}

TSR_API void tsr_stream_release(tsr_stream* stream) {
  if (stream == nullptr) return;
  try {
    Stream* s = stream_from_handle(stream, "stream");
    if (!s->is_default) s->release();
  } catch (...) {
  }
}

TSR_API tsr_status* tsr_stream_default(tsr_runtime* runtime, tsr_device device,
                                       tsr_stream** out_stream) {
  return api_guard([&] {
    DeviceRecord* d = real_device(runtime, device);
    require_out(out_stream, "out_stream");
    *out_stream = reinterpret_cast<tsr_stream*>(d->default_stream);
  });
}

TSR_API tsr_status* tsr_stream_current(tsr_runtime* runtime, tsr_device device,
                                       tsr_stream** out_stream) {
  return api_guard([&] {
    DeviceRecord* d = real_device(runtime, device);
    require_out(out_stream, "out_stream");
    *out_stream = reinterpret_cast<tsr_stream*>(current_stream(d));
  });
}

TSR_API tsr_status* tsr_stream_set_current(tsr_stream* stream) {
  return api_guard([&] { set_current_stream(stream_from_handle(stream, "stream")); });
}

TSR_API tsr_status* tsr_stream_get_device(const tsr_stream* stream, tsr_device* out_device) {
  return api_guard([&] {
    Stream* s = stream_from_handle(stream, "stream");
    require_out(out_device, "out_device");
    *out_device = s->device->device;
  });
}

TSR_API tsr_status* tsr_stream_synchronize(tsr_stream* stream) {
  return api_guard([&] { stream_from_handle(stream, "stream")->synchronize(); });
}

TSR_API tsr_status* tsr_stream_query(tsr_stream* stream, bool* out_done) {
  return api_guard([&] {
    Stream* s = stream_from_handle(stream, "stream");
    require_out(out_done, "out_done");
    s->check_sticky();
    DeviceRecord* d = s->device;
    if (d->is_meta) {
      *out_done = true;
      return;
    }
    bool done = false;
    tsr_status* st =
        d->plugin->api.stream_query(d->plugin->context, d->plugin_index, s->plugin_stream, &done);
    if (st) s->fail_with(st, "asynchronous work");
    *out_done = done;
  });
}

TSR_API tsr_status* tsr_stream_wait_event(tsr_stream* stream, tsr_event* event) {
  return api_guard([&] {
    Stream* s = stream_from_handle(stream, "stream");
    Event* e = event_from_handle(event, "event");
    if (s->device != e->device)
      fail(TSR_INVALID_ARGUMENT,
           "argument 'event' is on {} but 'stream' is on {}; cross-device waits are not "
           "supported: synchronize the event on the host instead",
           e->device->label, s->device->label);
    s->check_sticky();
    if (s->device->is_meta || !e->recorded) return;
    DeviceRecord* d = s->device;
    check(d,
          d->plugin->api.stream_wait_event(d->plugin->context, d->plugin_index, s->plugin_stream,
                                           e->plugin_event),
          "stream_wait_event");
  });
}

TSR_API tsr_status* tsr_event_create(tsr_runtime* runtime, tsr_device device, uint32_t flags,
                                     tsr_event** out_event) {
  return api_guard([&] {
    DeviceRecord* d = real_device(runtime, device);
    require_out(out_event, "out_event");
    if (flags & ~TSR_EVENT_TIMING)
      fail(TSR_INVALID_ARGUMENT,
           "argument 'flags' = {:#x} has unknown bits; only "
           "TSR_EVENT_TIMING is defined",
           flags);
    std::optional<PluginEntry> entry;
    if (!d->is_meta) entry.emplace(d->plugin, d->plugin->live_objects, "event", d->label);
    auto e = std::make_unique<Event>();
    e->device = d;
    e->flags = flags;
    if (!d->is_meta)
      check(
          d,
          d->plugin->api.event_create(d->plugin->context, d->plugin_index, flags, &e->plugin_event),
          "event_create");
    if (entry) entry->keep();
    d->runtime->retain();
    *out_event = reinterpret_cast<tsr_event*>(e.release());
  });
}

TSR_API void tsr_event_release(tsr_event* event) {
  if (event == nullptr) return;
  try {
    Event* e = event_from_handle(event, "event");
    DeviceRecord* d = e->device;
    e->magic = 0;
    if (!d->is_meta) {
      d->plugin->api.event_destroy(d->plugin->context, d->plugin_index, e->plugin_event);
      d->plugin->live_objects.fetch_sub(1, std::memory_order_release);
    }
    delete e;
    d->runtime->release();
  } catch (...) {
  }
}

TSR_API tsr_status* tsr_event_record(tsr_event* event, tsr_stream* stream) {
  return api_guard([&] {
    Event* e = event_from_handle(event, "event");
    Stream* s = stream_from_handle(stream, "stream");
    if (s->device != e->device)
      fail(TSR_INVALID_ARGUMENT, "argument 'event' is on {} but 'stream' is on {}",
           e->device->label, s->device->label);
    s->check_sticky();
    DeviceRecord* d = s->device;
    if (!d->is_meta)
      check(d,
            d->plugin->api.event_record(d->plugin->context, d->plugin_index, e->plugin_event,
                                        s->plugin_stream),
            "event_record");
    e->recorded = true;
  });
}

TSR_API tsr_status* tsr_event_query(tsr_event* event, bool* out_done) {
  return api_guard([&] {
    Event* e = event_from_handle(event, "event");
    require_out(out_done, "out_done");
    DeviceRecord* d = e->device;
    if (!e->recorded || d->is_meta) {
      *out_done = true;
      return;
    }
    bool done = false;
    check(d,
          d->plugin->api.event_query(d->plugin->context, d->plugin_index, e->plugin_event, &done),
          "event_query");
    *out_done = done;
  });
}

TSR_API tsr_status* tsr_event_synchronize(tsr_event* event) {
  return api_guard([&] {
    Event* e = event_from_handle(event, "event");
    DeviceRecord* d = e->device;
    if (!e->recorded || d->is_meta) return;
    check(d, d->plugin->api.event_synchronize(d->plugin->context, d->plugin_index, e->plugin_event),
          "event_synchronize");
  });
}

TSR_API tsr_status* tsr_event_elapsed_ms(tsr_event* start, tsr_event* end, double* out_ms) {
  return api_guard([&] {
    Event* a = event_from_handle(start, "start");
    Event* b = event_from_handle(end, "end");
    require_out(out_ms, "out_ms");
    if (a->device != b->device)
      fail(TSR_INVALID_ARGUMENT, "arguments 'start' ({}) and 'end' ({}) are on different devices",
           a->device->label, b->device->label);
    if (!(a->flags & TSR_EVENT_TIMING) || !(b->flags & TSR_EVENT_TIMING))
      fail(TSR_FAILED_PRECONDITION, "elapsed time needs both events created with TSR_EVENT_TIMING");
    if (!a->recorded || !b->recorded)
      fail(TSR_FAILED_PRECONDITION, "both events must be recorded before measuring elapsed time");
    DeviceRecord* d = a->device;
    if (d->is_meta) {
      *out_ms = 0;
      return;
    }
    double ms = 0;
    check(d,
          d->plugin->api.event_elapsed_ms(d->plugin->context, d->plugin_index, a->plugin_event,
                                          b->plugin_event, &ms),
          "event_elapsed_ms");
    *out_ms = ms;
  });
}

}  // extern "C"
