// tessera/nn/pooling.hpp - MaxPool2d, AvgPool2d and AdaptiveAvgPool2d
// (torch.nn) over the operators of the same names. A stride left empty
// defaults to the kernel size, as in PyTorch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tessera/nn/conv.hpp"
#include "tessera/nn/module.hpp"
#include "tessera/ops/linalg.hpp"

namespace tessera::nn {

class MaxPool2d : public Module {
 public:
  explicit MaxPool2d(std::vector<int64_t> kernel_size, std::vector<int64_t> stride = {},
                     std::vector<int64_t> padding = {0}, std::vector<int64_t> dilation = {1},
                     bool ceil_mode = false)
      : kernel_size(detail::expand_param(kernel_size, 2, "MaxPool2d", "kernel_size")),
        stride(stride.empty() ? this->kernel_size
                              : detail::expand_param(stride, 2, "MaxPool2d", "stride")),
        padding(detail::expand_param(padding, 2, "MaxPool2d", "padding")),
        dilation(detail::expand_param(dilation, 2, "MaxPool2d", "dilation")),
        ceil_mode(ceil_mode) {}
  std::string type_name() const override { return "MaxPool2d"; }
  std::string extra_repr() const override {
    return "kernel_size=" + detail::tuple_text(kernel_size) +
           ", stride=" + detail::tuple_text(stride) + ", padding=" + detail::tuple_text(padding) +
           ", dilation=" + detail::tuple_text(dilation) +
           ", ceil_mode=" + (ceil_mode ? "True" : "False");
  }
  Tensor forward(const Tensor& input) override {
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode);
  }
  const std::vector<int64_t> kernel_size, stride, padding, dilation;
  const bool ceil_mode;
};

class AvgPool2d : public Module {
 public:
  explicit AvgPool2d(std::vector<int64_t> kernel_size, std::vector<int64_t> stride = {},
                     std::vector<int64_t> padding = {0}, bool ceil_mode = false,
                     bool count_include_pad = true,
                     std::optional<int64_t> divisor_override = std::nullopt)
      : kernel_size(detail::expand_param(kernel_size, 2, "AvgPool2d", "kernel_size")),
        stride(stride.empty() ? this->kernel_size
                              : detail::expand_param(stride, 2, "AvgPool2d", "stride")),
        padding(detail::expand_param(padding, 2, "AvgPool2d", "padding")),
        ceil_mode(ceil_mode),
        count_include_pad(count_include_pad),
        divisor_override(divisor_override) {}
  std::string type_name() const override { return "AvgPool2d"; }
  std::string extra_repr() const override {
    return "kernel_size=" + detail::tuple_text(kernel_size) +
           ", stride=" + detail::tuple_text(stride) + ", padding=" + detail::tuple_text(padding);
  }
  Tensor forward(const Tensor& input) override {
    return avg_pool2d(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                      divisor_override);
  }
  const std::vector<int64_t> kernel_size, stride, padding;
  const bool ceil_mode;
  const bool count_include_pad;
  const std::optional<int64_t> divisor_override;
};

class AdaptiveAvgPool2d : public Module {
 public:
  explicit AdaptiveAvgPool2d(std::vector<int64_t> output_size)
      : output_size(detail::expand_param(output_size, 2, "AdaptiveAvgPool2d", "output_size")) {}
  std::string type_name() const override { return "AdaptiveAvgPool2d"; }
  std::string extra_repr() const override {
    return "output_size=" + detail::tuple_text(output_size);
  }
  Tensor forward(const Tensor& input) override { return adaptive_avg_pool2d(input, output_size); }
  const std::vector<int64_t> output_size;
};

}  // namespace tessera::nn
