// memory.hpp - device memory of one Vulkan device: blocks and suballocations.
//
// Note [Vulkan memory]
// ~~~~~~~~~~~~~~~~~~~~
// Device memory comes in blocks: a VkDeviceMemory with one VkBuffer spanning
// it (storage, transfer source/destination and device address usage), mapped
// when its memory type is host-visible. An allocation is a range of a block:
//   - requests up to kSmallLimit share kBlockSize blocks, first fit over the
//     block's free ranges (coalesced on release), kAlignment aligned, so small
//     tensors cost no Vulkan call;
//   - larger requests get a dedicated block of their own size;
//   - a block whose last allocation is released is freed at once, so memory
//     returns to the driver (the core's caching allocator is the cache).
// The plugin buffer handed to the host is {handle = Allocation*, data = NULL}:
// kernels reach memory through the block buffer's device address (shaders
// use buffer references), never a host pointer, so tensors are not bounded
// by maxStorageBufferRange; the bound that remains is maxMemoryAllocationSize
// per allocation, named in the RESOURCE_EXHAUSTED message when exceeded.
#pragma once

#include <vulkan/vulkan.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace tessera::vulkan {

struct Device;

// One VkDeviceMemory and the VkBuffer over all of it. Owned by the Allocator.
// Invariant: `free` holds disjoint, non-adjacent ranges (offset -> size).
struct Block {
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize size = 0;
  VkDeviceAddress address = 0;  // device address of offset 0
  std::byte* mapped = nullptr;  // host view of offset 0, or null
  bool dedicated = false;
  // Note [Texel fast paths] (device.hpp): views of the first `view_bytes`
  // bytes (a multiple of 16, at most maxTexelBufferElements texels) as
  // 16-byte texels, float and uint; null when the device has no fast paths.
  VkBufferView view_f32x4 = VK_NULL_HANDLE;
  VkBufferView view_u32x4 = VK_NULL_HANDLE;
  VkDeviceSize view_bytes = 0;
  size_t live = 0;  // allocations in this block
  std::map<VkDeviceSize, VkDeviceSize> free;
};

// A range of a block. Owned by the Allocator until released.
struct Allocation {
  Block* block = nullptr;
  VkDeviceSize offset = 0;  // within the block
  VkDeviceSize size = 0;    // as requested
  VkDeviceAddress address() const noexcept { return block->address + offset; }
  std::byte* host() const noexcept { return block->mapped ? block->mapped + offset : nullptr; }
};

class Allocator {
 public:
  static constexpr VkDeviceSize kBlockSize = VkDeviceSize{64} << 20;
  static constexpr VkDeviceSize kSmallLimit = VkDeviceSize{16} << 20;
  static constexpr VkDeviceSize kAlignment = 256;

  // Borrows `device` (outlives the allocator). `memory_type` is the index of
  // the memory type allocations come from.
  Allocator(Device& device, uint32_t memory_type);
  ~Allocator();
  Allocator(const Allocator&) = delete;
  Allocator& operator=(const Allocator&) = delete;

  // A new allocation of `nbytes` (> 0), owned by the allocator until
  // release(). Throws RESOURCE_EXHAUSTED (naming the size and the limit)
  // when the driver has no memory or the request exceeds its limits.
  Allocation* allocate(VkDeviceSize nbytes);
  // Returns `a` (from allocate) to its block; frees the block when empty.
  void release(Allocation* a) noexcept;
  // Bytes of live Vulkan memory (blocks), for memory_info.
  uint64_t reserved_bytes() const;

 private:
  std::unique_ptr<Block> new_block(VkDeviceSize size, bool dedicated);
  void destroy_block(Block& b) noexcept;

  Device& device_;
  uint32_t memory_type_;
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Block>> blocks_;
  uint64_t reserved_ = 0;
};

}  // namespace tessera::vulkan
