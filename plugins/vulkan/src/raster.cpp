// raster.cpp - Note [Raster stores]: draws that write elementwise results.
#include "raster.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "device.hpp"
#include "stream.hpp"
#include "tessera/sdk/status.hpp"
#include "vk_util.hpp"

namespace tessera::vulkan {
namespace {
const uint32_t kRasterVertSpirv[] = {
#include "raster.vert.spv.inc"
};
}  // namespace

std::string Raster::unusable_reason(VkPhysicalDevice physical, uint32_t family,
                                    const VkPhysicalDeviceProperties& properties) {
  // The whole-block rule and the subnormal handling are what lavapipe does
  // (Note [Raster stores]); another CPU driver may store otherwise.
  auto driver = vk_struct<VkPhysicalDeviceDriverProperties>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES);
  auto p2 = vk_struct<VkPhysicalDeviceProperties2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2);
  p2.pNext = &driver;
  vkGetPhysicalDeviceProperties2(physical, &p2);
  if (properties.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU ||
      driver.driverID != VK_DRIVER_ID_MESA_LLVMPIPE)
    return "not lavapipe";
  uint32_t n = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &n, nullptr);
  std::vector<VkQueueFamilyProperties> families(n);
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &n, families.data());
  if (family >= n || !(families[family].queueFlags & VK_QUEUE_GRAPHICS_BIT))
    return "the compute queue does not render";
  VkFormatProperties fp{};
  vkGetPhysicalDeviceFormatProperties(physical, kFormat, &fp);
  if (!(fp.linearTilingFeatures & VK_FORMAT_FEATURE_COLOR_ATTACHMENT_BIT))
    return "no linear R32G32B32A32_UINT color attachments";
  VkImageFormatProperties ip{};
  if (vkGetPhysicalDeviceImageFormatProperties(
          physical, kFormat, VK_IMAGE_TYPE_2D, VK_IMAGE_TILING_LINEAR,
          VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT, 0, &ip) != VK_SUCCESS ||
      ip.maxExtent.width < kWidth || properties.limits.maxFramebufferWidth < kWidth)
    return "linear color attachments narrower than 1024 texels";
  return "";
}

Raster::Raster(Device& device, bool all_sizes) : device_(device) {
  VkImageFormatProperties ip{};
  vk_check(vkGetPhysicalDeviceImageFormatProperties(device.physical, kFormat, VK_IMAGE_TYPE_2D,
                                                    VK_IMAGE_TILING_LINEAR,
                                                    VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT, 0, &ip),
           "vkGetPhysicalDeviceImageFormatProperties");
  max_rows_ = std::min({ip.maxExtent.height, device.properties.limits.maxFramebufferHeight,
                        device.properties.limits.maxViewportDimensions[1]});
  if (all_sizes) {
    // Tests: every size, and many narrow draws per op (16 texels by 8 rows
    // at most), so that splitting, and a stream flushed between the draws
    // of one op, are exercised by small tensors too.
    min_texels_ = 1;
    max_width_ = 16;
    max_rows_ = std::min<uint32_t>(max_rows_, 8);
  }
  try {
    // The texel bindings and push constants of the compute fast paths
    // (Note [Shader parameters], kernels.hpp), for the fragment stage.
    set_ = Kernels::make_texel_set(device.device, VK_SHADER_STAGE_FRAGMENT_BIT);
    const VkPushConstantRange range{VK_SHADER_STAGE_FRAGMENT_BIT, 0, Kernels::kMaxPushParams};
    auto li = vk_struct<VkPipelineLayoutCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO);
    li.setLayoutCount = 1;
    li.pSetLayouts = &set_;
    li.pushConstantRangeCount = 1;
    li.pPushConstantRanges = &range;
    vk_check(vkCreatePipelineLayout(device.device, &li, nullptr, &layout_),
             "vkCreatePipelineLayout (raster)");

    // One color attachment, every texel written (its old contents are not
    // loaded). The dependencies order the pass with the dispatches, copies
    // and draws around it, as the stream's barriers order those.
    VkAttachmentDescription color{};
    color.format = kFormat;
    color.samples = VK_SAMPLE_COUNT_1_BIT;
    color.loadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE;
    color.storeOp = VK_ATTACHMENT_STORE_OP_STORE;
    color.stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE;
    color.stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE;
    // GENERAL: a linear image's bytes are laid out as its subresource layout
    // says only in GENERAL (or PREINITIALIZED); here they are the tensor's.
    color.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
    color.finalLayout = VK_IMAGE_LAYOUT_GENERAL;
    const VkAttachmentReference ref{0, VK_IMAGE_LAYOUT_GENERAL};
    VkSubpassDescription subpass{};
    subpass.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS;
    subpass.colorAttachmentCount = 1;
    subpass.pColorAttachments = &ref;
    VkSubpassDependency deps[2]{};
    deps[0].srcSubpass = VK_SUBPASS_EXTERNAL;
    deps[0].dstSubpass = 0;
    deps[0].srcStageMask = device.barrier_stages;
    deps[0].srcAccessMask = device.barrier_access;
    deps[0].dstStageMask =
        VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT | VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
    deps[0].dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
    deps[1].srcSubpass = 0;
    deps[1].dstSubpass = VK_SUBPASS_EXTERNAL;
    deps[1].srcStageMask =
        VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT | VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
    deps[1].srcAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
    deps[1].dstStageMask = device.barrier_stages;
    deps[1].dstAccessMask = device.barrier_access;
    auto pi = vk_struct<VkRenderPassCreateInfo>(VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO);
    pi.attachmentCount = 1;
    pi.pAttachments = &color;
    pi.subpassCount = 1;
    pi.pSubpasses = &subpass;
    pi.dependencyCount = 2;
    pi.pDependencies = deps;
    vk_check(vkCreateRenderPass(device.device, &pi, nullptr, &pass_), "vkCreateRenderPass");

    auto mi = vk_struct<VkShaderModuleCreateInfo>(VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO);
    mi.codeSize = sizeof kRasterVertSpirv;
    mi.pCode = kRasterVertSpirv;
    vk_check(vkCreateShaderModule(device.device, &mi, nullptr, &vertex_), "raster.vert");
  } catch (...) {
    release();
    throw;
  }
}

