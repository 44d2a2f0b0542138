// tessera/nn/linear.hpp - Identity, Linear and Bilinear (torch.nn.Linear,
// torch.nn.Bilinear), with PyTorch's default initialisation: weights from
// kaiming_uniform_(a = sqrt(5)), i.e. U(-1/sqrt(fan_in), 1/sqrt(fan_in)), and
// biases from the same bound.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/factories.hpp"
#include "tessera/nn/init.hpp"
#include "tessera/nn/module.hpp"
#include "tessera/ops/arithmetic.hpp"
#include "tessera/ops/linalg.hpp"
#include "tessera/ops/shape.hpp"

namespace tessera::nn {

namespace detail {
inline std::string py_bool(bool b) { return b ? "True" : "False"; }
// U(-1/sqrt(fan_in), 1/sqrt(fan_in)), PyTorch's default for biases (and, via
// kaiming_uniform_(a = sqrt(5)), for weights).
inline void uniform_fan_in_(Tensor& t, int64_t fan_in) {
  const double bound = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
  init::uniform_(t, -bound, bound);
}
}  // namespace detail

// y = x, for slots in a model that need a module.
class Identity : public Module {
 public:
  std::string type_name() const override { return "Identity"; }
  Tensor forward(const Tensor& input) override { return input; }
};

// y = x W^T + b over the last dimension. weight: (out_features, in_features);
// bias: (out_features) or absent.
class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true,
         const TensorOptions& options = {})
      : in_features(in_features),
        out_features(out_features),
        weight(register_parameter("weight", empty({out_features, in_features}, options))),
        bias(register_parameter("bias", bias ? empty({out_features}, options) : Tensor())) {
    reset_parameters();
  }
  void reset_parameters() {
    init::kaiming_uniform_(weight, std::sqrt(5.0));
    if (bias.defined()) detail::uniform_fan_in_(bias, in_features);
  }
  std::string type_name() const override { return "Linear"; }
  std::string extra_repr() const override {
    return "in_features=" + std::to_string(in_features) +
           ", out_features=" + std::to_string(out_features) +
           ", bias=" + detail::py_bool(bias.defined());
  }
  Tensor forward(const Tensor& input) override { return linear(input, weight, bias); }

  const int64_t in_features;
  const int64_t out_features;
  Tensor& weight;
  Tensor& bias;
};

// y_k = x1^T A_k x2 + b_k. weight: (out, in1, in2); bias: (out). Inputs
// (*, in1) and (*, in2) with equal leading dimensions.
class Bilinear : public Module {
 public:
  Bilinear(int64_t in1_features, int64_t in2_features, int64_t out_features, bool bias = true,
           const TensorOptions& options = {})
      : in1_features(in1_features),
        in2_features(in2_features),
        out_features(out_features),
        weight(register_parameter("weight",
                                  empty({out_features, in1_features, in2_features}, options))),
        bias(register_parameter("bias", bias ? empty({out_features}, options) : Tensor())) {
    reset_parameters();
  }
  void reset_parameters() {
    detail::uniform_fan_in_(weight, in1_features);
    if (bias.defined()) detail::uniform_fan_in_(bias, in1_features);
  }
  std::string type_name() const override { return "Bilinear"; }
  std::string extra_repr() const override {
    return "in1_features=" + std::to_string(in1_features) +
           ", in2_features=" + std::to_string(in2_features) +
           ", out_features=" + std::to_string(out_features) +
           ", bias=" + detail::py_bool(bias.defined());
  }
  Tensor operator()(const Tensor& input1, const Tensor& input2) {
    return invoke({input1, input2},
                  [this](const std::vector<Tensor>& in) {
                    return std::vector<Tensor>{forward(in.at(0), in.at(1))};
                  })
        .at(0);
  }
  Tensor forward(const Tensor& input1, const Tensor& input2) {
    if (input1.dim() < 1 || input1.size(-1) != in1_features || input2.dim() < 1 ||
        input2.size(-1) != in2_features)
      tessera::detail::throw_error(TSR_INVALID_ARGUMENT,
                                   "Bilinear: inputs must end in " + std::to_string(in1_features) +
                                       " and " + std::to_string(in2_features) + " features");
    // Flatten the leading dimensions to one batch dimension n.
    std::vector<int64_t> lead = input1.sizes().vec();
    lead.pop_back();
    const Tensor x1 = input1.reshape({-1, in1_features});  // (n, in1)
    const Tensor x2 = input2.reshape({-1, in2_features});  // (n, in2)
    // t[o, n, j] = sum_i x1[n, i] W[o, i, j]; y[n, o] = sum_j t[o, n, j] x2[n, j]
    const Tensor t = matmul(x1.unsqueeze(0), weight);
    Tensor y = (t * x2.unsqueeze(0)).sum({-1}).t();
    if (bias.defined()) y = y + bias;
    lead.push_back(out_features);
    return y.reshape(lead);
  }

  const int64_t in1_features;
  const int64_t in2_features;
  const int64_t out_features;
  Tensor& weight;
  Tensor& bias;
};

}  // namespace tessera::nn
