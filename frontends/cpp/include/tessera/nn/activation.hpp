// tessera/nn/activation.hpp - stateless activation modules (torch.nn.ReLU,
// GELU, SiLU, Tanh, Sigmoid, Softmax, LogSoftmax): each wraps the operator of
// the same name, so autograd and every device come for free.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "tessera/nn/module.hpp"
#include "tessera/ops/pointwise.hpp"
#include "tessera/ops/reduction.hpp"

namespace tessera::nn {

class ReLU : public Module {
 public:
  std::string type_name() const override { return "ReLU"; }
  Tensor forward(const Tensor& input) override { return relu(input); }
};

// approximate: "none" (erf) or "tanh".
class GELU : public Module {
 public:
  explicit GELU(std::string approximate = "none") : approximate(std::move(approximate)) {
    if (this->approximate != "none" && this->approximate != "tanh")
      tessera::detail::throw_error(TSR_INVALID_ARGUMENT,
                                   "GELU: approximate must be 'none' or "
                                   "'tanh', got '" +
                                       this->approximate + "'");
  }
  std::string type_name() const override { return "GELU"; }
  std::string extra_repr() const override { return "approximate='" + approximate + "'"; }
  Tensor forward(const Tensor& input) override { return gelu(input, approximate.c_str()); }
  const std::string approximate;
};

class SiLU : public Module {
 public:
  std::string type_name() const override { return "SiLU"; }
  Tensor forward(const Tensor& input) override { return silu(input); }
};

class Tanh : public Module {
 public:
  std::string type_name() const override { return "Tanh"; }
  Tensor forward(const Tensor& input) override { return tanh(input); }
};

class Sigmoid : public Module {
 public:
  std::string type_name() const override { return "Sigmoid"; }
  Tensor forward(const Tensor& input) override { return sigmoid(input); }
};

class Softmax : public Module {
 public:
  explicit Softmax(int64_t dim) : dim(dim) {}
  std::string type_name() const override { return "Softmax"; }
  std::string extra_repr() const override { return "dim=" + std::to_string(dim); }
  Tensor forward(const Tensor& input) override { return softmax(input, dim); }
  const int64_t dim;
};

class LogSoftmax : public Module {
 public:
  explicit LogSoftmax(int64_t dim) : dim(dim) {}
  std::string type_name() const override { return "LogSoftmax"; }
  std::string extra_repr() const override { return "dim=" + std::to_string(dim); }
  Tensor forward(const Tensor& input) override { return log_softmax(input, dim); }
  const int64_t dim;
};

}  // namespace tessera::nn
