// tessera/data/subset.hpp - views of datasets: Subset, ConcatDataset and
// random_split, as in torch.utils.data.
//
// Subset and ConcatDataset share their underlying datasets (std::shared_ptr):
// they never copy examples, and they stay valid however long the caller keeps
// its own handle. random_split follows PyTorch exactly:
//   - integer lengths must sum to the dataset's size;
//   - fractions (each in [0, 1], summing to 1) become floor(size * fraction)
//     each, and the remainder is added one at a time, round-robin from the
//     first split (size 10, {0.3, 0.3, 0.4} -> 3, 3, 4; size 11, {0.5, 0.5}
//     -> 6, 5);
//   - one randperm(size, generator) is cut into consecutive pieces of those
//     lengths.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/data/dataset.hpp"
#include "tessera/error.hpp"
#include "tessera/ops/random.hpp"

namespace tessera::data {

// The examples of `dataset` at `indices`, in that order (repeats allowed).
//
// Invariant (checked on construction): dataset is not null and every index is
// in [0, dataset->size()). Thread safety: as the underlying dataset's.
template <class ExampleT>
class Subset : public Dataset<ExampleT> {
 public:
  Subset(std::shared_ptr<const Dataset<ExampleT>> dataset, std::vector<int64_t> indices)
      : dataset_(std::move(dataset)), indices_(std::move(indices)) {
    if (!dataset_) {
      tessera::detail::throw_error(
          TSR_INVALID_ARGUMENT,
          "Subset: argument 'dataset' is null; pass the dataset to take from");
    }
    const int64_t size = dataset_->size();
    for (size_t i = 0; i < indices_.size(); ++i) {
      if (indices_[i] < 0 || indices_[i] >= size) {
        tessera::detail::throw_error(
            TSR_OUT_OF_RANGE, "Subset: indices[" + std::to_string(i) +
                                  "] = " + std::to_string(indices_[i]) +
                                  " is out of range for a dataset of " + std::to_string(size) +
                                  " examples; use indices in [0, " + std::to_string(size) + ")");
      }
    }
  }

  ExampleT get(int64_t index) const override {
    detail::check_dataset_index("Subset::get", index, size());
    return dataset_->get(indices_[static_cast<size_t>(index)]);
  }
  int64_t size() const override { return static_cast<int64_t>(indices_.size()); }

  // Borrowed; valid while this Subset lives.
  const std::vector<int64_t>& indices() const noexcept { return indices_; }
  const std::shared_ptr<const Dataset<ExampleT>>& dataset() const noexcept { return dataset_; }

 private:
  std::shared_ptr<const Dataset<ExampleT>> dataset_;
  std::vector<int64_t> indices_;
};

template <class D>
Subset(std::shared_ptr<D>, std::vector<int64_t>) -> Subset<typename D::Example>;

// The datasets one after another: index i of the concatenation is index
// i - (examples before dataset k) of the dataset k it falls in.
//
// Invariant (checked on construction): at least one dataset, none null. The
// sizes are read once, on construction; the datasets must not change size
// afterwards. Thread safety: as the underlying datasets'.
template <class ExampleT>
class ConcatDataset : public Dataset<ExampleT> {
 public:
  explicit ConcatDataset(std::vector<std::shared_ptr<const Dataset<ExampleT>>> datasets)
      : datasets_(std::move(datasets)) {
    if (datasets_.empty()) {
      tessera::detail::throw_error(
          TSR_INVALID_ARGUMENT,
          "ConcatDataset: argument 'datasets' is empty; pass at least one dataset");
    }
    int64_t total = 0;
    for (size_t i = 0; i < datasets_.size(); ++i) {
      if (!datasets_[i]) {
        tessera::detail::throw_error(
            TSR_INVALID_ARGUMENT,
            "ConcatDataset: datasets[" + std::to_string(i) + "] is null; pass only live datasets");
      }
      total += datasets_[i]->size();
      cumulative_sizes_.push_back(total);
    }
  }

  ExampleT get(int64_t index) const override {
    detail::check_dataset_index("ConcatDataset::get", index, size());
    const auto it = std::upper_bound(cumulative_sizes_.begin(), cumulative_sizes_.end(), index);
    const auto k = static_cast<size_t>(it - cumulative_sizes_.begin());
    const int64_t start = k == 0 ? 0 : cumulative_sizes_[k - 1];
    return datasets_[k]->get(index - start);
  }
  int64_t size() const override { return cumulative_sizes_.back(); }

  // Running totals of the sizes (PyTorch's cumulative_sizes); borrowed.
  const std::vector<int64_t>& cumulative_sizes() const noexcept { return cumulative_sizes_; }

