// runtime_host.cpp - runtime.hpp for the host emulation (Note [GPU plugin
// flavours]): two devices (as a two-GPU machine, so copies between devices
// of one plugin - copy_peer - run somewhere), memory from the C heap, work
// done at the call (every stream is complete when a call returns), events as
// timestamps.
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>

#include "runtime.hpp"
#include "tessera/sdk/status.hpp"

namespace tessera::gpu {
namespace {

constexpr size_t kAlignment = 256;  // what cudaMalloc guarantees

struct HostEvent {
  std::chrono::steady_clock::time_point when{};
};

int g_stream_tag = 0;  // streams are distinct non-null pointers into nothing

}  // namespace

Flavour flavour() noexcept { return Flavour::kHost; }
const char* flavour_name() noexcept { return "gpuemu"; }

int probe_devices() { return 2; }

DeviceInfo device_info(int /*device*/) {
  DeviceInfo info;
  info.name = "Tessera GPU-kernel emulation (host)";
  info.arch = "host";
  info.total_memory = 0;
  info.multiprocessors = 1;
  info.max_threads_per_block = 256;
  info.warp_size = 1;
  info.can_map_host_memory = true;
  return info;
}

std::string runtime_version() { return "host emulation"; }

void* allocate(int /*device*/, size_t nbytes) {
  if (nbytes == 0) return nullptr;
  const size_t rounded = (nbytes + kAlignment - 1) / kAlignment * kAlignment;
  return std::aligned_alloc(kAlignment, rounded);
}
void release(int /*device*/, void* ptr) noexcept { std::free(ptr); }

void memory_info(int /*device*/, uint64_t* free_bytes, uint64_t* total_bytes) {
  *free_bytes = 0;
  *total_bytes = 0;
}

void* allocate_pinned(size_t nbytes) { return allocate(0, nbytes == 0 ? 1 : nbytes); }
void release_pinned(void* ptr) noexcept { std::free(ptr); }

NativeStream stream_create(int /*device*/) { return &g_stream_tag; }
void stream_destroy(int /*device*/, NativeStream /*stream*/) noexcept {}
void stream_synchronize(int /*device*/, NativeStream /*stream*/) {}
bool stream_query(int /*device*/, NativeStream /*stream*/) { return true; }

NativeEvent event_create(int /*device*/, bool /*timing*/) {
  auto* e = new (std::nothrow) HostEvent;
  if (e == nullptr) sdk::throw_status(TSR_RESOURCE_EXHAUSTED, "gpuemu: no memory for an event");
  return e;
}
void event_destroy(int /*device*/, NativeEvent event) noexcept {
  delete static_cast<HostEvent*>(event);
}
void event_record(int /*device*/, NativeEvent event, NativeStream /*stream*/) {
  static_cast<HostEvent*>(event)->when = std::chrono::steady_clock::now();
}
void stream_wait_event(int /*device*/, NativeStream /*stream*/, NativeEvent /*event*/) {}
bool event_query(int /*device*/, NativeEvent /*event*/) { return true; }
void event_synchronize(int /*device*/, NativeEvent /*event*/) {}
double event_elapsed_ms(int /*device*/, NativeEvent start, NativeEvent end) {
  const auto d = static_cast<HostEvent*>(end)->when - static_cast<HostEvent*>(start)->when;
  return std::chrono::duration<double, std::milli>(d).count();
}

void copy_async(int /*device*/, void* dst, const void* src, size_t nbytes, CopyKind /*kind*/,
                NativeStream /*stream*/) {
  if (nbytes != 0) std::memmove(dst, src, nbytes);
}
bool can_access_peer(int /*device*/, int /*peer*/) { return true; }
void copy_peer_async(int /*dst_device*/, void* dst, int /*src_device*/, const void* src,
                     size_t nbytes, NativeStream /*stream*/) {
  if (nbytes != 0) std::memmove(dst, src, nbytes);
}
void memset_async(int /*device*/, void* dst, int value, size_t nbytes, NativeStream /*stream*/) {
  if (nbytes != 0) std::memset(dst, value, nbytes);
}
void check_launch(const char* /*what*/) {}

}  // namespace tessera::gpu
