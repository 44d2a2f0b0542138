// device.cpp - instance, validation messenger and devices (device.hpp).
#include "device.hpp"

#include <cstdlib>
#include <cstring>
#include <string>

#include "kernels.hpp"
#include "raster.hpp"
#include "staging.hpp"
#include "stream.hpp"
#include "tessera/sdk/plugin_table.hpp"
#include "tessera/sdk/status.hpp"
#include "vk_util.hpp"

namespace tessera::vulkan {
namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

VKAPI_ATTR VkBool32 VKAPI_CALL on_validation_message(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT,
    const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
  auto* context = static_cast<tsr_plugin_context*>(user);
  if (!(severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT)) return VK_FALSE;
  const char* text = data != nullptr && data->pMessage != nullptr ? data->pMessage : "(no text)";
  {
    std::lock_guard<std::mutex> lock(context->validation_mu);
    context->last_validation_error = text;
  }
  context->validation_errors.fetch_add(1);
  if (context->host->log) context->host->log(TSR_LOG_ERROR, "vulkan", text);
  return VK_FALSE;
}

bool layer_available(const char* name) {
  uint32_t n = 0;
  vkEnumerateInstanceLayerProperties(&n, nullptr);
  std::vector<VkLayerProperties> layers(n);
  vkEnumerateInstanceLayerProperties(&n, layers.data());
  for (const auto& l : layers)
    if (std::strcmp(l.layerName, name) == 0) return true;
  return false;
}

// The first memory type with all of `want` (and, when `prefer` is nonzero,
// those too if any type has them); UINT32_MAX if none.
uint32_t pick_memory_type(const VkPhysicalDeviceMemoryProperties& mp, uint32_t allowed,
                          VkMemoryPropertyFlags want, VkMemoryPropertyFlags prefer) {
  uint32_t fallback = UINT32_MAX;
  for (uint32_t i = 0; i < mp.memoryTypeCount; ++i) {
    if (!(allowed & (1u << i))) continue;
    const VkMemoryPropertyFlags f = mp.memoryTypes[i].propertyFlags;
    if ((f & want) != want) continue;
    if ((f & prefer) == prefer) return i;
    if (fallback == UINT32_MAX) fallback = i;
  }
  return fallback;
}

// Why `physical` cannot serve as a Tessera device, or "" if it can.
std::string unusable_reason(VkPhysicalDevice physical, uint32_t* queue_family) {
  uint32_t n = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &n, nullptr);
  std::vector<VkQueueFamilyProperties> families(n);
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &n, families.data());
  *queue_family = UINT32_MAX;
  for (uint32_t i = 0; i < n; ++i) {
    if (!(families[i].queueFlags & VK_QUEUE_COMPUTE_BIT)) continue;
    // Prefer a compute queue without graphics (an async compute queue).
    if (*queue_family == UINT32_MAX || !(families[i].queueFlags & VK_QUEUE_GRAPHICS_BIT))
      *queue_family = i;
  }
  if (*queue_family == UINT32_MAX) return "no compute queue";
  auto f12 = vk_struct<VkPhysicalDeviceVulkan12Features>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES);
  auto f2 = vk_struct<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2);
  f2.pNext = &f12;
  vkGetPhysicalDeviceFeatures2(physical, &f2);
  if (!f12.bufferDeviceAddress) return "no bufferDeviceAddress";
  if (!f12.timelineSemaphore) return "no timelineSemaphore";
  if (!f2.features.shaderInt64) return "no shaderInt64";
  if (!f2.features.shaderFloat64) return "no shaderFloat64 (the kernels compute in double)";
  // Note [Shader parameters] (kernels.hpp): parameter blocks are std430
  // uniform buffers bound with push descriptors.
  if (!f12.uniformBufferStandardLayout) return "no uniformBufferStandardLayout";
  uint32_t next = 0;
  vkEnumerateDeviceExtensionProperties(physical, nullptr, &next, nullptr);
  std::vector<VkExtensionProperties> exts(next);
  vkEnumerateDeviceExtensionProperties(physical, nullptr, &next, exts.data());
  bool push_descriptor = false;
  for (const auto& e : exts)
    push_descriptor |= std::strcmp(e.extensionName, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME) == 0;
  if (!push_descriptor) return "no " VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME;
  // softmax / layer_norm rows merge with subgroup arithmetic (nn.comp)
  auto sg = vk_struct<VkPhysicalDeviceSubgroupProperties>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES);
  auto p2 = vk_struct<VkPhysicalDeviceProperties2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2);
  p2.pNext = &sg;
  vkGetPhysicalDeviceProperties2(physical, &p2);
  if (!(sg.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) ||
      !(sg.supportedOperations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT))
    return "no subgroup arithmetic in compute shaders";
  return "";
}

}  // namespace

