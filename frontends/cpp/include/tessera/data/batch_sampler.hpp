// tessera/data/batch_sampler.hpp - BatchSampler: groups a sampler's indices
// into batches (torch.utils.data.BatchSampler).
//
// One pass of the sampler is cut into consecutive batches of batch_size; the
// last, shorter batch is kept unless drop_last. size() is the number of
// batches: n / batch_size with drop_last, else ceil(n / batch_size).
// batches() is virtual so a custom batching rule (bucketing by length, ...)
// can be given to a DataLoader as its batch_sampler.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tessera/data/sampler.hpp"
#include "tessera/error.hpp"

namespace tessera::data {

// Invariant (checked on construction): sampler is not null, batch_size >= 1.
// The sampler is shared; a pass advances it (its generator). Thread safety:
// one thread at a time, as the sampler.
class BatchSampler {
 public:
  BatchSampler(std::shared_ptr<Sampler> sampler, int64_t batch_size, bool drop_last)
      : sampler_(std::move(sampler)), batch_size_(batch_size), drop_last_(drop_last) {
    if (!sampler_) {
      tessera::detail::throw_error(
          TSR_INVALID_ARGUMENT,
          "BatchSampler: argument 'sampler' is null; pass the sampler to batch");
    }
    if (batch_size < 1) {
      tessera::detail::throw_error(
          TSR_INVALID_ARGUMENT,
          "BatchSampler: batch_size should be a positive integer value, but got "
          "batch_size=" +
              std::to_string(batch_size));
    }
  }
  virtual ~BatchSampler() = default;

  // One pass: the sampler's indices cut into batches.
  virtual std::vector<std::vector<int64_t>> batches() {
    const std::vector<int64_t> indices = sampler_->indices();
    std::vector<std::vector<int64_t>> result;
    result.reserve(indices.size() / static_cast<size_t>(batch_size_) + 1);
    for (size_t start = 0; start < indices.size(); start += static_cast<size_t>(batch_size_)) {
      const size_t end = std::min(indices.size(), start + static_cast<size_t>(batch_size_));
      if (drop_last_ && end - start < static_cast<size_t>(batch_size_)) break;
      result.emplace_back(indices.begin() + static_cast<std::ptrdiff_t>(start),
                          indices.begin() + static_cast<std::ptrdiff_t>(end));
    }
    return result;
  }
  // The number of batches one pass yields; must not throw.
  virtual int64_t size() const {
    const int64_t n = sampler_->size();
    return drop_last_ ? n / batch_size_ : (n + batch_size_ - 1) / batch_size_;
  }

  int64_t batch_size() const noexcept { return batch_size_; }
  bool drop_last() const noexcept { return drop_last_; }
  // Borrowed; valid while this BatchSampler lives.
  const std::shared_ptr<Sampler>& sampler() const noexcept { return sampler_; }

 private:
  std::shared_ptr<Sampler> sampler_;
  int64_t batch_size_;
  bool drop_last_;
};

}  // namespace tessera::data
