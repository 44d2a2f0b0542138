// kernels.hpp - compute pipelines and the kernel table of the Vulkan plugin.
//
// Shaders are GLSL compute shaders (shaders/<name>.comp, sharing
// shaders/common.glsl) compiled to SPIR-V at build time by glslc, validated
// with spirv-val and embedded as <name>.spv.inc. Every pipeline has the same
// layout: no descriptor sets, one push constant - the device address of a
// parameter block that the host writes into the stream's parameter buffer
// (vkCmdUpdateBuffer, in stream order) just before the dispatch; kernels
// reach tensors through device addresses (Note [Vulkan memory]). Pipelines
// are created on first use, so a process that never computes on the device
// compiles no shader.
//
// Kernel families live in kernels_<family>.cpp; each adds its entries to
// the table through add_<family>_kernels().
#pragma once

#include <vulkan/vulkan.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "tessera/plugin.h"

namespace tessera::vulkan {

struct Device;

// An embedded SPIR-V module. Static storage.
struct Shader {
  const char* name;
  const uint32_t* code;
  size_t bytes;
};

// The pipelines of one device. Owned by the Device.
class Kernels {
 public:
  static constexpr size_t kMaxParams = 4096;   // the stream's parameter buffer
  static constexpr uint32_t kWorkgroup = 256;  // every shader's local_size_x

  explicit Kernels(Device& device);
  ~Kernels();
  Kernels(const Kernels&) = delete;
  Kernels& operator=(const Kernels&) = delete;

  // Records `shader` on `stream` (NULL: the default stream) with the
  // parameter block `params` (nbytes <= kMaxParams, a multiple of 4) over at
  // least `invocations` invocations (workgroups of kWorkgroup, a 2-D grid past
  // 65535 groups; shaders loop when they need more). Nothing when
  // invocations is 0. Throws on Vulkan failure.
  void dispatch(tsr_plugin_stream* stream, const Shader& shader, const void* params, size_t nbytes,
                uint64_t invocations);

 private:
  VkPipeline pipeline(const Shader& shader);

  Device& device_;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  std::mutex mu_;
  struct Compiled {
    VkShaderModule module = VK_NULL_HANDLE;
    VkPipeline pipeline = VK_NULL_HANDLE;
  };
  std::map<const uint32_t*, Compiled> pipelines_;  // guarded by mu_
};

using KernelList = std::vector<tsr_kernel_entry>;
// copy_, fill_.Scalar, add/sub/mul/div.Tensor (kernels_elementwise.cpp)
void add_elementwise_kernels(KernelList& out);
// _unary, _binary, where.self (kernels_pointwise.cpp)
void add_pointwise_kernels(KernelList& out);
// _reduce, _arg_reduce, _scan (kernels_reduce.cpp)
void add_reduce_kernels(KernelList& out);
// mm, bmm (kernels_linalg.cpp)
void add_linalg_kernels(KernelList& out);
// _iota_, gather, _scatter_ (kernels_index.cpp)
void add_index_kernels(KernelList& out);
// nonzero, sort.stable, searchsorted.Tensor (kernels_sort.cpp)
void add_sort_kernels(KernelList& out);
// fused _softmax, _log_softmax, native_layer_norm, convolution (kernels_nn.cpp)
void add_nn_kernels(KernelList& out);

// tsr_plugin_api.random_fill: Philox4x32-10 fills on the device, bit-identical
// to the CPU plugin (kernels_random.cpp). NULL: the core fills on the host.
using RandomFillFn = tsr_status* (*)(tsr_plugin_context*, const tsr_random_fill_call*) noexcept;
RandomFillFn random_fill_kernel();

// The kernel table: every family's entries. Static storage.
const tsr_kernel_entry* kernel_table(size_t* count);

}  // namespace tessera::vulkan
