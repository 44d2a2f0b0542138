// kernels.cpp - pipelines and the primitive kernels of the Vulkan plugin.
#include "kernels.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "device.hpp"
#include "stream.hpp"
#include "tessera/sdk/half.hpp"
#include "tessera/sdk/status.hpp"
#include "vk_util.hpp"

namespace tessera::vulkan {
namespace {

const uint32_t kElementwiseSpv[] = {
#include "elementwise.spv.inc"
};

constexpr uint32_t kWorkgroup = 256;
constexpr uint32_t kMaxGroups = 65535;

}  // namespace

Kernels::Kernels(Device& device) : device_(device) {
  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(uint64_t)};
  auto li = vk_struct<VkPipelineLayoutCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO);
  li.pushConstantRangeCount = 1;
  li.pPushConstantRanges = &range;
  vk_check(vkCreatePipelineLayout(device.device, &li, nullptr, &layout_), "vkCreatePipelineLayout");
  auto mi = vk_struct<VkShaderModuleCreateInfo>(VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO);
  mi.codeSize = sizeof kElementwiseSpv;
  mi.pCode = kElementwiseSpv;
  vk_check(vkCreateShaderModule(device.device, &mi, nullptr, &elementwise_module_),
           "vkCreateShaderModule (elementwise)");
  auto pi = vk_struct<VkComputePipelineCreateInfo>(VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO);
  pi.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  pi.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  pi.stage.module = elementwise_module_;
  pi.stage.pName = "main";
  pi.layout = layout_;
  vk_check(vkCreateComputePipelines(device.device, VK_NULL_HANDLE, 1, &pi, nullptr, &elementwise_),
           "vkCreateComputePipelines (elementwise)");
}

Kernels::~Kernels() {
  if (elementwise_) vkDestroyPipeline(device_.device, elementwise_, nullptr);
  if (elementwise_module_) vkDestroyShaderModule(device_.device, elementwise_module_, nullptr);
  if (layout_) vkDestroyPipelineLayout(device_.device, layout_, nullptr);
}

void Kernels::elementwise(tsr_plugin_stream* stream, const KernelParams& params) {
  if (params.numel == 0) return;
  tsr_plugin_stream& s = stream ? *stream : *device_.default_stream;
  std::lock_guard<std::mutex> lock(s.mu);
  VkCommandBuffer cb = s.record();
  const Allocation& block = *s.params;
  vkCmdUpdateBuffer(cb, block.block->buffer, block.offset, sizeof params, &params);
  auto barrier = vk_struct<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
  barrier.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT;
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0,
                       1, &barrier, 0, nullptr, 0, nullptr);
  vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, elementwise_);
  const uint64_t address = block.address();
  vkCmdPushConstants(cb, layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof address, &address);
  const uint64_t groups = (static_cast<uint64_t>(params.numel) + kWorkgroup - 1) / kWorkgroup;
  const uint32_t gx = static_cast<uint32_t>(std::min<uint64_t>(groups, kMaxGroups));
  const uint32_t gy = static_cast<uint32_t>(std::min<uint64_t>((groups + gx - 1) / gx, kMaxGroups));
  vkCmdDispatch(cb, gx, gy, 1);
  s.command_done();
}

// ---------------------------------------------------------------------------
// Kernels
// ---------------------------------------------------------------------------
namespace {

const tsr_tensor_desc& tensor_arg(const tsr_kernel_call& call, int i) {
  if (i >= call.nargs || call.args[i].tag != TSR_VALUE_TENSOR || call.args[i].u.desc == nullptr)
    sdk::throw_status(TSR_INVALID_ARGUMENT, "vulkan plugin %s: argument %d is not a tensor",
                      call.op_name, i);
  return *call.args[i].u.desc;
}

tsr_scalar scalar_arg(const tsr_kernel_call& call, int i) {
  if (i >= call.nargs || call.args[i].tag != TSR_VALUE_SCALAR)
    sdk::throw_status(TSR_INVALID_ARGUMENT, "vulkan plugin %s: argument %d is not a Scalar",
                      call.op_name, i);
  return call.args[i].u.scalar;
}

double scalar_double(const tsr_scalar& s) {
  return s.kind == TSR_FLOAT64 || s.kind == TSR_COMPLEX128 ? s.v.f : static_cast<double>(s.v.i);
}
int64_t scalar_int(const tsr_scalar& s) {
  return s.kind == TSR_FLOAT64 || s.kind == TSR_COMPLEX128 ? static_cast<int64_t>(s.v.f) : s.v.i;
}

OperandParams operand(const tsr_tensor_desc& d, int ndim) {
  OperandParams o;
  const auto* a = static_cast<const Allocation*>(d.buffer);
  o.address = a != nullptr ? a->address() + static_cast<uint64_t>(d.byte_offset) : 0;
  o.dtype = d.dtype;
  for (int k = 0; k < ndim && k < d.ndim; ++k) o.strides[k] = d.strides[k];
  return o;
}

KernelParams params_over(const tsr_tensor_desc& out, ElementwiseOp op) {
  KernelParams p;
  p.op = static_cast<int32_t>(op);
  p.ndim = out.ndim;
  p.numel = 1;
  for (int d = 0; d < out.ndim; ++d) {
    p.sizes[d] = out.sizes[d];
    p.numel *= out.sizes[d];
  }
  p.t[0] = operand(out, out.ndim);
  p.noperands = 1;
  return p;
}

Kernels& kernels_of(tsr_plugin_context* context, const tsr_kernel_call& call) {
  check_validation(*context);
  return *device_at(*context, call.device, call.op_name).kernels;
}

// The bits of `value` stored as `dtype` (fill_).
uint64_t scalar_bits(const tsr_scalar& s, int32_t dtype) {
  const double f = scalar_double(s);
  const int64_t i = scalar_int(s);
  const bool integral = s.kind == TSR_BOOL || s.kind == TSR_INT64;
  switch (dtype) {
    case TSR_BOOL:
      return f != 0.0 || (integral && i != 0) ? 1 : 0;
    case TSR_FLOAT64: {
      uint64_t b;
      std::memcpy(&b, &f, 8);
      return b;
    }
    case TSR_FLOAT32: {
      const float x = static_cast<float>(f);
      uint32_t b;
      std::memcpy(&b, &x, 4);
      return b;
    }
    case TSR_FLOAT16:
      return sdk::half(f).bits;
    case TSR_BFLOAT16:
      return sdk::bfloat16(f).bits;
    default:
      return static_cast<uint64_t>(integral ? i : static_cast<int64_t>(f));
  }
}

tsr_status* fill_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) noexcept {
  return sdk::guard(context->host, [&] {
    const tsr_tensor_desc& out = call->outs[0];
    KernelParams p = params_over(out, ElementwiseOp::kFill);
    p.i[1] = static_cast<int64_t>(scalar_bits(scalar_arg(*call, 1), out.dtype));
    kernels_of(context, *call).elementwise(call->stream, p);
  });
}

