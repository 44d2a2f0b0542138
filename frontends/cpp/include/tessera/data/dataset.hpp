// tessera/data/dataset.hpp - Dataset<Example>, the map-style dataset
// interface, and TensorDataset.
//
// As torch.utils.data.Dataset: a dataset answers size() and get(index) for
// index in [0, size()). The DataLoader calls get() from its worker threads,
// concurrently, so get() is const and must be safe to call from several
// threads at once (TensorDataset is: it only creates views of tensors it
// never writes).
//
// TensorDataset is torch.utils.data.TensorDataset: example i is row i (a view,
// select(0, i)) of each tensor, in order, as a std::vector<Tensor>.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tessera/error.hpp"
#include "tessera/tensor.hpp"

namespace tessera::data {

// The map-style dataset interface.
//
// Thread safety: get() and size() may be called from several threads at once
// (DataLoader workers); implementations must allow that. size() must not
// change while a DataLoader iterates the dataset.
template <class ExampleT>
class Dataset {
 public:
  using Example = ExampleT;

  virtual ~Dataset() = default;

  // Example `index`, 0 <= index < size(). May throw (tessera::Error or any
  // exception); a DataLoader rethrows it to its consumer at that batch.
  virtual Example get(int64_t index) const = 0;
  // The number of examples; must not throw.
  virtual int64_t size() const = 0;
};

namespace detail {

// Throws OUT_OF_RANGE unless 0 <= index < size.
inline void check_dataset_index(const char* who, int64_t index, int64_t size) {
  if (index < 0 || index >= size) [[unlikely]] {
    tessera::detail::throw_error(
        TSR_OUT_OF_RANGE, std::string(who) + ": index " + std::to_string(index) +
                              " is out of range for a dataset of " + std::to_string(size) +
                              " examples; use an index in [0, " + std::to_string(size) + ")");
  }
}

}  // namespace detail

// Examples are rows of tensors: example i is {t0[i], t1[i], ...} (views).
//
// Invariant (checked on construction): at least one tensor, none 0-d, and all
// have the same size in dim 0, which is size(). The tensors are shared with
// the caller (Tensor copies); writing to them while a DataLoader reads them is
// a data race (Note [Handle thread safety] in tessera.h).
class TensorDataset : public Dataset<std::vector<Tensor>> {
 public:
  explicit TensorDataset(std::vector<Tensor> tensors) : tensors_(std::move(tensors)) {
    if (tensors_.empty()) {
      tessera::detail::throw_error(
          TSR_INVALID_ARGUMENT,
          "TensorDataset: no tensors given; pass at least one tensor whose dim 0 "
          "indexes the examples");
    }
    for (size_t i = 0; i < tensors_.size(); ++i) {
      if (tensors_[i].dim() == 0) {
        tessera::detail::throw_error(
            TSR_INVALID_ARGUMENT,
            "TensorDataset: tensor " + std::to_string(i) +
                " is 0-d; every tensor needs a dim 0 that indexes the examples "
                "(unsqueeze(0) it)");
      }
    }
    rows_ = tensors_[0].size(0);
    for (size_t i = 1; i < tensors_.size(); ++i) {
      const int64_t rows = tensors_[i].size(0);
      if (rows != rows_) {
        tessera::detail::throw_error(
            TSR_INVALID_ARGUMENT, "TensorDataset: size mismatch between tensors: tensor " +
                                      std::to_string(i) + " has size(0) = " + std::to_string(rows) +
                                      " but tensor 0 has size(0) = " + std::to_string(rows_) +
                                      "; every tensor must have the same size in dim 0");
      }
    }
  }
  template <class... More>
  requires(std::is_convertible_v<More, Tensor>&&...) explicit TensorDataset(Tensor first,
                                                                            More... more)
      : TensorDataset(std::vector<Tensor>{std::move(first), Tensor(std::move(more))...}) {}

  // Row `index` of every tensor, as views sharing their storage.
  std::vector<Tensor> get(int64_t index) const override {
    detail::check_dataset_index("TensorDataset::get", index, rows_);
    std::vector<Tensor> example;
    example.reserve(tensors_.size());
    for (const Tensor& t : tensors_) example.push_back(t.select(0, index));
    return example;
  }
  int64_t size() const override { return rows_; }

  // The tensors given on construction; valid while this dataset lives.
  const std::vector<Tensor>& tensors() const noexcept { return tensors_; }

 private:
  std::vector<Tensor> tensors_;
  int64_t rows_ = 0;
};

}  // namespace tessera::data
