// random_lifecycle_test - families "random" (Philox bits identical to the
// documented mapping on every device; normal and bernoulli distributions),
// "concurrency" (ops from several threads) and "lifecycle" (load, use,
// unload, reload) on the device under test.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "suite_support.h"
#include "tessera/sdk/philox.hpp"

namespace tessera::conformance {
namespace {

struct GeneratorDeleter {
  void operator()(tsr_generator* g) const noexcept { tsr_generator_destroy(g); }
};
using GeneratorPtr = std::unique_ptr<tsr_generator, GeneratorDeleter>;

GeneratorPtr generator(uint64_t seed) {
  tsr_generator* g = nullptr;
  check(tsr_generator_create(runtime(), device(), seed, &g), "tsr_generator_create");
  return GeneratorPtr(g);
}

// op(int[] size, *, Generator? generator, ScalarType? dtype, Layout?, Device? device)
TensorPtr draw(const char* op, int64_t n, tsr_generator* g, tsr_dtype dtype) {
  tsr_value size{};
  size.tag = TSR_VALUE_INT_LIST;
  size.len = 1;
  size.u.ints = &n;
  tsr_value gen{};
  gen.tag = TSR_VALUE_GENERATOR;
  gen.u.generator = g;
  tsr_value dt{};
  dt.tag = TSR_VALUE_DTYPE;
  dt.u.i = dtype;
  tsr_value none{};
  tsr_value dev{};
  dev.tag = TSR_VALUE_DEVICE;
  dev.u.device = device();
  return call(op, {size, gen, dt, none, dev});
}

TEST(Random, UniformBitsFollowTheDocumentedPhiloxMapping){TSR_CONFORMANCE_TRY({
  constexpr uint64_t kSeed = 20261129;
  constexpr int64_t kN = 4099;
  GeneratorPtr g = generator(kSeed);
  TensorPtr t = draw("rand.generator", kN, g.get(), TSR_FLOAT32);
  const std::vector<float> got = to_host<float>(t.get());
  ASSERT_EQ(got.size(), static_cast<size_t>(kN));
  int bad = 0;
  for (int64_t i = 0; i < kN; ++i) {
    // Element i: lane i % 4 of block i / 4 (plugin.h, Note [Random mapping]).
    const auto block = tessera::sdk::philox::stream_block(kSeed, static_cast<uint64_t>(i / 4));
    const float want = tessera::sdk::philox::uniform24(block.lane[i % 4]);
    if (got[static_cast<size_t>(i)] != want && bad++ < 5)
      ADD_FAILURE() << "element " << i << ": " << got[static_cast<size_t>(i)] << ", the "
                    << "Philox mapping gives " << want;
  }
  EXPECT_EQ(bad, 0) << bad << " of " << kN << " elements differ";
})}

TEST(Random, NormalSamplesHaveMeanZeroAndVarianceOne){TSR_CONFORMANCE_TRY({
  constexpr int64_t kN = 1 << 18;
  GeneratorPtr g = generator(7);
  const std::vector<float> x =
      to_host<float>(draw("randn.generator", kN, g.get(), TSR_FLOAT32).get());
  double mean = 0, sq = 0;
  for (float v : x) mean += v;
  mean /= kN;
  for (float v : x) sq += (v - mean) * (v - mean);
  const double var = sq / (kN - 1);
  // 6 standard errors: a correct sampler fails this about once in 10^9 runs.
  EXPECT_NEAR(mean, 0.0, 6.0 / std::sqrt(static_cast<double>(kN)));
  EXPECT_NEAR(var, 1.0, 6.0 * std::sqrt(2.0 / static_cast<double>(kN)));
})}

TEST(Random, BernoulliFrequencyMatchesP){TSR_CONFORMANCE_TRY({
  constexpr int64_t kN = 1 << 18;
  constexpr double kP = 0.3;
  std::vector<float> p(kN, static_cast<float>(kP));
  TensorPtr probs = on_device(p, {kN}, TSR_FLOAT32);
  GeneratorPtr g = generator(11);
  tsr_value gen{};
  gen.tag = TSR_VALUE_GENERATOR;
  gen.u.generator = g.get();
  const std::vector<float> x =
      to_host<float>(call("bernoulli", {tensor_value(probs.get()), gen}).get());
  double ones = 0;
  for (float v : x) {
    ASSERT_TRUE(v == 0.0f || v == 1.0f) << "bernoulli produced " << v;
    ones += v;
  }
  const double se = std::sqrt(kP * (1 - kP) / kN);
  EXPECT_NEAR(ones / kN, kP, 6 * se);
})}

TEST(Concurrency, OpsFromEightThreadsGiveCorrectResults){TSR_CONFORMANCE_TRY({
  constexpr int kThreads = 8, kRounds = 25, kN = 64;
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        for (int r = 0; r < kRounds; ++r) {
          // (a @ b) with a = (t+1) * I-ish pattern: exact in float32.
          std::vector<float> a(kN * kN, 0.0f), b(kN * kN);
          for (int i = 0; i < kN; ++i)
            a[static_cast<size_t>(i * kN + i)] = static_cast<float>(t + 1);
          for (int i = 0; i < kN * kN; ++i)
            b[static_cast<size_t>(i)] = static_cast<float>(i % 17 - r);
          TensorPtr ta = on_device(a, {kN, kN}, TSR_FLOAT32);
          TensorPtr tb = on_device(b, {kN, kN}, TSR_FLOAT32);
          TensorPtr c = call("mm", {tensor_value(ta.get()), tensor_value(tb.get())});
          const std::vector<float> got = to_host<float>(c.get());
          for (int i = 0; i < kN * kN; ++i) {
            if (got[static_cast<size_t>(i)] !=
                static_cast<float>(t + 1) * b[static_cast<size_t>(i)]) {
              errors[static_cast<size_t>(t)] = "thread " + std::to_string(t) + " round " +
                                               std::to_string(r) + ": element " + std::to_string(i);
              return;
            }
          }
        }
      } catch (const std::exception& e) {
        errors[static_cast<size_t>(t)] = e.what();
      }
    });
  }
  for (auto& th : threads) th.join();
  for (const std::string& e : errors)
    if (!e.empty()) ADD_FAILURE() << e;
})}

