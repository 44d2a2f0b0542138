// memory.hpp - cpu:0's allocator and byte copies.
//
// Allocations come from std::aligned_alloc, kAllocationAlignment-aligned, sizes
// rounded up to a multiple of it; buffers of 2 MiB and more are 2 MiB-aligned
// and advised for transparent huge pages. For the CPU a buffer's handle and data are the
// same base address. A 0-byte allocation succeeds with a NULL handle; freeing
// NULL is a no-op. Copies are synchronous memmoves (the CPU has no queue), with
// byte offsets into buffers. Functions report failure by throwing
// sdk::status_error (turned into a status by the table's trampolines).
#ifndef TESSERA_PLUGINS_CPU_MEMORY_HPP_
#define TESSERA_PLUGINS_CPU_MEMORY_HPP_

#include <cstddef>
#include <cstdint>

#include "tessera/plugin.h"

namespace tessera::cpu {

// A new buffer of at least `nbytes` bytes, owned by the caller (release with
// free_buffer). Throws RESOURCE_EXHAUSTED naming the size when memory is short
// or the size is absurd.
tsr_plugin_buffer allocate_buffer(size_t nbytes);

// Frees a buffer from allocate_buffer; a NULL handle is a no-op.
void free_buffer(tsr_plugin_buffer buffer) noexcept;

// Copies `nbytes` from `src` to `dst` (regions may overlap). Throws
// INVALID_ARGUMENT when a pointer is NULL while nbytes > 0; `what` names the
// entry for the message ("copy_host_to_device").
void copy_bytes(const char* what, void* dst, const void* src, uint64_t nbytes);

// The address `offset` bytes into a CPU buffer (NULL stays NULL).
inline char* buffer_address(tsr_plugin_buffer buffer, uint64_t offset) noexcept {
  return buffer.handle ? static_cast<char*>(buffer.handle) + offset : nullptr;
}

}  // namespace tessera::cpu

#endif  // TESSERA_PLUGINS_CPU_MEMORY_HPP_