tsr_status* copy_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) noexcept {
  return sdk::guard(context->host, [&] {
    const tsr_tensor_desc& out = call->outs[0];
    KernelParams p = params_over(out, ElementwiseOp::kCopy);
    p.t[1] = operand(tensor_arg(*call, 1), out.ndim);
    p.noperands = 2;
    kernels_of(context, *call).elementwise(call->stream, p);
  });
}

template <ElementwiseOp Op>
tsr_status* arith_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) noexcept {
  return sdk::guard(context->host, [&] {
    const tsr_tensor_desc& out = call->outs[0];
    KernelParams p = params_over(out, Op);
    p.t[1] = operand(tensor_arg(*call, 0), out.ndim);
    p.t[2] = operand(tensor_arg(*call, 1), out.ndim);
    p.noperands = 3;
    p.f[0] = 1.0;
    p.i[0] = 1;
    if (Op == ElementwiseOp::kAdd || Op == ElementwiseOp::kSub) {
      const tsr_scalar alpha = scalar_arg(*call, 2);
      p.f[0] = scalar_double(alpha);
      p.i[0] = scalar_int(alpha);
    }
    kernels_of(context, *call).elementwise(call->stream, p);
  });
}

constexpr uint64_t kReal = TSR_DTYPE_BIT(TSR_BOOL) | TSR_DTYPE_BIT(TSR_UINT8) |
                           TSR_DTYPE_BIT(TSR_INT8) | TSR_DTYPE_BIT(TSR_INT16) |
                           TSR_DTYPE_BIT(TSR_INT32) | TSR_DTYPE_BIT(TSR_INT64) |
                           TSR_DTYPE_BIT(TSR_FLOAT16) | TSR_DTYPE_BIT(TSR_BFLOAT16) |
                           TSR_DTYPE_BIT(TSR_FLOAT32) | TSR_DTYPE_BIT(TSR_FLOAT64);
constexpr uint64_t kNumeric = kReal & ~TSR_DTYPE_BIT(TSR_BOOL);
constexpr uint64_t kFloating = TSR_DTYPE_BIT(TSR_FLOAT16) | TSR_DTYPE_BIT(TSR_BFLOAT16) |
                               TSR_DTYPE_BIT(TSR_FLOAT32) | TSR_DTYPE_BIT(TSR_FLOAT64);

tsr_kernel_entry entry(const char* schema, std::initializer_list<uint64_t> masks,
                       tsr_kernel_fn fn) {
  tsr_kernel_entry e{};
  e.struct_size = sizeof e;
  e.schema = schema;
  size_t k = 0;
  for (uint64_t m : masks) e.dtype_masks[k++] = m;
  e.fn = fn;
  return e;
}

}  // namespace

const tsr_kernel_entry* kernel_table(size_t* count) {
  static const tsr_kernel_entry table[] = {
      entry("copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)",
            {kReal, kReal}, copy_kernel),
      entry("fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)", {kReal}, fill_kernel),
      entry("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", {kReal, kReal},
            arith_kernel<ElementwiseOp::kAdd>),
      entry("sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
            {kNumeric, kNumeric}, arith_kernel<ElementwiseOp::kSub>),
      entry("mul.Tensor(Tensor self, Tensor other) -> Tensor", {kReal, kReal},
            arith_kernel<ElementwiseOp::kMul>),
      entry("div.Tensor(Tensor self, Tensor other) -> Tensor", {kFloating, kFloating},
            arith_kernel<ElementwiseOp::kDiv>),
  };
  *count = sizeof table / sizeof table[0];
  return table;
}

}  // namespace tessera::vulkan
