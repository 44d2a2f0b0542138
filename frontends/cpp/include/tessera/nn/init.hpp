// tessera/nn/init.hpp - parameter initialisers with torch.nn.init's formulas.
//
// Each fills its tensor in place without recording autograd and returns it.
// Fans follow torch.nn.init._calculate_fan_in_and_fan_out: for a weight of
// shape (out, in, *kernel), fan_in = in * prod(kernel) and
// fan_out = out * prod(kernel); tensors with fewer than two dimensions have
// no fans (an error). Gains follow calculate_gain. Random draws come from
// `generator` or, when absent, the default generator of the tensor's device.
#pragma once

#include <cmath>
#include <optional>
#include <string>
#include <utility>

#include "tessera/autograd.hpp"
#include "tessera/error.hpp"
#include "tessera/ops/random.hpp"
#include "tessera/tensor.hpp"

namespace tessera::nn::init {

enum class FanMode { FanIn, FanOut };

// The recommended gain of a nonlinearity: linear, conv*, sigmoid 1; tanh 5/3;
// relu sqrt(2); leaky_relu sqrt(2 / (1 + slope^2)) (slope 0.01 by default);
// selu 3/4.
inline double calculate_gain(const std::string& nonlinearity,
                             std::optional<double> param = std::nullopt) {
  if (nonlinearity == "linear" || nonlinearity == "sigmoid" || nonlinearity.rfind("conv", 0) == 0)
    return 1.0;
  if (nonlinearity == "tanh") return 5.0 / 3.0;
  if (nonlinearity == "relu") return std::sqrt(2.0);
  if (nonlinearity == "leaky_relu") {
    const double slope = param.value_or(0.01);
    return std::sqrt(2.0 / (1.0 + slope * slope));
  }
  if (nonlinearity == "selu") return 0.75;
  tessera::detail::throw_error(TSR_INVALID_ARGUMENT,
                               "calculate_gain: unsupported nonlinearity '" + nonlinearity +
                                   "'; use linear, conv1d/2d/3d, sigmoid, tanh, relu, leaky_relu "
                                   "or selu");
}

// (fan_in, fan_out) of a weight tensor.
inline std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& tensor) {
  const int64_t dims = tensor.dim();
  if (dims < 2)
    tessera::detail::throw_error(TSR_INVALID_ARGUMENT,
                                 "Fan in and fan out can not be computed for tensor with fewer "
                                 "than 2 dimensions (got " +
                                     std::to_string(dims) + ")");
  int64_t receptive = 1;
  for (int64_t d = 2; d < dims; ++d) receptive *= tensor.size(d);
  return {tensor.size(1) * receptive, tensor.size(0) * receptive};
}

inline Tensor& uniform_(Tensor& tensor, double a = 0.0, double b = 1.0,
                        GeneratorRef generator = {}) {
  autograd::NoGradGuard no_grad;
  return tessera::uniform_(tensor, a, b, generator);
}
inline Tensor& normal_(Tensor& tensor, double mean = 0.0, double std = 1.0,
                       GeneratorRef generator = {}) {
  autograd::NoGradGuard no_grad;
  return tessera::normal_(tensor, mean, std, generator);
}
inline Tensor& constant_(Tensor& tensor, const Scalar& value) {
  autograd::NoGradGuard no_grad;
  return tensor.fill_(value);
}
inline Tensor& zeros_(Tensor& tensor) { return constant_(tensor, 0); }
inline Tensor& ones_(Tensor& tensor) { return constant_(tensor, 1); }

// U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)).
inline Tensor& xavier_uniform_(Tensor& tensor, double gain = 1.0, GeneratorRef generator = {}) {
  const auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(tensor);
  const double std = gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out));
  const double a = std::sqrt(3.0) * std;
  return nn::init::uniform_(tensor, -a, a, generator);
}
// N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out)).
inline Tensor& xavier_normal_(Tensor& tensor, double gain = 1.0, GeneratorRef generator = {}) {
  const auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(tensor);
  const double std = gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out));
  return nn::init::normal_(tensor, 0.0, std, generator);
}

namespace detail {
inline double kaiming_std(const Tensor& tensor, double a, FanMode mode,
                          const std::string& nonlinearity) {
  const auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(tensor);
  const int64_t fan = mode == FanMode::FanIn ? fan_in : fan_out;
  if (fan == 0) return 0.0;  // PyTorch warns and leaves the tensor; we fill zeros below
  return calculate_gain(nonlinearity, a) / std::sqrt(static_cast<double>(fan));
}
}  // namespace detail

// U(-bound, bound), bound = gain * sqrt(3 / fan) (He et al.); `a` is the
// negative slope of leaky_relu.
inline Tensor& kaiming_uniform_(Tensor& tensor, double a = 0.0, FanMode mode = FanMode::FanIn,
                                const std::string& nonlinearity = "leaky_relu",
                                GeneratorRef generator = {}) {
  const double bound = std::sqrt(3.0) * detail::kaiming_std(tensor, a, mode, nonlinearity);
  return nn::init::uniform_(tensor, -bound, bound, generator);
}
// N(0, std^2), std = gain / sqrt(fan).
inline Tensor& kaiming_normal_(Tensor& tensor, double a = 0.0, FanMode mode = FanMode::FanIn,
                               const std::string& nonlinearity = "leaky_relu",
                               GeneratorRef generator = {}) {
  return nn::init::normal_(tensor, 0.0, detail::kaiming_std(tensor, a, mode, nonlinearity),
                           generator);
}

}  // namespace tessera::nn::init