 private:
  std::vector<std::shared_ptr<const Dataset<ExampleT>>> datasets_;
  std::vector<int64_t> cumulative_sizes_;
};

namespace detail {

// PyTorch's lengths for `fractions` of `size` (see the file comment).
inline std::vector<int64_t> split_lengths_from_fractions(int64_t size,
                                                         const std::vector<double>& fractions) {
  if (fractions.empty()) {
    tessera::detail::throw_error(
        TSR_INVALID_ARGUMENT,
        "random_split: argument 'lengths' is empty; pass lengths or fractions");
  }
  double sum = 0;
  for (size_t i = 0; i < fractions.size(); ++i) {
    const double f = fractions[i];
    if (!(f >= 0.0 && f <= 1.0)) {
      tessera::detail::throw_error(TSR_INVALID_ARGUMENT,
                                   "random_split: fraction at index " + std::to_string(i) + " = " +
                                       std::to_string(f) +
                                       " is not between 0 and 1; give fractions in [0, 1]");
    }
    sum += f;
  }
  // math.isclose(sum, 1) with its default rel_tol = 1e-9.
  if (std::abs(sum - 1.0) > 1e-9 * std::max(1.0, std::abs(sum))) {
    tessera::detail::throw_error(
        TSR_INVALID_ARGUMENT,
        "random_split: the fractions sum to " + std::to_string(sum) +
            ", not 1; give fractions summing to 1, or integer lengths summing to the "
            "dataset size " +
            std::to_string(size));
  }
  std::vector<int64_t> lengths;
  lengths.reserve(fractions.size());
  int64_t assigned = 0;
  for (double f : fractions) {
    const auto length = static_cast<int64_t>(std::floor(static_cast<double>(size) * f));
    lengths.push_back(length);
    assigned += length;
  }
  const int64_t remainder = size - assigned;
  for (int64_t i = 0; i < remainder; ++i) {
    ++lengths[static_cast<size_t>(i) % lengths.size()];
  }
  return lengths;
}

template <class ExampleT>
std::vector<Subset<ExampleT>> split_by_lengths(std::shared_ptr<const Dataset<ExampleT>> dataset,
                                               const std::vector<int64_t>& lengths,
                                               GeneratorRef generator) {
  if (!dataset) {
    tessera::detail::throw_error(
        TSR_INVALID_ARGUMENT,
        "random_split: argument 'dataset' is null; pass the dataset to split");
  }
  const int64_t size = dataset->size();
  int64_t sum = 0;
  for (size_t i = 0; i < lengths.size(); ++i) {
    if (lengths[i] < 0) {
      tessera::detail::throw_error(TSR_INVALID_ARGUMENT,
                                   "random_split: lengths[" + std::to_string(i) +
                                       "] = " + std::to_string(lengths[i]) +
                                       " is negative; give non-negative lengths");
    }
    sum += lengths[i];
  }
  if (sum != size) {
    tessera::detail::throw_error(TSR_INVALID_ARGUMENT,
                                 "random_split: sum of input lengths (" + std::to_string(sum) +
                                     ") does not equal the length of the input dataset (" +
                                     std::to_string(size) + "); give lengths summing to " +
                                     std::to_string(size) + " or fractions summing to 1");
  }
  const Tensor permutation = generator ? randperm(size, *generator.get()) : randperm(size);
  const std::vector<int64_t> order = permutation.to_vector<int64_t>();
  std::vector<Subset<ExampleT>> subsets;
  subsets.reserve(lengths.size());
  auto start = order.begin();
  for (int64_t length : lengths) {
    subsets.emplace_back(dataset, std::vector<int64_t>(start, start + length));
    start += length;
  }
  return subsets;
}

}  // namespace detail

// Splits `dataset` into non-overlapping random subsets of the given lengths
// (summing to dataset->size()). The permutation comes from `generator`, or
// from the default CPU generator when none is given (seeded by manual_seed).
template <class D>
std::vector<Subset<typename D::Example>> random_split(std::shared_ptr<D> dataset,
                                                      const std::vector<int64_t>& lengths,
                                                      GeneratorRef generator = {}) {
  using E = typename D::Example;
  return detail::split_by_lengths<E>(std::shared_ptr<const Dataset<E>>(std::move(dataset)), lengths,
                                     generator);
}
// Splits by fractions (each in [0, 1], summing to 1), rounded as PyTorch does.
template <class D>
std::vector<Subset<typename D::Example>> random_split(std::shared_ptr<D> dataset,
                                                      const std::vector<double>& fractions,
                                                      GeneratorRef generator = {}) {
  using E = typename D::Example;
  const int64_t size = dataset ? dataset->size() : 0;
  return detail::split_by_lengths<E>(std::shared_ptr<const Dataset<E>>(std::move(dataset)),
                                     detail::split_lengths_from_fractions(size, fractions),
                                     generator);
}
// Braced lists: `{7, 3}` are lengths, `{0.7, 0.3}` fractions.
template <class D, class T>
requires std::is_arithmetic_v<T> std::vector<Subset<typename D::Example>> random_split(
    std::shared_ptr<D> dataset, std::initializer_list<T> lengths_or_fractions,
    GeneratorRef generator = {}) {
  if constexpr (std::is_floating_point_v<T>) {
    return random_split(
        std::move(dataset),
        std::vector<double>(lengths_or_fractions.begin(), lengths_or_fractions.end()), generator);
  } else {
    return random_split(
        std::move(dataset),
        std::vector<int64_t>(lengths_or_fractions.begin(), lengths_or_fractions.end()), generator);
  }
}

}  // namespace tessera::data
