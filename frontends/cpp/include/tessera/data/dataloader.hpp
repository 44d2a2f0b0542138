// tessera/data/dataloader.hpp - DataLoader: batches of a dataset, in sampler
// order, optionally produced by worker threads (torch.utils.data.DataLoader).
//
//   auto ds = std::make_shared<tessera::data::TensorDataset>(x, y);
//   tessera::data::DataLoader loader(ds, {.batch_size = 32, .shuffle = true,
//                                         .generator = tessera::Generator(0),
//                                         .num_workers = 2});
//   for (std::vector<tessera::Tensor>& batch : loader) { ... }  // {x[b], y[b]}
//
// Each begin() starts an epoch: it asks the batch sampler for the epoch's
// batches of indices (on the calling thread, so a seeded generator gives the
// same order whatever num_workers is; successive epochs draw anew), then
// produces batch k = collate([dataset.get(i) for i in batches[k]]), moved to
// options.device when one is set.
//
// Note [DataLoader workers]
// ~~~~~~~~~~~~~~~~~~~~~~~~~
// With num_workers = 0 the iterator produces each
// batch when it is dereferenced, on the consumer's thread. With num_workers =
// W > 0, the epoch runs W std::threads (fewer when there are fewer batches)
// that claim batch indices in increasing order and produce them concurrently.
// A worker may claim batch k only while k < (batches taken by the consumer) +
// W * prefetch_factor, so at most W * prefetch_factor batches are in flight or
// waiting at any moment. Finished batches are held per index and handed out
// strictly in index order, so the result is the same sequence as with 0
// workers. An exception thrown while producing batch k (by the dataset, the
// collate function or the transfer) is kept and rethrown to the consumer at
// batch k: from operator* (or from operator++ when k is skipped without being
// dereferenced, after the iterator has moved past k); later batches still
// come. Destroying the iterator (or the last copy of its epoch) mid-epoch
// stops the workers and joins them: a worker finishes the dataset.get it is in
// (so a get() that never returns hangs the destructor), then exits; batches
// not yet taken are released. The epoch owns what it uses (dataset, collate,
// options), so an iterator stays valid after its DataLoader is destroyed.
//
// Thread safety: a DataLoader and its iterators are used from one thread at a
// time. Workers call dataset.get() and the collate function concurrently, so
// both must be thread-safe (see Dataset). Device transfer: transfer.hpp and
// Note [Pinned staging] there.
#pragma once

#include <algorithm>
#include <concepts>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/data/batch_sampler.hpp"
#include "tessera/data/collate.hpp"
#include "tessera/data/dataset.hpp"
#include "tessera/data/sampler.hpp"
#include "tessera/data/transfer.hpp"
#include "tessera/error.hpp"
#include "tessera/ops/random.hpp"
#include "tessera/runtime.hpp"

