// mlp - an MLP classifier on three interleaved 2-D spirals.
//
// The dataset is made here, deterministically from --seed: --points points
// per arm (default 1000, so 3000), arm c at angle 2*pi*c/3 + 3*pi*r (one and a half turns) for
// radius r in [0, 1), the angle jittered by N(0, 0.2^2). random_split cuts it 80/20 into train and
// test; a DataLoader (batch 64, shuffled by a seeded generator) feeds Linear(2, 64) -> ReLU ->
// Linear(64, 64) -> ReLU -> Linear(64, 3), trained with Adam (lr 0.01) and cross entropy, the lr
// annealed by CosineAnnealingLR over the epochs. Each epoch prints its mean
// train loss and the test accuracy; the summary the final figures. With
// --min-accuracy X the exit status is 1 when the final test accuracy (in %)
// is below X. Exit status 2: an error.
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <numbers>
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

// x: (3 * points, 2) float32; y: (3 * points) int64.
std::shared_ptr<data::TensorDataset> make_spirals(int64_t points,
                                                  const tessera::Generator& generator) {
  std::vector<Tensor> xs;
  std::vector<Tensor> ys;
  const Tensor radius = tessera::arange(points, tessera::kFloat32) / static_cast<double>(points);
  for (int64_t c = 0; c < kClasses; ++c) {
    const Tensor angle = radius * 3.0 * std::numbers::pi +
                         2.0 * std::numbers::pi * static_cast<double>(c) / kClasses +
                         tessera::randn({points}, generator) * 0.2;
    xs.push_back(tessera::stack({radius * tessera::sin(angle), radius * tessera::cos(angle)}, 1));
    ys.push_back(tessera::full({points}, c, tessera::kInt64));
  }
  return std::make_shared<data::TensorDataset>(tessera::cat(xs), tessera::cat(ys));
}

struct Config {
  int64_t epochs = 40;
  int64_t points = 1000;
  double lr = 0.01;
  double min_accuracy = -1;
};

int run(const samples::CommonOptions& common, const Config& config) {
  const tessera::Device device = samples::apply_common_options(common);
  tessera::Generator generator(common.seed);

  auto dataset = make_spirals(config.points, generator);
  auto splits = data::random_split(dataset, {0.8, 0.2}, generator);
  using Loader = data::DataLoader<std::vector<Tensor>>;
  Loader::Options train_options{.batch_size = 64, .shuffle = true, .generator = generator};
  Loader::Options test_options{.batch_size = 512};
  if (!device.is_cpu()) train_options.device = test_options.device = device;
  Loader train_loader(splits[0], train_options);
  Loader test_loader(splits[1], test_options);

  auto model = std::make_shared<nn::Sequential>(std::initializer_list<std::shared_ptr<nn::Module>>{
      std::make_shared<nn::Linear>(2, 64), std::make_shared<nn::ReLU>(),
      std::make_shared<nn::Linear>(64, 64), std::make_shared<nn::ReLU>(),
      std::make_shared<nn::Linear>(64, kClasses)});
  model->to(device);
  optim::Adam optimizer(model->parameters(), {.lr = config.lr});
  optim::CosineAnnealingLR scheduler(optimizer, config.epochs);

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
  samples::Summary summary("mlp summary");
  summary.add("device", device.str())
      .add("data", samples::format("3 spirals, %lld train / %lld test points",
                                   static_cast<long long>(splits[0].size()),
                                   static_cast<long long>(splits[1].size())))
      .add("epochs", std::to_string(config.epochs))
      .add("final train loss", samples::format("%.4f", train_loss))
      .add("test accuracy", samples::format("%.1f%%", accuracy))
      .add("time",
           samples::format("%.2f s (%.0f examples/s)", seconds,
                           static_cast<double>(config.epochs * splits[0].size()) / seconds));
  if (config.min_accuracy >= 0)
    summary.add("min accuracy", samples::format("%.1f%% %s", config.min_accuracy,
                                                passed ? "PASSED" : "NOT REACHED"));
  summary.print();
  return passed ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"mlp: an MLP classifier on three 2-D spirals (DataLoader, Adam, cosine lr)"};
  samples::CommonOptions common;
  samples::add_common_options(app, common);
  Config config;
  app.add_option("--epochs", config.epochs, "Training epochs")
      ->check(CLI::Range(int64_t{1}, int64_t{1000000}))
      ->capture_default_str();
  app.add_option("--points", config.points, "Points per spiral arm")
      ->check(CLI::Range(int64_t{10}, int64_t{1000000}))
      ->capture_default_str();
  app.add_option("--lr", config.lr, "Adam's initial learning rate")
      ->check(CLI::Range(1e-6, 10.0))
      ->capture_default_str();
  app.add_option("--min-accuracy", config.min_accuracy,
                 "Exit 1 unless the final test accuracy (%) reaches this")
      ->check(CLI::Range(0.0, 100.0));
  CLI11_PARSE(app, argc, argv);
  try {
    return run(common, config);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "mlp: %s\n", error.what());
    return 2;
  }
}
