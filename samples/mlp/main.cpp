// mlp - an MLP classifier on three interleaved 2-D spirals.
//
// The dataset (samples/common/spirals.hpp) is made deterministically from --seed: --points points
// per arm (default 1000, so 3000), arm c at angle 2*pi*c/3 + 3*pi*r (one and a half turns) for
// radius r in [0, 1), the angle jittered by N(0, 0.2^2). random_split cuts it 80/20 into train and
// test; a DataLoader (batch 64, shuffled by a seeded generator) feeds Linear(2, 64) -> ReLU ->
// Linear(64, 64) -> ReLU -> Linear(64, 3), trained with Adam (lr 0.01) and cross entropy, the lr
// annealed by CosineAnnealingLR over the epochs. Each epoch prints its mean
// train loss and the test accuracy; the summary the final figures. With
// --min-accuracy X the exit status is 1 when the final test accuracy (in %)
// is below X. Exit status 2: an error.
//
// The split, the training loop, the evaluation and the summary are shared
// with the other classifier samples: samples/common/classifier.hpp.
#include <CLI/CLI.hpp>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "common/classifier.hpp"
#include "common/options.hpp"
#include "common/spirals.hpp"
#include "tessera/data/data.hpp"
#include "tessera/nn.hpp"
#include "tessera/optim.hpp"
#include "tessera/tessera.hpp"

namespace {

namespace optim = tessera::optim;

using samples::make_spirals;

struct Config {
  int64_t epochs = 40;
  int64_t points = 1000;
  double lr = 0.01;
  double min_accuracy = -1;
};

int run(const samples::CommonOptions& common, const Config& config) {
  const tessera::Device device = samples::apply_common_options(common);
  tessera::Generator generator(common.seed);

  samples::ClassifierData data =
      samples::split_dataset(make_spirals(config.points, generator), generator, device, 512);
  auto model = samples::make_spiral_mlp();
  model->to(device);
  optim::Adam optimizer(model->parameters(), {.lr = config.lr});
  optim::CosineAnnealingLR scheduler(optimizer, config.epochs);

  const samples::TrainResult result =
      samples::train_classifier(*model, optimizer, data, config.epochs, common.quiet,
                                {.after_epoch = [&] { scheduler.step(); }});
  return samples::print_classifier_summary(device, data,
                                           {.sample = "mlp",
                                            .data = "3 spirals",
                                            .items = "points",
                                            .throughput = "examples",
                                            .epochs = config.epochs,
                                            .min_accuracy = config.min_accuracy},
                                           result);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"mlp: an MLP classifier on three 2-D spirals (DataLoader, Adam, cosine lr)"};
  samples::CommonOptions common;
  samples::add_common_options(app, common);
  Config config;
  samples::add_classifier_options(app, config.epochs, config.min_accuracy, [&] {
    app.add_option("--points", config.points, "Points per spiral arm")
        ->check(CLI::Range(int64_t{10}, int64_t{1000000}))
        ->capture_default_str();
    app.add_option("--lr", config.lr, "Adam's initial learning rate")
        ->check(CLI::Range(1e-6, 10.0))
        ->capture_default_str();
  });
  CLI11_PARSE(app, argc, argv);
  try {
    return run(common, config);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "mlp: %s\n", error.what());
    return 2;
  }
}
