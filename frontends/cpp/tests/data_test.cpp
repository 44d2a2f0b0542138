// tessera::data: datasets, samplers, collate and the DataLoader against
// expectations worked out here, independently of the code under test:
// DistributedSampler shares and random_split sizes as PyTorch prints them,
// random samplers against the randperm/randint/multinomial draws their
// definition names, batch order identical for 0, 1 and 3 workers, worker
// errors reaching the consumer at their batch, shutdown mid-epoch, and the
// num_workers * prefetch_factor bound. Run under TSan for the worker threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "tessera/data/data.hpp"
#include "tessera/tessera.hpp"

namespace {

using tessera::Generator;
using tessera::Tensor;
namespace data = tessera::data;

using Rows = std::vector<Tensor>;

std::vector<int64_t> range(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

std::vector<int64_t> draw_randperm(int64_t n, uint64_t seed) {
  return tessera::randperm(n, Generator(seed)).to_vector<int64_t>();
}

// x[i] = [i, 10 i] (float32), y[i] = i (int64).
std::shared_ptr<data::TensorDataset> make_rows(int64_t n) {
  std::vector<float> x;
  std::vector<int64_t> y;
  for (int64_t i = 0; i < n; ++i) {
    x.push_back(static_cast<float>(i));
    x.push_back(static_cast<float>(10 * i));
    y.push_back(i);
  }
  return std::make_shared<data::TensorDataset>(tessera::tensor(x, {n, 2}), tessera::tensor(y));
}

// The labels of every batch of one epoch.
template <class Loader>
std::vector<std::vector<int64_t>> epoch_labels(Loader& loader) {
  std::vector<std::vector<int64_t>> out;
  for (auto& batch : loader) out.push_back(batch[1].template to_vector<int64_t>());
  return out;
}

std::vector<int64_t> flatten(const std::vector<std::vector<int64_t>>& batches) {
  std::vector<int64_t> out;
  for (const auto& b : batches) out.insert(out.end(), b.begin(), b.end());
  return out;
}

template <class Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const tessera::Error& e) {
    return e.what();
  }
  return "<no tessera::Error>";
}

// ---------------------------------------------------------------------------
// Datasets
// ---------------------------------------------------------------------------

TEST(TensorDataset, ExampleIsRowOfEachTensor) {
  auto ds = make_rows(5);
  EXPECT_EQ(ds->size(), 5);
  Rows row = ds->get(3);
  ASSERT_EQ(row.size(), 2u);
  EXPECT_EQ(row[0].to_vector<float>(), (std::vector<float>{3, 30}));
  EXPECT_EQ(row[1].item<int64_t>(), 3);
  EXPECT_TRUE(row[0].is_same_storage(ds->tensors()[0]));
}

TEST(TensorDataset, RejectsUnequalFirstDims) {
  const std::string message = error_of([] {
    data::TensorDataset ds(tessera::zeros({5, 2}), tessera::zeros({4}));
  });
  EXPECT_NE(message.find("tensor 1 has size(0) = 4 but tensor 0 has size(0) = 5"),
            std::string::npos)
      << message;
  EXPECT_NE(error_of([] { data::TensorDataset ds(tessera::scalar_tensor(1.0)); }).find("0-d"),
            std::string::npos);
  EXPECT_NE(error_of([] { (void)make_rows(3)->get(3); }).find("index 3 is out of range"),
            std::string::npos);
}

TEST(Subset, TakesIndicesAndConcatChains) {
  auto ds = make_rows(6);
  auto sub = std::make_shared<data::Subset<Rows>>(ds, std::vector<int64_t>{4, 1, 4});
  EXPECT_EQ(sub->size(), 3);
  EXPECT_EQ(sub->get(0)[1].item<int64_t>(), 4);
  EXPECT_EQ(sub->get(1)[1].item<int64_t>(), 1);
  EXPECT_NE(error_of([&] { data::Subset<Rows> bad(ds, {6}); }).find("indices[0] = 6"),
            std::string::npos);

  data::ConcatDataset<Rows> cat({ds, sub, make_rows(2)});
  EXPECT_EQ(cat.size(), 11);
  EXPECT_EQ(cat.cumulative_sizes(), (std::vector<int64_t>{6, 9, 11}));
  std::vector<int64_t> labels;
  for (int64_t i = 0; i < cat.size(); ++i) labels.push_back(cat.get(i)[1].item<int64_t>());
  EXPECT_EQ(labels, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 4, 1, 4, 0, 1}));
}

