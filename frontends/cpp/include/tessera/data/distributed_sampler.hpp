// tessera/data/distributed_sampler.hpp - DistributedSampler: one replica's
// share of a dataset (torch.utils.data.distributed.DistributedSampler).
//
// PyTorch's semantics exactly, for dataset size n and R replicas:
//   num_samples = n / R (floor) when drop_last and n % R != 0, else ceil(n / R);
//   total_size  = num_samples * R;
//   order       = randperm(n) from a generator seeded seed + epoch when
//                 shuffle, else 0 .. n-1;
//   without drop_last the order is padded to total_size by repeating it from
//   its start (as often as needed); with drop_last it is cut to total_size;
//   rank r takes order[r], order[r + R], ... (order[r::R]).
// So every replica gets num_samples indices and, for a given epoch and seed,
// the replicas' shares are disjoint apart from the padding. n = 10, R = 3,
// no shuffle: rank 0 [0, 3, 6, 9], rank 1 [1, 4, 7, 0], rank 2 [2, 5, 8, 1].
//
// Call set_epoch(e) before each epoch when shuffling, or every epoch repeats
// the same order. Thread safety: as every Sampler (one thread at a time).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/data/sampler.hpp"
#include "tessera/error.hpp"
#include "tessera/ops/random.hpp"

namespace tessera::data {

// Invariant (checked on construction): dataset_size >= 0, num_replicas >= 1,
// 0 <= rank < num_replicas.
class DistributedSampler : public Sampler {
 public:
  DistributedSampler(int64_t dataset_size, int64_t num_replicas, int64_t rank, bool shuffle = true,
                     uint64_t seed = 0, bool drop_last = false)
      : dataset_size_(dataset_size),
        num_replicas_(num_replicas),
        rank_(rank),
        shuffle_(shuffle),
        seed_(seed),
        drop_last_(drop_last) {
    if (dataset_size < 0) {
      tessera::detail::throw_error(
          TSR_INVALID_ARGUMENT,
          "DistributedSampler: argument 'dataset_size' = " + std::to_string(dataset_size) +
              " is negative; pass the dataset size");
    }
    if (num_replicas < 1) {
      tessera::detail::throw_error(
          TSR_INVALID_ARGUMENT,
          "DistributedSampler: argument 'num_replicas' = " + std::to_string(num_replicas) +
              " must be at least 1 (the number of processes sharing the data)");
    }
    if (rank < 0 || rank >= num_replicas) {
      tessera::detail::throw_error(TSR_INVALID_ARGUMENT,
                                   "DistributedSampler: invalid rank " + std::to_string(rank) +
                                       ", rank should be in the interval [0, " +
                                       std::to_string(num_replicas - 1) + "]");
    }
    if (drop_last && dataset_size % num_replicas != 0) {
      num_samples_ = dataset_size / num_replicas;
    } else {
      num_samples_ = (dataset_size + num_replicas - 1) / num_replicas;
    }
    total_size_ = num_samples_ * num_replicas;
  }

  // Selects the epoch whose shuffle to use (the generator is seeded seed + epoch).
  void set_epoch(uint64_t epoch) noexcept { epoch_ = epoch; }
  uint64_t epoch() const noexcept { return epoch_; }

  std::vector<int64_t> indices() override {
    std::vector<int64_t> order;
    if (shuffle_) {
      const Generator g(seed_ + epoch_);
      order = randperm(dataset_size_, g).to_vector<int64_t>();
    } else {
      order.resize(static_cast<size_t>(dataset_size_));
      for (int64_t i = 0; i < dataset_size_; ++i) order[static_cast<size_t>(i)] = i;
    }
    const auto total = static_cast<size_t>(total_size_);
    if (order.size() < total) {
      // Padding from the start, repeating the whole order when it is shorter
      // than the padding (n > 0 here: n == 0 gives total_size == 0).
      const size_t n = order.size();
      for (size_t i = 0; order.size() < total; ++i) order.push_back(order[i % n]);
    } else {
      order.resize(total);
    }
    std::vector<int64_t> mine;
    mine.reserve(static_cast<size_t>(num_samples_));
    for (size_t i = static_cast<size_t>(rank_); i < total;
         i += static_cast<size_t>(num_replicas_)) {
      mine.push_back(order[i]);
    }
    return mine;
  }
  // num_samples: the indices this replica gets each epoch.
  int64_t size() const override { return num_samples_; }
  // num_samples * num_replicas.
  int64_t total_size() const noexcept { return total_size_; }
  int64_t num_replicas() const noexcept { return num_replicas_; }
  int64_t rank() const noexcept { return rank_; }
  bool shuffle() const noexcept { return shuffle_; }
  uint64_t seed() const noexcept { return seed_; }
  bool drop_last() const noexcept { return drop_last_; }

 private:
  int64_t dataset_size_;
  int64_t num_replicas_;
  int64_t rank_;
  bool shuffle_;
  uint64_t seed_;
  bool drop_last_;
  uint64_t epoch_ = 0;
  int64_t num_samples_ = 0;
  int64_t total_size_ = 0;
};

}  // namespace tessera::data