Raster::~Raster() { release(); }

void Raster::release() noexcept {
  const VkDevice d = device_.device;
  for (auto& [key, p] : pipelines_) vkDestroyPipeline(d, p, nullptr);
  pipelines_.clear();
  for (auto& [code, m] : modules_) vkDestroyShaderModule(d, m, nullptr);
  modules_.clear();
  if (vertex_) vkDestroyShaderModule(d, vertex_, nullptr);
  if (pass_) vkDestroyRenderPass(d, pass_, nullptr);
  if (layout_) vkDestroyPipelineLayout(d, layout_, nullptr);
  if (set_) vkDestroyDescriptorSetLayout(d, set_, nullptr);
  vertex_ = VK_NULL_HANDLE;
  pass_ = VK_NULL_HANDLE;
  layout_ = VK_NULL_HANDLE;
  set_ = VK_NULL_HANDLE;
}

VkPipeline Raster::pipeline(const Shader& fragment, const Kernels::Spec& spec) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto key = std::make_pair(fragment.code, spec);
  if (auto found = pipelines_.find(key); found != pipelines_.end()) return found->second;
  VkShaderModule& module = modules_[fragment.code];
  if (module == VK_NULL_HANDLE) {
    auto mi = vk_struct<VkShaderModuleCreateInfo>(VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO);
    mi.codeSize = fragment.bytes;
    mi.pCode = fragment.code;
    const VkResult r = vkCreateShaderModule(device_.device, &mi, nullptr, &module);
    if (r != VK_SUCCESS) {
      modules_.erase(fragment.code);
      vk_check(r, fragment.name);
    }
  }
  // constants 1..3: the variant (as Kernels::pipeline; a fragment shader has no workgroup)
  const int32_t values[3] = {spec[0], spec[1], spec[2]};
  VkSpecializationMapEntry entries[3];
  for (uint32_t k = 0; k < 3; ++k) entries[k] = {k + 1, k * 4, 4};
  const VkSpecializationInfo info{3, entries, sizeof values, values};
  VkPipelineShaderStageCreateInfo stages[2]{};
  stages[0].sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  stages[0].stage = VK_SHADER_STAGE_VERTEX_BIT;
  stages[0].module = vertex_;
  stages[0].pName = "main";
  stages[1].sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  stages[1].stage = VK_SHADER_STAGE_FRAGMENT_BIT;
  stages[1].module = module;
  stages[1].pName = "main";
  stages[1].pSpecializationInfo = &info;
  auto vertex_input = vk_struct<VkPipelineVertexInputStateCreateInfo>(
      VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO);
  auto assembly = vk_struct<VkPipelineInputAssemblyStateCreateInfo>(
      VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO);
  assembly.topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST;
  auto viewport = vk_struct<VkPipelineViewportStateCreateInfo>(
      VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO);
  viewport.viewportCount = 1;
  viewport.scissorCount = 1;
  auto raster = vk_struct<VkPipelineRasterizationStateCreateInfo>(
      VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO);
  raster.polygonMode = VK_POLYGON_MODE_FILL;
  raster.cullMode = VK_CULL_MODE_NONE;
  raster.frontFace = VK_FRONT_FACE_COUNTER_CLOCKWISE;
  raster.lineWidth = 1.0f;
  auto multisample = vk_struct<VkPipelineMultisampleStateCreateInfo>(
      VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO);
  multisample.rasterizationSamples = VK_SAMPLE_COUNT_1_BIT;
  VkPipelineColorBlendAttachmentState attachment{};
  attachment.colorWriteMask = VK_COLOR_COMPONENT_R_BIT | VK_COLOR_COMPONENT_G_BIT |
                              VK_COLOR_COMPONENT_B_BIT | VK_COLOR_COMPONENT_A_BIT;
  auto blend = vk_struct<VkPipelineColorBlendStateCreateInfo>(
      VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO);
  blend.attachmentCount = 1;
  blend.pAttachments = &attachment;
  const VkDynamicState dynamic_states[2] = {VK_DYNAMIC_STATE_VIEWPORT, VK_DYNAMIC_STATE_SCISSOR};
  auto dynamic = vk_struct<VkPipelineDynamicStateCreateInfo>(
      VK_STRUCTURE_TYPE_PIPELINE_DYNAMIC_STATE_CREATE_INFO);
  dynamic.dynamicStateCount = 2;
  dynamic.pDynamicStates = dynamic_states;
  auto gi =
      vk_struct<VkGraphicsPipelineCreateInfo>(VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO);
  gi.stageCount = 2;
  gi.pStages = stages;
  gi.pVertexInputState = &vertex_input;
  gi.pInputAssemblyState = &assembly;
  gi.pViewportState = &viewport;
  gi.pRasterizationState = &raster;
  gi.pMultisampleState = &multisample;
  gi.pColorBlendState = &blend;
  gi.pDynamicState = &dynamic;
  gi.layout = layout_;
  gi.renderPass = pass_;
  gi.subpass = 0;
  VkPipeline p = VK_NULL_HANDLE;
  vk_check(vkCreateGraphicsPipelines(device_.device, VK_NULL_HANDLE, 1, &gi, nullptr, &p),
           fragment.name);
  pipelines_.emplace(key, p);
  return p;
}