TEST(RandomSplit, FractionSizesFollowPyTorch) {
  auto sizes = [](int64_t n, std::vector<double> fractions) {
    std::vector<int64_t> out;
    for (const auto& s : data::random_split(make_rows(n), fractions, Generator(uint64_t{0}))) {
      out.push_back(s.size());
    }
    return out;
  };
  EXPECT_EQ(sizes(10, {0.3, 0.3, 0.4}), (std::vector<int64_t>{3, 3, 4}));
  EXPECT_EQ(sizes(11, {0.5, 0.5}), (std::vector<int64_t>{6, 5}));
  // floor: 3, 3, 3 -> remainder 1 goes to the first.
  EXPECT_EQ(sizes(10, {1.0 / 3, 1.0 / 3, 1.0 / 3}), (std::vector<int64_t>{4, 3, 3}));
  // floor: 1, 1, 1, 1 of 7 -> remainder 3, round-robin.
  EXPECT_EQ(sizes(7, {0.25, 0.25, 0.25, 0.25}), (std::vector<int64_t>{2, 2, 2, 1}));
}

TEST(RandomSplit, CutsOneRandpermOfTheGenerator) {
  auto splits = data::random_split(make_rows(10), {7, 3}, Generator(5));
  const std::vector<int64_t> perm = draw_randperm(10, 5);
  ASSERT_EQ(splits.size(), 2u);
  EXPECT_EQ(splits[0].indices(), std::vector<int64_t>(perm.begin(), perm.begin() + 7));
  EXPECT_EQ(splits[1].indices(), std::vector<int64_t>(perm.begin() + 7, perm.end()));
  EXPECT_EQ(splits[1].get(0)[1].item<int64_t>(), perm[7]);

  const std::string message = error_of([] {
    data::random_split(make_rows(10), {7, 4}, Generator(uint64_t{0}));
  });
  EXPECT_NE(message.find("sum of input lengths (11) does not equal the length of the input "
                         "dataset (10)"),
            std::string::npos)
      << message;
  EXPECT_NE(error_of([] {
              data::random_split(make_rows(10), {0.5, 0.6});
            }).find("sum to"),
            std::string::npos);
}

// ---------------------------------------------------------------------------
// Samplers
// ---------------------------------------------------------------------------

TEST(Samplers, SequentialIsRange) {
  data::SequentialSampler s(5);
  EXPECT_EQ(s.indices(), range(5));
  EXPECT_EQ(s.size(), 5);
}

TEST(Samplers, RandomSamplerDrawsRandpermsFromItsGenerator) {
  data::RandomSampler s(6, false, std::nullopt, Generator(3));
  // As PyTorch, a pass draws num_samples / n full randperms and then one more
  // for the num_samples % n tail even when that tail is empty: the second
  // pass starts at the third randperm(6) of Generator(3).
  Generator g(3);
  const auto first = tessera::randperm(6, g).to_vector<int64_t>();
  (void)tessera::randperm(6, g);
  const auto second = tessera::randperm(6, g).to_vector<int64_t>();
  EXPECT_EQ(s.indices(), first);
  EXPECT_EQ(s.indices(), second);
  EXPECT_NE(first, second);

  // num_samples > n: whole permutations, then a prefix of one more.
  data::RandomSampler longer(4, false, 10, Generator(1));
  Generator h(1);
  std::vector<int64_t> expected;
  for (int i = 0; i < 3; ++i) {
    auto p = tessera::randperm(4, h).to_vector<int64_t>();
    expected.insert(expected.end(), p.begin(), p.begin() + (i < 2 ? 4 : 2));
  }
  EXPECT_EQ(longer.indices(), expected);
  EXPECT_EQ(longer.size(), 10);
}

