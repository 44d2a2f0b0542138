// conv_kernels.hpp - the CPU plugin's convolution and pooling kernels
// (listed in conv_table.cpp; contracts in core/registry/defs/conv.def), and the
// argument readers they share.
//
// convolution: float32 runs oneDNN (onednn_conv.hpp), float64 and float32
// shapes oneDNN refuses run direct loops. Pooling: float32 and float64 run
// row-wise loops (a vertical pass over the window's rows into a row buffer,
// then a horizontal pass over the window's columns), which vectorise along the
// row and keep PyTorch's tie and NaN order for the indices.
#ifndef TESSERA_PLUGINS_CPU_CONV_CONV_KERNELS_HPP_
#define TESSERA_PLUGINS_CPU_CONV_CONV_KERNELS_HPP_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "../context.hpp"
#include "onednn_conv.hpp"
#include "tessera/plugin.h"
#include "tessera/sdk/kernel_args.hpp"
#include "tessera/sdk/status.hpp"

namespace tessera::cpu {

void convolution_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call);
// convolution_backward, plain float32 convolutions (oneDNN backward data and
// weights; onednn_conv.hpp)
void convolution_backward_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call);
void max_pool2d_with_indices_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call);
void max_pool2d_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call);
void avg_pool2d_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call);
void adaptive_avg_pool2d_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call);
void adaptive_max_pool2d_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call);
// The pooling backward kernels (pooling_backward.cpp): direct loops.
void max_pool2d_with_indices_backward_kernel(const tsr_plugin_context& context,
                                             const tsr_kernel_call* call);
void adaptive_max_pool2d_backward_kernel(const tsr_plugin_context& context,
                                         const tsr_kernel_call* call);
void avg_pool2d_backward_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call);
void adaptive_avg_pool2d_backward_kernel(const tsr_plugin_context& context,
                                         const tsr_kernel_call* call);

namespace conv_detail {

// An `int[]` argument of exactly `n` entries, copied into `out`.
void int_list_arg(const tsr_kernel_call& call, int index, const char* name, int n, int64_t* out);
// Throws INVALID_ARGUMENT naming `what` unless `ok`.
void require(const tsr_kernel_call& call, bool ok, const char* what);

// The kernel call's scratch allocator (valid until the call returns), with a
// heap fallback for hosts that offer none.
class call_scratch final : public conv_scratch {
 public:
  explicit call_scratch(const tsr_kernel_call& call) : call_(call) {}
  void* get(size_t bytes) override {
    constexpr size_t needed = offsetof(tsr_kernel_call, scratch_context) + sizeof(void*);
    if (call_.struct_size >= needed && call_.scratch != nullptr) {
      tsr_plugin_buffer buffer{};
      tsr_status* st = call_.scratch(call_.scratch_context, bytes, &buffer);
      if (st == nullptr && buffer.data != nullptr) return buffer.data;
      if (st != nullptr)
        sdk::throw_status(TSR_RESOURCE_EXHAUSTED, "%s: scratch of %zu bytes failed",
                          sdk::op_name(call_), bytes);
    }
    heap_.emplace_back(bytes / sizeof(float) + 16);
    return heap_.back().data();
  }

 private:
  const tsr_kernel_call& call_;
  std::vector<std::vector<float>> heap_;
};

}  // namespace conv_detail

}  // namespace tessera::cpu

#endif  // TESSERA_PLUGINS_CPU_CONV_CONV_KERNELS_HPP_