bool Raster::make_target(const Block& out, VkDeviceSize at, uint32_t width, uint32_t height,
                         Target& t) {
  const VkDevice d = device_.device;
  auto ii = vk_struct<VkImageCreateInfo>(VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO);
  ii.imageType = VK_IMAGE_TYPE_2D;
  ii.format = kFormat;
  ii.extent = {width, height, 1};
  ii.mipLevels = 1;
  ii.arrayLayers = 1;
  ii.samples = VK_SAMPLE_COUNT_1_BIT;
  ii.tiling = VK_IMAGE_TILING_LINEAR;
  ii.usage = VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT;
  ii.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  ii.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  if (vkCreateImage(d, &ii, nullptr, &t.image) != VK_SUCCESS) return false;
  t.width = width;
  t.height = height;
  // The image must lie on the output exactly: rows of width * 16 bytes from
  // its first byte, no padding, within the block, in the block's memory type.
  VkMemoryRequirements req{};
  vkGetImageMemoryRequirements(d, t.image, &req);
  const VkImageSubresource whole{VK_IMAGE_ASPECT_COLOR_BIT, 0, 0};
  VkSubresourceLayout layout{};
  vkGetImageSubresourceLayout(d, t.image, &whole, &layout);
  const VkDeviceSize bytes = VkDeviceSize{width} * height * 16;
  const bool fits = (req.memoryTypeBits >> device_.device_memory_type & 1u) != 0 &&
                    req.alignment != 0 && at % req.alignment == 0 && req.size == bytes &&
                    layout.offset == 0 && layout.rowPitch == VkDeviceSize{width} * 16 &&
                    at + req.size <= out.size;
  if (!fits || vkBindImageMemory(d, t.image, out.memory, at) != VK_SUCCESS) {
    destroy_target(t);
    return false;
  }
  auto vi = vk_struct<VkImageViewCreateInfo>(VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO);
  vi.image = t.image;
  vi.viewType = VK_IMAGE_VIEW_TYPE_2D;
  vi.format = kFormat;
  vi.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
  if (vkCreateImageView(d, &vi, nullptr, &t.view) != VK_SUCCESS) {
    destroy_target(t);
    return false;
  }
  auto fi = vk_struct<VkFramebufferCreateInfo>(VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO);
  fi.renderPass = pass_;
  fi.attachmentCount = 1;
  fi.pAttachments = &t.view;
  fi.width = width;
  fi.height = height;
  fi.layers = 1;
  if (vkCreateFramebuffer(d, &fi, nullptr, &t.framebuffer) != VK_SUCCESS) {
    destroy_target(t);
    return false;
  }
  return true;
}

