// tessera/nn/normalization.hpp - LayerNorm, GroupNorm, RMSNorm, BatchNorm1d
// and BatchNorm2d (torch.nn), over the operators of the same names.
//
// Affine parameters start as weight = 1 and bias = 0. BatchNorm keeps
// running_mean (0), running_var (1) and num_batches_tracked (int64 0) as
// buffers when track_running_stats; in training mode each forward updates
// them (momentum, or a cumulative average when momentum is absent) and
// normalises with the batch's statistics, in eval mode it normalises with the
// running ones.
#pragma once

#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "tessera/factories.hpp"
#include "tessera/nn/module.hpp"
#include "tessera/ops/nn.hpp"

namespace tessera::nn {

namespace detail {
inline std::string shape_list(const std::vector<int64_t>& shape) {
  std::string text = "(";
  for (size_t k = 0; k < shape.size(); ++k) text += (k ? ", " : "") + std::to_string(shape[k]);
  return text + (shape.size() == 1 ? ",)" : ")");
}
inline std::string number(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}
}  // namespace detail

class LayerNorm : public Module {
 public:
  LayerNorm(std::vector<int64_t> normalized_shape, double eps = 1e-5,
            bool elementwise_affine = true, bool bias = true, const TensorOptions& options = {})
      : normalized_shape(std::move(normalized_shape)),
        eps(eps),
        elementwise_affine(elementwise_affine),
        weight(register_parameter(
            "weight", elementwise_affine ? ones(this->normalized_shape, options) : Tensor())),
        bias(register_parameter("bias", elementwise_affine && bias
                                            ? zeros(this->normalized_shape, options)
                                            : Tensor())) {}
  explicit LayerNorm(int64_t normalized_shape, double eps = 1e-5, bool elementwise_affine = true,
                     bool bias = true, const TensorOptions& options = {})
      : LayerNorm(std::vector<int64_t>{normalized_shape}, eps, elementwise_affine, bias, options) {}
  std::string type_name() const override { return "LayerNorm"; }
  std::string extra_repr() const override {
    return detail::shape_list(normalized_shape) + ", eps=" + detail::number(eps) +
           ", elementwise_affine=" + (elementwise_affine ? "True" : "False");
  }
  Tensor forward(const Tensor& input) override {
    return layer_norm(input, normalized_shape, weight, bias, eps);
  }

  const std::vector<int64_t> normalized_shape;
  const double eps;
  const bool elementwise_affine;
  Tensor& weight;
  Tensor& bias;
};

class RMSNorm : public Module {
 public:
  RMSNorm(std::vector<int64_t> normalized_shape, std::optional<double> eps = std::nullopt,
          bool elementwise_affine = true, const TensorOptions& options = {})
      : normalized_shape(std::move(normalized_shape)),
        eps(eps),
        elementwise_affine(elementwise_affine),
        weight(register_parameter(
            "weight", elementwise_affine ? ones(this->normalized_shape, options) : Tensor())) {}
  explicit RMSNorm(int64_t normalized_shape, std::optional<double> eps = std::nullopt,
                   bool elementwise_affine = true, const TensorOptions& options = {})
      : RMSNorm(std::vector<int64_t>{normalized_shape}, eps, elementwise_affine, options) {}
  std::string type_name() const override { return "RMSNorm"; }
  std::string extra_repr() const override {
    return detail::shape_list(normalized_shape) +
           ", eps=" + (eps ? detail::number(*eps) : std::string("None")) +
           ", elementwise_affine=" + (elementwise_affine ? "True" : "False");
  }
  Tensor forward(const Tensor& input) override {
    return rms_norm(input, normalized_shape, weight, eps);
  }

  const std::vector<int64_t> normalized_shape;
  const std::optional<double> eps;  // absent: the dtype's machine epsilon
  const bool elementwise_affine;
  Tensor& weight;
};

// Channels (dim 1) split into num_groups groups, each normalised over its
// channels and the spatial dims.
class GroupNorm : public Module {
 public:
  GroupNorm(int64_t num_groups, int64_t num_channels, double eps = 1e-5, bool affine = true,
            const TensorOptions& options = {})
      : num_groups(check_groups(num_groups, num_channels)),
        num_channels(num_channels),
        eps(eps),
        affine(affine),
        weight(register_parameter("weight", affine ? ones({num_channels}, options) : Tensor())),
        bias(register_parameter("bias", affine ? zeros({num_channels}, options) : Tensor())) {}
  std::string type_name() const override { return "GroupNorm"; }
  std::string extra_repr() const override {
    return std::to_string(num_groups) + ", " + std::to_string(num_channels) +
           ", eps=" + detail::number(eps) + ", affine=" + (affine ? "True" : "False");
  }
  Tensor forward(const Tensor& input) override {
    return group_norm(input, num_groups, weight, bias, eps);
  }

