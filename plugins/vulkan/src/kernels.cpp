// kernels.cpp - pipelines (created on first use) and the kernel table.
#include "kernels.hpp"

#include <algorithm>
#include <cstring>

#include "device.hpp"
#include "stream.hpp"
#include "tessera/sdk/status.hpp"
#include "vk_util.hpp"

namespace tessera::vulkan {
namespace {
constexpr uint32_t kMaxGroups = 65535;
}  // namespace

Kernels::Kernels(Device& device) : device_(device) {
  // Two push-descriptor set layouts, each pushed whole on every dispatch
  // (Note [Shader parameters]): lavapipe 22.3 keeps the previous push's
  // descriptors for bindings a push leaves out and touches them again, so a
  // texel view destroyed since (its block freed) crashed its queue thread
  // when a later push wrote only the uniform buffer.
  texel_set_ = make_texel_set(device.device, VK_SHADER_STAGE_COMPUTE_BIT);
  VkDescriptorSetLayoutBinding binding{};
  binding.binding = 0;
  binding.descriptorType = VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
  binding.descriptorCount = 1;
  binding.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  auto si = vk_struct<VkDescriptorSetLayoutCreateInfo>(
      VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO);
  si.flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR;
  si.bindingCount = 1;
  si.pBindings = &binding;
  vk_check(vkCreateDescriptorSetLayout(device.device, &si, nullptr, &uniform_set_),
           "vkCreateDescriptorSetLayout");
  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, kMaxPushParams};
  auto li = vk_struct<VkPipelineLayoutCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO);
  li.setLayoutCount = 1;
  li.pSetLayouts = &uniform_set_;
  vk_check(vkCreatePipelineLayout(device.device, &li, nullptr, &uniform_layout_),
           "vkCreatePipelineLayout");
  li.pSetLayouts = &texel_set_;
  li.pushConstantRangeCount = 1;
  li.pPushConstantRanges = &range;
  vk_check(vkCreatePipelineLayout(device.device, &li, nullptr, &texel_layout_),
           "vkCreatePipelineLayout");
}

Kernels::~Kernels() {
  for (auto& [code, c] : pipelines_) {
    if (c.pipeline) vkDestroyPipeline(device_.device, c.pipeline, nullptr);
    if (c.module && c.owns_module) vkDestroyShaderModule(device_.device, c.module, nullptr);
  }
  if (uniform_layout_) vkDestroyPipelineLayout(device_.device, uniform_layout_, nullptr);
  if (texel_layout_) vkDestroyPipelineLayout(device_.device, texel_layout_, nullptr);
  if (uniform_set_) vkDestroyDescriptorSetLayout(device_.device, uniform_set_, nullptr);
  if (texel_set_) vkDestroyDescriptorSetLayout(device_.device, texel_set_, nullptr);
}

VkDescriptorSetLayout Kernels::make_texel_set(VkDevice device, VkShaderStageFlags stages) {
  VkDescriptorSetLayoutBinding bindings[kMaxTexelBindings]{};
  for (uint32_t k = 0; k < kMaxTexelBindings; ++k) {
    bindings[k].binding = k + 1;
    bindings[k].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER;
    bindings[k].descriptorCount = 1;
    bindings[k].stageFlags = stages;
  }
  auto si = vk_struct<VkDescriptorSetLayoutCreateInfo>(
      VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO);
  si.flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR;
  si.bindingCount = kMaxTexelBindings;
  si.pBindings = bindings;
  VkDescriptorSetLayout set = VK_NULL_HANDLE;
  vk_check(vkCreateDescriptorSetLayout(device, &si, nullptr, &set), "vkCreateDescriptorSetLayout");
  return set;
}

void Kernels::push_texel_views(VkCommandBuffer cb, VkPipelineBindPoint point,
                               VkPipelineLayout layout, const VkBufferView* views,
                               uint32_t nviews) const {
  // every binding of the set, the shader's unused ones repeating view 0
  VkWriteDescriptorSet writes[kMaxTexelBindings];
  for (uint32_t k = 0; k < kMaxTexelBindings; ++k) {
    writes[k] = vk_struct<VkWriteDescriptorSet>(VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET);
    writes[k].dstBinding = k + 1;
    writes[k].descriptorCount = 1;
    writes[k].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER;
    writes[k].pTexelBufferView = &views[k < nviews ? k : 0];
  }
  device_.push_descriptor(cb, point, layout, 0, kMaxTexelBindings, writes);
}

void Kernels::push_params(VkCommandBuffer cb, const VkDescriptorBufferInfo& block) const {
  auto write = vk_struct<VkWriteDescriptorSet>(VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET);
  write.dstBinding = 0;
  write.descriptorCount = 1;
  write.descriptorType = VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
  write.pBufferInfo = &block;
  device_.push_descriptor(cb, VK_PIPELINE_BIND_POINT_COMPUTE, uniform_layout_, 0, 1, &write);
}

