// staging.cpp - Note [Pipelined staging] (staging.hpp).
#include "staging.hpp"

#include <algorithm>
#include <cstddef>

#include "memory.hpp"
#include "stream.hpp"

namespace tessera::vulkan {

StagingPool::~StagingPool() {
  for (Device::Staging& s : slices_) device_.destroy_staging(s);
}

void StagingPool::copy(tsr_plugin_stream& s, const Allocation& a, uint64_t offset, void* host,
                       uint64_t nbytes, bool to_device) {
  if (nbytes == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  for (Device::Staging& slice : slices_)
    if (slice.buffer == VK_NULL_HANDLE) slice = device_.create_staging(kSliceBytes);
  auto* bytes = static_cast<std::byte*>(host);
  const uint64_t count = (nbytes + kSliceBytes - 1) / kSliceBytes;
  auto size_of = [&](uint64_t i) { return std::min(kSliceBytes, nbytes - i * kSliceBytes); };
  auto buffer_of = [&](uint64_t i) -> Device::Staging& { return slices_[i % 2]; };
  // Records the device's side of slice i and submits it; returns the
  // stream's timeline value that marks its end.
  auto enqueue = [&](uint64_t i) {
    std::lock_guard<std::mutex> stream_lock(s.mu);
    VkCommandBuffer cb = s.record();
    VkBufferCopy region{};
    region.size = size_of(i);
    if (to_device) {
      region.dstOffset = a.offset + offset + i * kSliceBytes;
      vkCmdCopyBuffer(cb, buffer_of(i).buffer, a.block->buffer, 1, &region);
    } else {
      region.srcOffset = a.offset + offset + i * kSliceBytes;
      vkCmdCopyBuffer(cb, a.block->buffer, buffer_of(i).buffer, 1, &region);
    }
    s.command_done();
    return s.flush();
  };
  uint64_t done_at[2] = {0, 0};  // per buffer: the value its last device copy ends at
  if (to_device) {
    for (uint64_t i = 0; i < count; ++i) {
      if (i >= 2) s.wait_value(done_at[i % 2]);  // the device has emptied it
      host_copy(*device_.context, buffer_of(i).mapped, bytes + i * kSliceBytes, size_of(i));
      done_at[i % 2] = enqueue(i);
    }
    s.wait_value(done_at[(count - 1) % 2]);  // the last; the timeline orders the rest
    return;
  }
  for (uint64_t i = 0; i < count; ++i) {
    done_at[i % 2] = enqueue(i);
    if (i >= 1) {  // slice i - 1 is in the other buffer once the device gets there
      s.wait_value(done_at[(i - 1) % 2]);
      host_copy(*device_.context, bytes + (i - 1) * kSliceBytes, buffer_of(i - 1).mapped,
                size_of(i - 1));
    }
  }
  s.wait_value(done_at[(count - 1) % 2]);
  host_copy(*device_.context, bytes + (count - 1) * kSliceBytes, buffer_of(count - 1).mapped,
            size_of(count - 1));
}

}  // namespace tessera::vulkan