namespace tessera::data {

// Whether Collate<E> exists and gives B.
template <class E, class B>
concept DefaultCollatable = requires {
  typename Collate<E>::Batch;
}
&&std::same_as<typename Collate<E>::Batch, B>;

namespace detail {
template <class E>
struct default_batch {
  using type = void;
};
template <class E>
requires requires { typename Collate<E>::Batch; }
struct default_batch<E> {
  using type = typename Collate<E>::Batch;
};
}  // namespace detail

// The batch type default_collate gives for E (void when it has none; then
// name the batch type and pass a collate function).
template <class E>
using default_batch_t = typename detail::default_batch<E>::type;

// Options of a DataLoader; zero/empty fields mean PyTorch's defaults.
template <class ExampleT, class BatchT = default_batch_t<ExampleT>>
struct DataLoaderOptions {
  // Examples per batch (>= 1). Default 1. Must stay 1 with a batch_sampler.
  int64_t batch_size = 1;
  // Reshuffle every epoch (a RandomSampler over the dataset). Default false.
  bool shuffle = false;
  // Drop the last, incomplete batch. Default false.
  bool drop_last = false;
  // The index order; exclusive with shuffle. Default: sequential or random.
  std::shared_ptr<Sampler> sampler{};
  // Whole batches of indices; exclusive with batch_size, shuffle, sampler and
  // drop_last. Default: BatchSampler(sampler, batch_size, drop_last).
  std::shared_ptr<BatchSampler> batch_sampler{};
  // The shuffle's generator (shared: each epoch advances it). Default: each
  // epoch seeds one from the default CPU generator.
  std::optional<Generator> generator{};
  // Worker threads (Note [DataLoader workers]). Default 0: the consumer's thread.
  int64_t num_workers = 0;
  // Batches in flight per worker (>= 1); the bound is num_workers *
  // prefetch_factor. Default 2. Ignored without workers.
  int64_t prefetch_factor = 2;
  // Examples to batch; called concurrently by workers, must be thread-safe.
  // Default: default_collate (collate.hpp).
  std::function<BatchT(std::vector<ExampleT>)> collate{};
  // Where batches end up; every tensor of a batch is moved there. Default:
  // left where collate made them.
  std::optional<Device> device{};
  // Stage host batches before a device copy (Note [Pinned staging]: no pinned
  // memory is available through the ABI yet). Default false.
  bool pin_memory = false;
};

namespace detail {

// What an epoch needs, shared by the loader and its epochs (immutable).
template <class E, class B>
struct LoaderConfig {
  std::shared_ptr<const Dataset<E>> dataset;
  std::function<B(std::vector<E>)> collate;  // never empty
  std::optional<Device> device;
  bool pin_memory = false;
  int64_t num_workers = 0;
  int64_t prefetch_factor = 2;
};

// One pass over the batches (Note [DataLoader workers]).
//
// Invariants: slots_.size() == batches_.size(); next_take_ <= next_claim_ <=
// slots_.size() with workers; next_claim_ < next_take_ + limit_ whenever a
// worker claims; slot k is written once by the worker that claimed k and
// read once by take(k). mutex_ guards every member but workers_ (touched only
// by the constructor and destructor) and the immutable ones.
template <class E, class B>
class LoaderEpoch {
 public:
  LoaderEpoch(std::shared_ptr<const LoaderConfig<E, B>> config,
              std::vector<std::vector<int64_t>> batches)
      : config_(std::move(config)),
        batches_(std::move(batches)),
        slots_(batches_.size()),
        limit_(static_cast<size_t>(config_->num_workers * config_->prefetch_factor)) {
    const size_t threads = std::min(static_cast<size_t>(config_->num_workers), batches_.size());
    try {
      workers_.reserve(threads);
      for (size_t i = 0; i < threads; ++i) workers_.emplace_back([this] { work(); });
    } catch (...) {
      shut_down();
      throw;
    }
  }
  LoaderEpoch(const LoaderEpoch&) = delete;
  LoaderEpoch& operator=(const LoaderEpoch&) = delete;
  ~LoaderEpoch() { shut_down(); }

  int64_t count() const noexcept { return static_cast<int64_t>(batches_.size()); }

  // Batch `index`, produced here (no workers) or waited for; indices must
  // increase by one per call with workers. Throws what producing it threw.
  B take(int64_t index) {
    const auto k = static_cast<size_t>(index);
    if (workers_.empty()) return produce(k);
    Slot slot;
    {
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [&] { return slots_[k].ready; });
      slot = std::move(slots_[k]);
      slots_[k] = Slot{};
      next_take_ = k + 1;
    }
    space_.notify_all();
    if (slot.error) std::rethrow_exception(slot.error);
    return std::move(*slot.batch);
  }

 private:
  struct Slot {
    std::optional<B> batch;
    std::exception_ptr error;
    bool ready = false;
  };

  B produce(size_t k) const {
    const std::vector<int64_t>& indices = batches_[k];
    std::vector<E> examples;
    examples.reserve(indices.size());
    for (int64_t i : indices) examples.push_back(config_->dataset->get(i));
    B batch = config_->collate(std::move(examples));
    if (config_->device) move_to_device(batch, *config_->device, config_->pin_memory);
    return batch;
  }