VkPipeline Kernels::pipeline(const Shader& shader, uint32_t local_size, const Spec& spec) {
  std::lock_guard<std::mutex> lock(mu_);
  const Key key{shader.code, local_size, spec};
  auto found = pipelines_.find(key);
  if (found != pipelines_.end()) return found->second.pipeline;
  Compiled c;
  // one module per shader, shared by its workgroup-size variants
  for (const auto& [k, other] : pipelines_)
    if (std::get<0>(k) == shader.code) c.module = other.module;
  const bool own_module = c.module == VK_NULL_HANDLE;
  if (own_module) {
    auto mi = vk_struct<VkShaderModuleCreateInfo>(VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO);
    mi.codeSize = shader.bytes;
    mi.pCode = shader.code;
    vk_check(vkCreateShaderModule(device_.device, &mi, nullptr, &c.module), shader.name);
  }
  c.owns_module = own_module;
  // constant 0: the workgroup size; 1..3: the variant
  const int32_t values[4] = {static_cast<int32_t>(local_size), spec[0], spec[1], spec[2]};
  VkSpecializationMapEntry entries[4];
  for (uint32_t k = 0; k < 4; ++k) entries[k] = {k, k * 4, 4};
  const VkSpecializationInfo info{4, entries, sizeof values, values};
  auto pi = vk_struct<VkComputePipelineCreateInfo>(VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO);
  pi.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  pi.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  pi.stage.module = c.module;
  pi.stage.pName = "main";
  pi.stage.pSpecializationInfo = &info;
  pi.layout = shader.texel_bindings > 0 ? texel_layout_ : uniform_layout_;
  const VkResult r =
      vkCreateComputePipelines(device_.device, VK_NULL_HANDLE, 1, &pi, nullptr, &c.pipeline);
  if (r != VK_SUCCESS) {
    if (own_module) vkDestroyShaderModule(device_.device, c.module, nullptr);
    vk_check(r, shader.name);
  }
  pipelines_.emplace(key, c);
  return c.pipeline;
}

uint32_t Kernels::local_size_for(const Shader& shader, uint64_t invocations) {
  if (!shader.any_workgroup || invocations >= kWorkgroup) return kWorkgroup;
  return invocations <= 8 ? 8 : 64;
}

Kernels::Spec Kernels::by_use(const Shader& shader, uint64_t invocations, const Spec& variant,
                              const Spec& generic, uint64_t work) {
  std::lock_guard<std::mutex> lock(mu_);
  const Key key{shader.code, local_size_for(shader, invocations), variant};
  if (pipelines_.count(key) != 0) return variant;
  uint64_t& done = generic_work_[key];
  done += work;
  return done >= kSpecializeAfter ? variant : generic;
}

void Kernels::dispatch(tsr_plugin_stream* stream, const Shader& shader, const void* params,
                       size_t nbytes, uint64_t invocations) {
  dispatch(stream, shader, params, nbytes, invocations, nullptr, 0);
}

void Kernels::dispatch(tsr_plugin_stream* stream, const Shader& shader, const void* params,
                       size_t nbytes, uint64_t invocations, const VkBufferView* views,
                       uint32_t nviews, const Spec& spec) {
  if (invocations == 0) return;
  if (nviews != shader.texel_bindings || nviews > kMaxTexelBindings)
    sdk::throw_status(TSR_INTERNAL, "vulkan plugin: shader %s takes %u texel views, got %u",
                      shader.name, shader.texel_bindings, nviews);
  const bool texel = nviews > 0;
  if (nbytes > (texel ? kMaxPushParams : kMaxParams) || nbytes % 4 != 0)
    sdk::throw_status(TSR_INTERNAL, "vulkan plugin: shader %s: a %zu-byte parameter block",
                      shader.name, nbytes);
  const uint32_t local = local_size_for(shader, invocations);
  const VkPipeline p = pipeline(shader, local, spec);
  tsr_plugin_stream& s = stream ? *stream : *device_.default_stream;
  std::lock_guard<std::mutex> lock(s.mu);
  // a ring slot first: taking one may submit the batch being recorded
  const uint64_t slot = !texel && s.ring != nullptr ? s.ring_slot(params, nbytes) : 0;
  VkCommandBuffer cb = s.record();
  if (texel) {
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p);
    push_texel_views(cb, VK_PIPELINE_BIND_POINT_COMPUTE, texel_layout_, views, nviews);
    vkCmdPushConstants(cb, texel_layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0,
                       static_cast<uint32_t>(nbytes), params);
  } else {
    // See Note [Shader parameters]: the block, in stream order, as binding 0
    VkDescriptorBufferInfo info{VK_NULL_HANDLE, 0, nbytes};
    if (s.ring != nullptr) {
      info.buffer = s.ring->block->buffer;
      info.offset = s.ring->offset + slot;
      vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p);
    } else {
      const Allocation& block = *s.params;
      vkCmdUpdateBuffer(cb, block.block->buffer, block.offset, nbytes, params);
      auto barrier = vk_struct<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
      barrier.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
      barrier.dstAccessMask = VK_ACCESS_UNIFORM_READ_BIT | VK_ACCESS_SHADER_READ_BIT;
      vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                           0, 1, &barrier, 0, nullptr, 0, nullptr);
      vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p);
      info.buffer = block.block->buffer;
      info.offset = block.offset;
    }
    push_params(cb, info);
  }
  const uint64_t groups = (invocations + local - 1) / local;
  const uint32_t gx = static_cast<uint32_t>(std::min<uint64_t>(groups, kMaxGroups));
  const uint32_t gy = static_cast<uint32_t>(std::min<uint64_t>((groups + gx - 1) / gx, kMaxGroups));
  vkCmdDispatch(cb, gx, gy, 1);
  s.command_done();
}

