// device_info.hpp - what the CPU plugin reports about its one device, cpu:0.
//
// Gathered once at init from /proc/cpuinfo ("model name"), sysconf and the
// process's CPU affinity; read-only afterwards. memory_info is the SDK's
// host_device (current free memory at each call).
#ifndef TESSERA_PLUGINS_CPU_DEVICE_INFO_HPP_
#define TESSERA_PLUGINS_CPU_DEVICE_INFO_HPP_

#include <cstdint>
#include <string>

#include "tessera/plugin.h"

namespace tessera::cpu {

// Every allocation of the plugin is aligned to this many bytes.
inline constexpr uint32_t kAllocationAlignment = 64;

struct device_info {
  std::string name = "cpu";   // "AMD Ryzen 9 9950X 16-Core Processor", or "cpu"
  uint64_t total_memory = 0;  // bytes of physical memory; 0 if unknown
  int32_t compute_units = 1;  // processors this process may run on
  // Outputs of at least this many bytes are written with streaming stores
  // (isa.hpp, stream_output): the last-level cache's size from sysfs (else
  // sysconf), or 32 MiB where neither reports one.
  int64_t streaming_store_min_bytes = int64_t{32} << 20;

  // Reads the machine. Never throws (falls back to the defaults above) except
  // std::bad_alloc.
  static device_info detect();
};

// cpu:0's properties (the SDK writes the part an older host knows).
tsr_plugin_device_properties device_properties_of(const device_info& info) noexcept;

}  // namespace tessera::cpu

#endif  // TESSERA_PLUGINS_CPU_DEVICE_INFO_HPP_
