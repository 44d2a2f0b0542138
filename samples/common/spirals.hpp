// samples/common/spirals.hpp - the three interleaved 2-D spirals of the mlp
// and ddp samples, made deterministically from a generator: `points` points
// per arm, arm c at angle 2*pi*c/3 + 3*pi*r (one and a half turns) for radius
// r in [0, 1), the angle jittered by N(0, 0.2^2).
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <numbers>
#include <vector>

#include "tessera/data/data.hpp"
#include "tessera/nn.hpp"
#include "tessera/tessera.hpp"

namespace samples {

inline constexpr int64_t kSpiralClasses = 3;

// x: (3 * points, 2) float32; y: (3 * points) int64.
inline std::shared_ptr<tessera::data::TensorDataset> make_spirals(
    int64_t points, const tessera::Generator& generator) {
  std::vector<tessera::Tensor> xs;
  std::vector<tessera::Tensor> ys;
  const tessera::Tensor radius =
      tessera::arange(points, tessera::kFloat32) / static_cast<double>(points);
  for (int64_t c = 0; c < kSpiralClasses; ++c) {
    const tessera::Tensor angle = radius * 3.0 * std::numbers::pi +
                                  2.0 * std::numbers::pi * static_cast<double>(c) / kSpiralClasses +
                                  tessera::randn({points}, generator) * 0.2;
    xs.push_back(tessera::stack({radius * tessera::sin(angle), radius * tessera::cos(angle)}, 1));
    ys.push_back(tessera::full({points}, c, tessera::kInt64));
  }
  return std::make_shared<tessera::data::TensorDataset>(tessera::cat(xs), tessera::cat(ys));
}

// The mlp sample's model: Linear(2, 64) -> ReLU -> Linear(64, 64) -> ReLU -> Linear(64, 3).
inline std::shared_ptr<tessera::nn::Sequential> make_spiral_mlp() {
  namespace nn = tessera::nn;
  return std::make_shared<nn::Sequential>(std::initializer_list<std::shared_ptr<nn::Module>>{
      std::make_shared<nn::Linear>(2, 64), std::make_shared<nn::ReLU>(),
      std::make_shared<nn::Linear>(64, 64), std::make_shared<nn::ReLU>(),
      std::make_shared<nn::Linear>(64, kSpiralClasses)});
}

}  // namespace samples