Device::~Device() {
  if (device == VK_NULL_HANDLE) return;
  vkDeviceWaitIdle(device);
  staging.reset();
  default_stream.reset();  // runs the cleanups that destroy raster images
  raster.reset();
  kernels.reset();
  allocator.reset();
  // See Note [Timeline semaphores outlive their streams].
  drain_queue_thread();
  for (VkSemaphore t : spare_timelines) vkDestroySemaphore(device, t, nullptr);
  spare_timelines.clear();
  vkDestroyDevice(device, nullptr);
}

VkSemaphore Device::take_timeline(uint64_t* value) {
  {
    std::lock_guard<std::mutex> lock(timelines_mu);
    if (!spare_timelines.empty()) {
      VkSemaphore t = spare_timelines.back();
      const VkResult r = vkGetSemaphoreCounterValue(device, t, value);
      if (r == VK_SUCCESS) {
        spare_timelines.pop_back();
        return t;
      }
      vk_check(r, "vkGetSemaphoreCounterValue (a pooled timeline)");
    }
  }
  auto ti = vk_struct<VkSemaphoreTypeCreateInfo>(VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO);
  ti.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  ti.initialValue = 0;
  auto si = vk_struct<VkSemaphoreCreateInfo>(VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO);
  si.pNext = &ti;
  VkSemaphore t = VK_NULL_HANDLE;
  vk_check(vkCreateSemaphore(device, &si, nullptr, &t), "vkCreateSemaphore (timeline)");
  *value = 0;
  return t;
}

void Device::give_back_timeline(VkSemaphore timeline) noexcept {
  if (timeline == VK_NULL_HANDLE) return;
  try {
    std::lock_guard<std::mutex> lock(timelines_mu);
    spare_timelines.push_back(timeline);
  } catch (...) {
    // Out of memory for the pool entry: the handle is leaked rather than
    // destroyed under a queue thread that may still touch it.
  }
}

void Device::drain_queue_thread() noexcept {
  auto fi = vk_struct<VkFenceCreateInfo>(VK_STRUCTURE_TYPE_FENCE_CREATE_INFO);
  VkFence fence = VK_NULL_HANDLE;
  if (vkCreateFence(device, &fi, nullptr, &fence) != VK_SUCCESS) {
    vkDeviceWaitIdle(device);
    return;
  }
  VkResult r;
  {
    std::lock_guard<std::mutex> lock(queue_mu);
    r = vkQueueSubmit(queue, 0, nullptr, fence);
  }
  if (r == VK_SUCCESS) r = vkWaitForFences(device, 1, &fence, VK_TRUE, UINT64_MAX);
  if (r != VK_SUCCESS) vkDeviceWaitIdle(device);
  vkDestroyFence(device, fence, nullptr);
}

void Device::synchronize_all() {
  std::vector<tsr_plugin_stream*> all;
  {
    std::lock_guard<std::mutex> lock(streams_mu);
    all = streams;
  }
  for (tsr_plugin_stream* s : all) s->synchronize();
}

Device::Staging Device::create_staging(VkDeviceSize nbytes) {
  Staging s;
  auto bi = vk_struct<VkBufferCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO);
  bi.size = nbytes;
  bi.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  vk_check(vkCreateBuffer(device, &bi, nullptr, &s.buffer), "vkCreateBuffer (staging)");
  VkMemoryRequirements req{};
  vkGetBufferMemoryRequirements(device, s.buffer, &req);
  auto ai = vk_struct<VkMemoryAllocateInfo>(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO);
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = staging_memory_type;
  VkResult r = vkAllocateMemory(device, &ai, nullptr, &s.memory);
  if (r == VK_SUCCESS) r = vkBindBufferMemory(device, s.buffer, s.memory, 0);
  if (r == VK_SUCCESS) r = vkMapMemory(device, s.memory, 0, VK_WHOLE_SIZE, 0, &s.mapped);
  if (r != VK_SUCCESS) {
    destroy_staging(s);
    vk_check(r, "allocating a staging buffer");
  }
  return s;
}