TEST(Samplers, RandomSamplerWithReplacementDrawsRandintChunks) {
  data::RandomSampler s(5, true, 40, Generator(9));
  Generator g(9);
  auto expected = tessera::randint(5, {32}, g).to_vector<int64_t>();
  auto rest = tessera::randint(5, {8}, g).to_vector<int64_t>();
  expected.insert(expected.end(), rest.begin(), rest.end());
  EXPECT_EQ(s.indices(), expected);
  EXPECT_NE(error_of([] { data::RandomSampler r(0); }).find("num_samples=0"), std::string::npos);
}

TEST(Samplers, RandomSamplerWithoutGeneratorFollowsManualSeed) {
  tessera::manual_seed(11);
  data::RandomSampler a(8);
  const auto first = a.indices();
  tessera::manual_seed(11);
  data::RandomSampler b(8);
  EXPECT_EQ(b.indices(), first);
  auto sorted = first;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, range(8));
}

TEST(Samplers, WeightedRandomSamplerIsMultinomial) {
  const std::vector<double> weights{0.0, 1.0, 0.0, 3.0};
  data::WeightedRandomSampler s(weights, 50, true, Generator(4));
  const auto drawn = s.indices();
  const auto expected =
      tessera::multinomial(tessera::tensor(weights, tessera::kFloat64), 50, true, Generator(4))
          .to_vector<int64_t>();
  EXPECT_EQ(drawn, expected);
  for (int64_t i : drawn) EXPECT_TRUE(i == 1 || i == 3) << i;
  data::WeightedRandomSampler no_replacement(weights, 2, false, Generator(4));
  auto two = no_replacement.indices();
  std::sort(two.begin(), two.end());
  EXPECT_EQ(two, (std::vector<int64_t>{1, 3}));
  EXPECT_NE(error_of([] {
              data::WeightedRandomSampler w(tessera::ones({2, 2}), 1);
            }).find("1d sequence"),
            std::string::npos);
}

TEST(Samplers, BatchSamplerCutsAndDropsLast) {
  auto seq = std::make_shared<data::SequentialSampler>(7);
  data::BatchSampler keep(seq, 3, false);
  EXPECT_EQ(keep.size(), 3);
  EXPECT_EQ(keep.batches(), (std::vector<std::vector<int64_t>>{{0, 1, 2}, {3, 4, 5}, {6}}));
  data::BatchSampler drop(seq, 3, true);
  EXPECT_EQ(drop.size(), 2);
  EXPECT_EQ(drop.batches(), (std::vector<std::vector<int64_t>>{{0, 1, 2}, {3, 4, 5}}));
  EXPECT_NE(error_of([&] { data::BatchSampler b(seq, 0, false); }).find("batch_size=0"),
            std::string::npos);
}

std::vector<std::vector<int64_t>> shares(int64_t n, int64_t replicas, bool shuffle, bool drop_last,
                                         uint64_t seed = 0, uint64_t epoch = 0) {
  std::vector<std::vector<int64_t>> out;
  for (int64_t r = 0; r < replicas; ++r) {
    data::DistributedSampler s(n, replicas, r, shuffle, seed, drop_last);
    s.set_epoch(epoch);
    out.push_back(s.indices());
    EXPECT_EQ(static_cast<int64_t>(out.back().size()), s.size());
  }
  return out;
}

TEST(DistributedSampler, PadsFromTheStartLikePyTorch) {
  using V = std::vector<std::vector<int64_t>>;
  // PyTorch: len 10, 3 replicas, no shuffle.
  EXPECT_EQ(shares(10, 3, false, false), (V{{0, 3, 6, 9}, {1, 4, 7, 0}, {2, 5, 8, 1}}));
  // Padding longer than the data repeats it: len 2, 5 replicas -> [0, 1, 0, 1, 0].
  EXPECT_EQ(shares(2, 5, false, false), (V{{0}, {1}, {0}, {1}, {0}}));
  // Divisible: no padding.
  EXPECT_EQ(shares(6, 2, false, false), (V{{0, 2, 4}, {1, 3, 5}}));
}

