// tessera/nn/dropout.hpp - torch.nn.Dropout: in training mode zeroes each
// element with probability p and scales the rest by 1 / (1 - p); in eval mode
// the identity. Draws come from the default generator of the input's device.
#pragma once

#include <string>

#include "tessera/nn/module.hpp"
#include "tessera/ops/nn.hpp"

namespace tessera::nn {

class Dropout : public Module {
 public:
  explicit Dropout(double p = 0.5) : p(p) {
    if (!(p >= 0.0 && p <= 1.0))
      tessera::detail::throw_error(TSR_INVALID_ARGUMENT,
                                   "Dropout: p must be in [0, 1], got " + std::to_string(p));
  }
  std::string type_name() const override { return "Dropout"; }
  std::string extra_repr() const override {
    std::string text = std::to_string(p);
    text.erase(text.find_last_not_of('0') + 1);
    if (text.back() == '.') text += '0';
    return "p=" + text + ", inplace=False";
  }
  Tensor forward(const Tensor& input) override { return dropout(input, p, is_training()); }
  const double p;
};

}  // namespace tessera::nn
