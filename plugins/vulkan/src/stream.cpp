// stream.cpp - see Note [Vulkan streams] in stream.hpp.
#include "stream.hpp"

#include <cstdint>
#include <cstring>
#include <exception>
#include <limits>
#include <string>
#include <utility>

#include "staging.hpp"
#include "tessera/sdk/status.hpp"
#include "vk_util.hpp"

using tessera::vulkan::vk_check;
using tessera::vulkan::vk_struct;

tsr_plugin_stream::tsr_plugin_stream(tessera::vulkan::Device& d) : device(d) {
  auto pi = vk_struct<VkCommandPoolCreateInfo>(VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
  pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pi.queueFamilyIndex = device.queue_family;
  vk_check(vkCreateCommandPool(device.device, &pi, nullptr, &pool_), "vkCreateCommandPool");
  try {
    // Note [Timeline semaphores outlive their streams] (device.hpp)
    timeline = device.take_timeline(&submitted_);
    params = device.allocator->allocate(4096);
    if (device.device_memory_mapped) ring = device.allocator->allocate(kRingBytes);
  } catch (...) {
    if (params) device.allocator->release(params);
    device.give_back_timeline(timeline);
    vkDestroyCommandPool(device.device, pool_, nullptr);
    throw;
  }
  std::lock_guard<std::mutex> lock(device.streams_mu);
  device.streams.push_back(this);
}

tsr_plugin_stream::~tsr_plugin_stream() {
  {
    std::lock_guard<std::mutex> lock(device.streams_mu);
    std::erase(device.streams, this);
  }
  try {
    synchronize();
  } catch (...) {
    // The device failed; tear down regardless.
    vkDeviceWaitIdle(device.device);
  }
  collect(std::numeric_limits<uint64_t>::max());
  for (auto& c : pending_cleanups_) c();
  if (recording_) spare_.push_back(recording_);
  if (!spare_.empty())
    vkFreeCommandBuffers(device.device, pool_, static_cast<uint32_t>(spare_.size()), spare_.data());
  vkDestroyCommandPool(device.device, pool_, nullptr);
  device.give_back_timeline(timeline);
  device.allocator->release(params);
  if (ring) device.allocator->release(ring);
}

void tsr_plugin_stream::fail(std::string message) {
  error_ = std::move(message);
  tessera::sdk::throw_status(TSR_INTERNAL, "%s", error_.c_str());
}

void tsr_plugin_stream::check() const {
  if (!error_.empty()) tessera::sdk::throw_status(TSR_INTERNAL, "%s", error_.c_str());
}

VkCommandBuffer tsr_plugin_stream::record() {
  check();
  record_batch();
  if (recording_ == VK_NULL_HANDLE) {
    if (!spare_.empty()) {
      recording_ = spare_.back();
      spare_.pop_back();
      vk_check(vkResetCommandBuffer(recording_, 0), "vkResetCommandBuffer");
    } else {
      auto ai =
          vk_struct<VkCommandBufferAllocateInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
      ai.commandPool = pool_;
      ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
      ai.commandBufferCount = 1;
      vk_check(vkAllocateCommandBuffers(device.device, &ai, &recording_),
               "vkAllocateCommandBuffers");
    }
    auto bi = vk_struct<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    vk_check(vkBeginCommandBuffer(recording_, &bi), "vkBeginCommandBuffer");
    commands_ = 0;
  }
  // Program order inside the stream: everything before is visible to what
  // follows (and across submissions the semaphore orders them).
  // (Draws too, where the device renders: Device::barrier_stages.)
  auto barrier = vk_struct<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
  barrier.srcAccessMask = device.barrier_access | VK_ACCESS_HOST_WRITE_BIT;
  barrier.dstAccessMask = device.barrier_access;
  vkCmdPipelineBarrier(recording_, device.barrier_stages | VK_PIPELINE_STAGE_HOST_BIT,
                       device.barrier_stages, 0, 1, &barrier, 0, nullptr, 0, nullptr);
  return recording_;
}

uint64_t tsr_plugin_stream::ring_slot(const void* data, uint64_t nbytes) {
  const uint64_t aligned = (nbytes + 255) / 256 * 256;
  if (ring_used_ + aligned > kRingBytes) {
    // Every slot handed out so far is read by work recorded so far.
    drain();
    ring_used_ = 0;
  }
  const uint64_t offset = ring_used_;
  std::memcpy(ring->host() + offset, data, nbytes);
  ring_used_ += aligned;
  return offset;
}

void tsr_plugin_stream::command_done() {
  if (++commands_ >= kBatchLimit) flush();
}

void tsr_plugin_stream::on_complete(std::function<void()> cleanup) {
  pending_cleanups_.push_back(std::move(cleanup));
}

void tsr_plugin_stream::record_batch() {
  if (batch.count == 0) return;
  // Emptied first: recording it calls record() (and may flush) again.
  tessera::vulkan::OpBatch b = std::exchange(batch, tessera::vulkan::OpBatch{});
  try {
    device.kernels->record_batch(*this, b);
  } catch (const std::exception& e) {
    if (!error_.empty()) throw;  // already sticky
    fail(std::string("vulkan plugin: recording a batch of ") + std::to_string(b.count) +
         " small ops failed (" + e.what() + "); the stream is unusable");
  }
}

uint64_t tsr_plugin_stream::flush() {
  check();
  record_batch();
  if (recording_ == VK_NULL_HANDLE && waits_.empty()) {
    if (!pending_cleanups_.empty()) {
      // Nothing new to submit: the cleanups wait for what was submitted.
      if (in_flight_.empty()) {
        for (auto& c : pending_cleanups_) c();
      } else {
        for (auto& c : pending_cleanups_) in_flight_.back().cleanups.push_back(std::move(c));
      }
      pending_cleanups_.clear();
    }
    return submitted_;
  }
  if (recording_ == VK_NULL_HANDLE) record();  // an empty batch carrying the waits
  // Make the batch's writes visible to the host (host copies map memory).
  auto barrier = vk_struct<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
  barrier.srcAccessMask =
      device.barrier_access & (VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT |
                               VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT);
  barrier.dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_HOST_WRITE_BIT;
  vkCmdPipelineBarrier(recording_, device.barrier_stages, VK_PIPELINE_STAGE_HOST_BIT, 0, 1,
                       &barrier, 0, nullptr, 0, nullptr);
  vk_check(vkEndCommandBuffer(recording_), "vkEndCommandBuffer");
  const uint64_t value = submitted_ + 1;
  std::vector<VkSemaphore> wait_semaphores;
  std::vector<uint64_t> wait_values;
  std::vector<VkPipelineStageFlags> wait_stages;
  for (const auto& [s, v] : waits_) {
    wait_semaphores.push_back(s);
    wait_values.push_back(v);
    wait_stages.push_back(VK_PIPELINE_STAGE_ALL_COMMANDS_BIT);
  }
  auto ti =
      vk_struct<VkTimelineSemaphoreSubmitInfo>(VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO);
  ti.waitSemaphoreValueCount = static_cast<uint32_t>(wait_values.size());
  ti.pWaitSemaphoreValues = wait_values.data();
  ti.signalSemaphoreValueCount = 1;
  ti.pSignalSemaphoreValues = &value;
  auto si = vk_struct<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO);
  si.pNext = &ti;
  si.waitSemaphoreCount = static_cast<uint32_t>(wait_semaphores.size());
  si.pWaitSemaphores = wait_semaphores.data();
  si.pWaitDstStageMask = wait_stages.data();
  si.commandBufferCount = 1;
  si.pCommandBuffers = &recording_;
  si.signalSemaphoreCount = 1;
  si.pSignalSemaphores = &timeline;
  VkResult r;
  {
    std::lock_guard<std::mutex> lock(device.queue_mu);
    r = vkQueueSubmit(device.queue, 1, &si, VK_NULL_HANDLE);
  }
  if (r != VK_SUCCESS)
    fail(std::string("vulkan plugin: vkQueueSubmit failed: ") + tessera::vulkan::vk_result_name(r) +
         "; the stream is unusable");
  in_flight_.push_back(Submission{recording_, value, std::move(pending_cleanups_)});
  pending_cleanups_.clear();
  recording_ = VK_NULL_HANDLE;
  waits_.clear();
  submitted_ = value;
  return value;
}