TEST(DistributedSampler, DropLastTruncates) {
  using V = std::vector<std::vector<int64_t>>;
  EXPECT_EQ(shares(10, 3, false, true), (V{{0, 3, 6}, {1, 4, 7}, {2, 5, 8}}));
  EXPECT_EQ(shares(11, 4, false, true), (V{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  // Fewer examples than replicas: nothing for anyone.
  EXPECT_EQ(shares(2, 3, false, true), (V{{}, {}, {}}));
}

TEST(DistributedSampler, ShuffleUsesSeedPlusEpoch) {
  // 10 over 4 replicas: order = randperm(10) of Generator(seed + epoch), padded
  // by its first 2, rank r takes order[r::4].
  for (uint64_t epoch : {0u, 1u}) {
    std::vector<int64_t> order = draw_randperm(10, 7 + epoch);
    order.push_back(order[0]);
    order.push_back(order[1]);
    const auto got = shares(10, 4, true, false, 7, epoch);
    for (size_t r = 0; r < 4; ++r) {
      std::vector<int64_t> expected;
      for (size_t i = r; i < order.size(); i += 4) expected.push_back(order[i]);
      EXPECT_EQ(got[r], expected) << "epoch " << epoch << " rank " << r;
    }
  }
  EXPECT_NE(shares(10, 4, true, false, 7, 0), shares(10, 4, true, false, 7, 1));
}

TEST(DistributedSampler, ValidatesRankAndReplicas) {
  EXPECT_NE(error_of([] {
              data::DistributedSampler s(10, 3, 3);
            }).find("invalid rank 3, rank should be in the interval [0, 2]"),
            std::string::npos);
  EXPECT_NE(error_of([] { data::DistributedSampler s(10, 3, -1); }).find("invalid rank -1"),
            std::string::npos);
  EXPECT_NE(error_of([] { data::DistributedSampler s(10, 0, 0); }).find("num_replicas"),
            std::string::npos);
}

// ---------------------------------------------------------------------------
// Collate
// ---------------------------------------------------------------------------

TEST(Collate, StacksEachFieldAlongNewDim0) {
  auto ds = make_rows(4);
  Rows batch = data::default_collate(std::vector<Rows>{ds->get(2), ds->get(0), ds->get(3)});
  ASSERT_EQ(batch.size(), 2u);
  EXPECT_EQ(batch[0].sizes(), tessera::Dims({3, 2}));
  EXPECT_EQ(batch[0].to_vector<float>(), (std::vector<float>{2, 20, 0, 0, 3, 30}));
  EXPECT_EQ(batch[1].to_vector<int64_t>(), (std::vector<int64_t>{2, 0, 3}));
}

TEST(Collate, TuplesExamplesAndNumbers) {
  using E = std::tuple<Tensor, int, double>;
  std::vector<E> examples{{tessera::ones({2}), 1, 0.5}, {tessera::zeros({2}), 2, 1.5}};
  auto [x, i, d] = data::default_collate(std::move(examples));
  EXPECT_EQ(x.sizes(), tessera::Dims({2, 2}));
  EXPECT_EQ(i.dtype(), tessera::kInt64);
  EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(d.dtype(), tessera::kFloat64);

  using P = data::Example<>;
  std::vector<P> pairs{{tessera::ones({3}), tessera::scalar_tensor(int64_t{4})},
                       {tessera::ones({3}), tessera::scalar_tensor(int64_t{5})}};
  auto batch = data::default_collate(std::move(pairs));
  EXPECT_EQ(batch.data.sizes(), tessera::Dims({2, 3}));
  EXPECT_EQ(batch.target.to_vector<int64_t>(), (std::vector<int64_t>{4, 5}));
}

TEST(Collate, RejectsRaggedExamples) {
  EXPECT_NE(error_of([] {
              data::default_collate(std::vector<Rows>{{tessera::ones({2})},
                                                      {tessera::ones({2}), tessera::ones({2})}});
            }).find("example 1 of the batch has 2 fields but example 0 has 1"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              data::default_collate(std::vector<Tensor>{tessera::ones({2}), tessera::ones({3})});
            }).find("default_collate: cannot stack 2 tensors"),
            std::string::npos);
}

// ---------------------------------------------------------------------------
// DataLoader
// ---------------------------------------------------------------------------

TEST(DataLoader, BatchesShapesValuesAndDropLast) {
  data::DataLoader loader(make_rows(10), {.batch_size = 4});
  EXPECT_EQ(loader.size(), 3);
  std::vector<int64_t> rows;
  int64_t count = 0;
  for (Rows& batch : loader) {
    ASSERT_EQ(batch.size(), 2u);
    const int64_t b = batch[0].size(0);
    rows.push_back(b);
    EXPECT_EQ(batch[0].sizes(), tessera::Dims({b, 2}));
    const auto x = batch[0].to_vector<float>();
    const auto y = batch[1].to_vector<int64_t>();
    for (int64_t i = 0; i < b; ++i) {
      EXPECT_EQ(y[static_cast<size_t>(i)], count * 4 + i);
      EXPECT_EQ(x[static_cast<size_t>(2 * i + 1)], 10.0f * static_cast<float>(count * 4 + i));
    }
    ++count;
  }
  EXPECT_EQ(rows, (std::vector<int64_t>{4, 4, 2}));

  data::DataLoader dropping(make_rows(10), {.batch_size = 4, .drop_last = true});
  EXPECT_EQ(dropping.size(), 2);
  EXPECT_EQ(flatten(epoch_labels(dropping)), range(8));
}

TEST(DataLoader, SameOrderForAnyNumberOfWorkers) {
  auto ds = make_rows(23);
  std::vector<std::vector<std::vector<int64_t>>> runs;
  for (int64_t workers : {0, 1, 3}) {
    data::DataLoader loader(
        ds, {.batch_size = 4, .shuffle = true, .generator = Generator(42), .num_workers = workers});
    auto first = epoch_labels(loader);
    auto second = epoch_labels(loader);
    EXPECT_NE(first, second) << "successive epochs must differ";
    auto sorted = flatten(first);
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, range(23));
    runs.push_back(first);
    runs.push_back(second);
  }
  // The first epoch is the first randperm(23) of Generator(42), cut in 4s.
  Generator g(42);
  const auto p0 = tessera::randperm(23, g).to_vector<int64_t>();
  EXPECT_EQ(flatten(runs[0]), p0);
  for (size_t i = 2; i < runs.size(); ++i) EXPECT_EQ(runs[i], runs[i % 2]) << i;
}

TEST(DataLoader, SamplerAndBatchSamplerOptions) {
  auto ds = make_rows(6);
  data::DataLoader with_sampler(
      ds, {.batch_size = 2, .sampler = std::make_shared<data::DistributedSampler>(6, 2, 1, false)});
  EXPECT_EQ(epoch_labels(with_sampler), (std::vector<std::vector<int64_t>>{{1, 3}, {5}}));

  auto batches =
      std::make_shared<data::BatchSampler>(std::make_shared<data::SequentialSampler>(6), 5, false);
  data::DataLoader with_batches(ds, {.batch_sampler = batches, .num_workers = 2});
  EXPECT_EQ(epoch_labels(with_batches), (std::vector<std::vector<int64_t>>{{0, 1, 2, 3, 4}, {5}}));

  EXPECT_NE(error_of([&] {
              data::DataLoader l(
                  ds, {.shuffle = true, .sampler = std::make_shared<data::SequentialSampler>(6)});
            }).find("sampler option is mutually exclusive with shuffle"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              data::DataLoader l(ds, {.batch_size = 2, .batch_sampler = batches});
            }).find("batch_sampler option is mutually exclusive"),
            std::string::npos);
  EXPECT_NE(error_of([&] { data::DataLoader l(ds, {.num_workers = -1}); }).find("num_workers"),
            std::string::npos);
}