  const int64_t num_groups;
  const int64_t num_channels;
  const double eps;
  const bool affine;
  Tensor& weight;
  Tensor& bias;

 private:
  static int64_t check_groups(int64_t groups, int64_t channels) {
    if (groups <= 0 || channels % groups != 0)
      tessera::detail::throw_error(TSR_INVALID_ARGUMENT, "GroupNorm: num_channels (" +
                                                             std::to_string(channels) +
                                                             ") must be divisible by num_groups (" +
                                                             std::to_string(groups) + ")");
    return groups;
  }
};

// The shared body of BatchNorm1d/2d; `dims_ok` and `expected` describe the
// accepted input ranks.
class BatchNormBase : public Module {
 public:
  BatchNormBase(int64_t num_features, double eps, std::optional<double> momentum, bool affine,
                bool track_running_stats, const TensorOptions& options)
      : num_features(num_features),
        eps(eps),
        momentum(momentum),
        affine(affine),
        track_running_stats(track_running_stats),
        weight(register_parameter("weight", affine ? ones({num_features}, options) : Tensor())),
        bias(register_parameter("bias", affine ? zeros({num_features}, options) : Tensor())),
        running_mean(register_buffer(
            "running_mean", track_running_stats ? zeros({num_features}, options) : Tensor())),
        running_var(register_buffer(
            "running_var", track_running_stats ? ones({num_features}, options) : Tensor())),
        num_batches_tracked(register_buffer(
            "num_batches_tracked",
            track_running_stats ? zeros(IntList(), TensorOptions(kInt64).device(options.device()))
                                : Tensor())) {}
  std::string extra_repr() const override {
    return std::to_string(num_features) + ", eps=" + detail::number(eps) +
           ", momentum=" + (momentum ? detail::number(*momentum) : std::string("None")) +
           ", affine=" + (affine ? "True" : "False") +
           ", track_running_stats=" + (track_running_stats ? "True" : "False");
  }
  void reset_running_stats() {
    if (!track_running_stats) return;
    autograd::NoGradGuard no_grad;
    running_mean.zero_();
    running_var.fill_(1);
    num_batches_tracked.zero_();
  }
  Tensor forward(const Tensor& input) override {
    check_input(input);
    double factor = momentum.value_or(0.0);
    if (is_training() && track_running_stats) {
      autograd::NoGradGuard no_grad;
      num_batches_tracked.add_(1);
      if (!momentum) factor = 1.0 / static_cast<double>(num_batches_tracked.item<int64_t>());
    }
    const bool use_batch_stats = is_training() || !track_running_stats;
    const bool update = !is_training() || track_running_stats;
    return batch_norm(input, update ? running_mean : Tensor(), update ? running_var : Tensor(),
                      weight, bias, use_batch_stats, factor, eps);
  }

  const int64_t num_features;
  const double eps;
  const std::optional<double> momentum;  // absent: cumulative moving average
  const bool affine;
  const bool track_running_stats;
  Tensor& weight;
  Tensor& bias;
  Tensor& running_mean;
  Tensor& running_var;
  Tensor& num_batches_tracked;

 protected:
  virtual void check_input(const Tensor& input) const = 0;
};

// Input (N, C) or (N, C, L).
class BatchNorm1d : public BatchNormBase {
 public:
  explicit BatchNorm1d(int64_t num_features, double eps = 1e-5,
                       std::optional<double> momentum = 0.1, bool affine = true,
                       bool track_running_stats = true, const TensorOptions& options = {})
      : BatchNormBase(num_features, eps, momentum, affine, track_running_stats, options) {}
  std::string type_name() const override { return "BatchNorm1d"; }

 protected:
  void check_input(const Tensor& input) const override {
    const int64_t d = input.dim();
    if (d != 2 && d != 3)
      tessera::detail::throw_error(TSR_INVALID_ARGUMENT,
                                   "BatchNorm1d: expected 2D or 3D input "
                                   "(got " +
                                       std::to_string(d) + "D input)");
  }
};

// Input (N, C, H, W).
class BatchNorm2d : public BatchNormBase {
 public:
  explicit BatchNorm2d(int64_t num_features, double eps = 1e-5,
                       std::optional<double> momentum = 0.1, bool affine = true,
                       bool track_running_stats = true, const TensorOptions& options = {})
      : BatchNormBase(num_features, eps, momentum, affine, track_running_stats, options) {}
  std::string type_name() const override { return "BatchNorm2d"; }

 protected:
  void check_input(const Tensor& input) const override {
    const int64_t d = input.dim();
    if (d != 4)
      tessera::detail::throw_error(TSR_INVALID_ARGUMENT, "BatchNorm2d: expected 4D input (got " +
                                                             std::to_string(d) + "D input)");
  }
};

}  // namespace tessera::nn