  void work() noexcept {
    for (;;) {
      size_t k = 0;
      {
        std::unique_lock lock(mutex_);
        space_.wait(lock, [&] {
          return stop_ || next_claim_ >= slots_.size() || next_claim_ < next_take_ + limit_;
        });
        if (stop_ || next_claim_ >= slots_.size()) return;
        k = next_claim_++;
      }
      std::optional<B> batch;
      std::exception_ptr error;
      try {
        batch.emplace(produce(k));
      } catch (...) {
        error = std::current_exception();
      }
      {
        std::lock_guard lock(mutex_);
        if (stop_) return;  // `batch` is released after the lock.
        slots_[k].batch = std::move(batch);
        slots_[k].error = std::move(error);
        slots_[k].ready = true;
      }
      ready_.notify_all();
    }
  }

  void shut_down() noexcept {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    space_.notify_all();
    for (std::thread& worker : workers_) {
      if (worker.joinable()) worker.join();
    }
    workers_.clear();
  }

  const std::shared_ptr<const LoaderConfig<E, B>> config_;
  const std::vector<std::vector<int64_t>> batches_;
  std::vector<Slot> slots_;
  const size_t limit_;
  std::mutex mutex_;
  std::condition_variable ready_;  // a slot became ready
  std::condition_variable space_;  // the consumer took a batch, or stop
  size_t next_claim_ = 0;
  size_t next_take_ = 0;
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace detail

// See the file comment. Invariant: the batch sampler is set (built from the
// options on construction) and the collate function is not empty.
template <class ExampleT, class BatchT = default_batch_t<ExampleT>>
class DataLoader {
  static_assert(!std::is_void_v<BatchT>,
                "DataLoader: the example type has no default collate; name the batch type "
                "(DataLoader<Example, Batch>) and set options.collate");

 public:
  using Example = ExampleT;
  using Batch = BatchT;
  using Options = DataLoaderOptions<ExampleT, BatchT>;

  // end(): compares equal to an iterator past the last batch.
  struct Sentinel {};

  // Walks one epoch. Move-only; owns its epoch (and the worker threads).
  class Iterator {
   public:
    using value_type = Batch;
    using difference_type = std::ptrdiff_t;

    Iterator(Iterator&&) noexcept = default;
    Iterator& operator=(Iterator&&) noexcept = default;

    // The current batch; borrowed until the iterator moves or dies. Throws
    // what producing this batch threw (again on each call).
    Batch& operator*() const {
      fetch();
      return *current_;
    }
    Batch* operator->() const { return &**this; }
    // Moves to the next batch. A batch never dereferenced is still produced
    // (and its error thrown, after the move).
    Iterator& operator++() {
      if (epoch_ == nullptr || index_ >= epoch_->count()) return *this;
      const bool skip = !taken_;
      const int64_t k = index_;
      advance();
      if (skip) (void)epoch_->take(k);
      return *this;
    }
    void operator++(int) { ++*this; }

    friend bool operator==(const Iterator& it, Sentinel) noexcept {
      return it.epoch_ == nullptr || it.index_ >= it.epoch_->count();
    }

   private:
    friend class DataLoader;
    explicit Iterator(std::unique_ptr<detail::LoaderEpoch<ExampleT, BatchT>> epoch) noexcept
        : epoch_(std::move(epoch)) {}

    void fetch() const {
      if (*this == Sentinel{}) {
        tessera::detail::throw_error(TSR_OUT_OF_RANGE,
                                     "DataLoader iterator dereferenced past the last batch; "
                                     "compare it with end() first");
      }
      if (!taken_) {
        taken_ = true;
        try {
          current_.emplace(epoch_->take(index_));
        } catch (...) {
          error_ = std::current_exception();
        }
      }
      if (error_) std::rethrow_exception(error_);
    }
    void advance() noexcept {
      ++index_;
      taken_ = false;
      current_.reset();
      error_ = nullptr;
    }

    std::unique_ptr<detail::LoaderEpoch<ExampleT, BatchT>> epoch_;
    int64_t index_ = 0;
    mutable bool taken_ = false;
    mutable std::optional<Batch> current_;
    mutable std::exception_ptr error_;
  };

