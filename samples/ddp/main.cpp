// ddp - the mlp sample (samples/mlp: an MLP on three 2-D spirals, Adam,
// cosine lr) trained data-parallel with nn::parallel::DistributedDataParallel.
//
//   tessera run -n 2 -- ddp            # 2 ranks on this host
//   ddp                                # without the launcher: one rank
//
// Every rank makes the same dataset and split from --seed; a
// DistributedSampler gives each rank its share of every epoch, and each rank
// takes 64 / world_size examples per step, so a step sees the same global
// batch of 64 as the 1-rank run and DDP's averaged gradients are that
// batch's. The parameters start as rank 0's (DDP broadcasts them), so every
// rank ends with the same model; rank 0 prints the progress and the summary
// (the others print nothing). --min-accuracy X: exit 1 below X %.
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>

#include "common/classifier.hpp"
#include "common/options.hpp"
#include "common/spirals.hpp"
#include "tessera/data/data.hpp"
#include "tessera/distributed.hpp"
#include "tessera/nn.hpp"
#include "tessera/nn/parallel/distributed.hpp"
#include "tessera/optim.hpp"
#include "tessera/tessera.hpp"

namespace {

namespace data = tessera::data;
namespace dist = tessera::distributed;
namespace nn = tessera::nn;
namespace optim = tessera::optim;

struct Config {
  int64_t epochs = 40;
  int64_t points = 1000;
  double lr = 0.01;
  double min_accuracy = -1;
};

int run(const samples::CommonOptions& common, const Config& config) {
  if (std::getenv("RANK") != nullptr) {
    dist::init_process_group("auto");
  } else {  // a world of one
    dist::InitOptions o;
    o.init_method = "file:///tmp/tessera-ddp-" + std::to_string(::getpid());
    o.rank = 0;
    o.world_size = 1;
    dist::init_process_group("auto", o);
  }
  const int rank = dist::get_rank(), world = dist::get_world_size();
  if (64 % world != 0)
    throw std::runtime_error("the global batch of 64 must split evenly: use 1, 2, 4, ... ranks");
  const tessera::Device device = samples::apply_common_options(common);
  tessera::Generator generator(common.seed);

  // The mlp sample's 80/20 split; the train loader takes this rank's share.
  auto splits =
      data::random_split(samples::make_spirals(config.points, generator), {0.8, 0.2}, generator);
  const int64_t train_size = splits[0].size(), test_size = splits[1].size();
  auto sampler = std::make_shared<data::DistributedSampler>(train_size, world, rank,
                                                            /*shuffle=*/true, common.seed);
  samples::Loader::Options train_options{.batch_size = 64 / world, .sampler = sampler};
  samples::Loader::Options test_options{.batch_size = 512};
  if (!device.is_cpu()) train_options.device = test_options.device = device;
  samples::ClassifierData shard{samples::Loader(std::move(splits[0]), train_options),
                                samples::Loader(std::move(splits[1]), test_options), train_size,
                                test_size};

  auto model = samples::make_spiral_mlp();
  model->to(device);
  auto ddp = std::make_shared<nn::parallel::DistributedDataParallel>(model);
  optim::Adam optimizer(ddp->parameters(), {.lr = config.lr});
  optim::CosineAnnealingLR scheduler(optimizer, config.epochs);

  uint64_t epoch = 0;
  sampler->set_epoch(epoch);
  const samples::TrainResult result = samples::train_classifier(
      *ddp, optimizer, shard, config.epochs, common.quiet || rank != 0, {.after_epoch = [&] {
        scheduler.step();
        sampler->set_epoch(++epoch);
      }});
  if (rank != 0) return result.accuracy >= config.min_accuracy ? 0 : 1;
  return samples::print_classifier_summary(device, shard,
                                           {.sample = "ddp (" + std::to_string(world) + " ranks)",
                                            .data = "3 spirals",
                                            .items = "points",
                                            .throughput = "examples",
                                            .epochs = config.epochs,
                                            .min_accuracy = config.min_accuracy},
                                           result);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ddp: the mlp sample trained data-parallel (launch with `tessera run -n N -- ddp`)"};
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
    std::fprintf(stderr, "ddp: %s\n", error.what());
    return 2;
  }
}