void tsr_plugin_stream::collect(uint64_t completed) noexcept {
  while (!in_flight_.empty() && in_flight_.front().value <= completed) {
    Submission& s = in_flight_.front();
    for (auto& c : s.cleanups) c();
    spare_.push_back(s.commands);
    in_flight_.pop_front();
  }
}

void tsr_plugin_stream::synchronize() {
  std::lock_guard<std::mutex> lock(mu);
  drain();
}

void tsr_plugin_stream::wait_value(uint64_t value) {
  std::lock_guard<std::mutex> lock(mu);
  check();
  await(value);
}

void tsr_plugin_stream::drain() { await(flush()); }

void tsr_plugin_stream::await(uint64_t value) {
  if (value == 0) return;
  auto wi = vk_struct<VkSemaphoreWaitInfo>(VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO);
  wi.semaphoreCount = 1;
  wi.pSemaphores = &timeline;
  wi.pValues = &value;
  const VkResult r = vkWaitSemaphores(device.device, &wi, UINT64_MAX);
  if (r != VK_SUCCESS)
    fail(std::string("vulkan plugin: waiting for the stream failed: ") +
         tessera::vulkan::vk_result_name(r));
  collect(value);
}

bool tsr_plugin_stream::query() {
  std::lock_guard<std::mutex> lock(mu);
  check();
  flush();  // a poll must not wait forever on work that was never submitted
  uint64_t done = 0;
  vk_check(vkGetSemaphoreCounterValue(device.device, timeline, &done),
           "vkGetSemaphoreCounterValue");
  collect(done);
  return done >= submitted_;
}

