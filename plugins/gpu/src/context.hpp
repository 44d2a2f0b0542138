// context.hpp - the GPU plugins' plugin-side objects: the context (one per
// loaded plugin), its devices, streams and events.
//
// Invariants: `devices` is filled at init and never resized; a Device's
// default stream lives as long as the context. Streams and events belong to
// one device (`device`), and a stream's native handle is never null. The
// option switches are atomics, read by kernels at launch.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime.hpp"
#include "tessera/plugin.h"

struct tsr_plugin_stream {
  int32_t device = 0;
  tessera::gpu::NativeStream native = nullptr;  // owned
};

struct tsr_plugin_event {
  int32_t device = 0;
  tessera::gpu::NativeEvent native = nullptr;  // owned
  bool timing = false;
};

namespace tessera::gpu {

struct Device {
  int32_t index = 0;
  DeviceInfo info;
  tsr_plugin_stream default_stream;  // owned; destroyed at shutdown
};

// Library handles a kernel family keeps per context (cuBLAS, cuDNN):
// created on first use, destroyed at shutdown. Owned by the context.
struct FamilyState {
  virtual ~FamilyState() = default;
};

}  // namespace tessera::gpu

struct tsr_plugin_context {
  const tsr_host_api* host = nullptr;
  std::vector<tessera::gpu::Device> devices;
  // set_option("allow_tf32", "1"): float32 matmul/conv may use TF32 tensor
  // cores (PyTorch's torch.backends.cuda.matmul.allow_tf32). Off by default.
  std::atomic<bool> allow_tf32{false};
  std::mutex state_mu;
  std::vector<std::unique_ptr<tessera::gpu::FamilyState>> states;  // guarded by state_mu
};

namespace tessera::gpu {
// The device at `index`, or throws INVALID_ARGUMENT naming the entry and index.
Device& device_at(tsr_plugin_context& context, int32_t index, const char* entry);
// `stream`, or the device's default stream when null.
inline tsr_plugin_stream& stream_or_default(Device& d, tsr_plugin_stream* stream) {
  return stream != nullptr ? *stream : d.default_stream;
}
}  // namespace tessera::gpu
