// tessera/data/sampler.hpp - samplers: the order in which a DataLoader visits
// a dataset's indices (torch.utils.data.Sampler and its basic kinds).
//
// A Sampler produces one pass of indices per call to indices(): random
// samplers draw a fresh order on every call, so successive epochs differ while
// a seeded Generator makes the whole sequence of epochs reproducible. The
// random draws follow PyTorch's structure call for call:
//   RandomSampler, without replacement: num_samples / n randperm(n) passes,
//     then the first num_samples % n of one more randperm(n); with
//     replacement: randint(n) in chunks of 32. Without a generator, each pass
//     seeds a private generator from the default CPU generator (one random_()
//     draw), as PyTorch does.
//   WeightedRandomSampler: multinomial(weights, num_samples, replacement).
// (Same call sequence as PyTorch; whether the bits equal PyTorch's depends on
// the core's random mapping, Note [Random mapping] in plugin.h.)
//
// Thread safety: a sampler is used by one thread at a time (the DataLoader
// calls it only from the thread that starts an epoch). Generators are shared
// handles: a sampler's draws advance the generator the caller passed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tessera/dtype.hpp"
#include "tessera/error.hpp"
#include "tessera/factories.hpp"
#include "tessera/ops/random.hpp"
#include "tessera/tensor.hpp"

namespace tessera::data {

// Yields dataset indices. Implementations may be stateful (random ones
// advance a generator on each pass).
class Sampler {
 public:
  virtual ~Sampler() = default;

  // One pass over the indices, in order; each call is a new pass. Returns
  // exactly size() indices.
  virtual std::vector<int64_t> indices() = 0;
  // The number of indices each pass yields; must not throw.
  virtual int64_t size() const = 0;
};

// 0, 1, ..., size - 1. Invariant: size >= 0.
class SequentialSampler : public Sampler {
 public:
  explicit SequentialSampler(int64_t size) : size_(size) {
    if (size < 0) {
      tessera::detail::throw_error(TSR_INVALID_ARGUMENT,
                                   "SequentialSampler: argument 'size' = " + std::to_string(size) +
                                       " is negative; pass the dataset size");
    }
  }
  std::vector<int64_t> indices() override {
    std::vector<int64_t> result(static_cast<size_t>(size_));
    for (int64_t i = 0; i < size_; ++i) result[static_cast<size_t>(i)] = i;
    return result;
  }
  int64_t size() const override { return size_; }

 private:
  int64_t size_;
};

namespace detail {

// The generator a random pass draws from: `generator`, or a private one
// seeded from the default CPU generator (PyTorch's RandomSampler rule).
inline Generator pass_generator(const std::optional<Generator>& generator) {
  if (generator) return *generator;
  Tensor seed = empty({}, kInt64);
  random_(seed);
  return Generator(static_cast<uint64_t>(seed.item<int64_t>()));
}

inline void append_tensor(std::vector<int64_t>& out, const Tensor& values, size_t count) {
  const std::vector<int64_t> v = values.to_vector<int64_t>();
  out.insert(out.end(), v.begin(), v.begin() + static_cast<std::ptrdiff_t>(count));
}

}  // namespace detail

// Random order over [0, data_size): a permutation (num_samples may exceed
// data_size: whole permutations repeat) or, with replacement, independent
// uniform draws.
//
// Invariant (checked on construction): data_size >= 0 and num_samples
// (default data_size) > 0; so an empty dataset needs an explicit sampler
// choice, as in PyTorch.
class RandomSampler : public Sampler {
 public:
  explicit RandomSampler(int64_t data_size, bool replacement = false,
                         std::optional<int64_t> num_samples = std::nullopt,
                         std::optional<Generator> generator = std::nullopt)
      : data_size_(data_size),
        num_samples_(num_samples.value_or(data_size)),
        replacement_(replacement),
        generator_(std::move(generator)) {
    if (data_size < 0) {
      tessera::detail::throw_error(TSR_INVALID_ARGUMENT, "RandomSampler: argument 'data_size' = " +
                                                             std::to_string(data_size) +
                                                             " is negative; pass the dataset size");
    }
    if (num_samples_ <= 0) {
      tessera::detail::throw_error(
          TSR_INVALID_ARGUMENT,
          "RandomSampler: num_samples should be a positive integer value, but "
          "got num_samples=" +
              std::to_string(num_samples_) +
              (num_samples ? std::string() : std::string(" (the dataset is empty)")) +
              "; sample a non-empty dataset or pass num_samples > 0");
    }
  }

