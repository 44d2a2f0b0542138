// cnn - a small CNN that tells horizontal, vertical and diagonal bars apart.
//
// The dataset is made here, deterministically from --seed: --images images
// per class (default 1000) of 1x16x16 pixels, each holding one bright bar
// (value 1, one pixel wide, 8 long) at a random position - in a row (class
// 0), a column (class 1) or on a diagonal, either direction, at a random
// offset (class 2; clipped at the border) - plus N(0, noise^2) noise on every
// pixel (--noise, default 0.4). random_split cuts
// it 80/20 into train and test; a DataLoader (batch 64, shuffled by a seeded
// generator) feeds
//   Conv2d(1, 8, 3, pad 1) -> BatchNorm2d -> ReLU -> MaxPool2d(2)
//   -> Conv2d(8, 16, 3, pad 1) -> BatchNorm2d -> ReLU -> MaxPool2d(2)
//   -> AdaptiveAvgPool2d(1) -> flatten -> Linear(16, 3),
// trained with SGD (lr 0.05, momentum 0.9) and cross entropy, the lr divided
// by 10 for the last third of the epochs (StepLR). Each epoch prints its mean
// train loss and the test accuracy (BatchNorm in eval mode); the summary the
// final figures. With --min-accuracy X the exit status is 1 when the final
// test accuracy (in %) is below X. Exit status 2: an error.
//
// The split, the training loop, the evaluation and the summary are shared
// with the other classifier samples: samples/common/classifier.hpp.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "common/classifier.hpp"
#include "common/options.hpp"
#include "tessera/data/data.hpp"
#include "tessera/nn.hpp"
#include "tessera/optim.hpp"
#include "tessera/tessera.hpp"

namespace {

namespace data = tessera::data;
namespace nn = tessera::nn;
namespace optim = tessera::optim;
using tessera::Tensor;

constexpr int64_t kClasses = 3;
constexpr int64_t kSide = 16;
constexpr int64_t kBarLength = 8;

// x: (3 * per_class, 1, 16, 16) float32; y: (3 * per_class) int64.
std::shared_ptr<data::TensorDataset> make_bars(int64_t per_class, double noise,
                                               const tessera::Generator& generator) {
  const int64_t count = kClasses * per_class;
  // Per image: the bar's offset and, for diagonals, its direction.
  const std::vector<int64_t> offsets =
      tessera::randint(0, kSide, {count}, generator, tessera::kInt64).to_vector<int64_t>();
  const std::vector<int64_t> starts =
      tessera::randint(0, kSide - kBarLength + 1, {count}, generator, tessera::kInt64)
          .to_vector<int64_t>();
  const std::vector<int64_t> flips =
      tessera::randint(0, 2, {count}, generator, tessera::kInt64).to_vector<int64_t>();
  std::vector<float> pixels(static_cast<size_t>(count * kSide * kSide), 0.0f);
  std::vector<int64_t> labels(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    const int64_t label = i / per_class;
    labels[static_cast<size_t>(i)] = label;
    float* image = pixels.data() + i * kSide * kSide;
    const auto at = static_cast<size_t>(i);
    for (int64_t a = starts[at]; a < starts[at] + kBarLength; ++a) {
      int64_t row = a;
      int64_t col = a;
      if (label == 0) {
        row = offsets[at];
      } else if (label == 1) {
        col = offsets[at];
      } else {
        // A diagonal through (a, a + shift), shift in [-7, 7].
        col = a + offsets[at] - (kSide / 2 - 1);
        if (flips[at] != 0) col = kSide - 1 - col;
      }
      if (col >= 0 && col < kSide) image[row * kSide + col] = 1.0f;
    }
  }
  Tensor x = tessera::tensor(pixels, {count, 1, kSide, kSide}, tessera::kFloat32);
  x = x + tessera::randn({count, 1, kSide, kSide}, generator) * noise;
  return std::make_shared<data::TensorDataset>(x, tessera::tensor(labels, tessera::kInt64));
}

struct SmallCnn : nn::Module {
  std::shared_ptr<nn::Sequential> features = register_module(
      "features",
      std::make_shared<nn::Sequential>(std::initializer_list<std::shared_ptr<nn::Module>>{
          std::make_shared<nn::Conv2d>(1, 8, std::vector<int64_t>{3}, std::vector<int64_t>{1},
                                       std::vector<int64_t>{1}),
          std::make_shared<nn::BatchNorm2d>(8), std::make_shared<nn::ReLU>(),
          std::make_shared<nn::MaxPool2d>(std::vector<int64_t>{2}),
          std::make_shared<nn::Conv2d>(8, 16, std::vector<int64_t>{3}, std::vector<int64_t>{1},
                                       std::vector<int64_t>{1}),
          std::make_shared<nn::BatchNorm2d>(16), std::make_shared<nn::ReLU>(),
          std::make_shared<nn::MaxPool2d>(std::vector<int64_t>{2}),
          std::make_shared<nn::AdaptiveAvgPool2d>(std::vector<int64_t>{1})}));
  std::shared_ptr<nn::Linear> head =
      register_module("head", std::make_shared<nn::Linear>(16, kClasses));

  Tensor forward(const Tensor& x) override { return (*head)(tessera::flatten((*features)(x), 1)); }
};

struct Config {
  int64_t epochs = 12;
  int64_t images = 1000;
  double noise = 0.4;
  double lr = 0.05;
  double min_accuracy = -1;
};

int run(const samples::CommonOptions& common, const Config& config) {
  const tessera::Device device = samples::apply_common_options(common);
  tessera::Generator generator(common.seed);

  samples::ClassifierData data = samples::split_dataset(
      make_bars(config.images, config.noise, generator), generator, device, 500);
  auto model = std::make_shared<SmallCnn>();
  model->to(device);
  optim::SGD optimizer(model->parameters(), {.lr = config.lr, .momentum = 0.9});
  optim::StepLR scheduler(optimizer, std::max<int64_t>(1, config.epochs - config.epochs / 3));

  const samples::TrainResult result =
      samples::train_classifier(*model, optimizer, data, config.epochs, common.quiet,
                                {.after_epoch = [&] { scheduler.step(); }});
  return samples::print_classifier_summary(device, data,
                                           {.sample = "cnn",
                                            .data = "16x16 bars (3 orientations)",
                                            .items = "images",
                                            .throughput = "images",
                                            .epochs = config.epochs,
                                            .min_accuracy = config.min_accuracy},
                                           result);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cnn: a small CNN on synthetic 16x16 images of bars (BatchNorm, SGD, StepLR)"};
  samples::CommonOptions common;
  samples::add_common_options(app, common);
  Config config;
  samples::add_classifier_options(app, config.epochs, config.min_accuracy, [&] {
    app.add_option("--images", config.images, "Images per class")
        ->check(CLI::Range(int64_t{10}, int64_t{100000}))
        ->capture_default_str();
    app.add_option("--noise", config.noise, "Standard deviation of the pixel noise")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str();
    app.add_option("--lr", config.lr, "SGD's initial learning rate")
        ->check(CLI::Range(1e-6, 10.0))
        ->capture_default_str();
  });
  CLI11_PARSE(app, argc, argv);
  try {
    return run(common, config);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "cnn: %s\n", error.what());
    return 2;
  }
}
