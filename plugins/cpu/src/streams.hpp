// streams.hpp - cpu:0's streams and events.
//
// The CPU plugin runs every kernel and copy synchronously on the calling
// thread, so by the time an entry returns its work is done: a stream is a tiny
// tag object, synchronize/query/wait are immediate, and an event records
// std::chrono::steady_clock::now() (all prior work on the stream has finished).
// event_query reports true whether or not the event was recorded (nothing is
// ever pending, matching tsr_event_query's "true if never recorded");
// elapsed_ms needs both events recorded. Record may race with query from
// another thread: the event's fields are atomic.
#ifndef TESSERA_PLUGINS_CPU_STREAMS_HPP_
#define TESSERA_PLUGINS_CPU_STREAMS_HPP_

#include <atomic>
#include <cstdint>

#include "tessera/plugin.h"

// Global namespace: opaque C structs of plugin.h.
struct tsr_plugin_stream {
  int32_t device = 0;
};

struct tsr_plugin_event {
  uint32_t flags = 0;                 // as given to event_create
  std::atomic<bool> recorded{false};  // set by the first record
  std::atomic<int64_t> time_ns{0};    // steady_clock at the last record
};

namespace tessera::cpu {

// Marks `event` as reached now.
void record_event(tsr_plugin_event& event) noexcept;

// Milliseconds from `start` to `end`; throws FAILED_PRECONDITION when either
// was never recorded.
double elapsed_ms(const tsr_plugin_event& start, const tsr_plugin_event& end);

}  // namespace tessera::cpu

#endif  // TESSERA_PLUGINS_CPU_STREAMS_HPP_
