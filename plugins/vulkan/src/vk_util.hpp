// vk_util.hpp - VkResult checks for the Vulkan plugin.
//
// vk_check() turns a failed Vulkan call into a sdk::status_error naming the
// call and the result: out-of-memory results become RESOURCE_EXHAUSTED (the
// core then frees its cache and retries), a lost device INTERNAL, anything
// else INTERNAL. The plugin's table entries run under sdk::guard, so the
// error becomes a status and never crosses the ABI.
#pragma once

#include <vulkan/vulkan.h>

namespace tessera::vulkan {

// A zeroed Vulkan struct with its sType set.
template <class T>
T vk_struct(VkStructureType type) noexcept {
  T value{};
  value.sType = type;
  return value;
}

// "VK_ERROR_OUT_OF_DEVICE_MEMORY" for a result.
const char* vk_result_name(VkResult result) noexcept;

// Throws sdk::status_error when `result` is not VK_SUCCESS; `what` names the
// call ("vkAllocateMemory of 64 MiB").
void vk_check(VkResult result, const char* what);

}  // namespace tessera::vulkan