  // Shares `dataset`. Throws tessera::Error (INVALID_ARGUMENT) for
  // inconsistent options, naming the option and the fix.
  DataLoader(std::shared_ptr<const Dataset<ExampleT>> dataset, Options options = {})
      : options_(std::move(options)) {
    const Options& o = options_;
    if (!dataset) fail("argument 'dataset' is null; pass the dataset to load");
    if (o.num_workers < 0) {
      fail("num_workers option should be non-negative, got " + std::to_string(o.num_workers) +
           "; use num_workers=0 to load on the calling thread");
    }
    if (o.prefetch_factor < 1) {
      fail("prefetch_factor option should be at least 1, got " + std::to_string(o.prefetch_factor));
    }
    if (o.batch_sampler) {
      if (o.batch_size != 1 || o.shuffle || o.sampler || o.drop_last) {
        fail(
            "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and "
            "drop_last; leave those at their defaults when giving a batch_sampler");
      }
      batch_sampler_ = o.batch_sampler;
    } else {
      if (o.sampler && o.shuffle) {
        fail(
            "sampler option is mutually exclusive with shuffle; shuffle in the sampler (e.g. a "
            "RandomSampler) instead");
      }
      if (o.batch_size < 1) {
        fail("batch_size should be a positive integer value, but got batch_size=" +
             std::to_string(o.batch_size));
      }
      std::shared_ptr<Sampler> sampler = o.sampler;
      if (!sampler) {
        if (o.shuffle) {
          sampler =
              std::make_shared<RandomSampler>(dataset->size(), false, std::nullopt, o.generator);
        } else {
          sampler = std::make_shared<SequentialSampler>(dataset->size());
        }
      }
      batch_sampler_ =
          std::make_shared<BatchSampler>(std::move(sampler), o.batch_size, o.drop_last);
    }
    auto config = std::make_shared<detail::LoaderConfig<ExampleT, BatchT>>();
    config->dataset = std::move(dataset);
    if (o.collate) {
      config->collate = o.collate;
    } else if constexpr (DefaultCollatable<ExampleT, BatchT>) {
      config->collate = [](std::vector<ExampleT> examples) {
        return default_collate(std::move(examples));
      };
    } else {
      fail(
          "collate option is empty and the batch type is not what default_collate gives for "
          "the example type; set options.collate");
    }
    config->device = o.device;
    config->pin_memory = o.pin_memory;
    config->num_workers = o.num_workers;
    config->prefetch_factor = o.prefetch_factor;
    config_ = std::move(config);
  }
  // Takes the dataset by value (moved into shared ownership).
  template <class D>
  requires std::derived_from<D, Dataset<ExampleT>>
  explicit DataLoader(D dataset, Options options = {})
      : DataLoader(
            std::shared_ptr<const Dataset<ExampleT>>(std::make_shared<const D>(std::move(dataset))),
            std::move(options)) {}

  // Starts an epoch (draws its batch order; starts workers). Each call is a
  // new epoch; earlier iterators stay valid and independent.
  Iterator begin() {
    return Iterator(std::make_unique<detail::LoaderEpoch<ExampleT, BatchT>>(
        config_, batch_sampler_->batches()));
  }
  Sentinel end() const noexcept { return {}; }

  // Batches per epoch (len(loader)).
  int64_t size() const { return batch_sampler_->size(); }

  // Borrowed; valid while this loader lives.
  const Dataset<ExampleT>& dataset() const noexcept { return *config_->dataset; }
  const Options& options() const noexcept { return options_; }
  const std::shared_ptr<BatchSampler>& batch_sampler() const noexcept { return batch_sampler_; }

 private:
  [[noreturn]] static void fail(const std::string& message) {
    tessera::detail::throw_error(TSR_INVALID_ARGUMENT, "DataLoader: " + message);
  }

  Options options_;
  std::shared_ptr<BatchSampler> batch_sampler_;
  std::shared_ptr<const detail::LoaderConfig<ExampleT, BatchT>> config_;
};

template <class D>
DataLoader(std::shared_ptr<D>) -> DataLoader<typename D::Example>;
template <class D>
DataLoader(std::shared_ptr<D>, DataLoaderOptions<typename D::Example>)
    -> DataLoader<typename D::Example>;
template <class D>
requires std::derived_from<D, Dataset<typename D::Example>> DataLoader(D)
->DataLoader<typename D::Example>;
template <class D>
requires std::derived_from<D, Dataset<typename D::Example>> DataLoader(
    D, DataLoaderOptions<typename D::Example>)
->DataLoader<typename D::Example>;

}  // namespace tessera::data
