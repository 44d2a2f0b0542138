// samples/common/classifier.hpp - what the classifier samples (mlp, cnn,
// transformer) share, so that each main.cpp keeps only its data, model,
// optimizer, scheduler and options, and all three train and report alike:
//
// - split_dataset(): random_split 80/20 into a train DataLoader (batch 64,
//   shuffled by the sample's generator) and a test DataLoader;
// - evaluate_accuracy(): test accuracy in % (argmax of the logits, eval mode,
//   no grad);
// - train_classifier(): the epoch loop - loss, backward, step, zero_grad per
//   batch, with hooks after backward (clip_grad_norm_), after each step (a
//   per-batch scheduler) and after each epoch (a per-epoch scheduler); the
//   progress bar, the mean train loss and the test accuracy of each epoch;
// - print_classifier_summary(): the summary ("device", "data", "epochs",
//   "final train loss", "test accuracy", "time", and "min accuracy ...
//   PASSED/NOT REACHED" with --min-accuracy) and the exit status (1 when the
//   minimum accuracy is not reached).
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/progress.hpp"
#include "tessera/data/data.hpp"
#include "tessera/nn.hpp"
#include "tessera/optim.hpp"
#include "tessera/tessera.hpp"

namespace samples {

// A batch of a TensorDataset of (x, y): {x, y}.
using Batch = std::vector<tessera::Tensor>;
using Loader = tessera::data::DataLoader<Batch>;

// The train and test loaders and the sizes of their splits.
struct ClassifierData {
  Loader train;
  Loader test;
  int64_t train_size = 0;
  int64_t test_size = 0;
};

// Cuts `dataset` 80/20 (random_split, drawn from `generator`) into a train
// loader (batch 64, shuffled by `generator`) and a test loader (batch
// `test_batch`); off the CPU both put their batches on `device`.
inline ClassifierData split_dataset(const std::shared_ptr<tessera::data::TensorDataset>& dataset,
                                    const tessera::Generator& generator,
                                    const tessera::Device& device, int64_t test_batch) {
  auto splits = tessera::data::random_split(dataset, {0.8, 0.2}, generator);
  Loader::Options train_options{.batch_size = 64, .shuffle = true, .generator = generator};
  Loader::Options test_options{.batch_size = test_batch};
  if (!device.is_cpu()) train_options.device = test_options.device = device;
  const int64_t train_size = splits[0].size();
  const int64_t test_size = splits[1].size();
  // Braced initialization: the loaders are made in order, train first.
  return ClassifierData{Loader(std::move(splits[0]), train_options),
                        Loader(std::move(splits[1]), test_options), train_size, test_size};
}

// Accuracy of `model` over `loader` in % of `examples`: argmax of its logits
// (batch[0]) against the labels (batch[1]), in eval mode without grad; the
// model is back in train mode after.
inline double evaluate_accuracy(tessera::nn::Module& model, Loader& loader, int64_t examples) {
  tessera::autograd::NoGradGuard no_grad;
  model.eval();
  int64_t correct = 0;
  for (Batch& batch : loader) {
    const tessera::Tensor predicted = tessera::argmax(model(batch[0]), 1);
    correct += tessera::eq(predicted, batch[1]).sum().item<int64_t>();
  }
  model.train();
  return 100.0 * static_cast<double>(correct) / static_cast<double>(examples);
}

// What train_classifier() calls besides the fixed sequence; empty: nothing.
struct TrainHooks {
  // The loss of a batch; empty: cross_entropy(model(batch[0]), batch[1]).
  std::function<tessera::Tensor(Batch&)> loss{};
  // After backward, before optimizer.step() (e.g. clip_grad_norm_).
  std::function<void()> after_backward{};
  // After optimizer.step() and zero_grad() (e.g. a per-batch lr scheduler).
  std::function<void()> after_step{};
  // After an epoch's batches, before the evaluation (a per-epoch scheduler).
  std::function<void()> after_epoch{};
};

struct TrainResult {
  double train_loss = 0;  // mean over the last epoch's batches
  double accuracy = 0;    // test accuracy (%) after the last epoch
  double seconds = 0;     // wall-clock time of the training
};

// Trains `model` for `epochs` epochs over data.train: per batch the loss,
// backward, optimizer.step(), zero_grad(), with `hooks` between; after each
// epoch the test accuracy over data.test. The bar (stderr, once at the end
// off a terminal) shows the running mean loss; each epoch prints
// "epoch E/N train loss L test acc A%" (stdout). Nothing but the result with
// quiet.
inline TrainResult train_classifier(tessera::nn::Module& model,
                                    tessera::optim::Optimizer& optimizer, ClassifierData& data,
                                    int64_t epochs, bool quiet, const TrainHooks& hooks = {}) {
  const int64_t batches = data.train.size();
  Progress progress("train", epochs * batches, quiet, epochs * batches);
  Stopwatch clock;
  TrainResult result;
  for (int64_t epoch = 1; epoch <= epochs; ++epoch) {
    double loss_sum = 0;
    int64_t seen = 0;
    for (Batch& batch : data.train) {
      tessera::Tensor loss =
          hooks.loss ? hooks.loss(batch) : tessera::cross_entropy(model(batch[0]), batch[1]);
      loss.backward();
      if (hooks.after_backward) hooks.after_backward();
      optimizer.step();
      optimizer.zero_grad();
      if (hooks.after_step) hooks.after_step();
      loss_sum += loss.item<double>();
      ++seen;
      progress.update((epoch - 1) * batches + seen,
                      format("epoch %lld loss %.4f acc %.1f%%", static_cast<long long>(epoch),
                             loss_sum / static_cast<double>(seen), result.accuracy));
    }
    if (hooks.after_epoch) hooks.after_epoch();
    result.train_loss = loss_sum / static_cast<double>(seen);
    result.accuracy = evaluate_accuracy(model, data.test, data.test_size);
    progress.print_line(format("epoch %lld/%lld train loss %.4f test acc %.1f%%",
                               static_cast<long long>(epoch), static_cast<long long>(epochs),
                               result.train_loss, result.accuracy));
  }
  result.seconds = clock.seconds();
  progress.finish();
  return result;
}

// What a classifier's summary says besides the training result.
struct ClassifierReport {
  std::string sample{};      // "mlp": the title is "mlp summary"
  std::string data{};        // "3 spirals": the data row is "3 spirals, N train / M test <items>"
  std::string items{};       // what the data holds: "points"
  std::string throughput{};  // what the time row counts per second: "examples"
  int64_t epochs = 0;
  double min_accuracy = -1;  // < 0: none (no "min accuracy" row, exit status 0)
};

// Prints the summary of a trained classifier and returns the exit status:
// 1 when report.min_accuracy (>= 0) is above the final test accuracy, else 0.
inline int print_classifier_summary(const tessera::Device& device, const ClassifierData& data,
                                    const ClassifierReport& report, const TrainResult& result) {
  const bool passed = result.accuracy >= report.min_accuracy;
  Summary summary(report.sample + " summary");
  summary.add("device", device.str())
      .add("data", format("%s, %lld train / %lld test %s", report.data.c_str(),
                          static_cast<long long>(data.train_size),
                          static_cast<long long>(data.test_size), report.items.c_str()))
      .add("epochs", std::to_string(report.epochs))
      .add("final train loss", format("%.4f", result.train_loss))
      .add("test accuracy", format("%.1f%%", result.accuracy))
      .add("time", format("%.2f s (%.0f %s/s)", result.seconds,
                          static_cast<double>(report.epochs * data.train_size) / result.seconds,
                          report.throughput.c_str()));
  if (report.min_accuracy >= 0)
    summary.add("min accuracy",
                format("%.1f%% %s", report.min_accuracy, passed ? "PASSED" : "NOT REACHED"));
  summary.print();
  return passed ? 0 : 1;
}

// The options every classifier sample has: --epochs (default: the value
// `epochs` holds) and --min-accuracy, around the sample's own, which
// `add_own` registers between them (so --help lists them in that order).
inline void add_classifier_options(CLI::App& app, int64_t& epochs, double& min_accuracy,
                                   const std::function<void()>& add_own) {
  app.add_option("--epochs", epochs, "Training epochs")
      ->check(CLI::Range(int64_t{1}, int64_t{1000000}))
      ->capture_default_str();
  add_own();
  app.add_option("--min-accuracy", min_accuracy,
                 "Exit 1 unless the final test accuracy (%) reaches this")
      ->check(CLI::Range(0.0, 100.0));
}

}  // namespace samples