  std::vector<int64_t> indices() override {
    Generator g = detail::pass_generator(generator_);
    std::vector<int64_t> out;
    out.reserve(static_cast<size_t>(num_samples_));
    const int64_t n = data_size_;
    if (replacement_) {
      if (n == 0) {
        tessera::detail::throw_error(TSR_INVALID_ARGUMENT,
                                     "RandomSampler: cannot draw " + std::to_string(num_samples_) +
                                         " samples with replacement from an empty dataset");
      }
      constexpr int64_t kChunk = 32;
      for (int64_t i = 0; i < num_samples_ / kChunk; ++i) {
        detail::append_tensor(out, randint(n, {kChunk}, g), kChunk);
      }
      const int64_t rest = num_samples_ % kChunk;
      if (rest > 0) detail::append_tensor(out, randint(n, {rest}, g), static_cast<size_t>(rest));
    } else {
      if (n == 0) {
        tessera::detail::throw_error(TSR_INVALID_ARGUMENT, "RandomSampler: cannot draw " +
                                                               std::to_string(num_samples_) +
                                                               " samples from an empty dataset");
      }
      for (int64_t i = 0; i < num_samples_ / n; ++i) {
        detail::append_tensor(out, randperm(n, g), static_cast<size_t>(n));
      }
      detail::append_tensor(out, randperm(n, g), static_cast<size_t>(num_samples_ % n));
    }
    return out;
  }
  int64_t size() const override { return num_samples_; }

  bool replacement() const noexcept { return replacement_; }

 private:
  int64_t data_size_;
  int64_t num_samples_;
  bool replacement_;
  std::optional<Generator> generator_;
};

// Indices in [0, weights.numel()) drawn with probability proportional to
// their weight (torch.utils.data.WeightedRandomSampler).
//
// Invariant (checked on construction): weights is 1-d (kept as a float64
// copy) and num_samples > 0. Whether the weights can give num_samples draws
// (non-negative, enough non-zero ones without replacement) is checked by
// multinomial on each pass.
class WeightedRandomSampler : public Sampler {
 public:
  WeightedRandomSampler(const Tensor& weights, int64_t num_samples, bool replacement = true,
                        std::optional<Generator> generator = std::nullopt)
      : num_samples_(num_samples), replacement_(replacement), generator_(std::move(generator)) {
    if (weights.dim() != 1) {
      tessera::detail::throw_error(
          TSR_INVALID_ARGUMENT,
          "WeightedRandomSampler: weights should be a 1d sequence but given "
          "weights have shape " +
              weights.sizes().str() + "; pass one weight per dataset index");
    }
    if (num_samples <= 0) {
      tessera::detail::throw_error(
          TSR_INVALID_ARGUMENT,
          "WeightedRandomSampler: num_samples should be a positive integer value, "
          "but got num_samples=" +
              std::to_string(num_samples));
    }
    weights_ = weights.to(kCPU).to(kFloat64).clone();
  }
  WeightedRandomSampler(const std::vector<double>& weights, int64_t num_samples,
                        bool replacement = true, std::optional<Generator> generator = std::nullopt)
      : WeightedRandomSampler(tensor(weights, kFloat64), num_samples, replacement,
                              std::move(generator)) {}

  std::vector<int64_t> indices() override {
    return multinomial(weights_, num_samples_, replacement_, generator_).to_vector<int64_t>();
  }
  int64_t size() const override { return num_samples_; }

 private:
  Tensor weights_;
  int64_t num_samples_;
  bool replacement_;
  std::optional<Generator> generator_;
};

}  // namespace tessera::data