TEST(DataLoader, UserCollateAndExampleDatasets) {
  // A dataset of Example<Tensor, int64_t>, collated by hand into a sum.
  struct Squares : data::Dataset<data::Example<Tensor, int64_t>> {
    data::Example<Tensor, int64_t> get(int64_t i) const override {
      return {tessera::full({2}, static_cast<double>(i * i)), i};
    }
    int64_t size() const override { return 5; }
  };
  data::DataLoader<data::Example<Tensor, int64_t>, int64_t> summed(
      Squares{}, {.batch_size = 2,
                  .num_workers = 2,
                  .collate = [](std::vector<data::Example<Tensor, int64_t>> examples) {
                    int64_t total = 0;
                    for (auto& e : examples) total += e.target;
                    return total;
                  }});
  std::vector<int64_t> totals;
  for (int64_t t : summed) totals.push_back(t);
  EXPECT_EQ(totals, (std::vector<int64_t>{1, 5, 4}));

  data::DataLoader defaulted(Squares{}, {.batch_size = 5});
  auto it = defaulted.begin();
  EXPECT_EQ(it->data.sizes(), tessera::Dims({5, 2}));
  EXPECT_EQ(it->target.to_vector<int64_t>(), range(5));
}

TEST(DataLoader, MovesBatchesToTheTargetDevice) {
  // meta is built in, so this runs with the cpu plugin alone.
  data::DataLoader loader(
      make_rows(4),
      {.batch_size = 2, .num_workers = 1, .device = tessera::kMeta, .pin_memory = true});
  for (Rows& batch : loader) {
    EXPECT_EQ(batch[0].device(), tessera::kMeta);
    EXPECT_EQ(batch[1].device(), tessera::kMeta);
    EXPECT_EQ(batch[0].sizes(), tessera::Dims({2, 2}));
  }
  data::DataLoader on_cpu(make_rows(4),
                          {.batch_size = 4, .device = tessera::kCPU, .pin_memory = true});
  EXPECT_EQ(flatten(epoch_labels(on_cpu)), range(4));
}

