// samples/tinyblock/tinyblock.hpp - the TinyBlock model as a
// tessera::nn module: Linear(3, 8) -> LayerNorm(8) -> GELU -> Dropout(0.25)
// -> Linear(8, 2), divided by a `temperature` buffer (2.0). The sample trains
// it; frontends/cpp/tests check it against PyTorch.
#pragma once

#include <memory>

#include "tessera/nn.hpp"
#include "tessera/tessera.hpp"

namespace tinyblock {

struct TinyBlock : tessera::nn::Module {
  std::shared_ptr<tessera::nn::Linear> up =
      register_module("up", std::make_shared<tessera::nn::Linear>(3, 8));
  std::shared_ptr<tessera::nn::LayerNorm> norm =
      register_module("norm", std::make_shared<tessera::nn::LayerNorm>(8));
  std::shared_ptr<tessera::nn::Dropout> dropout =
      register_module("dropout", std::make_shared<tessera::nn::Dropout>(0.25));
  std::shared_ptr<tessera::nn::Linear> down =
      register_module("down", std::make_shared<tessera::nn::Linear>(8, 2));
  tessera::Tensor& temperature =
      register_buffer("temperature", tessera::scalar_tensor(2.0, tessera::kFloat32));

  tessera::Tensor forward(const tessera::Tensor& x) override {
    tessera::Tensor h = (*up)(x);
    h = tessera::gelu((*norm)(h));
    h = (*dropout)(h);
    return (*down)(h) / temperature;
  }
};

}  // namespace tinyblock
