// tessera/nn/conv.hpp - Conv1d, Conv2d and ConvTranspose2d (torch.nn), zero
// padding. weight: (out, in / groups, *kernel) for convolutions and
// (in, out / groups, *kernel) for the transposed one; both initialised as
// PyTorch does: kaiming_uniform_(a = sqrt(5)) for the weight, and the bias
// from U(-1/sqrt(fan_in), 1/sqrt(fan_in)) with fan_in from the weight's
// shape (init::calculate_fan_in_and_fan_out).
//
// Sizes, strides, paddings and dilations are given per spatial dim or as one
// value for all ({3} or {3, 3}).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/factories.hpp"
#include "tessera/nn/init.hpp"
#include "tessera/nn/module.hpp"
#include "tessera/ops/linalg.hpp"

namespace tessera::nn {

namespace detail {
// `values` widened to `n` entries (one value repeats); throws otherwise.
inline std::vector<int64_t> expand_param(const std::vector<int64_t>& values, size_t n,
                                         const char* module, const char* what) {
  if (values.size() == n) return values;
  if (values.size() == 1) return std::vector<int64_t>(n, values[0]);
  tessera::detail::throw_error(
      TSR_INVALID_ARGUMENT, std::string(module) + ": " + what + " needs 1 or " + std::to_string(n) +
                                " values, got " + std::to_string(values.size()));
}
inline std::string tuple_text(const std::vector<int64_t>& v) {
  std::string text = "(";
  for (size_t k = 0; k < v.size(); ++k) text += (k ? ", " : "") + std::to_string(v[k]);
  return text + (v.size() == 1 ? ",)" : ")");
}
}  // namespace detail

// The parameters and checks shared by the convolution modules. N: spatial dims.
template <size_t N>
class ConvNd : public Module {
 public:
  ConvNd(const char* name, int64_t in_channels, int64_t out_channels,
         const std::vector<int64_t>& kernel_size, const std::vector<int64_t>& stride,
         const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation, int64_t groups,
         bool bias, bool transposed, const std::vector<int64_t>& output_padding,
         const TensorOptions& options)
      : in_channels(in_channels),
        out_channels(out_channels),
        kernel_size(detail::expand_param(kernel_size, N, name, "kernel_size")),
        stride(detail::expand_param(stride, N, name, "stride")),
        padding(detail::expand_param(padding, N, name, "padding")),
        dilation(detail::expand_param(dilation, N, name, "dilation")),
        output_padding(detail::expand_param(output_padding, N, name, "output_padding")),
        groups(groups),
        transposed(transposed),
        weight(register_parameter("weight", empty(weight_shape(name), options))),
        bias(register_parameter("bias", bias ? empty({out_channels}, options) : Tensor())),
        name_(name) {
    reset_parameters();
  }
  void reset_parameters() {
    init::kaiming_uniform_(weight, std::sqrt(5.0));
    if (bias.defined()) {
      const int64_t fan_in = init::calculate_fan_in_and_fan_out(weight).first;
      const double bound = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
      init::uniform_(bias, -bound, bound);
    }
  }
  std::string type_name() const override { return name_; }
  std::string extra_repr() const override {
    std::string text = std::to_string(in_channels) + ", " + std::to_string(out_channels) +
                       ", kernel_size=" + detail::tuple_text(kernel_size) +
                       ", stride=" + detail::tuple_text(stride);
    if (padding != std::vector<int64_t>(N, 0)) text += ", padding=" + detail::tuple_text(padding);
    if (dilation != std::vector<int64_t>(N, 1))
      text += ", dilation=" + detail::tuple_text(dilation);
    if (output_padding != std::vector<int64_t>(N, 0))
      text += ", output_padding=" + detail::tuple_text(output_padding);
    if (groups != 1) text += ", groups=" + std::to_string(groups);
    if (!bias.defined()) text += ", bias=False";
    return text;
  }

  const int64_t in_channels;
  const int64_t out_channels;
  const std::vector<int64_t> kernel_size;
  const std::vector<int64_t> stride;
  const std::vector<int64_t> padding;
  const std::vector<int64_t> dilation;
  const std::vector<int64_t> output_padding;
  const int64_t groups;
  const bool transposed;
  Tensor& weight;
  Tensor& bias;

 private:
  std::vector<int64_t> weight_shape(const char* name) const {
    if (groups <= 0 || in_channels % groups != 0 || out_channels % groups != 0)
      tessera::detail::throw_error(
          TSR_INVALID_ARGUMENT,
          std::string(name) + ": in_channels (" + std::to_string(in_channels) +
              ") and out_channels (" + std::to_string(out_channels) +
              ") must be divisible by groups (" + std::to_string(groups) + ")");
    std::vector<int64_t> shape = transposed
                                     ? std::vector<int64_t>{in_channels, out_channels / groups}
                                     : std::vector<int64_t>{out_channels, in_channels / groups};
    shape.insert(shape.end(), kernel_size.begin(), kernel_size.end());
    return shape;
  }
  std::string name_;
};

class Conv1d : public ConvNd<1> {
 public:
  Conv1d(int64_t in_channels, int64_t out_channels, std::vector<int64_t> kernel_size,
         std::vector<int64_t> stride = {1}, std::vector<int64_t> padding = {0},
         std::vector<int64_t> dilation = {1}, int64_t groups = 1, bool bias = true,
         const TensorOptions& options = {})
      : ConvNd<1>("Conv1d", in_channels, out_channels, kernel_size, stride, padding, dilation,
                  groups, bias, false, {0}, options) {}
  Tensor forward(const Tensor& input) override {
    return conv1d(input, weight, bias, stride, padding, dilation, groups);
  }
};

class Conv2d : public ConvNd<2> {
 public:
  Conv2d(int64_t in_channels, int64_t out_channels, std::vector<int64_t> kernel_size,
         std::vector<int64_t> stride = {1}, std::vector<int64_t> padding = {0},
         std::vector<int64_t> dilation = {1}, int64_t groups = 1, bool bias = true,
         const TensorOptions& options = {})
      : ConvNd<2>("Conv2d", in_channels, out_channels, kernel_size, stride, padding, dilation,
                  groups, bias, false, {0}, options) {}
  Tensor forward(const Tensor& input) override {
    return conv2d(input, weight, bias, stride, padding, dilation, groups);
  }
};

class ConvTranspose2d : public ConvNd<2> {
 public:
  ConvTranspose2d(int64_t in_channels, int64_t out_channels, std::vector<int64_t> kernel_size,
                  std::vector<int64_t> stride = {1}, std::vector<int64_t> padding = {0},
                  std::vector<int64_t> output_padding = {0}, int64_t groups = 1, bool bias = true,
                  std::vector<int64_t> dilation = {1}, const TensorOptions& options = {})
      : ConvNd<2>("ConvTranspose2d", in_channels, out_channels, kernel_size, stride, padding,
                  dilation, groups, bias, true, output_padding, options) {}
  Tensor forward(const Tensor& input) override {
    return conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups, dilation);
  }
};

}  // namespace tessera::nn
