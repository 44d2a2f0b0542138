// kernels.hpp - compute pipelines and the kernel table of the Vulkan plugin.
//
// Shaders are GLSL compute shaders compiled to SPIR-V at build time (glslc),
// validated with spirv-val and embedded (shaders/*.comp -> <name>.spv.inc).
// Every pipeline has the same layout: no descriptor sets, one push constant,
// the device address of a parameter block that the host writes into the
// stream's parameter buffer (vkCmdUpdateBuffer) just before the dispatch;
// kernels reach tensors through device addresses (Note [Vulkan memory]).
#pragma once

#include <vulkan/vulkan.h>

#include <cstddef>
#include <cstdint>

#include "tessera/plugin.h"

namespace tessera::vulkan {

struct Device;

// Codes of elementwise.comp (keep in sync with its OP_* constants).
enum class ElementwiseOp : int32_t { kFill = 0, kCopy = 1, kAdd = 2, kSub = 3, kMul = 4, kDiv = 5 };

// One tensor operand of a kernel, as elementwise.comp reads it (std430).
struct OperandParams {
  uint64_t address = 0;
  int64_t strides[8] = {};
  int32_t dtype = 0;
  int32_t pad_ = 0;
};

// The parameter block of elementwise.comp (std430 layout, 440 bytes).
struct KernelParams {
  int64_t numel = 0;
  int32_t ndim = 0;
  int32_t op = 0;
  int32_t noperands = 0;
  int32_t pad_ = 0;
  int64_t sizes[8] = {};
  OperandParams t[4];
  double f[2] = {};
  int64_t i[2] = {};
};
static_assert(offsetof(KernelParams, sizes) == 24);
static_assert(offsetof(KernelParams, t) == 88);
static_assert(offsetof(KernelParams, f) == 408);
static_assert(sizeof(KernelParams) == 440);

// The pipelines of one device. Owned by the Device.
class Kernels {
 public:
  explicit Kernels(Device& device);
  ~Kernels();
  Kernels(const Kernels&) = delete;
  Kernels& operator=(const Kernels&) = delete;

  // Records elementwise.comp with `params` on `stream` (NULL: the default).
  void elementwise(tsr_plugin_stream* stream, const KernelParams& params);

 private:
  Device& device_;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  VkShaderModule elementwise_module_ = VK_NULL_HANDLE;
  VkPipeline elementwise_ = VK_NULL_HANDLE;
};

// The kernel table (every entry's schema, dtype masks and function).
const tsr_kernel_entry* kernel_table(size_t* count);

}  // namespace tessera::vulkan
