// tessera/runtime.hpp - the default runtime, devices and plugin facts.
//
// The C++ frontend works on the process-wide default runtime
// (tsr_runtime_default): every factory creates tensors there and every cached
// operator handle belongs to it (see Note [Op handle cache] in boxed_call.hpp). The
// runtime is created, with the default plugin search, on first use and lives
// until process exit; its handle is looked up once.
//
// `Device` is a plain value (type, index), as tsr_device; parsing and
// formatting go through the runtime because plugin device types ("vulkan",
// "npu", ...) get their ids there.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/error.hpp"
#include "tessera/tessera.h"

namespace tessera {

// The process-wide default runtime. Borrowed; never destroy it. Throws
// tessera::Error when it cannot be created.
inline tsr_runtime* default_runtime() {
  static tsr_runtime* const runtime = [] {
    tsr_runtime* created = nullptr;
    check(tsr_runtime_default(&created));
    return created;
  }();
  return runtime;
}

enum class DeviceType : int32_t {
  CPU = TSR_DEVICE_CPU,
  Meta = TSR_DEVICE_META,
  Vulkan = TSR_DEVICE_VULKAN,
  CUDA = TSR_DEVICE_CUDA,
  HIP = TSR_DEVICE_HIP,
};

class Device {
 public:
  // cpu:0, like a zeroed tsr_device.
  constexpr Device() noexcept = default;
  constexpr Device(DeviceType type,
                   int32_t index = 0) noexcept  // NOLINT(google-explicit-constructor)
      : device_{static_cast<int32_t>(type), index} {}
  constexpr explicit Device(tsr_device device) noexcept : device_(device) {}
  // Parses "cpu", "cpu:0", "vulkan:1", "meta" in the default runtime. Throws
  // tessera::Error (NOT_FOUND) when the type is unknown or has no such index.
  Device(const char* text) {
    check(tsr_device_parse(default_runtime(), text, &device_));
  }                                                          // NOLINT
  Device(const std::string& text) : Device(text.c_str()) {}  // NOLINT

  // The type id: a DeviceType or a dynamic id of a plugin's device type.
  constexpr int32_t type_id() const noexcept { return device_.type; }
  constexpr DeviceType type() const noexcept { return static_cast<DeviceType>(device_.type); }
  constexpr int32_t index() const noexcept { return device_.index; }
  constexpr bool is_cpu() const noexcept { return device_.type == TSR_DEVICE_CPU; }
  constexpr bool is_meta() const noexcept { return device_.type == TSR_DEVICE_META; }
  constexpr tsr_device raw() const noexcept { return device_; }

  // "cpu:0".
  std::string str() const {
    char buffer[64];
    check(tsr_device_format(default_runtime(), device_, buffer, sizeof buffer));
    return buffer;
  }

  friend constexpr bool operator==(const Device& a, const Device& b) noexcept {
    return a.device_.type == b.device_.type && a.device_.index == b.device_.index;
  }

 private:
  tsr_device device_{TSR_DEVICE_CPU, 0};
};

inline constexpr Device kCPU{DeviceType::CPU, 0};
inline constexpr Device kMeta{DeviceType::Meta, 0};

inline std::ostream& operator<<(std::ostream& os, const Device& device) {
  return os << device.str();
}

// Every device of the default runtime, in its stable enumeration order (the
// built-in meta device last).
inline std::vector<Device> devices() {
  tsr_runtime* runtime = default_runtime();
  size_t count = 0;
  check(tsr_device_count(runtime, &count));
  std::vector<Device> result;
  result.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    tsr_device device{};
    check(tsr_device_at(runtime, i, &device));
    result.emplace_back(device);
  }
  return result;
}

// Whether `text` names a device of the default runtime ("vulkan:0", ...).
inline bool has_device(const char* text) {
  tsr_device device{};
  tsr_status* status = tsr_device_parse(default_runtime(), text, &device);
  const bool found = status == nullptr;
  tsr_status_free(status);
  return found;
}

inline tsr_device_properties properties(Device device) {
  tsr_device_properties props{};
  props.struct_size = sizeof props;
  check(tsr_device_get_properties(default_runtime(), device.raw(), &props));
  return props;
}

inline tsr_memory_stats memory_stats(Device device) {
  tsr_memory_stats stats{};
  stats.struct_size = sizeof stats;
  check(tsr_device_memory_stats(default_runtime(), device.raw(), &stats));
  return stats;
}

// Sets a plugin option of `device`'s plugin ("threads" = "2", ...).
inline void set_option(Device device, const std::string& key, const std::string& value) {
  check(tsr_device_set_option(default_runtime(), device.raw(), key.c_str(), value.c_str()));
}

// Threads the CPU plugin's kernels use (its "threads" option), as
// torch::set_num_threads: one OpenMP pool shared with oneDNN, so setting it
// never oversubscribes. Default: OpenMP's (OMP_NUM_THREADS or the core count).
inline void set_num_threads(int threads) {
  if (threads < 1)
    detail::throw_error(TSR_INVALID_ARGUMENT, "set_num_threads: argument 'threads' = " +
                                                  std::to_string(threads) + " must be at least 1");
  set_option(kCPU, "threads", std::to_string(threads));
}

// Waits for all work on every stream of `device`.
inline void synchronize(Device device = kCPU) {
  check(tsr_device_synchronize(default_runtime(), device.raw()));
}

// One entry of the default runtime's plugin load report, with owned strings.
struct LoadReportEntry {
  tsr_load_event event;
  tsr_status_code code;
  std::string path;
  std::string plugin;
  std::string detail;
};

inline std::vector<LoadReportEntry> load_report() {
  tsr_runtime* runtime = default_runtime();
  size_t count = 0;
  check(tsr_runtime_load_report_count(runtime, &count));
  std::vector<LoadReportEntry> entries;
  entries.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    tsr_load_report_entry entry{};
    entry.struct_size = sizeof entry;
    check(tsr_runtime_load_report_at(runtime, i, &entry));
    entries.push_back({static_cast<tsr_load_event>(entry.event),
                       static_cast<tsr_status_code>(entry.code), entry.path ? entry.path : "",
                       entry.plugin ? entry.plugin : "", entry.detail ? entry.detail : ""});
  }
  return entries;
}

}  // namespace tessera
