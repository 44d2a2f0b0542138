// staging.hpp - copies between host memory and device memory that the host
// does not read or write in place, through two reused staging buffers.
//
// Note [Pipelined staging]
// ~~~~~~~~~~~~~~~~~~~~~~~~
// Where tensor memory is not mapped (a discrete GPU without a host-visible
// device-local type), or is mapped but uncached for a read (Note [Uncached
// device memory], device.hpp), a host <-> device copy goes through
// host-visible staging memory. Each device keeps two staging buffers of
// kSliceBytes, made by the first staged copy and kept until the device goes
// (they used to be created and freed per 64 MiB chunk, each chunk waited
// for before the next began: 3.5 GB/s for a 64 MiB download on an H200).
// A copy moves kSliceBytes at a time, alternating buffers, so the two sides
// overlap:
//   - download: the device copies slice i into one buffer while the host
//     copies slice i - 1 out of the other;
//   - upload: the host fills one buffer while the device empties the other
//     (before refilling a buffer the host waits for the device's copy out of
//     it, two slices back).
// The copies are stream-ordered like any command (after the stream's
// earlier work) and the call returns when its bytes are in place on the
// far side, as a staged copy always has. One staged copy at a time per
// device (the buffers are shared); a concurrent one waits its turn.
#pragma once

#include <cstdint>
#include <mutex>

#include "device.hpp"

namespace tessera::vulkan {

class StagingPool {
 public:
  static constexpr uint64_t kSliceBytes = uint64_t{16} << 20;

  // Borrows `device`, which must outlive the pool.
  explicit StagingPool(Device& device) noexcept : device_(device) {}
  ~StagingPool();
  StagingPool(const StagingPool&) = delete;
  StagingPool& operator=(const StagingPool&) = delete;

  // Copies `nbytes` between `host` and bytes [offset, offset + nbytes) of
  // `a` on stream `s`: to the device when `to_device`, else to the host.
  // Returns when the bytes are in place. The caller holds neither s.mu nor
  // any other stream's lock. Throws on Vulkan failure (the stream's error
  // becomes sticky when a submission or wait fails).
  void copy(tsr_plugin_stream& s, const Allocation& a, uint64_t offset, void* host, uint64_t nbytes,
            bool to_device);

 private:
  Device& device_;
  std::mutex mu_;                   // one staged copy at a time
  Device::Staging slices_[2] = {};  // owned; made on first use, guarded by mu_
};

}  // namespace tessera::vulkan
