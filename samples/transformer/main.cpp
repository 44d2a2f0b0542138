// transformer - a small transformer encoder that tells sorted token
// sequences from unsorted ones.
//
// The dataset is made here, deterministically from --seed: --sequences
// sequences (default 4000) of 6 to 16 tokens from 1..15, padded with token 0
// to 16. About half are sorted (non-decreasing; label 1), the others (label
// 0) are random draws - or, for a --hard fraction of them (default 0), a
// sorted sequence with one adjacent pair of different tokens swapped, which
// the model can only tell by comparing neighbours.
// random_split cuts it 80/20 into train and test; a DataLoader (batch 64,
// shuffled by a seeded generator) feeds
//   Embedding(16, 32, padding_idx 0) + a learned positional embedding
//   -> 2 x TransformerEncoderLayer(32, 4 heads, ff 64, batch_first, norm_first)
//   -> LayerNorm -> mean over the real tokens -> Linear(32, 2),
// the padding hidden from attention by key_padding_mask (token == 0) and left
// out of the mean. Training: AdamW (weight decay 0.01), cross entropy,
// clip_grad_norm_(1.0) and OneCycleLR (peak --lr) stepped per batch. Each
// epoch prints its mean train loss and the test accuracy; the summary the
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
#include "tessera/nn/utils/clip_grad.hpp"
#include "tessera/optim.hpp"
#include "tessera/tessera.hpp"

namespace {

namespace data = tessera::data;
namespace nn = tessera::nn;
namespace optim = tessera::optim;
using tessera::Tensor;

constexpr int64_t kPad = 0;
constexpr int64_t kVocab = 16;  // the pad and tokens 1..15
constexpr int64_t kMaxLength = 16;
constexpr int64_t kMinLength = 6;
constexpr int64_t kModel = 32;

// tokens: (count, 16) int64, padded with kPad; labels: (count) int64.
std::shared_ptr<data::TensorDataset> make_sequences(int64_t count, double hard,
                                                    const tessera::Generator& generator) {
  auto draw = [&](int64_t low, int64_t high, tessera::IntList size) {
    return tessera::randint(low, high, size, generator, tessera::kInt64).to_vector<int64_t>();
  };
  const std::vector<int64_t> values = draw(1, kVocab, {count, kMaxLength});
  const std::vector<int64_t> lengths = draw(kMinLength, kMaxLength + 1, {count});
  const std::vector<int64_t> sorted = draw(0, 2, {count});
  const std::vector<float> hardness =
      tessera::rand({count}, generator, tessera::kFloat32).to_vector<float>();
  const std::vector<int64_t> positions = draw(0, kMaxLength, {count});
  std::vector<int64_t> tokens(static_cast<size_t>(count * kMaxLength), kPad);
  std::vector<int64_t> labels(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    const auto length = static_cast<size_t>(lengths[static_cast<size_t>(i)]);
    const auto first = values.begin() + i * kMaxLength;
    std::vector<int64_t> seq(first, first + static_cast<std::ptrdiff_t>(length));
    const bool swap =
        sorted[static_cast<size_t>(i)] == 0 && hardness[static_cast<size_t>(i)] < hard;
    if (sorted[static_cast<size_t>(i)] != 0 || swap) std::sort(seq.begin(), seq.end());
    if (swap) {
      // Swap the first pair of different neighbours at or after a random
      // position (wrapping); a sequence of one repeated token is re-drawn
      // as 1..length, which always has such a pair.
      if (seq.front() == seq.back())
        for (size_t k = 0; k < length; ++k) seq[k] = static_cast<int64_t>(k % 15) + 1;
      size_t at = static_cast<size_t>(positions[static_cast<size_t>(i)]) % (length - 1);
      while (seq[at] == seq[at + 1]) at = (at + 1) % (length - 1);
      std::swap(seq[at], seq[at + 1]);
    }
    labels[static_cast<size_t>(i)] = std::is_sorted(seq.begin(), seq.end()) ? 1 : 0;
    std::copy(seq.begin(), seq.end(), tokens.begin() + i * kMaxLength);
  }
  return std::make_shared<data::TensorDataset>(
      tessera::tensor(tokens, {count, kMaxLength}, tessera::kInt64),
      tessera::tensor(labels, tessera::kInt64));
}

struct SortedClassifier : nn::Module {
  std::shared_ptr<nn::Embedding> token =
      register_module("token", std::make_shared<nn::Embedding>(kVocab, kModel, kPad));
  std::shared_ptr<nn::Embedding> position =
      register_module("position", std::make_shared<nn::Embedding>(kMaxLength, kModel));
  std::shared_ptr<nn::TransformerEncoderLayer> layer0 = register_module("layer0", make_layer());
  std::shared_ptr<nn::TransformerEncoderLayer> layer1 = register_module("layer1", make_layer());
  std::shared_ptr<nn::LayerNorm> norm =
      register_module("norm", std::make_shared<nn::LayerNorm>(kModel));
  std::shared_ptr<nn::Linear> head =
      register_module("head", std::make_shared<nn::Linear>(kModel, 2));

