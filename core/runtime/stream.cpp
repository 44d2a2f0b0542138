#include "runtime/stream.h"

#include <utility>
#include <vector>

#include "runtime/device.h"
#include "runtime/runtime.h"
#include "util/error.h"

namespace tsr {

void Stream::throw_sticky() const {
  auto* self = const_cast<Stream*>(this);
  std::lock_guard<std::mutex> lock(self->mu);
  fail(TSR_FAILED_PRECONDITION,
       "stream on {} failed earlier and stays failed: {}: {}; destroy the stream (or, for a "
       "default stream, the runtime) to recover",
       device->label, tsr_status_code_name(sticky_code), sticky_message);
}

void Stream::fail_with(tsr_status* status, const char* what) {
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!failed.load(std::memory_order_relaxed)) {
      sticky_code = tsr_status_code_of(status);
      sticky_message = std::string(what) + ": " + tsr_status_message(status);
      failed.store(true, std::memory_order_release);
    }
  }
  tsr_status_code code = tsr_status_code_of(status);
  std::string msg = fmt::format("{} on {}: {}", what, device->label, tsr_status_message(status));
  tsr_status_free(status);
  throw Error(code, msg);
}

void Stream::synchronize() {
  check_sticky();
  if (device->is_meta) return;
  const tsr_plugin_api& api = device->plugin->api;
  tsr_status* st =
      api.stream_synchronize(device->plugin->context, device->plugin_index, plugin_stream);
  if (st) fail_with(st, "asynchronous work");
}

void Stream::release() noexcept {
  if (refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  DeviceRecord* dev = device;
  if (!is_default) {
    std::lock_guard<std::mutex> lock(dev->streams_mu);
    dev->streams.erase(this);
  }
  if (!dev->is_meta) {
    const tsr_plugin_api& api = dev->plugin->api;
    tsr_status_free(api.stream_synchronize(dev->plugin->context, dev->plugin_index, plugin_stream));
    dev->allocator->forget_stream(this);
    if (plugin_stream) api.stream_destroy(dev->plugin->context, dev->plugin_index, plugin_stream);
  }
  magic = 0;
  bool counted = !is_default;
  delete this;
  if (counted) {
    if (dev->plugin) dev->plugin->live_objects.fetch_sub(1, std::memory_order_release);
    dev->runtime->release();
  }
}

namespace {
// See Note [Streams]: per-thread current streams; empty for threads that never set
// one, so the common case is one branch.
struct CurrentStreams {
  std::vector<std::pair<DeviceRecord*, Stream*>> entries;
  ~CurrentStreams() {
    for (auto& e : entries) e.second->release();
  }
};
CurrentStreams& current_streams() {
  thread_local CurrentStreams streams;
  return streams;
}
// Set once a thread makes any stream current: until then every lookup is the
// default stream, read without touching the (guarded) thread_local above.
thread_local bool t_has_current __attribute__((tls_model("initial-exec"))) = false;
}  // namespace

Stream* current_stream(DeviceRecord* device) {
  if (!t_has_current) return device->default_stream;
  CurrentStreams& cs = current_streams();
  for (auto& e : cs.entries)
    if (e.first == device) return e.second;
  return device->default_stream;
}

void set_current_stream(Stream* stream) {
  // Entries hold a reference to a non-default stream (which keeps its runtime
  // alive). Making the default stream current removes the entry instead: a
  // default stream dies with its runtime, so no thread may keep a pointer to it.
  CurrentStreams& cs = current_streams();
  t_has_current = true;
  for (size_t i = 0; i < cs.entries.size(); ++i) {
    if (cs.entries[i].first != stream->device) continue;
    Stream* old = cs.entries[i].second;
    if (stream->is_default) {
      cs.entries.erase(cs.entries.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      stream->retain();
      cs.entries[i].second = stream;
    }
    old->release();
    return;
  }
  if (stream->is_default) return;
  stream->retain();
  cs.entries.emplace_back(stream->device, stream);
}

Stream* stream_from_handle(const tsr_stream* handle, const char* arg) {
  if (handle == nullptr)
    fail(TSR_INVALID_ARGUMENT, "argument '{}' is NULL; pass a stream handle", arg);
  auto* s = reinterpret_cast<Stream*>(const_cast<tsr_stream*>(handle));
  if (s->magic != Stream::kAlive)
    fail(TSR_INVALID_ARGUMENT, "argument '{}' is not a live stream handle", arg);
  return s;
}

Event* event_from_handle(const tsr_event* handle, const char* arg) {
  if (handle == nullptr)
    fail(TSR_INVALID_ARGUMENT, "argument '{}' is NULL; pass an event handle", arg);
  auto* e = reinterpret_cast<Event*>(const_cast<tsr_event*>(handle));
  if (e->magic != Event::kAlive)
    fail(TSR_INVALID_ARGUMENT, "argument '{}' is not a live event handle", arg);
  return e;
}

}  // namespace tsr
