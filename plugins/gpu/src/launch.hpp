// launch.hpp - running a kernel body over an index space, on the device or
// (host emulation) on the host.
//
// The shared kernels are written as functors with a TSR_HD call operator
// taking an int64_t work-item index; parallel_for(exec, n, f, name) runs
// f(i) for every i in [0, n):
//  - GPU flavours: a grid-stride loop of launch_config(n) blocks, indexed in
//    32 bits when n fits (GPUs divide 64-bit integers in software), with the
//    launch error checked;
//  - host emulation: a plain loop, in order.
// A functor must not assume any order between work items, nor that two of
// them run in one block. Kernels that need blocks (shared-memory tiles,
// block reductions) are device-only variants beside a functor fallback
// (Note [GPU plugin flavours], runtime.hpp).
//
// launch_config is host logic, unit-tested on the CPU (gpu_host_logic_test).
#pragma once

#include <algorithm>
#include <cstdint>

#include "hd.hpp"
#include "runtime.hpp"

namespace tessera::gpu {

// Where a kernel runs: the device, its properties and the native stream.
struct Exec {
  int device = 0;
  const DeviceInfo* info = nullptr;
  NativeStream stream = nullptr;
};

struct LaunchConfig {
  int64_t blocks = 0;   // 0 when there is no work
  int32_t threads = 0;  // per block
};

// Blocks of `threads` (a multiple of the warp size, <= the device's maximum)
// covering n items, capped at `waves` blocks per multiprocessor times the
// multiprocessor count (the grid-stride loop covers the rest: fewer, fuller
// blocks amortise their start) and at the device's grid limit.
inline LaunchConfig launch_config(int64_t n, const DeviceInfo& info, int32_t threads = 256,
                                  int32_t waves = 8) {
  LaunchConfig c;
  if (n <= 0) return c;
  const int32_t warp = std::max(info.warp_size, 1);
  threads = std::clamp(threads, warp, std::max(info.max_threads_per_block, warp));
  threads = threads / warp * warp;
  c.threads = threads;
  const int64_t needed = (n + threads - 1) / threads;
  const int64_t cap = std::max<int64_t>(1, int64_t{std::max(info.multiprocessors, 1)} * waves);
  c.blocks = std::min({needed, cap, std::max<int64_t>(info.max_grid_x, 1)});
  return c;
}

// The index type a grid-stride loop over n items needs: 32 bits while the
// last index plus one grid stride cannot overflow int32.
inline bool fits_int32(int64_t n, const LaunchConfig& c) {
  return n + c.blocks * int64_t{c.threads} <= int64_t{INT32_MAX};
}

#if TSR_DEVICE_COMPILER
template <class Index, class F>
__global__ void for_each_kernel(Index n, F f) {
  const Index stride = static_cast<Index>(gridDim.x) * static_cast<Index>(blockDim.x);
  for (Index i = static_cast<Index>(blockIdx.x) * static_cast<Index>(blockDim.x) +
                 static_cast<Index>(threadIdx.x);
       i < n; i += stride)
    f(static_cast<int64_t>(i));
}
#endif

template <class F>
void parallel_for(const Exec& exec, int64_t n, const F& f, const char* name) {
  if (n <= 0) return;
#if TSR_DEVICE_COMPILER
  const LaunchConfig c = launch_config(n, *exec.info);
#if defined(__HIPCC__)
  auto stream = static_cast<hipStream_t>(exec.stream);
#else
  auto stream = static_cast<cudaStream_t>(exec.stream);
#endif
  const dim3 grid(static_cast<unsigned>(c.blocks)), block(static_cast<unsigned>(c.threads));
  if (fits_int32(n, c))
    for_each_kernel<int32_t, F><<<grid, block, 0, stream>>>(static_cast<int32_t>(n), f);
  else
    for_each_kernel<int64_t, F><<<grid, block, 0, stream>>>(n, f);
  check_launch(name);
#else
  (void)exec;
  (void)name;
  for (int64_t i = 0; i < n; ++i) f(i);
#endif
}

}  // namespace tessera::gpu