// Throws at index `bad`; otherwise a row of make_rows.
class Faulty : public data::Dataset<Rows> {
 public:
  explicit Faulty(int64_t bad) : rows_(make_rows(12)), bad_(bad) {}
  Rows get(int64_t i) const override {
    if (i == bad_) throw std::runtime_error("bad example " + std::to_string(i));
    return rows_->get(i);
  }
  int64_t size() const override { return rows_->size(); }

 private:
  std::shared_ptr<data::TensorDataset> rows_;
  int64_t bad_;
};

TEST(DataLoader, WorkerErrorReachesConsumerAtItsBatch) {
  for (int64_t workers : {0, 1, 3}) {
    data::DataLoader loader(Faulty(5), {.batch_size = 2, .num_workers = workers});
    std::vector<std::string> seen;
    for (auto it = loader.begin(); it != loader.end(); ++it) {
      try {
        seen.push_back(std::to_string((*it)[1].to_vector<int64_t>()[0]));
      } catch (const std::runtime_error& e) {
        seen.push_back(e.what());
        // Again on a second dereference.
        EXPECT_THROW((void)*it, std::runtime_error);
      }
    }
    EXPECT_EQ(seen, (std::vector<std::string>{"0", "2", "bad example 5", "6", "8", "10"}))
        << workers << " workers";

    // Skipping the bad batch without dereferencing: ++ throws, having moved on.
    auto it = loader.begin();
    ++it;
    ++it;
    EXPECT_THROW(++it, std::runtime_error);
    EXPECT_EQ((*it)[1].to_vector<int64_t>(), (std::vector<int64_t>{6, 7}));

    // A range-for abandoned by the exception leaves everything destructible.
    EXPECT_THROW(
        {
          for (Rows& batch : loader) (void)batch;
        },
        std::runtime_error);
  }
}