void Raster::destroy_target(const Target& t) noexcept {
  const VkDevice d = device_.device;
  if (t.framebuffer) vkDestroyFramebuffer(d, t.framebuffer, nullptr);
  if (t.view) vkDestroyImageView(d, t.view, nullptr);
  if (t.image) vkDestroyImage(d, t.image, nullptr);
}

uint64_t Raster::draw(tsr_plugin_stream* stream, const Shader& fragment, void* params,
                      size_t nbytes, const VkBufferView* views, uint32_t nviews,
                      const Kernels::Spec& spec, const Block& out, VkDeviceSize offset,
                      uint64_t n4) {
  if (nviews != fragment.texel_bindings || nviews == 0 || nviews > Kernels::kMaxTexelBindings ||
      nbytes < 8 || nbytes > Kernels::kMaxPushParams || nbytes % 8 != 0 || offset % 16 != 0)
    sdk::throw_status(TSR_INTERNAL,
                      "vulkan plugin: raster shader %s: %u texel views, a %zu-byte parameter "
                      "block, output offset %llu",
                      fragment.name, nviews, nbytes, static_cast<unsigned long long>(offset));
  if (n4 < min_texels_) return 0;
  // Whole 4 x 4 blocks: a width that is a multiple of 4, rows in fours
  const uint64_t width =
      n4 >= uint64_t{max_width_} * kBlock ? max_width_ : n4 / (kBlock * kBlock) * kBlock;
  if (width == 0) return 0;
  const uint64_t rows = n4 / width / kBlock * kBlock;
  const uint64_t step = max_rows_ / kBlock * kBlock;
  if (rows == 0 || step == 0) return 0;
  // Every image first, so that a refusal records nothing.
  std::vector<Target> targets;
  auto give_up = [&] {
    for (const Target& t : targets) destroy_target(t);
    return uint64_t{0};
  };
  for (uint64_t row = 0; row < rows; row += step) {
    Target t;
    t.first = row * width;
    const auto height = static_cast<uint32_t>(std::min(step, rows - row));
    if (!make_target(out, offset + t.first * 16, static_cast<uint32_t>(width), height, t))
      return give_up();
    targets.push_back(t);
  }
  VkPipeline p = VK_NULL_HANDLE;
  try {
    p = pipeline(fragment, spec);
  } catch (...) {
    give_up();
    throw;
  }
  tsr_plugin_stream& s = stream ? *stream : *device_.default_stream;
  std::lock_guard<std::mutex> lock(s.mu);
  // A target belongs to the stream once its draw is being recorded:
  // destroyed when the work recorded so far completes. Not before: record()
  // may first record the stream's small-op batch, which may wait for the
  // stream and run the cleanups registered by then.
  const VkDevice d = device_.device;
  auto* bytes = static_cast<std::byte*>(params);
  size_t recorded = 0;
  try {
    for (const Target& t : targets) {
      VkCommandBuffer cb = s.record();
      // Nothing between here and the draw flushes or runs cleanups.
      s.on_complete([d, t] {
        vkDestroyFramebuffer(d, t.framebuffer, nullptr);
        vkDestroyImageView(d, t.view, nullptr);
        vkDestroyImage(d, t.image, nullptr);
      });
      ++recorded;
      auto bi = vk_struct<VkRenderPassBeginInfo>(VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO);
      bi.renderPass = pass_;
      bi.framebuffer = t.framebuffer;
      bi.renderArea = {{0, 0}, {t.width, t.height}};
      vkCmdBeginRenderPass(cb, &bi, VK_SUBPASS_CONTENTS_INLINE);
      vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, p);
      device_.kernels->push_texel_views(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, layout_, views,
                                        nviews);
      const int32_t where[2] = {static_cast<int32_t>(t.first), static_cast<int32_t>(t.width)};
      std::memcpy(bytes + nbytes - sizeof where, where, sizeof where);
      vkCmdPushConstants(cb, layout_, VK_SHADER_STAGE_FRAGMENT_BIT, 0,
                         static_cast<uint32_t>(nbytes), params);
      const VkViewport viewport{
          0.0f, 0.0f, static_cast<float>(t.width), static_cast<float>(t.height), 0.0f, 1.0f};
      const VkRect2D scissor{{0, 0}, {t.width, t.height}};
      vkCmdSetViewport(cb, 0, 1, &viewport);
      vkCmdSetScissor(cb, 0, 1, &scissor);
      vkCmdDraw(cb, 3, 1, 0, 0);
      vkCmdEndRenderPass(cb);
      s.command_done();
    }
  } catch (...) {
    // the targets no command refers to yet
    for (size_t k = recorded; k < targets.size(); ++k) destroy_target(targets[k]);
    throw;
  }
  return rows * width;
}

}  // namespace tessera::vulkan
