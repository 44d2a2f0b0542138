// streams.cpp - event timestamps for cpu:0 (streams need no code: see streams.hpp).
#include "streams.hpp"

#include <chrono>

#include "tessera/sdk/status.hpp"

namespace tessera::cpu {

void record_event(tsr_plugin_event& event) noexcept {
  const auto now = std::chrono::steady_clock::now().time_since_epoch();
  event.time_ns.store(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count(),
                      std::memory_order_relaxed);
  event.recorded.store(true, std::memory_order_release);
}

double elapsed_ms(const tsr_plugin_event& start, const tsr_plugin_event& end) {
  const bool start_recorded = start.recorded.load(std::memory_order_acquire);
  const bool end_recorded = end.recorded.load(std::memory_order_acquire);
  if (!start_recorded || !end_recorded) {
    sdk::throw_status(TSR_FAILED_PRECONDITION,
                      "cpu plugin event_elapsed_ms: the %s event was never recorded; record "
                      "both events on a stream first",
                      start_recorded ? "end" : "start");
  }
  const int64_t ns =
      end.time_ns.load(std::memory_order_relaxed) - start.time_ns.load(std::memory_order_relaxed);
  return static_cast<double>(ns) / 1e6;
}

}  // namespace tessera::cpu
