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
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "common/options.hpp"
#include "common/progress.hpp"
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

  auto dataset = make_bars(config.images, config.noise, generator);
  auto splits = data::random_split(dataset, {0.8, 0.2}, generator);
  using Loader = data::DataLoader<std::vector<Tensor>>;
  Loader::Options train_options{.batch_size = 64, .shuffle = true, .generator = generator};
  Loader::Options test_options{.batch_size = 500};
  if (!device.is_cpu()) train_options.device = test_options.device = device;
  Loader train_loader(splits[0], train_options);
  Loader test_loader(splits[1], test_options);

  auto model = std::make_shared<SmallCnn>();
  model->to(device);
  optim::SGD optimizer(model->parameters(), {.lr = config.lr, .momentum = 0.9});
  optim::StepLR scheduler(optimizer, std::max<int64_t>(1, config.epochs - config.epochs / 3));

  // Test accuracy in %.
  auto evaluate = [&] {
    tessera::autograd::NoGradGuard no_grad;
    model->eval();
    int64_t correct = 0;
    for (std::vector<Tensor>& batch : test_loader) {
      const Tensor predicted = tessera::argmax((*model)(batch[0]), 1);
      correct += tessera::eq(predicted, batch[1]).sum().item<int64_t>();
    }
    model->train();
    return 100.0 * static_cast<double>(correct) / static_cast<double>(splits[1].size());
  };

  const int64_t batches = train_loader.size();
  samples::Progress progress("train", config.epochs * batches, common.quiet,
                             config.epochs * batches);
  samples::Stopwatch clock;
  double train_loss = 0;
  double accuracy = 0;
  for (int64_t epoch = 1; epoch <= config.epochs; ++epoch) {
    double loss_sum = 0;
    int64_t seen = 0;
    for (std::vector<Tensor>& batch : train_loader) {
      Tensor loss = tessera::cross_entropy((*model)(batch[0]), batch[1]);
      loss.backward();
      optimizer.step();
      optimizer.zero_grad();
      loss_sum += loss.item<double>();
      ++seen;
      progress.update(
          (epoch - 1) * batches + seen,
          samples::format("epoch %lld loss %.4f acc %.1f%%", static_cast<long long>(epoch),
                          loss_sum / static_cast<double>(seen), accuracy));
    }
    scheduler.step();
    train_loss = loss_sum / static_cast<double>(seen);
    accuracy = evaluate();
    progress.print_line(samples::format(
        "epoch %lld/%lld train loss %.4f test acc %.1f%%", static_cast<long long>(epoch),
        static_cast<long long>(config.epochs), train_loss, accuracy));
  }
  const double seconds = clock.seconds();
  progress.finish();

  const bool passed = accuracy >= config.min_accuracy;
  samples::Summary summary("cnn summary");
  summary.add("device", device.str())
      .add("data", samples::format("16x16 bars (3 orientations), %lld train / %lld test images",
                                   static_cast<long long>(splits[0].size()),
                                   static_cast<long long>(splits[1].size())))
      .add("epochs", std::to_string(config.epochs))
      .add("final train loss", samples::format("%.4f", train_loss))
      .add("test accuracy", samples::format("%.1f%%", accuracy))
      .add("time",
           samples::format("%.2f s (%.0f images/s)", seconds,
                           static_cast<double>(config.epochs * splits[0].size()) / seconds));
  if (config.min_accuracy >= 0)
    summary.add("min accuracy", samples::format("%.1f%% %s", config.min_accuracy,
                                                passed ? "PASSED" : "NOT REACHED"));
  summary.print();
  return passed ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cnn: a small CNN on synthetic 16x16 images of bars (BatchNorm, SGD, StepLR)"};
  samples::CommonOptions common;
  samples::add_common_options(app, common);
  Config config;
  app.add_option("--epochs", config.epochs, "Training epochs")
      ->check(CLI::Range(int64_t{1}, int64_t{1000000}))
      ->capture_default_str();
  app.add_option("--images", config.images, "Images per class")
      ->check(CLI::Range(int64_t{10}, int64_t{100000}))
      ->capture_default_str();
  app.add_option("--noise", config.noise, "Standard deviation of the pixel noise")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--lr", config.lr, "SGD's initial learning rate")
      ->check(CLI::Range(1e-6, 10.0))
      ->capture_default_str();
  app.add_option("--min-accuracy", config.min_accuracy,
                 "Exit 1 unless the final test accuracy (%) reaches this")
      ->check(CLI::Range(0.0, 100.0));
  CLI11_PARSE(app, argc, argv);
  try {
    return run(common, config);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "cnn: %s\n", error.what());
    return 2;
  }
}
