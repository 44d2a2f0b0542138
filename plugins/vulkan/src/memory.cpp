// memory.cpp - see Note [Vulkan memory] in memory.hpp.
#include "memory.hpp"

#include <algorithm>

#include "device.hpp"
#include "tessera/sdk/status.hpp"
#include "vk_util.hpp"

namespace tessera::vulkan {
namespace {

VkDeviceSize align_up(VkDeviceSize n, VkDeviceSize a) { return (n + a - 1) / a * a; }

}  // namespace

Allocator::Allocator(Device& device, uint32_t memory_type)
    : device_(device), memory_type_(memory_type) {}

Allocator::~Allocator() {
  for (auto& b : blocks_) destroy_block(*b);
}

std::unique_ptr<Block> Allocator::new_block(VkDeviceSize size, bool dedicated) {
  if (size > device_.max_allocation)
    sdk::throw_status(TSR_RESOURCE_EXHAUSTED,
                      "vulkan:%d: an allocation of %llu bytes exceeds the device's "
                      "maxMemoryAllocationSize of %llu bytes; split the tensor",
                      static_cast<int>(device_.index), static_cast<unsigned long long>(size),
                      static_cast<unsigned long long>(device_.max_allocation));
  auto b = std::make_unique<Block>();
  b->size = size;
  b->dedicated = dedicated;
  auto bi = vk_struct<VkBufferCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO);
  bi.size = size;
  bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
             VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT |
             VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT;  // parameter blocks (Note [Shader parameters])
  if (device_.texel_views) bi.usage |= VK_BUFFER_USAGE_STORAGE_TEXEL_BUFFER_BIT;
  bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  vk_check(vkCreateBuffer(device_.device, &bi, nullptr, &b->buffer), "vkCreateBuffer");
  VkMemoryRequirements req{};
  vkGetBufferMemoryRequirements(device_.device, b->buffer, &req);
  auto flags = vk_struct<VkMemoryAllocateFlagsInfo>(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO);
  flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
  auto ai = vk_struct<VkMemoryAllocateInfo>(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO);
  ai.pNext = &flags;
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = memory_type_;
  const VkResult r = vkAllocateMemory(device_.device, &ai, nullptr, &b->memory);
  if (r != VK_SUCCESS) {
    vkDestroyBuffer(device_.device, b->buffer, nullptr);
    if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY)
      sdk::throw_status(TSR_RESOURCE_EXHAUSTED,
                        "vulkan:%d: out of device memory allocating %llu bytes (%s); free "
                        "tensors or empty the cache",
                        static_cast<int>(device_.index), static_cast<unsigned long long>(size),
                        vk_result_name(r));
    vk_check(r, "vkAllocateMemory");
  }
  try {
    vk_check(vkBindBufferMemory(device_.device, b->buffer, b->memory, 0), "vkBindBufferMemory");
    auto info = vk_struct<VkBufferDeviceAddressInfo>(VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO);
    info.buffer = b->buffer;
    b->address = vkGetBufferDeviceAddress(device_.device, &info);
    if (device_.device_memory_mapped) {
      void* p = nullptr;
      vk_check(vkMapMemory(device_.device, b->memory, 0, VK_WHOLE_SIZE, 0, &p), "vkMapMemory");
      b->mapped = static_cast<std::byte*>(p);
    }
    if (device_.texel_views) {
      b->view_bytes = std::min<VkDeviceSize>(size, device_.max_texel_elements * 16) / 16 * 16;
      auto vi = vk_struct<VkBufferViewCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO);
      vi.buffer = b->buffer;
      vi.range = b->view_bytes;
      vi.format = VK_FORMAT_R32G32B32A32_SFLOAT;
      vk_check(vkCreateBufferView(device_.device, &vi, nullptr, &b->view_f32x4),
               "vkCreateBufferView");
      vi.format = VK_FORMAT_R32G32B32A32_UINT;
      vk_check(vkCreateBufferView(device_.device, &vi, nullptr, &b->view_u32x4),
               "vkCreateBufferView");
    }
  } catch (...) {
    destroy_block(*b);
    throw;
  }
  b->free.emplace(0, size);
  reserved_ += size;
  return b;
}

void Allocator::destroy_block(Block& b) noexcept {
  if (b.view_f32x4) vkDestroyBufferView(device_.device, b.view_f32x4, nullptr);
  if (b.view_u32x4) vkDestroyBufferView(device_.device, b.view_u32x4, nullptr);
  if (b.mapped) vkUnmapMemory(device_.device, b.memory);
  if (b.buffer) vkDestroyBuffer(device_.device, b.buffer, nullptr);
  if (b.memory) vkFreeMemory(device_.device, b.memory, nullptr);
  b = Block{};
}

Allocation* Allocator::allocate(VkDeviceSize nbytes) {
  const VkDeviceSize need = align_up(nbytes, kAlignment);
  std::lock_guard<std::mutex> lock(mu_);
  auto a = std::make_unique<Allocation>();
  a->size = nbytes;
  if (need > kSmallLimit) {
    blocks_.push_back(new_block(need, true));
    Block* b = blocks_.back().get();
    b->free.clear();
    b->live = 1;
    a->block = b;
    return a.release();
  }
  for (auto& bp : blocks_) {
    Block& b = *bp;
    if (b.dedicated) continue;
    for (auto it = b.free.begin(); it != b.free.end(); ++it) {
      if (it->second < need) continue;
      a->block = &b;
      a->offset = it->first;
      const VkDeviceSize rest = it->second - need;
      const VkDeviceSize at = it->first + need;
      b.free.erase(it);
      if (rest > 0) b.free.emplace(at, rest);
      ++b.live;
      return a.release();
    }
  }
  blocks_.push_back(new_block(kBlockSize, false));
  Block& b = *blocks_.back();
  a->block = &b;
  a->offset = 0;
  b.free.clear();
  b.free.emplace(need, kBlockSize - need);
  b.live = 1;
  return a.release();
}

void Allocator::release(Allocation* a) noexcept {
  if (a == nullptr) return;
  std::unique_ptr<Allocation> owned(a);
  std::lock_guard<std::mutex> lock(mu_);
  Block& b = *a->block;
  if (!b.dedicated) {
    VkDeviceSize offset = a->offset, size = align_up(a->size, kAlignment);
    auto next = b.free.lower_bound(offset);
    if (next != b.free.end() && offset + size == next->first) {
      size += next->second;
      next = b.free.erase(next);
    }
    if (next != b.free.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second == offset) {
        offset = prev->first;
        size += prev->second;
        b.free.erase(prev);
      }
    }
    b.free.emplace(offset, size);
  }
  if (--b.live == 0) {
    reserved_ -= b.size;
    destroy_block(b);
    blocks_.erase(std::find_if(blocks_.begin(), blocks_.end(),
                               [&](const std::unique_ptr<Block>& p) { return p.get() == &b; }));
  }
}

uint64_t Allocator::reserved_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reserved_;
}

}  // namespace tessera::vulkan
