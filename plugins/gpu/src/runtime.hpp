// runtime.hpp - the GPU plugins' device layer: one interface over the CUDA
// runtime, the HIP runtime, and a host emulation (Note [GPU plugin flavours]).
//
// Note [GPU plugin flavours]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~
// One source tree (plugins/gpu) builds up to three plugins:
//  - libtessera-cuda (TSR_GPU_CUDA): kernels compiled by nvcc, the CUDA
//    runtime linked statically (never the driver library: it is opened by the
//    runtime at first use, so a machine without a driver loads the plugin and
//    gets UNAVAILABLE with the runtime's message); cuBLAS and cuDNN opened at
//    run time where present (vendor_libs.hpp);
//  - libtessera-hip (TSR_GPU_HIP): the same kernels compiled by hipcc;
//  - libtessera-gpuemu (TSR_GPU_HOST): the same kernels compiled by the host
//    C++ compiler and run on the host, one "thread" at a time, over host
//    memory. It is a test vehicle, not a product device: it lets CI run the
//    conformance suite through the shared kernel source on machines without
//    a GPU, so indexing, dtype handling and every functor are checked for
//    real. Device-only fast paths (shared-memory tiles, warp reductions,
//    vendor libraries) are compiled only for the GPU flavours and are checked
//    when a GPU is lent (scripts/gpu-check).
// This header names no vendor type: streams and events are opaque pointers
// (cudaStream_t / hipStream_t / the emulation's own), so it is included by
// host-compiled and device-compiled files alike.
//
// Errors: every function throws a tessera::sdk status (sdk::throw_status);
// the plugin's trampolines turn it into a tsr_status. A runtime error maps to
//  - UNAVAILABLE: no driver, no device, insufficient driver (the runtime's own
//    message kept);
//  - RESOURCE_EXHAUSTED: out of device or pinned memory;
//  - INTERNAL: anything else, "<call>: <error name>: <error string>".
// Thread safety: every function may be called from any thread; the device a
// call acts on is set for the calling thread inside the call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace tessera::gpu {

// Which flavour this build is (Note [GPU plugin flavours]).
enum class Flavour { kCuda, kHip, kHost };
Flavour flavour() noexcept;
const char* flavour_name() noexcept;  // "cuda", "hip", "gpuemu"

// What the kernels and the plugin need to know of a device. Filled once at
// init; immutable afterwards.
struct DeviceInfo {
  std::string name;
  std::string arch;  // "sm_90", "gfx90a", "host"
  int major = 0, minor = 0;
  uint64_t total_memory = 0;
  int multiprocessors = 1;  // SMs / CUs (host: 1)
  int max_threads_per_block = 1024;
  int warp_size = 32;  // 32 (NVIDIA), 64 (CDNA), host: 1
  int64_t max_grid_x = 2147483647;
  size_t shared_memory_per_block = 48 * 1024;
  bool can_map_host_memory = false;
  bool has_fp64 = true;
  bool has_bf16 = true;  // bfloat16 arithmetic in hardware (sm_80+, gfx90a+); else via float
};

// Throws UNAVAILABLE with the runtime's message when this machine has no
// usable device of this flavour; returns the device count (>= 1) otherwise.
int probe_devices();
DeviceInfo device_info(int device);
// The runtime's version, as "CUDA runtime 13.0 / driver 13.0" or the like.
std::string runtime_version();

// Device memory. allocate returns nullptr when the device is out of memory
// (the caller reports RESOURCE_EXHAUSTED with the sizes); 0 bytes gives
// nullptr too. release accepts nullptr.
void* allocate(int device, size_t nbytes);
void release(int device, void* ptr) noexcept;
void memory_info(int device, uint64_t* free_bytes, uint64_t* total_bytes);
// Page-locked host memory (nullptr when exhausted).
void* allocate_pinned(size_t nbytes);
void release_pinned(void* ptr) noexcept;

// Streams: non-blocking streams (never synchronizing with the legacy default
// stream). The plugin makes one per device as its default stream.
using NativeStream = void*;
NativeStream stream_create(int device);
void stream_destroy(int device, NativeStream stream) noexcept;
void stream_synchronize(int device, NativeStream stream);
bool stream_query(int device, NativeStream stream);

// Events; `timing`: elapsed_ms works on it (costs a little more to record).
using NativeEvent = void*;
NativeEvent event_create(int device, bool timing);
void event_destroy(int device, NativeEvent event) noexcept;
void event_record(int device, NativeEvent event, NativeStream stream);
void stream_wait_event(int device, NativeStream stream, NativeEvent event);
bool event_query(int device, NativeEvent event);
void event_synchronize(int device, NativeEvent event);
double event_elapsed_ms(int device, NativeEvent start, NativeEvent end);

// Asynchronous copies in stream order. Host memory that is not pinned is
// staged by the runtime (the call returns once the source is consumed).
enum class CopyKind { kHostToDevice, kDeviceToHost, kDeviceToDevice };
void copy_async(int device, void* dst, const void* src, size_t nbytes, CopyKind kind,
                NativeStream stream);
// Copies between two devices of this plugin (peer access where the runtime
// has it, else staged by the runtime).
void copy_peer_async(int dst_device, void* dst, int src_device, const void* src, size_t nbytes,
                     NativeStream stream);
bool can_access_peer(int device, int peer);
void memset_async(int device, void* dst, int value, size_t nbytes, NativeStream stream);

// After a kernel launch: throws INTERNAL naming `what` when the launch failed.
void check_launch(const char* what);

}  // namespace tessera::gpu
