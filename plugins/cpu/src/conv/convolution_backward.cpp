// convolution_backward.cpp - the convolution_backward kernel (schema in
// conv_table.cpp, contract in core/registry/defs/conv.def): float32 plain
// convolutions through oneDNN's backward-data and backward-weights
// primitives (onednn_conv.hpp), one call for the gradients the output mask
// asks for. oneDNN carries reference implementations of both for every plain
// float32 convolution, so a refusal means a broken oneDNN build and is
// reported as an internal error.
#include <algorithm>
#include <span>
#include <vector>

#include "../parallel.hpp"
#include "conv_kernels.hpp"
#include "onednn_conv.hpp"
#include "tessera/sdk/kernel_args.hpp"
#include "tessera/sdk/status.hpp"

namespace tessera::cpu {
namespace {

using conv_detail::call_scratch;
using conv_detail::int_list_arg;
using conv_detail::require;

// Row-major strides of `d` (size-1 dims get their contiguous value).
void contiguous_strides(const tsr_tensor_desc& d, int64_t* out) {
  int64_t running = 1;
  for (int i = d.ndim - 1; i >= 0; --i) {
    out[i] = running;
    running *= d.sizes[i];
  }
}

bool is_contiguous(const tsr_tensor_desc& d) {
  int64_t running = 1;
  for (int i = d.ndim - 1; i >= 0; --i) {
    if (d.sizes[i] != 1 && d.strides[i] != running) return false;
    running *= d.sizes[i];
  }
  return true;
}

}  // namespace

void convolution_backward_kernel(const tsr_plugin_context& context,
                                 const tsr_kernel_call* raw_call) {
  const tsr_kernel_call& call = sdk::check_call(raw_call, 11, 3);
  const tsr_tensor_desc& grad = sdk::tensor_arg(call, 0, "grad_output");
  const tsr_tensor_desc& input = sdk::tensor_arg(call, 1, "input");
  const tsr_tensor_desc& weight = sdk::tensor_arg(call, 2, "weight");
  const bool has_bias = !sdk::is_none(call, 3);
  tsr_tensor_desc& dx = sdk::out_arg(call, 0);
  tsr_tensor_desc& dw = sdk::out_arg(call, 1);
  tsr_tensor_desc& db = sdk::out_arg(call, 2);
  const std::span<const int32_t> mask = sdk::bool_list_arg(call, 10, "output_mask", 3);
  const bool want_dx = mask[0] != 0, want_dw = mask[1] != 0, want_db = mask[2] != 0;
  require(call, !want_db || has_bias, "output_mask asks for grad_bias but bias_sizes is None");
  const int k = input.ndim - 2;
  require(call,
          k >= 1 && k <= 3 && weight.ndim == input.ndim && grad.ndim == input.ndim &&
              dx.ndim == input.ndim && dw.ndim == input.ndim && db.ndim == 1,
          "grad_output, input, weight and the gradients must have 3 to 5 dims, the same count "
          "(grad_bias 1-d)");
  const tsr_tensor_desc* all[6] = {&grad, &input, &weight, &dx, &dw, &db};
  const char* names[6] = {"grad_output", "input",       "weight",
                          "grad_input",  "grad_weight", "grad_bias"};
  for (int i = 0; i < 6; ++i) {
    sdk::check_dtype(call, *all[i], names[i], TSR_FLOAT32);
    if (!is_contiguous(*all[i]))
      sdk::throw_status(TSR_INVALID_ARGUMENT,
                        "%s: argument '%s' must be contiguous (the core passes contiguous "
                        "tensors to this kernel)",
                        sdk::op_name(call), names[i]);
  }
  conv_problem p;
  p.spatial = k;
  int_list_arg(call, 4, "stride", k, p.stride);
  int_list_arg(call, 5, "padding", k, p.padding);
  int_list_arg(call, 6, "dilation", k, p.dilation);
  require(call, !sdk::bool_arg(call, 7, "transposed"),
          "transposed convolutions decompose in the core; this kernel takes plain ones");
  int_list_arg(call, 8, "output_padding", k, p.output_padding);
  p.groups = sdk::int_arg(call, 9, "groups");
  p.n = input.sizes[0];
  p.c = input.sizes[1];
  p.o = grad.sizes[1];
  p.has_bias = has_bias;
  require(call, p.groups > 0 && p.c % p.groups == 0 && p.o % p.groups == 0,
          "groups must divide the input and output channels");
  require(call, grad.sizes[0] == p.n, "grad_output's batch must equal input's");
  require(call, weight.sizes[0] == p.o && weight.sizes[1] == p.c / p.groups,
          "weight's channel dims do not match input, grad_output and groups");
  sdk::check_same_sizes(call, dx, "grad_input", input, "input");
  sdk::check_same_sizes(call, dw, "grad_weight", weight, "weight");
  require(call, db.sizes[0] == p.o, "grad_bias must have O elements");
  bool nonempty = p.n > 0 && p.c > 0 && p.o > 0;  // factors tested, never multiplied
  for (int i = 0; i < k; ++i) {
    p.in[i] = input.sizes[2 + i];
    p.kernel[i] = weight.sizes[2 + i];
    p.out[i] = grad.sizes[2 + i];
    require(call, p.stride[i] > 0 && p.dilation[i] > 0 && p.padding[i] >= 0 && p.kernel[i] > 0,
            "stride and dilation must be > 0, padding >= 0");
    const int64_t ext = p.dilation[i] * (p.kernel[i] - 1) + 1;
    require(call,
            p.in[i] + 2 * p.padding[i] >= ext &&
                p.out[i] == (p.in[i] + 2 * p.padding[i] - ext) / p.stride[i] + 1,
            "grad_output's spatial sizes do not match the convolution's");
    nonempty = nonempty && p.in[i] > 0 && p.out[i] > 0;
  }
  require(call, nonempty, "empty operands reach the kernel; the host handles them");
  contiguous_strides(input, p.src_strides);
  contiguous_strides(weight, p.weight_strides);
  contiguous_strides(grad, p.dst_strides);
  p.threads = thread_count(context);
  apply_thread_count(context);
  call_scratch scratch(call);
  const bool done = onednn_convolution_backward(
      p, static_cast<const float*>(input.data), static_cast<const float*>(weight.data),
      static_cast<const float*>(grad.data), want_dx ? static_cast<float*>(dx.data) : nullptr,
      want_dw ? static_cast<float*>(dw.data) : nullptr,
      want_db ? static_cast<float*>(db.data) : nullptr, scratch);
  if (!done)
    sdk::throw_status(TSR_INTERNAL,
                      "%s: oneDNN has no backward implementation for this float32 convolution "
                      "(its reference implementations should cover every plain one)",
                      sdk::op_name(call));
}

}  // namespace tessera::cpu