void Device::destroy_staging(Staging& s) noexcept {
  if (s.mapped) vkUnmapMemory(device, s.memory);
  if (s.buffer) vkDestroyBuffer(device, s.buffer, nullptr);
  if (s.memory) vkFreeMemory(device, s.memory, nullptr);
  s = Staging{};
}

void host_copy(tsr_plugin_context& context, void* dst, const void* src, size_t n) noexcept {
  if (n < CopyPool::kParallelBytes) {
    std::memcpy(dst, src, n);
    return;
  }
  CopyPool* pool = nullptr;
  {
    std::lock_guard<std::mutex> lock(context.copy_pool_mu);
    if (!context.copy_pool) {
      try {
        context.copy_pool = std::make_unique<CopyPool>(CopyPool::default_threads());
      } catch (...) {
        // no memory for the pool: copy on this thread
      }
    }
    pool = context.copy_pool.get();
  }
  if (pool != nullptr)
    pool->copy(dst, src, n);
  else
    std::memcpy(dst, src, n);
}

void check_validation(tsr_plugin_context& context) {
  const uint64_t errors = context.validation_errors.load();
  uint64_t reported = context.validation_reported.load();
  if (errors == reported) return;
  if (!context.validation_reported.compare_exchange_strong(reported, errors)) return;
  std::string text;
  {
    std::lock_guard<std::mutex> lock(context.validation_mu);
    text = context.last_validation_error;
  }
  sdk::throw_status(TSR_INTERNAL, "vulkan plugin: %llu Vulkan validation error(s); the last: %s",
                    static_cast<unsigned long long>(errors - reported), text.c_str());
}

// Whether environment variable `name` is set to exactly `value`.
bool env_is(const char* name, const char* value) {
  const char* env = std::getenv(name);
  return env != nullptr && std::strcmp(env, value) == 0;
}