bool Kernels::batches(uint64_t elements) const {
  return device_.small_op_batches && elements <= kBatchElements;
}

void Kernels::batch(tsr_plugin_stream* stream, const Shader& batch_shader, const void* params,
                    size_t nbytes, uint64_t elements) {
  if (nbytes > kMaxParams || nbytes % 8 != 0)
    sdk::throw_status(TSR_INTERNAL, "vulkan plugin: batch shader %s: a %zu-byte parameter block",
                      batch_shader.name, nbytes);
  tsr_plugin_stream& s = stream ? *stream : *device_.default_stream;
  std::lock_guard<std::mutex> lock(s.mu);
  s.check();
  OpBatch& b = s.batch;
  if (b.count > 0 &&
      (b.shader != &batch_shader || b.count == b.max_ops || b.elements + elements > kBatchWork))
    s.record_batch();
  if (b.count == 0) {
    // A new batch: its size and pipeline, once per batch rather than per op.
    // The batch's uniform block is an 8-byte header, then the blocks.
    const uint64_t range = device_.properties.limits.maxUniformBufferRange;
    const auto max_ops = static_cast<uint32_t>(
        std::min<uint64_t>(kMaxBatchOps, range > 8 ? (range - 8) / nbytes : 0));
    if (max_ops == 0)
      sdk::throw_status(TSR_INTERNAL,
                        "vulkan plugin: maxUniformBufferRange %llu cannot hold a batch of %s",
                        static_cast<unsigned long long>(range), batch_shader.name);
    // Compiled here, not when the batch is recorded: a failure belongs to this op.
    pipeline(batch_shader, kBatchWorkgroup, Spec{static_cast<int32_t>(max_ops), 0, 0});
    b.shader = &batch_shader;
    b.block_bytes = static_cast<uint32_t>(nbytes);
    b.max_ops = max_ops;
    b.blocks.reserve(8 + size_t{max_ops} * nbytes);
    b.blocks.assign(8, std::byte{0});
  }
  const auto* bytes = static_cast<const std::byte*>(params);
  b.blocks.insert(b.blocks.end(), bytes, bytes + nbytes);
  ++b.count;
  b.elements += elements;
}

void Kernels::record_batch(tsr_plugin_stream& s, OpBatch& b) {
  const auto count = static_cast<int32_t>(b.count);
  std::memcpy(b.blocks.data(), &count, sizeof count);
  const VkPipeline p =
      pipeline(*b.shader, kBatchWorkgroup, Spec{static_cast<int32_t>(b.max_ops), 0, 0});
  // a ring slot first: taking one may submit what is being recorded
  const uint64_t slot = s.ring_slot(b.blocks.data(), b.blocks.size());
  VkCommandBuffer cb = s.record();
  vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p);
  push_params(cb, {s.ring->block->buffer, s.ring->offset + slot, b.blocks.size()});
  vkCmdDispatch(cb, 1, 1, 1);
  s.command_done();
}

const tsr_kernel_entry* kernel_table(size_t* count) {
  static const KernelList table = [] {
    KernelList t;
    add_copy_fill_arith_kernels(t);
    add_unary_binary_kernels(t);
    add_reduce_kernels(t);
    add_matmul_kernels(t);
    add_gather_scatter_kernels(t);
    add_sort_kernels(t);
    add_norm_kernels(t);
    add_convolution_kernels(t);
    return t;
  }();
  *count = table.size();
  return table.data();
}

}  // namespace tessera::vulkan
