// index_util.hpp - what gather_scatter.cu and sort.cu share: an Indexer built
// from explicit sizes and strides, and the device-side bounds flag of gather
// and _scatter_.
//
// The bounds flag is one uint64 in scratch memory, set to all ones in stream
// order before the launch; a work item that meets an index outside
// [0, size) skips the access and lowers the flag to its position (atomicMin
// on the device; a plain min in the emulation, which runs items serially).
// After the launch the host reads the flag back, and when it was lowered,
// reads the index at that position and throws OUT_OF_RANGE with the CPU
// plugin's message. That is one synchronous read-back per call.
#pragma once

#include <cstddef>
#include <cstdint>

#include "indexer.hpp"
#include "kernel_util.hpp"
#include "tessera/sdk/strided.hpp"

namespace tessera::gpu {

using BadFlag = unsigned long long;  // atomicMin's 64-bit type on CUDA and HIP
inline constexpr BadFlag kNoBadIndex = ~BadFlag{0};

// Lowers *flag to `position` (device: atomically).
TSR_HD inline void record_bad_index(BadFlag* flag, int64_t position) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  atomicMin(flag, static_cast<BadFlag>(position));
#else
  if (static_cast<BadFlag>(position) < *flag) *flag = static_cast<BadFlag>(position);
#endif
}

TSR_HD inline bool index_in_range(int64_t index, int64_t size) {
  return static_cast<uint64_t>(index) < static_cast<uint64_t>(size);
}

// A flag in the call's scratch memory, reset in stream order.
inline BadFlag* new_bad_flag(const Exec& exec, const tsr_kernel_call& call) {
  auto* flag = static_cast<BadFlag*>(scratch(call, sizeof(BadFlag)));
  memset_async(exec.device, flag, 0xff, sizeof(BadFlag), exec.stream);
  return flag;
}

[[noreturn]] inline void throw_index_out_of_bounds(int64_t index, int64_t dim, int64_t size) {
  sdk::throw_status(
      TSR_OUT_OF_RANGE, "index %lld is out of bounds for dimension %lld with size %lld",
      static_cast<long long>(index), static_cast<long long>(dim), static_cast<long long>(size));
}

// Waits for the launch and throws when the flag was lowered. The position is
// a linear index over `ndim` dims of `sizes` (row-major); the bad value is
// read from `index` (int64, element strides `strides`) at that position.
inline void check_bad_flag(const Exec& exec, const BadFlag* flag, const char* index_data, int ndim,
                           const int64_t* sizes, const int64_t* strides, int64_t dim,
                           int64_t size) {
  BadFlag position = kNoBadIndex;
  read_back(exec, &position, flag, sizeof position);
  if (position == kNoBadIndex) return;
  auto rest = static_cast<int64_t>(position);
  int64_t offset = 0;
  for (int d = ndim - 1; d >= 0; --d) {
    offset += (rest % sizes[d]) * strides[d];
    rest /= sizes[d];
  }
  int64_t value = 0;
  read_back(exec, &value, index_data + offset * static_cast<int64_t>(sizeof(int64_t)),
            sizeof value);
  throw_index_out_of_bounds(value, dim, size);
}

}  // namespace tessera::gpu