// Each cycle: a fresh runtime loads the plugin, computes on the device,
// releases everything and unloads it (refused while anything it made is
// alive - a leak shows as FAILED_PRECONDITION), then the next cycle reloads.
TEST(Lifecycle, LoadUseUnloadReloadCycles) {
  TSR_CONFORMANCE_TRY({
    const std::string device_text = target().device;
    for (int cycle = 0; cycle < 3; ++cycle) {
      SCOPED_TRACE("cycle " + std::to_string(cycle));
      tsr_runtime_options options{};
      options.struct_size = sizeof(options);
      options.skip_default_plugins = true;
      tsr_runtime* rt = nullptr;
      check(tsr_runtime_create(&options, &rt), "tsr_runtime_create");
      std::unique_ptr<tsr_runtime, void (*)(tsr_runtime*)> owned(rt, tsr_runtime_destroy);
      tsr_plugin* plugin = nullptr;
      check(tsr_plugin_load(rt, target().plugin_path.c_str(), &plugin), "tsr_plugin_load");
      tsr_device d{};
      check(tsr_device_parse(rt, device_text.c_str(), &d), "tsr_device_parse");
      {
        const float v[3] = {1.0f, 2.0f, 3.0f};
        const int64_t n = 3;
        tsr_tensor* t = nullptr;
        check(tsr_tensor_from_host(rt, v, sizeof(v), 1, &n, TSR_FLOAT32, d, &t), "from_host");
        TensorPtr x(t);
        const tsr_op* op = nullptr;
        check(tsr_op_find(rt, "sum", &op), "tsr_op_find");
        tsr_value arg = tensor_value(x.get());
        tsr_value out{};
        check(tsr_op_call(op, &arg, 1, &out, 1), "sum");
        TensorPtr s(out.u.tensor);
        float total = 0;
        check(tsr_tensor_copy_to_host(s.get(), &total, sizeof(total)), "copy_to_host");
        EXPECT_EQ(total, 6.0f);
      }
      check(tsr_device_synchronize(rt, d), "tsr_device_synchronize");
      check(tsr_device_empty_cache(rt, d), "tsr_device_empty_cache");
      const Outcome unload = outcome(tsr_plugin_unload(rt, plugin));
      EXPECT_EQ(unload.code, TSR_OK) << "unload after use: " << unload.message;
    }
  })
}

}  // namespace
}  // namespace tessera::conformance