void tsr_plugin_stream::wait_for(VkSemaphore semaphore, uint64_t value) {
  std::lock_guard<std::mutex> lock(mu);
  if (semaphore == timeline) return;  // own earlier work: already in order
  flush();
  waits_.emplace_back(semaphore, value);
}

namespace tessera::vulkan {

void record_event(tsr_plugin_event& event, tsr_plugin_stream& stream) {
  std::lock_guard<std::mutex> lock(stream.mu);
  if (event.queries != VK_NULL_HANDLE) {
    VkCommandBuffer cb = stream.record();
    vkCmdResetQueryPool(cb, event.queries, 0, 1);
    vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, event.queries, 0);
  }
  event.semaphore = stream.timeline;
  event.value = stream.flush();
  event.recorded = true;
}

bool event_done(const tsr_plugin_event& event) {
  uint64_t done = 0;
  vk_check(vkGetSemaphoreCounterValue(event.device->device, event.semaphore, &done),
           "vkGetSemaphoreCounterValue");
  return done >= event.value;
}

void event_wait(const tsr_plugin_event& event) {
  if (event.value == 0) return;
  auto wi = vk_struct<VkSemaphoreWaitInfo>(VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO);
  wi.semaphoreCount = 1;
  wi.pSemaphores = &event.semaphore;
  wi.pValues = &event.value;
  vk_check(vkWaitSemaphores(event.device->device, &wi, UINT64_MAX), "vkWaitSemaphores");
}

double elapsed_ms(const tsr_plugin_event& start, const tsr_plugin_event& end) {
  if (start.queries == VK_NULL_HANDLE || end.queries == VK_NULL_HANDLE)
    sdk::throw_status(TSR_FAILED_PRECONDITION,
                      "vulkan plugin: events were created without timing (the queue has no "
                      "timestamps, or the flags asked for none)");
  event_wait(start);
  event_wait(end);
  uint64_t t0 = 0, t1 = 0;
  vk_check(vkGetQueryPoolResults(start.device->device, start.queries, 0, 1, sizeof t0, &t0,
                                 sizeof t0, VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
           "vkGetQueryPoolResults");
  vk_check(vkGetQueryPoolResults(end.device->device, end.queries, 0, 1, sizeof t1, &t1, sizeof t1,
                                 VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
           "vkGetQueryPoolResults");
  const double ticks = static_cast<double>(static_cast<int64_t>(t1 - t0));
  return ticks * static_cast<double>(start.device->properties.limits.timestampPeriod) / 1e6;
}

void read_back(Device& d, tsr_plugin_stream& s, const Allocation& a, uint64_t offset, void* out,
               size_t nbytes) {
  if (a.host() != nullptr && d.reads_directly(nbytes)) {
    s.synchronize();
    host_copy(*d.context, out, a.host() + offset, nbytes);
    return;
  }
  d.staging->copy(s, a, offset, out, nbytes, false);  // Note [Pipelined staging]
}

void write_to(Device& d, tsr_plugin_stream& s, Allocation& a, uint64_t offset, const void* in,
              size_t nbytes) {
  if (a.host() != nullptr) {
    s.synchronize();  // earlier work on the stream may still use `a`
    host_copy(*d.context, a.host() + offset, in, nbytes);
    return;
  }
  d.staging->copy(s, a, offset, const_cast<void*>(in), nbytes, true);
}

}  // namespace tessera::vulkan
