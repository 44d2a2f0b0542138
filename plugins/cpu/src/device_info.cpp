// device_info.cpp - detecting cpu:0's name, memory and processor count.
#include "device_info.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "tessera/sdk/dtype_traits.hpp"
#include "tessera/sdk/plugin_table.hpp"
#include "tessera/tessera.h"

namespace tessera::cpu {
namespace {

std::string read_model_name() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const size_t begin = line.find_first_not_of(" \t", colon + 1);
    if (begin == std::string::npos) continue;
    const size_t end = line.find_last_not_of(" \t\r");
    return line.substr(begin, end - begin + 1);
  }
  return "cpu";
}

int32_t available_processors() noexcept {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    const int count = CPU_COUNT(&set);
    if (count > 0) return count;
  }
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? static_cast<int32_t>(online) : 1;
}

uint64_t pages_to_bytes(long pages) noexcept {
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return 0;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size);
}

// The size of cpu0's highest-level cache as sysfs reports it ("32768K"), or
// 0 when unknown.
int64_t last_level_cache_bytes() {
  int64_t best = 0;
  int best_level = 0;
  for (int index = 0; index < 8; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index);
    std::ifstream level_file(dir + "/level"), size_file(dir + "/size");
    int level = 0;
    std::string size;
    if (!(level_file >> level) || !(size_file >> size) || size.empty()) continue;
    int64_t bytes = std::atoll(size.c_str());
    if (size.back() == 'K') bytes <<= 10;
    if (size.back() == 'M') bytes <<= 20;
    if (level > best_level && bytes > 0) {
      best_level = level;
      best = bytes;
    }
  }
  return best;
}

}  // namespace

device_info device_info::detect() {
  device_info info;
  info.name = read_model_name();
  info.total_memory = pages_to_bytes(sysconf(_SC_PHYS_PAGES));
  info.compute_units = available_processors();
  // The cache cpu0 shares with its neighbours, from sysfs; glibc's sysconf
  // can report a host-wide total on a VM (320 MiB for a 32 MiB L3 here).
  const int64_t llc = last_level_cache_bytes();
  if (llc > 0) {
    info.streaming_store_min_bytes = llc;
  } else {
    for (int level : {_SC_LEVEL3_CACHE_SIZE, _SC_LEVEL2_CACHE_SIZE}) {
      const long bytes = sysconf(level);
      if (bytes > 0) {
        info.streaming_store_min_bytes = bytes;
        break;
      }
    }
  }
  return info;
}

tsr_plugin_device_properties device_properties_of(const device_info& info) noexcept {
  auto props = tessera::sdk::zeroed_struct<tsr_plugin_device_properties>();
  const size_t name_length = std::min(info.name.size(), sizeof props.name - 1);
  std::memcpy(props.name, info.name.data(), name_length);
  props.total_memory = info.total_memory;
  props.dtypes = TSR_DTYPE_MASK_ALL;
  props.max_allocation = 0;
  props.features = TSR_FEATURE_HOST_ADDRESSABLE | TSR_FEATURE_TIMESTAMPS;
  props.compute_units = info.compute_units;
  props.alignment = kAllocationAlignment;
  return props;
}

}  // namespace tessera::cpu
