// runtime_gpu.cpp - runtime.hpp over the CUDA or the HIP runtime (one text,
// GPU_SYM spelling, vendor.hpp).
#include <cstdio>
#include <string>

#include "runtime.hpp"
#include "tessera/sdk/status.hpp"
#include "vendor.hpp"

namespace tessera::gpu {
namespace {

using vendor::Error;

// "cudaErrorX: the runtime's sentence", or the name alone where the runtime
// has no sentence (HIP's strings repeat the name).
std::string describe(Error e) {
  const std::string name = GPU_SYM(GetErrorName)(e);
  const std::string text = GPU_SYM(GetErrorString)(e);
  return text.empty() || text == name ? name : name + ": " + text;
}

tsr_status_code code_of(Error e) {
  if (e == vendor::kNoDevice || e == vendor::kInsufficientDriver) return TSR_UNAVAILABLE;
  if (e == vendor::kOutOfMemory) return TSR_RESOURCE_EXHAUSTED;
  return TSR_INTERNAL;
}

void check(Error e, const char* call) {
  if (e == GPU_SYM(Success)) return;
  (void)GPU_SYM(GetLastError)();  // clear a non-sticky error
  sdk::throw_status(code_of(e), "%s: %s", call, describe(e).c_str());
}

void set_device(int device) { check(GPU_SYM(SetDevice)(device), "SetDevice"); }

vendor::Stream as_stream(NativeStream s) { return static_cast<vendor::Stream>(s); }
vendor::Event as_event(NativeEvent e) { return static_cast<vendor::Event>(e); }

}  // namespace

Flavour flavour() noexcept {
#if defined(TSR_GPU_HIP)
  return Flavour::kHip;
#else
  return Flavour::kCuda;
#endif
}
const char* flavour_name() noexcept { return flavour() == Flavour::kHip ? "hip" : "cuda"; }

int probe_devices() {
  int count = 0;  // left unwritten on cudaErrorInsufficientDriver
  const Error e = GPU_SYM(GetDeviceCount)(&count);
  if (e != GPU_SYM(Success)) {
    (void)GPU_SYM(GetLastError)();
    sdk::throw_status(code_of(e) == TSR_INTERNAL ? TSR_UNAVAILABLE : code_of(e),
                      "%s runtime reports no usable device: %s", flavour_name(),
                      describe(e).c_str());
  }
  if (count <= 0) sdk::throw_status(TSR_UNAVAILABLE, "%s runtime: no device found", flavour_name());
  return count;
}

DeviceInfo device_info(int device) {
  vendor::DeviceProp p{};
  check(GPU_SYM(GetDeviceProperties)(&p, device), "GetDeviceProperties");
  DeviceInfo info;
  info.name = p.name;
  info.major = p.major;
  info.minor = p.minor;
#if defined(TSR_GPU_HIP)
  info.arch = p.gcnArchName;
  if (const auto colon = info.arch.find(':'); colon != std::string::npos) info.arch.resize(colon);
  info.has_bf16 = info.arch >= "gfx90a";
#else
  info.arch = "sm_" + std::to_string(p.major) + std::to_string(p.minor);
  info.has_bf16 = p.major >= 8;
#endif
  info.total_memory = p.totalGlobalMem;
  info.multiprocessors = p.multiProcessorCount;
  info.max_threads_per_block = p.maxThreadsPerBlock;
  info.warp_size = p.warpSize;
  info.max_grid_x = p.maxGridSize[0];
  info.shared_memory_per_block = p.sharedMemPerBlock;
  info.can_map_host_memory = p.canMapHostMemory != 0;
  return info;
}

std::string runtime_version() {
  int rt = 0, drv = 0;
  (void)GPU_SYM(RuntimeGetVersion)(&rt);
  (void)GPU_SYM(DriverGetVersion)(&drv);
  (void)GPU_SYM(GetLastError)();
  char text[96];
  std::snprintf(text, sizeof text, "%s runtime %d.%d, driver %d.%d", flavour_name(), rt / 1000,
                (rt % 1000) / 10, drv / 1000, (drv % 1000) / 10);
  return text;
}

void* allocate(int device, size_t nbytes) {
  if (nbytes == 0) return nullptr;
  set_device(device);
  void* p = nullptr;
  const Error e = GPU_SYM(Malloc)(&p, nbytes);
  if (e == vendor::kOutOfMemory) {
    (void)GPU_SYM(GetLastError)();
    return nullptr;
  }
  check(e, "Malloc");
  return p;
}

void release(int device, void* ptr) noexcept {
  if (ptr == nullptr) return;
  if (GPU_SYM(SetDevice)(device) == GPU_SYM(Success)) (void)GPU_SYM(Free)(ptr);
  (void)GPU_SYM(GetLastError)();
}

void memory_info(int device, uint64_t* free_bytes, uint64_t* total_bytes) {
  set_device(device);
  size_t f = 0, t = 0;
  check(GPU_SYM(MemGetInfo)(&f, &t), "MemGetInfo");
  *free_bytes = f;
  *total_bytes = t;
}

void* allocate_pinned(size_t nbytes) {
  void* p = nullptr;
#if defined(TSR_GPU_HIP)
  const Error e = hipHostMalloc(&p, nbytes, hipHostMallocDefault);
#else
  const Error e = cudaMallocHost(&p, nbytes);
#endif
  if (e == vendor::kOutOfMemory) {
    (void)GPU_SYM(GetLastError)();
    return nullptr;
  }
  check(e, "MallocHost");
  return p;
}

void release_pinned(void* ptr) noexcept {
  if (ptr == nullptr) return;
#if defined(TSR_GPU_HIP)
  (void)hipHostFree(ptr);
#else
  (void)cudaFreeHost(ptr);
#endif
  (void)GPU_SYM(GetLastError)();
}

NativeStream stream_create(int device) {
  set_device(device);
  vendor::Stream s = nullptr;
  check(GPU_SYM(StreamCreateWithFlags)(&s, GPU_SYM(StreamNonBlocking)), "StreamCreateWithFlags");
  return s;
}

void stream_destroy(int device, NativeStream stream) noexcept {
  if (GPU_SYM(SetDevice)(device) == GPU_SYM(Success))
    (void)GPU_SYM(StreamDestroy)(as_stream(stream));
  (void)GPU_SYM(GetLastError)();
}

void stream_synchronize(int device, NativeStream stream) {
  set_device(device);
  check(GPU_SYM(StreamSynchronize)(as_stream(stream)), "StreamSynchronize");
}

bool stream_query(int device, NativeStream stream) {
  set_device(device);
  const Error e = GPU_SYM(StreamQuery)(as_stream(stream));
  if (e == GPU_SYM(ErrorNotReady)) {
    (void)GPU_SYM(GetLastError)();
    return false;
  }
  check(e, "StreamQuery");
  return true;
}

NativeEvent event_create(int device, bool timing) {
  set_device(device);
  vendor::Event e = nullptr;
  check(GPU_SYM(EventCreateWithFlags)(&e,
                                      timing ? GPU_SYM(EventDefault) : GPU_SYM(EventDisableTiming)),
        "EventCreateWithFlags");
  return e;
}

void event_destroy(int device, NativeEvent event) noexcept {
  if (GPU_SYM(SetDevice)(device) == GPU_SYM(Success)) (void)GPU_SYM(EventDestroy)(as_event(event));
  (void)GPU_SYM(GetLastError)();
}

void event_record(int device, NativeEvent event, NativeStream stream) {
  set_device(device);
  check(GPU_SYM(EventRecord)(as_event(event), as_stream(stream)), "EventRecord");
}

void stream_wait_event(int device, NativeStream stream, NativeEvent event) {
  set_device(device);
  check(GPU_SYM(StreamWaitEvent)(as_stream(stream), as_event(event), 0), "StreamWaitEvent");
}

bool event_query(int device, NativeEvent event) {
  set_device(device);
  const Error e = GPU_SYM(EventQuery)(as_event(event));
  if (e == GPU_SYM(ErrorNotReady)) {
    (void)GPU_SYM(GetLastError)();
    return false;
  }
  check(e, "EventQuery");
  return true;
}

void event_synchronize(int device, NativeEvent event) {
  set_device(device);
  check(GPU_SYM(EventSynchronize)(as_event(event)), "EventSynchronize");
}

double event_elapsed_ms(int device, NativeEvent start, NativeEvent end) {
  set_device(device);
  float ms = 0;
  check(GPU_SYM(EventElapsedTime)(&ms, as_event(start), as_event(end)), "EventElapsedTime");
  return ms;
}

void copy_async(int device, void* dst, const void* src, size_t nbytes, CopyKind kind,
                NativeStream stream) {
  if (nbytes == 0) return;
  set_device(device);
  const auto k = kind == CopyKind::kHostToDevice   ? GPU_SYM(MemcpyHostToDevice)
                 : kind == CopyKind::kDeviceToHost ? GPU_SYM(MemcpyDeviceToHost)
                                                   : GPU_SYM(MemcpyDeviceToDevice);
  check(GPU_SYM(MemcpyAsync)(dst, src, nbytes, k, as_stream(stream)), "MemcpyAsync");
}

bool can_access_peer(int device, int peer) {
  int yes = 0;
  if (GPU_SYM(DeviceCanAccessPeer)(&yes, device, peer) != GPU_SYM(Success)) {
    (void)GPU_SYM(GetLastError)();
    return false;
  }
  return yes != 0;
}

void copy_peer_async(int dst_device, void* dst, int src_device, const void* src, size_t nbytes,
                     NativeStream stream) {
  if (nbytes == 0) return;
  set_device(dst_device);
  check(GPU_SYM(MemcpyPeerAsync)(dst, dst_device, src, src_device, nbytes, as_stream(stream)),
        "MemcpyPeerAsync");
}

void memset_async(int device, void* dst, int value, size_t nbytes, NativeStream stream) {
  if (nbytes == 0) return;
  set_device(device);
  check(GPU_SYM(MemsetAsync)(dst, value, nbytes, as_stream(stream)), "MemsetAsync");
}

void check_launch(const char* what) {
  const Error e = GPU_SYM(GetLastError)();
  if (e != GPU_SYM(Success))
    sdk::throw_status(code_of(e) == TSR_UNAVAILABLE ? TSR_INTERNAL : code_of(e), "launching %s: %s",
                      what, describe(e).c_str());
}

}  // namespace tessera::gpu