  // tokens: (N, L) int64 padded with kPad -> logits (N, 2).
  Tensor forward(const Tensor& tokens) override {
    const int64_t length = tokens.size(1);
    const Tensor padding = tessera::eq(tokens, kPad);  // (N, L) bool: true = ignore
    const Tensor where =
        tessera::arange(length, tessera::TensorOptions(tessera::kInt64).device(tokens.device()));
    Tensor x = (*token)(tokens) + (*position)(where);
    x = (*layer0)(x, Tensor(), padding);
    x = (*layer1)(x, Tensor(), padding);
    x = (*norm)(x);
    const Tensor keep = tessera::logical_not(padding).to(x.dtype()).unsqueeze(-1);  // (N, L, 1)
    const Tensor pooled = (x * keep).sum({1}) / keep.sum({1});
    return (*head)(pooled);
  }

 private:
  static std::shared_ptr<nn::TransformerEncoderLayer> make_layer() {
    return std::make_shared<nn::TransformerEncoderLayer>(kModel, /*nhead=*/4,
                                                         /*dim_feedforward=*/64,
                                                         /*dropout=*/0.0, "relu", 1e-5,
                                                         /*batch_first=*/true,
                                                         /*norm_first=*/true);
  }
};

struct Config {
  int64_t epochs = 10;
  int64_t sequences = 4000;
  double lr = 0.003;
  double hard = 0.0;
  double min_accuracy = -1;
};

int run(const samples::CommonOptions& common, const Config& config) {
  const tessera::Device device = samples::apply_common_options(common);
  tessera::Generator generator(common.seed);

  samples::ClassifierData data = samples::split_dataset(
      make_sequences(config.sequences, config.hard, generator), generator, device, 500);
  auto model = std::make_shared<SortedClassifier>();
  model->to(device);
  const std::vector<Tensor> parameters = model->parameters();
  optim::AdamW optimizer(parameters, {.lr = config.lr, .weight_decay = 0.01});
  optim::OneCycleLROptions one_cycle;
  one_cycle.max_lr = config.lr;
  one_cycle.total_steps = config.epochs * data.train.size();
  optim::OneCycleLR scheduler(optimizer, one_cycle);

  const samples::TrainResult result = samples::train_classifier(
      *model, optimizer, data, config.epochs, common.quiet,
      {.after_backward = [&] { nn::utils::clip_grad_norm_(parameters, 1.0); },
       .after_step = [&] { scheduler.step(); }});
  return samples::print_classifier_summary(device, data,
                                           {.sample = "transformer",
                                            .data = "sorted or not, 6-16 tokens",
                                            .items = "sequences",
                                            .throughput = "sequences",
                                            .epochs = config.epochs,
                                            .min_accuracy = config.min_accuracy},
                                           result);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "transformer: a transformer encoder classifying token sequences as sorted or not "
      "(key_padding_mask, AdamW, clip_grad_norm_, OneCycleLR)"};
  samples::CommonOptions common;
  samples::add_common_options(app, common);
  Config config;
  samples::add_classifier_options(app, config.epochs, config.min_accuracy, [&] {
    app.add_option("--sequences", config.sequences, "Sequences in the dataset")
        ->check(CLI::Range(int64_t{20}, int64_t{1000000}))
        ->capture_default_str();
    app.add_option("--hard", config.hard,
                   "Fraction of the unsorted sequences that are sorted but for one swapped pair "
                   "of neighbours (harder to tell)")
        ->check(CLI::Range(0.0, 1.0))
        ->capture_default_str();
    app.add_option("--lr", config.lr, "OneCycleLR's peak learning rate")
        ->check(CLI::Range(1e-6, 10.0))
        ->capture_default_str();
  });
  CLI11_PARSE(app, argc, argv);
  try {
    return run(common, config);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "transformer: %s\n", error.what());
    return 2;
  }
}
