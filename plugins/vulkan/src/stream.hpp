// stream.hpp - streams (a queue's batched command buffers) and events
// (points on a stream's timeline semaphore).
//
// Note [Vulkan streams]
// ~~~~~~~~~~~~~~~~~~~~~
// A stream records work into one command buffer at a time and submits it at
// a sync point (synchronize, an event, a host copy, a wait on another stream)
// or when kBatchLimit commands are in it. Each submission signals the
// stream's timeline semaphore with the next value; completed submissions
// give their command buffers back to the pool and run their cleanups
// (staging buffers). Commands in a batch are separated by full memory
// barriers (compute and transfer, reads after writes and writes after
// reads), so in-stream order is program order. A wait on an event adds the
// event's (semaphore, value) to the stream's next submission: cross-stream
// order without blocking the host. A failed submission or wait makes the
// stream's error sticky: every later call on it reports it.
//
// Small ops may wait in the stream's batch before they are recorded (Note
// [Small-op batches], kernels.hpp): record() and flush() record the batch
// first, so it keeps its place in program order.
//
// An event is (semaphore, value) plus, when the queue has timestamps, a
// query written at the point of recording, so elapsed_ms is device time.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "device.hpp"
#include "kernels.hpp"

struct tsr_plugin_stream {
  static constexpr int kBatchLimit = 256;

  // Borrows `device`. Throws on Vulkan failure.
  explicit tsr_plugin_stream(tessera::vulkan::Device& device);
  ~tsr_plugin_stream();
  tsr_plugin_stream(const tsr_plugin_stream&) = delete;
  tsr_plugin_stream& operator=(const tsr_plugin_stream&) = delete;

  // The command buffer being recorded (begun on first use), after a barrier
  // that orders it behind everything recorded before. Call with mu held.
  VkCommandBuffer record();
  // Ends the batch: the next command starts a new command buffer. Call
  // with mu held.
  void command_done();
  // Runs `cleanup` once the work recorded so far has completed.
  void on_complete(std::function<void()> cleanup);
  // Submits the batch (if any); returns the timeline value that marks the
  // end of everything recorded so far. Call with mu held.
  uint64_t flush();
  // flush() and wait for the value; recycles completed submissions.
  void synchronize();
  // Waits until the stream reaches `value` (one flush() returned); recycles
  // completed submissions. Takes mu.
  void wait_value(uint64_t value);
  // Whether everything submitted so far has completed.
  bool query();
  // The next submission waits for `semaphore` to reach `value`.
  void wait_for(VkSemaphore semaphore, uint64_t value);
  // Throws the sticky error, if any.
  void check() const;

  tessera::vulkan::Device& device;
  std::mutex mu;
  VkSemaphore timeline = VK_NULL_HANDLE;
  // Where kernels' parameter blocks go (vkCmdUpdateBuffer, in stream order);
  // owned, from the device's allocator.
  tessera::vulkan::Allocation* params = nullptr;
  // Where device memory is host-visible (lavapipe, integrated GPUs):
  // parameter blocks are written by the host into successive 256-byte-aligned
  // slots of this ring instead, so a dispatch needs no vkCmdUpdateBuffer and
  // no transfer-to-compute barrier (on lavapipe each barrier drains the
  // device: the ring took a queued small op from ~45 to ~30 us). Owned.
  tessera::vulkan::Allocation* ring = nullptr;
  static constexpr uint64_t kRingBytes = uint64_t{1} << 20;
  // Small ops not yet recorded (Note [Small-op batches]); guarded by mu.
  tessera::vulkan::OpBatch batch;
  // Records `batch`, if any, and empties it; a failure is sticky (the
  // batch's ops had reported success). Call with mu held.
  void record_batch();
  // A ring slot of `nbytes` (<= 64 KiB) holding `data`; returns its offset in
  // the ring. When the ring is full, first waits for the work recorded so
  // far (everything that reads older slots). Call with mu held.
  uint64_t ring_slot(const void* data, uint64_t nbytes);

 private:
  struct Submission {
    VkCommandBuffer commands;
    uint64_t value;
    std::vector<std::function<void()>> cleanups;
  };
  void collect(uint64_t completed) noexcept;
  // synchronize() with mu held.
  void drain();
  // Waits for the timeline to reach `value` (0: nothing to wait for) and
  // recycles what completed; a failed wait is sticky. Call with mu held.
  void await(uint64_t value);
  [[noreturn]] void fail(std::string message);

  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkCommandBuffer recording_ = VK_NULL_HANDLE;
  int commands_ = 0;
  uint64_t submitted_ = 0;
  std::vector<VkCommandBuffer> spare_;
  std::deque<Submission> in_flight_;
  std::vector<std::function<void()>> pending_cleanups_;
  std::vector<std::pair<VkSemaphore, uint64_t>> waits_;
  std::string error_;       // sticky
  uint64_t ring_used_ = 0;  // bytes of `ring` handed out since it last drained
};

struct tsr_plugin_event {
  tessera::vulkan::Device* device = nullptr;
  VkSemaphore semaphore = VK_NULL_HANDLE;  // the recording stream's timeline
  uint64_t value = 0;
  bool recorded = false;
  VkQueryPool queries = VK_NULL_HANDLE;  // one timestamp, when timing
};

namespace tessera::vulkan {
// Waits for `s`, then copies `nbytes` at byte `offset` of `a` to `out`:
// straight from mapped memory (Device::reads_directly), or through a
// staging copy.
void read_back(Device& d, tsr_plugin_stream& s, const Allocation& a, uint64_t offset, void* out,
               size_t nbytes);
// Waits for `s`, then copies `nbytes` from `in` to byte `offset` of `a`:
// straight into mapped memory, or through the staging buffers (Note
// [Pipelined staging], staging.hpp). Complete on return.
void write_to(Device& d, tsr_plugin_stream& s, Allocation& a, uint64_t offset, const void* in,
              size_t nbytes);
// Records `event` at the current end of `stream` (flushes it).
void record_event(tsr_plugin_event& event, tsr_plugin_stream& stream);
bool event_done(const tsr_plugin_event& event);
void event_wait(const tsr_plugin_event& event);
double elapsed_ms(const tsr_plugin_event& start, const tsr_plugin_event& end);
}  // namespace tessera::vulkan
