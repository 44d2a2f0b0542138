// memory.cpp - cpu:0's aligned allocator and synchronous copies.
#include "memory.hpp"

#include <cstdlib>
#include <cstring>
#include <limits>

#include "device_info.hpp"
#include "tessera/sdk/status.hpp"

namespace tessera::cpu {

tsr_plugin_buffer allocate_buffer(size_t nbytes) {
  if (nbytes == 0) return tsr_plugin_buffer{nullptr, nullptr};
  constexpr size_t align = kAllocationAlignment;
  void* base = nullptr;
  if (nbytes <= std::numeric_limits<size_t>::max() - (align - 1)) {
    base = std::aligned_alloc(align, (nbytes + align - 1) / align * align);
  }
  if (base == nullptr) {
    const memory_snapshot memory = read_memory();
    sdk::throw_status(TSR_RESOURCE_EXHAUSTED,
                      "cpu:0 could not allocate %zu bytes (%.3g GiB) of host memory; %llu bytes "
                      "are available; free tensors, use smaller ones or add memory",
                      nbytes, static_cast<double>(nbytes) / (1024.0 * 1024.0 * 1024.0),
                      static_cast<unsigned long long>(memory.free));
  }
  return tsr_plugin_buffer{base, base};
}

void free_buffer(tsr_plugin_buffer buffer) noexcept { std::free(buffer.handle); }

void copy_bytes(const char* what, void* dst, const void* src, uint64_t nbytes) {
  if (nbytes == 0) return;
  if (dst == nullptr || src == nullptr) {
    sdk::throw_status(TSR_INVALID_ARGUMENT,
                      "cpu plugin %s: %s is NULL for a copy of %llu bytes; pass a valid buffer",
                      what, dst == nullptr ? "the destination" : "the source",
                      static_cast<unsigned long long>(nbytes));
  }
  std::memmove(dst, src, nbytes);
}

}  // namespace tessera::cpu