void create_devices(tsr_plugin_context& context) {
  const bool validate = env_is("TESSERA_VULKAN_VALIDATION", "1");
  if (validate && !layer_available(kValidationLayer))
    sdk::throw_status(TSR_UNAVAILABLE,
                      "TESSERA_VULKAN_VALIDATION=1 but %s is not installed (Debian: "
                      "vulkan-validationlayers)",
                      kValidationLayer);
  auto app = vk_struct<VkApplicationInfo>(VK_STRUCTURE_TYPE_APPLICATION_INFO);
  app.pApplicationName = "tessera";
  app.pEngineName = "tessera";
  app.apiVersion = VK_API_VERSION_1_2;
  auto ci = vk_struct<VkInstanceCreateInfo>(VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO);
  ci.pApplicationInfo = &app;
  const char* layers[] = {kValidationLayer};
  const char* extensions[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME};
  auto mi = vk_struct<VkDebugUtilsMessengerCreateInfoEXT>(
      VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT);
  mi.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT;
  mi.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                   VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                   VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  mi.pfnUserCallback = on_validation_message;
  mi.pUserData = &context;
  if (validate) {
    ci.enabledLayerCount = 1;
    ci.ppEnabledLayerNames = layers;
    ci.enabledExtensionCount = 1;
    ci.ppEnabledExtensionNames = extensions;
    ci.pNext = &mi;
  }
  VkResult r = vkCreateInstance(&ci, nullptr, &context.instance);
  if (r == VK_ERROR_INCOMPATIBLE_DRIVER || r == VK_ERROR_INITIALIZATION_FAILED)
    sdk::throw_status(TSR_UNAVAILABLE,
                      "no Vulkan driver: vkCreateInstance returned %s (install a Vulkan ICD, "
                      "e.g. Debian's mesa-vulkan-drivers)",
                      vk_result_name(r));
  if (r != VK_SUCCESS)
    sdk::throw_status(TSR_UNAVAILABLE, "vkCreateInstance failed: %s", vk_result_name(r));
  if (validate) {
    auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(context.instance, "vkCreateDebugUtilsMessengerEXT"));
    if (create == nullptr)
      sdk::throw_status(TSR_UNAVAILABLE, "vkCreateDebugUtilsMessengerEXT is missing");
    vk_check(create(context.instance, &mi, nullptr, &context.messenger),
             "vkCreateDebugUtilsMessengerEXT");
  }

  uint32_t n = 0;
  vk_check(vkEnumeratePhysicalDevices(context.instance, &n, nullptr), "vkEnumeratePhysicalDevices");
  std::vector<VkPhysicalDevice> physicals(n);
  vk_check(vkEnumeratePhysicalDevices(context.instance, &n, physicals.data()),
           "vkEnumeratePhysicalDevices");
  std::string skipped;
  for (VkPhysicalDevice physical : physicals) {
    VkPhysicalDeviceProperties props{};
    vkGetPhysicalDeviceProperties(physical, &props);
    uint32_t family = 0;
    const std::string why = unusable_reason(physical, &family);
    if (!why.empty()) {
      skipped += std::string(skipped.empty() ? "" : "; ") + props.deviceName + ": " + why;
      continue;
    }
    auto d = std::make_unique<Device>();
    d->context = &context;
    d->index = static_cast<int32_t>(context.devices.size());
    d->physical = physical;
    d->queue_family = family;
    d->properties = props;
    vkGetPhysicalDeviceMemoryProperties(physical, &d->memory_properties);

    auto f11 = vk_struct<VkPhysicalDeviceVulkan11Features>(
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES);
    auto f12 = vk_struct<VkPhysicalDeviceVulkan12Features>(
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES);
    f12.pNext = &f11;
    auto have = vk_struct<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2);
    have.pNext = &f12;
    vkGetPhysicalDeviceFeatures2(physical, &have);
    // Enable what the kernels use, where the device has it.
    auto e11 = vk_struct<VkPhysicalDeviceVulkan11Features>(
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES);
    e11.storageBuffer16BitAccess = f11.storageBuffer16BitAccess;
    auto e12 = vk_struct<VkPhysicalDeviceVulkan12Features>(
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES);
    e12.pNext = &e11;
    e12.bufferDeviceAddress = VK_TRUE;
    e12.timelineSemaphore = VK_TRUE;
    e12.storageBuffer8BitAccess = f12.storageBuffer8BitAccess;
    e12.shaderInt8 = f12.shaderInt8;
    e12.shaderFloat16 = f12.shaderFloat16;
    e12.hostQueryReset = f12.hostQueryReset;
    e12.uniformBufferStandardLayout = VK_TRUE;
    e12.scalarBlockLayout = f12.scalarBlockLayout;
    auto enable =
        vk_struct<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2);
    enable.pNext = &e12;
    enable.features.shaderInt64 = VK_TRUE;
    enable.features.shaderFloat64 = VK_TRUE;
    enable.features.shaderInt16 = have.features.shaderInt16;
    const bool small_types = f11.storageBuffer16BitAccess && f12.storageBuffer8BitAccess &&
                             f12.shaderInt8 && f12.shaderFloat16 && have.features.shaderInt16;

    const float priority = 1.0f;
    auto qi = vk_struct<VkDeviceQueueCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO);
    qi.queueFamilyIndex = family;
    qi.queueCount = 1;
    qi.pQueuePriorities = &priority;
    // See Note [Texel fast paths]: lavapipe turns each storage-buffer or
    // buffer-reference access into a loop over the SIMD lanes, but a texel
    // buffer load into one vector gather, ~4x the bandwidth for 16-byte
    // texels (measured with a standalone probe: a 16M-float add at 0.44 GB/s
    // through scalar SSBO loads, 0.9 GB/s through 64-bit ones, 2.1-2.3 GB/s
    // through R32G32B32A32 texel buffers, one lavapipe thread). The fast
    // paths need push descriptors (no descriptor pools per dispatch) and
    // both 16-byte formats as storage texel buffers.
    bool texel_formats = true;
    for (VkFormat f : {VK_FORMAT_R32G32B32A32_SFLOAT, VK_FORMAT_R32G32B32A32_UINT}) {
      VkFormatProperties fp{};
      vkGetPhysicalDeviceFormatProperties(physical, f, &fp);
      texel_formats &= (fp.bufferFeatures & VK_FORMAT_FEATURE_STORAGE_TEXEL_BUFFER_BIT) != 0;
    }
    // On where the formats allow; TESSERA_VULKAN_TEXEL=0 turns them off (to
    // compare, or to rule them out). They were opt-in while a crash in
    // lavapipe's queue thread seemed to follow them; it was a timeline
    // semaphore destroyed too early, which the fast paths' timing exposed
    // (Note [Timeline semaphores outlive their streams], device.hpp).
    d->texel_views = texel_formats && !env_is("TESSERA_VULKAN_TEXEL", "0");
    d->max_texel_elements = props.limits.maxTexelBufferElements;
    const char* device_extensions[] = {VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME};

    auto di = vk_struct<VkDeviceCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO);
    di.pNext = &enable;
    di.queueCreateInfoCount = 1;
    di.pQueueCreateInfos = &qi;
    di.enabledExtensionCount = 1;
    di.ppEnabledExtensionNames = device_extensions;
    vk_check(vkCreateDevice(physical, &di, nullptr, &d->device), "vkCreateDevice");
    vkGetDeviceQueue(d->device, family, 0, &d->queue);
    d->push_descriptor = reinterpret_cast<PFN_vkCmdPushDescriptorSetKHR>(
        vkGetDeviceProcAddr(d->device, "vkCmdPushDescriptorSetKHR"));
    if (d->push_descriptor == nullptr)
      sdk::throw_status(TSR_UNAVAILABLE, "%s: vkCmdPushDescriptorSetKHR is missing",
                        props.deviceName);

    uint32_t qn = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(physical, &qn, nullptr);
    std::vector<VkQueueFamilyProperties> qf(qn);
    vkGetPhysicalDeviceQueueFamilyProperties(physical, &qn, qf.data());
    d->timestamps = qf[family].timestampValidBits > 0 && props.limits.timestampPeriod > 0;

    // Tensors: device-local memory (host-visible too where the device has
    // such a type, as integrated GPUs and lavapipe do: copies then map).
    const VkMemoryPropertyFlags local = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
    const VkMemoryPropertyFlags visible =
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    d->device_memory_type = pick_memory_type(d->memory_properties, ~0u, local, 0);
    if (d->device_memory_type == UINT32_MAX)
      d->device_memory_type = pick_memory_type(d->memory_properties, ~0u, 0, 0);
    // A device-local type that is also host-visible is used when its heap is
    // the whole device-local heap (not a 256 MiB BAR window).
    const uint32_t both = pick_memory_type(d->memory_properties, ~0u, local | visible, 0);
    const auto& types = d->memory_properties.memoryTypes;
    const auto& heaps = d->memory_properties.memoryHeaps;
    if (both != UINT32_MAX &&
        heaps[types[both].heapIndex].size >= heaps[types[d->device_memory_type].heapIndex].size)
      d->device_memory_type = both;
    // TESSERA_VULKAN_UNMAPPED=1: never map it, as on a discrete GPU without a
    // host-visible device-local type (tests of that path on lavapipe)
    d->device_memory_mapped = (types[d->device_memory_type].propertyFlags & visible) == visible &&
                              !env_is("TESSERA_VULKAN_UNMAPPED", "1");
    // TESSERA_VULKAN_UNCACHED=1 treats it as uncached (tests of that path on lavapipe)
    d->device_memory_cached =
        (types[d->device_memory_type].propertyFlags & VK_MEMORY_PROPERTY_HOST_CACHED_BIT) != 0 &&
        !env_is("TESSERA_VULKAN_UNCACHED", "1");
    d->small_op_batches = d->device_memory_mapped && !env_is("TESSERA_VULKAN_BATCH", "0");
    d->conv_block = props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ? 4 : 1;
    if (env_is("TESSERA_VULKAN_CONV_BLOCK", "1")) d->conv_block = 1;
    if (env_is("TESSERA_VULKAN_CONV_BLOCK", "4")) d->conv_block = 4;
    d->staging_memory_type =
        pick_memory_type(d->memory_properties, ~0u, visible, VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
    if (d->staging_memory_type == UINT32_MAX)
      sdk::throw_status(TSR_UNAVAILABLE, "%s has no host-visible coherent memory type",
                        props.deviceName);
    d->heap_size = heaps[types[d->device_memory_type].heapIndex].size;
    auto m3 = vk_struct<VkPhysicalDeviceMaintenance3Properties>(
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES);
    auto sg = vk_struct<VkPhysicalDeviceSubgroupProperties>(
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES);
    sg.pNext = &m3;
    auto p2 =
        vk_struct<VkPhysicalDeviceProperties2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2);
    p2.pNext = &sg;
    vkGetPhysicalDeviceProperties2(physical, &p2);
    d->max_allocation = m3.maxMemoryAllocationSize ? m3.maxMemoryAllocationSize : d->heap_size;
    d->subgroup_size = sg.subgroupSize;
    d->dtypes = TSR_DTYPE_BIT(TSR_BOOL) | TSR_DTYPE_BIT(TSR_INT32) | TSR_DTYPE_BIT(TSR_INT64) |
                TSR_DTYPE_BIT(TSR_FLOAT32) | TSR_DTYPE_BIT(TSR_FLOAT64);
    if (small_types)
      d->dtypes |= TSR_DTYPE_BIT(TSR_UINT8) | TSR_DTYPE_BIT(TSR_INT8) | TSR_DTYPE_BIT(TSR_INT16) |
                   TSR_DTYPE_BIT(TSR_FLOAT16) | TSR_DTYPE_BIT(TSR_BFLOAT16);
    d->allocator = std::make_unique<Allocator>(*d, d->device_memory_type);
    d->default_stream = std::make_unique<tsr_plugin_stream>(*d);
    d->kernels = std::make_unique<Kernels>(*d);
    d->staging = std::make_unique<StagingPool>(*d);
    // Note [Raster stores] (raster.hpp): on a CPU device that renders, with
    // the texel views the fragment shaders read; TESSERA_VULKAN_RASTER=0
    // turns it off, =all takes it at every size (tests).
    if (d->texel_views && !env_is("TESSERA_VULKAN_RASTER", "0") &&
        Raster::unusable_reason(physical, family, props).empty()) {
      const VkPipelineStageFlags stages = d->barrier_stages;
      const VkAccessFlags access = d->barrier_access;
      d->barrier_stages |=
          VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT | VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
      d->barrier_access |= VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
      try {
        d->raster = std::make_unique<Raster>(*d, env_is("TESSERA_VULKAN_RASTER", "all"));
      } catch (const std::exception& e) {
        // an optimisation: the device computes instead
        d->barrier_stages = stages;
        d->barrier_access = access;
        if (context.host->log)
          context.host->log(
              TSR_LOG_WARNING, "vulkan",
              (std::string(props.deviceName) + ": raster stores off: " + e.what()).c_str());
      }
    }
    context.devices.push_back(std::move(d));
  }
  if (context.devices.empty())
    sdk::throw_status(TSR_UNAVAILABLE, "no usable Vulkan device%s%s",
                      physicals.empty() ? " (the driver lists none)" : ": ", skipped.c_str());
  if (!skipped.empty() && context.host->log)
    context.host->log(TSR_LOG_INFO, "vulkan", ("skipped devices: " + skipped).c_str());
}

void destroy_devices(tsr_plugin_context& context) noexcept {
  {
    // Pinned blocks the host never freed (it frees storages before shutdown;
    // this covers a host that does not).
    std::lock_guard<std::mutex> lock(context.pinned_mu);
    for (auto& [address, block] : context.pinned) {
      vkDeviceWaitIdle(block.device->device);
      block.device->destroy_staging(block.staging);
    }
    context.pinned.clear();
  }
  context.devices.clear();
  if (context.messenger != VK_NULL_HANDLE) {
    auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(context.instance, "vkDestroyDebugUtilsMessengerEXT"));
    if (destroy) destroy(context.instance, context.messenger, nullptr);
    context.messenger = VK_NULL_HANDLE;
  }
  if (context.instance != VK_NULL_HANDLE) vkDestroyInstance(context.instance, nullptr);
  context.instance = VK_NULL_HANDLE;
}

Device& device_at(tsr_plugin_context& context, int32_t index, const char* entry) {
  sdk::check_device_index("vulkan", entry, index, static_cast<int32_t>(context.devices.size()));
  return *context.devices[static_cast<size_t>(index)];
}

}  // namespace tessera::vulkan