// Sleeps in get() and records, per call, how far ahead of the consumer the
// workers are.
class Slow : public data::Dataset<Rows> {
 public:
  explicit Slow(int64_t n, std::chrono::milliseconds delay = std::chrono::milliseconds(2))
      : rows_(make_rows(n)), delay_(delay) {}
  Rows get(int64_t i) const override {
    std::this_thread::sleep_for(delay_);
    const int64_t lead = i - consumed.load();
    int64_t seen = max_lead.load();
    while (lead > seen && !max_lead.compare_exchange_weak(seen, lead)) {
    }
    calls.fetch_add(1);
    return rows_->get(i);
  }
  int64_t size() const override { return rows_->size(); }

  mutable std::atomic<int64_t> consumed{0};
  mutable std::atomic<int64_t> max_lead{0};
  mutable std::atomic<int64_t> calls{0};

 private:
  std::shared_ptr<data::TensorDataset> rows_;
  std::chrono::milliseconds delay_;
};

TEST(DataLoader, PrefetchIsBoundedByWorkersTimesFactor) {
  auto ds = std::make_shared<Slow>(40, std::chrono::milliseconds(1));
  const int64_t workers = 3, factor = 2;
  data::DataLoader loader(ds, {.num_workers = workers, .prefetch_factor = factor});
  for (Rows& batch : loader) {
    (void)batch;
    std::this_thread::sleep_for(std::chrono::milliseconds(4));  // a slow consumer
    ds->consumed.fetch_add(1);
  }
  // Batch i (batch_size 1) may be claimed only while i < taken + 6; the
  // test's count trails the loader's by at most the batch in hand.
  EXPECT_LE(ds->max_lead.load(), workers * factor);
  EXPECT_GE(ds->max_lead.load(), workers * factor - 1) << "the workers should run ahead";
  EXPECT_EQ(ds->calls.load(), 40);
}

TEST(DataLoader, DestroyingIteratorOrLoaderMidEpochJoinsWorkers) {
  auto ds = std::make_shared<Slow>(200);
  {
    data::DataLoader loader(ds, {.batch_size = 2, .num_workers = 3});
    auto it = loader.begin();
    EXPECT_EQ((*it)[1].to_vector<int64_t>(), (std::vector<int64_t>{0, 1}));
    ++it;
    (void)*it;
  }  // iterator then loader destroyed with workers busy
  const int64_t calls = ds->calls.load();
  EXPECT_LT(calls, 200) << "workers should stop early";
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(ds->calls.load(), calls) << "no worker may outlive the iterator";

  // The iterator outlives its loader.
  auto make = [&] {
    data::DataLoader loader(ds, {.batch_size = 50, .num_workers = 2});
    return loader.begin();
  };
  auto it = make();
  int64_t batches = 0;
  for (; it != data::DataLoader<Rows>::Sentinel{}; ++it) {
    EXPECT_EQ((*it)[0].size(0), 50);
    ++batches;
  }
  EXPECT_EQ(batches, 4);
}

TEST(DataLoader, ConcurrentEpochsAreThreadSafe) {
  // Several epochs of one loader alive at once, each with its own workers,
  // over a shared dataset: TSan checks the bookkeeping and the core calls.
  auto ds = make_rows(64);
  data::DataLoader loader(ds, {.batch_size = 3,
                               .shuffle = true,
                               .generator = Generator(1),
                               .num_workers = 4,
                               .prefetch_factor = 1});
  auto a = loader.begin();
  auto b = loader.begin();
  std::vector<int64_t> seen_a, seen_b;
  for (; a != loader.end() || b != loader.end();) {
    if (a != loader.end()) {
      for (int64_t v : (*a)[1].to_vector<int64_t>()) seen_a.push_back(v);
      ++a;
    }
    if (b != loader.end()) {
      for (int64_t v : (*b)[1].to_vector<int64_t>()) seen_b.push_back(v);
      ++b;
    }
  }
  EXPECT_NE(seen_a, seen_b);
  std::sort(seen_a.begin(), seen_a.end());
  std::sort(seen_b.begin(), seen_b.end());
  EXPECT_EQ(seen_a, range(64));
  EXPECT_EQ(seen_b, range(64));
}

}  // namespace
