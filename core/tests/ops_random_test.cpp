// Random ops and generators end to end: Philox4x32-10 against Random123's
// known answers, the CPU plugin's random_fill and the core's host fallback
// against sdk/philox.hpp bit for bit, the seed program's save/restore
// contract (PyTorch's generator semantics), generator offsets advancing by the
// documented block counts, the C API's validation, and the distributions'
// statistics (means and variances of 1e6 draws within 5 sigma, rates, ranges,
// permutations, multinomial frequencies). Statistical bounds are 5 sigma of
// the estimator, so a correct implementation fails them with probability
// below 1e-6 per check; the seeds are fixed, so results are reproducible.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "../../plugins/sdk/include/tessera/sdk/philox.hpp"
#include "tessera/tessera.hpp"

namespace {

namespace philox = tessera::sdk::philox;
using tessera::Generator;
using tessera::Tensor;

std::vector<uint8_t> bytes_of(const Tensor& t) {
  std::vector<uint8_t> out(t.nbytes());
  if (!out.empty()) t.contiguous().copy_to_host(out.data(), out.size());
  return out;
}

// What sdk/philox.hpp computes for a fill of n elements.
std::vector<uint8_t> reference_bytes(int32_t distribution, tessera::Dtype dtype, uint64_t seed,
                                     uint64_t offset, double p0, double p1, int64_t n) {
  philox::fill_spec spec;
  spec.distribution = distribution;
  spec.dtype = tessera::to_c(dtype);
  spec.seed = seed;
  spec.offset = offset;
  spec.param0 = p0;
  spec.param1 = p1;
  EXPECT_EQ(philox::check(spec), nullptr);
  std::vector<uint8_t> out(static_cast<size_t>(n) * tessera::element_size(dtype));
  philox::fill(spec, out.data(), 0, n);
  return out;
}

uint64_t blocks(int32_t distribution, tessera::Dtype dtype, double p0, double p1, int64_t n) {
  philox::fill_spec spec;
  spec.distribution = distribution;
  spec.dtype = tessera::to_c(dtype);
  spec.param0 = p0;
  spec.param1 = p1;
  return philox::blocks_for(spec, n);
}

// Expects `f` to throw tessera::Error with `code` and every fragment in its message.
template <class F>
void expect_error(F&& f, tsr_status_code code, std::initializer_list<const char*> fragments) {
  try {
    f();
    ADD_FAILURE() << "no error thrown";
  } catch (const tessera::Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    for (const char* fragment : fragments)
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
          << "message lacks '" << fragment << "': " << e.what();
  }
}

struct Moments {
  double mean = 0, variance = 0;
};
Moments moments(const std::vector<double>& v) {
  Moments m;
  for (double x : v) m.mean += x;
  m.mean /= static_cast<double>(v.size());
  for (double x : v) m.variance += (x - m.mean) * (x - m.mean);
  m.variance /= static_cast<double>(v.size() - 1);
  return m;
}

// ---------------------------------------------------------------------------
// Philox itself
// ---------------------------------------------------------------------------

TEST(Philox, MatchesRandom123KnownAnswers) {
  // Random123 tests/kat_vectors, the three "philox4x32 10" lines.
  auto a = philox::philox4x32_10(0, 0, 0, 0, 0, 0);
  EXPECT_EQ(a.lane[0], 0x6627e8d5u);
  EXPECT_EQ(a.lane[1], 0xe169c58du);
  EXPECT_EQ(a.lane[2], 0xbc57ac4cu);
  EXPECT_EQ(a.lane[3], 0x9b00dbd8u);
  const uint32_t f = 0xffffffffu;
  auto b = philox::philox4x32_10(f, f, f, f, f, f);
  EXPECT_EQ(b.lane[0], 0x408f276du);
  EXPECT_EQ(b.lane[1], 0x41c83b0eu);
  EXPECT_EQ(b.lane[2], 0xa20bc7c6u);
  EXPECT_EQ(b.lane[3], 0x6d5451fdu);
  auto c = philox::philox4x32_10(0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u, 0xa4093822u,
                                 0x299f31d0u);
  EXPECT_EQ(c.lane[0], 0xd16cfe09u);
  EXPECT_EQ(c.lane[1], 0x94fdccebu);
  EXPECT_EQ(c.lane[2], 0x5001e420u);
  EXPECT_EQ(c.lane[3], 0x24126ea1u);
}

TEST(Philox, StreamBlockUsesOffsetAsCounterAndSeedAsKey) {
  const uint64_t seed = 0x299f31d0a4093822ull, index = 0x85a308d3243f6a88ull;
  auto s = philox::stream_block(seed, index);
  auto d = philox::philox4x32_10(0x243f6a88u, 0x85a308d3u, 0, 0, 0xa4093822u, 0x299f31d0u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(s.lane[i], d.lane[i]);
}

TEST(Philox, AnySplitOfAFillGivesTheSameBits) {
  for (int32_t dist : {TSR_RANDOM_UNIFORM, TSR_RANDOM_NORMAL, TSR_RANDOM_RANDINT}) {
    for (tessera::Dtype dtype : {tessera::kFloat32, tessera::kFloat64}) {
      const double p1 = dist == TSR_RANDOM_RANDINT ? 1e12 : 1.0;
      const auto whole = reference_bytes(dist, dtype, 5, 3, 0, p1, 37);
      philox::fill_spec spec{dist, tessera::to_c(dtype), 5, 3, 0, p1};
      std::vector<uint8_t> pieces(whole.size());
      for (int64_t b = 0; b < 37; b += 3)
        philox::fill(spec, pieces.data(), b, std::min<int64_t>(b + 3, 37));
      EXPECT_EQ(pieces, whole) << philox::distribution_name(dist);
    }
  }
}

TEST(Philox, RejectsFillsWithUndefinedValues) {
  EXPECT_NE(philox::check({TSR_RANDOM_UNIFORM, TSR_INT64, 0, 0, 0, 1}), nullptr);
  EXPECT_NE(philox::check({TSR_RANDOM_NORMAL, TSR_FLOAT32, 0, 0, 0, -1}), nullptr);
  EXPECT_NE(philox::check({TSR_RANDOM_BERNOULLI, TSR_FLOAT32, 0, 0, 1.5, 0}), nullptr);
  EXPECT_NE(philox::check({TSR_RANDOM_RANDINT, TSR_INT64, 0, 0, 3, 3}), nullptr);
  EXPECT_NE(philox::check({TSR_RANDOM_RANDINT, TSR_INT64, 0, 0, 0.5, 3}), nullptr);
  EXPECT_NE(philox::check({TSR_RANDOM_BITS, TSR_FLOAT32, 0, 0, 0, 0}), nullptr);
  EXPECT_NE(philox::check({99, TSR_FLOAT32, 0, 0, 0, 1}), nullptr);
  EXPECT_EQ(philox::check({TSR_RANDOM_RANDINT, TSR_INT64, 0, 0, -9223372036854775808.0,
                           9223372036854775808.0}),
            nullptr);
}

// ---------------------------------------------------------------------------
// The random-state program: seeding, generator state save/restore
// ---------------------------------------------------------------------------

TEST(SeedProgram, PrivateGeneratorRestoreReplaysFourValuesAndLeavesTheGlobalOneAlone) {
  const auto global_before = Generator::default_generator().get_state();
  Generator g(2024);
  (void)tessera::rand({1}, g);  // one draw
  const auto saved = g.get_state();
  const Tensor first = tessera::rand({4}, g);
  g.set_state(saved);
  const Tensor again = tessera::rand({4}, g);
  EXPECT_EQ(bytes_of(first), bytes_of(again));
  EXPECT_EQ(Generator::default_generator().get_state(), global_before);

  // The same through randn and a float64 normal_ in place.
  g.set_state(saved);
  const Tensor n1 = tessera::randn({4}, g);
  g.set_state(saved);
  EXPECT_EQ(bytes_of(tessera::randn({4}, g)), bytes_of(n1));
  Tensor d = tessera::empty({4}, tessera::kFloat64);
  g.set_state(saved);
  tessera::normal_(d, 0.0, 1.0, g);
  const auto d1 = bytes_of(d);
  g.set_state(saved);
  tessera::normal_(d, 0.0, 1.0, g);
  EXPECT_EQ(bytes_of(d), d1);
  EXPECT_EQ(Generator::default_generator().get_state(), global_before);
}

TEST(SeedProgram, StatesMoveBetweenGenerators) {
  Generator a(7), b(99);
  (void)tessera::rand({3}, a);
  b.set_state(a.get_state());
  EXPECT_EQ(bytes_of(tessera::rand({5}, a)), bytes_of(tessera::rand({5}, b)));
  EXPECT_EQ(a.initial_seed(), 7u);
  EXPECT_EQ(b.initial_seed(), 7u);
}

TEST(SeedProgram, ManualSeedRepeatsDefaultDrawsAndLeavesPrivateGenerators) {
  Generator mine(5);
  (void)tessera::rand({9}, mine);
  const uint64_t mine_offset = mine.offset();
  tessera::manual_seed(123);
  const auto x = bytes_of(tessera::randn({6}));
  tessera::manual_seed(123);
  EXPECT_EQ(bytes_of(tessera::randn({6})), x);
  EXPECT_EQ(Generator::default_generator().initial_seed(), 123u);
  EXPECT_EQ(mine.offset(), mine_offset);
  EXPECT_EQ(mine.initial_seed(), 5u);
  tessera::manual_seed(124);
  EXPECT_NE(bytes_of(tessera::randn({6})), x);
}

TEST(SeedProgram, CopiesOfAGeneratorShareOneStream) {
  Generator g(11);
  Generator copy = g;
  (void)tessera::rand({8}, copy);
  EXPECT_EQ(g.offset(), 2u);
  EXPECT_EQ(g.get(), copy.get());
}

// ---------------------------------------------------------------------------
// Bits: plugin path == sdk reference == host fallback
// ---------------------------------------------------------------------------

struct FillCase {
  const char* name;
  int32_t distribution;
  tessera::Dtype dtype;
  double p0, p1;
  int64_t n;
  // Draws n values from `g` through an op.
  Tensor (*draw)(Generator& g, const FillCase& c);
};

Tensor draw_rand(Generator& g, const FillCase& c) { return tessera::rand({c.n}, g, c.dtype); }
Tensor draw_randn(Generator& g, const FillCase& c) { return tessera::randn({c.n}, g, c.dtype); }
Tensor draw_uniform(Generator& g, const FillCase& c) {
  Tensor t = tessera::empty({c.n}, c.dtype);
  tessera::uniform_(t, c.p0, c.p1, g);
  return t;
}
Tensor draw_normal(Generator& g, const FillCase& c) {
  return tessera::normal(c.p0, c.p1, {c.n}, g, c.dtype);
}
Tensor draw_bernoulli(Generator& g, const FillCase& c) {
  Tensor t = tessera::empty({c.n}, c.dtype);
  tessera::bernoulli_(t, c.p0, g);
  return t;
}
Tensor draw_randint(Generator& g, const FillCase& c) {
  return tessera::randint(static_cast<int64_t>(c.p0), static_cast<int64_t>(c.p1), {c.n}, g,
                          c.dtype);
}

const FillCase kCases[] = {
    {"rand f32", TSR_RANDOM_UNIFORM, tessera::kFloat32, 0, 1, 1001, draw_rand},
    {"rand f64", TSR_RANDOM_UNIFORM, tessera::kFloat64, 0, 1, 1001, draw_rand},
    {"rand f16", TSR_RANDOM_UNIFORM, tessera::kFloat16, 0, 1, 1001, draw_rand},
    {"rand bf16", TSR_RANDOM_UNIFORM, tessera::kBFloat16, 0, 1, 1001, draw_rand},
    {"uniform_ f32", TSR_RANDOM_UNIFORM, tessera::kFloat32, -2, 3, 333, draw_uniform},
    {"uniform_ f64", TSR_RANDOM_UNIFORM, tessera::kFloat64, -2, 3, 333, draw_uniform},
    {"randn f32", TSR_RANDOM_NORMAL, tessera::kFloat32, 0, 1, 1001, draw_randn},
    {"randn f64", TSR_RANDOM_NORMAL, tessera::kFloat64, 0, 1, 1001, draw_randn},
    {"randn f16", TSR_RANDOM_NORMAL, tessera::kFloat16, 0, 1, 7, draw_randn},
    {"normal f32", TSR_RANDOM_NORMAL, tessera::kFloat32, 1.5, 2.0, 99, draw_normal},
    {"bernoulli bool", TSR_RANDOM_BERNOULLI, tessera::kBool, 0.3, 0, 1001, draw_bernoulli},
    {"bernoulli i64", TSR_RANDOM_BERNOULLI, tessera::kInt64, 0.3, 0, 1001, draw_bernoulli},
    {"bernoulli f64", TSR_RANDOM_BERNOULLI, tessera::kFloat64, 0.7, 0, 1001, draw_bernoulli},
    {"randint i64", TSR_RANDOM_RANDINT, tessera::kInt64, -5, 17, 1001, draw_randint},
    {"randint i32", TSR_RANDOM_RANDINT, tessera::kInt32, 0, 1000000, 1001, draw_randint},
    {"randint u8", TSR_RANDOM_RANDINT, tessera::kUInt8, 0, 256, 1001, draw_randint},
    {"randint f32", TSR_RANDOM_RANDINT, tessera::kFloat32, -3, 3, 1001, draw_randint},
    {"randint wide", TSR_RANDOM_RANDINT, tessera::kInt64, -1099511627776.0, 2199023255552.0, 1001,
     draw_randint},
};

TEST(RandomBits, PluginPathMatchesTheSdkReferenceAcrossConsecutiveDraws) {
  for (const FillCase& c : kCases) {
    SCOPED_TRACE(c.name);
    Generator g(0xfeedface12345678ull);
    const Tensor first = c.draw(g, c);
    EXPECT_EQ(bytes_of(first),
              reference_bytes(c.distribution, c.dtype, 0xfeedface12345678ull, 0, c.p0, c.p1, c.n));
    const uint64_t used = blocks(c.distribution, c.dtype, c.p0, c.p1, c.n);
    EXPECT_EQ(g.offset(), used);
    const Tensor second = c.draw(g, c);
    EXPECT_EQ(bytes_of(second), reference_bytes(c.distribution, c.dtype, 0xfeedface12345678ull,
                                                used, c.p0, c.p1, c.n));
    EXPECT_EQ(g.offset(), 2 * used);
  }
}

TEST(RandomBits, HostFallbackGivesThePluginsBits) {
  for (const FillCase& c : kCases) {
    SCOPED_TRACE(c.name);
    Generator plugin_gen(77), host_gen(77);
    const auto plugin = bytes_of(c.draw(plugin_gen, c));
    ASSERT_EQ(setenv("TESSERA_RANDOM_FILL", "host", 1), 0);
    const auto host = bytes_of(c.draw(host_gen, c));
    ASSERT_EQ(unsetenv("TESSERA_RANDOM_FILL"), 0);
    EXPECT_EQ(plugin, host);
    EXPECT_EQ(plugin_gen.offset(), host_gen.offset());
  }
}

TEST(RandomBits, LargeParallelFillMatchesTheReference) {
  // Above the plugin's parallel threshold: the threads' split must not show.
  Generator g(3);
  const int64_t n = (int64_t{1} << 18) + 3;
  EXPECT_EQ(bytes_of(tessera::randn({n}, g)),
            reference_bytes(TSR_RANDOM_NORMAL, tessera::kFloat32, 3, 0, 0, 1, n));
}

TEST(RandomBits, NonContiguousTargetsGetRowMajorBits) {
  Generator g(21);
  Tensor base = tessera::zeros({3, 5}, tessera::kFloat64);
  Tensor t = base.t();  // (5, 3), transposed strides
  const auto saved = g.get_state();
  const uint64_t v0 = base.version();
  tessera::normal_(t, 0.0, 1.0, g);
  EXPECT_EQ(base.version(), v0 + 1);
  g.set_state(saved);
  const Tensor fresh = tessera::randn({5, 3}, g, tessera::kFloat64);
  EXPECT_EQ(t.contiguous().to_vector<double>(), fresh.to_vector<double>());
}

TEST(RandomBits, OffsetsAdvanceByTheDocumentedBlockCounts) {
  Generator g(1);
  auto step = [&](auto&& draw) {
    const uint64_t before = g.offset();
    draw();
    return g.offset() - before;
  };
  EXPECT_EQ(step([&] { (void)tessera::rand({5}, g); }), 2u);                     // ceil(5/4)
  EXPECT_EQ(step([&] { (void)tessera::rand({8}, g); }), 2u);                     // 8/4
  EXPECT_EQ(step([&] { (void)tessera::rand({5}, g, tessera::kFloat64); }), 3u);  // ceil(5/2)
  EXPECT_EQ(step([&] { (void)tessera::randn({5}, g); }), 3u);                    // pairs
  EXPECT_EQ(step([&] { (void)tessera::randn({1}, g, tessera::kFloat64); }), 1u);
  EXPECT_EQ(step([&] { (void)tessera::randint(0, 1000, {9}, g); }), 3u);              // one lane
  EXPECT_EQ(step([&] { (void)tessera::randint(0, int64_t{1} << 33, {9}, g); }), 5u);  // two lanes
  EXPECT_EQ(step([&] { (void)tessera::rand({0}, g); }), 0u);
  EXPECT_EQ(step([&] { (void)tessera::rand({3, 0}, g); }), 0u);
  EXPECT_EQ(step([&] { (void)tessera::rand({4}, g, tessera::TensorOptions(tessera::kMeta)); }), 0u);
}

TEST(RandomBits, ConcurrentDrawsReserveDisjointBlocks) {
  Generator g(8);
  std::vector<std::thread> threads;
  std::vector<std::vector<uint8_t>> results(4);
  for (int i = 0; i < 4; ++i)
    threads.emplace_back(
        [&, i] { results[static_cast<size_t>(i)] = bytes_of(tessera::rand({400}, g)); });
  for (auto& t : threads) t.join();
  EXPECT_EQ(g.offset(), 400u);
  // Each thread got one of the four disjoint 100-block ranges.
  std::set<std::vector<uint8_t>> expected;
  for (uint64_t k = 0; k < 4; ++k)
    expected.insert(reference_bytes(TSR_RANDOM_UNIFORM, tessera::kFloat32, 8, 100 * k, 0, 1, 400));
  EXPECT_EQ(std::set<std::vector<uint8_t>>(results.begin(), results.end()), expected);
}

// ---------------------------------------------------------------------------
// The generator C API
// ---------------------------------------------------------------------------

tsr_status_code code_of(tsr_status* st) {
  const tsr_status_code code = tsr_status_code_of(st);
  tsr_status_free(st);
  return code;
}

TEST(GeneratorApi, ValidatesEveryArgument) {
  tsr_runtime* rt = tessera::default_runtime();
  tsr_generator* g = nullptr;
  EXPECT_EQ(code_of(tsr_generator_create(nullptr, tsr_device{}, 1, &g)), TSR_INVALID_ARGUMENT);
  EXPECT_EQ(code_of(tsr_generator_create(rt, tsr_device{}, 1, nullptr)), TSR_INVALID_ARGUMENT);
  EXPECT_EQ(code_of(tsr_generator_create(rt, tsr_device{TSR_DEVICE_CPU, 7}, 1, &g)), TSR_NOT_FOUND);
  EXPECT_EQ(code_of(tsr_generator_default(rt, tsr_device{TSR_DEVICE_CPU, 7}, &g)), TSR_NOT_FOUND);
  EXPECT_EQ(code_of(tsr_generator_manual_seed(nullptr, 1)), TSR_INVALID_ARGUMENT);
  uint64_t seed = 0;
  EXPECT_EQ(code_of(tsr_generator_initial_seed(nullptr, &seed)), TSR_INVALID_ARGUMENT);
  EXPECT_EQ(code_of(tsr_runtime_manual_seed(nullptr, 1)), TSR_INVALID_ARGUMENT);

  ASSERT_EQ(tsr_generator_create(rt, tsr_device{}, 42, &g), nullptr);
  EXPECT_EQ(code_of(tsr_generator_initial_seed(g, nullptr)), TSR_INVALID_ARGUMENT);
  size_t size = 0;
  ASSERT_EQ(tsr_generator_get_state(g, nullptr, 0, &size), nullptr);
  EXPECT_EQ(size, size_t{TSR_GENERATOR_STATE_SIZE});
  uint8_t small[8];
  EXPECT_EQ(code_of(tsr_generator_get_state(g, small, sizeof small, &size)), TSR_INVALID_ARGUMENT);
  EXPECT_EQ(code_of(tsr_generator_get_state(g, nullptr, 24, &size)), TSR_INVALID_ARGUMENT);
  uint8_t state[TSR_GENERATOR_STATE_SIZE];
  ASSERT_EQ(tsr_generator_get_state(g, state, sizeof state, nullptr), nullptr);
  EXPECT_EQ(code_of(tsr_generator_set_state(g, state, sizeof state - 1)), TSR_INVALID_ARGUMENT);
  EXPECT_EQ(code_of(tsr_generator_set_state(g, nullptr, sizeof state)), TSR_INVALID_ARGUMENT);
  uint8_t bad[TSR_GENERATOR_STATE_SIZE];
  std::memcpy(bad, state, sizeof bad);
  bad[0] ^= 0xff;  // magic
  EXPECT_EQ(code_of(tsr_generator_set_state(g, bad, sizeof bad)), TSR_INVALID_ARGUMENT);
  std::memcpy(bad, state, sizeof bad);
  bad[4] = 2;  // version
  tsr_status* st = tsr_generator_set_state(g, bad, sizeof bad);
  ASSERT_NE(st, nullptr);
  EXPECT_NE(std::string(tsr_status_message(st)).find("version 2"), std::string::npos);
  tsr_status_free(st);
  uint64_t initial = 0;
  ASSERT_EQ(tsr_generator_initial_seed(g, &initial), nullptr);
  EXPECT_EQ(initial, 42u);  // the refused states changed nothing
  tsr_device device{};
  ASSERT_EQ(tsr_generator_get_device(g, &device), nullptr);
  EXPECT_EQ(device.type, TSR_DEVICE_CPU);
  tsr_generator_destroy(g);
  EXPECT_EQ(code_of(tsr_generator_manual_seed(g, 1)), TSR_INVALID_ARGUMENT);  // destroyed
  tsr_generator_destroy(g);                                                   // ignored
  tsr_generator_destroy(nullptr);
}

TEST(GeneratorApi, DefaultGeneratorIsPerDeviceAndNotDestroyable) {
  tsr_runtime* rt = tessera::default_runtime();
  tsr_generator *a = nullptr, *b = nullptr, *m = nullptr;
  ASSERT_EQ(tsr_generator_default(rt, tsr_device{}, &a), nullptr);
  ASSERT_EQ(tsr_generator_default(rt, tsr_device{}, &b), nullptr);
  ASSERT_EQ(tsr_generator_default(rt, tsr_device{TSR_DEVICE_META, 0}, &m), nullptr);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, m);
  tsr_generator_destroy(a);  // a default generator: ignored
  EXPECT_EQ(tsr_generator_manual_seed(a, 9), nullptr);
  uint64_t seed = 0;
  ASSERT_EQ(tsr_generator_initial_seed(a, &seed), nullptr);
  EXPECT_EQ(seed, 9u);
}

TEST(GeneratorApi, StateIsTheDocumentedTwentyFourBytes) {
  Generator g(0x0102030405060708ull);
  (void)tessera::rand({12}, g);  // 3 blocks
  const auto state = g.get_state();
  ASSERT_EQ(state.size(), 24u);
  EXPECT_EQ(std::vector<uint8_t>(state.begin(), state.begin() + 8),
            (std::vector<uint8_t>{'T', 'S', 'R', 'G', 1, 0, 0, 0}));
  EXPECT_EQ(state[8], 0x08);
  EXPECT_EQ(state[15], 0x01);
  EXPECT_EQ(state[16], 3);
}

TEST(GeneratorApi, GeneratorOfAnotherDeviceIsRefusedByOps) {
  Generator meta_gen(1, tessera::kMeta);
  expect_error([&] { (void)tessera::rand({2}, meta_gen); }, TSR_INVALID_ARGUMENT,
               {"rand.generator", "generator", "meta:0", "cpu:0"});
  // A meta result accepts any generator and draws nothing.
  Generator cpu_gen(1);
  const Tensor m = tessera::rand({2, 3}, cpu_gen, tessera::TensorOptions(tessera::kMeta));
  EXPECT_EQ(m.sizes(), tessera::Dims({2, 3}));
  EXPECT_EQ(cpu_gen.offset(), 0u);
}

TEST(GeneratorApi, OpsRefuseAStaleGeneratorValue) {
  tsr_generator* g = nullptr;
  ASSERT_EQ(tsr_generator_create(tessera::default_runtime(), tsr_device{}, 1, &g), nullptr);
  tsr_generator_destroy(g);
  tsr_value gen{};
  gen.tag = TSR_VALUE_GENERATOR;
  gen.u.generator = g;
  expect_error(
      [&] {
        (void)tessera::call_op("rand.generator",
                               {tessera::detail::value(tessera::IntList({2})), gen});
      },
      TSR_INVALID_ARGUMENT, {"generator", "not a live generator"});
}

// ---------------------------------------------------------------------------
// Distributions
// ---------------------------------------------------------------------------

constexpr int64_t kDraws = 1000000;

TEST(Distributions, UniformMeanAndVarianceWithinFiveSigma) {
  for (tessera::Dtype dtype : {tessera::kFloat32, tessera::kFloat64}) {
    Generator g(1001);
    const auto v = tessera::rand({kDraws}, g, dtype).to_vector<double>();
    const Moments m = moments(v);
    const double n = kDraws;
    EXPECT_NEAR(m.mean, 0.5, 5 * std::sqrt(1.0 / 12.0 / n));
    EXPECT_NEAR(m.variance, 1.0 / 12.0, 5 * std::sqrt(1.0 / 180.0 / n));
    EXPECT_GE(*std::min_element(v.begin(), v.end()), 0.0);
    EXPECT_LT(*std::max_element(v.begin(), v.end()), 1.0);
  }
}

TEST(Distributions, ReducedPrecisionUniformStaysBelowItsUpperBound) {
  // Without the mapping's clamp about one float16 draw in 4096 would round to 1.
  for (tessera::Dtype dtype : {tessera::kFloat16, tessera::kBFloat16}) {
    Generator g(5);
    const auto v = tessera::rand({kDraws}, g, dtype).to_vector<float>();
    EXPECT_LT(*std::max_element(v.begin(), v.end()), 1.0f);
    EXPECT_GE(*std::min_element(v.begin(), v.end()), 0.0f);
  }
  Generator g(6);
  Tensor t = tessera::empty({kDraws}, tessera::kFloat32);
  tessera::uniform_(t, 1.0, 2.0, g);  // float32 rounding can reach 2 without the clamp
  const auto v = t.to_vector<float>();
  EXPECT_LT(*std::max_element(v.begin(), v.end()), 2.0f);
  EXPECT_GE(*std::min_element(v.begin(), v.end()), 1.0f);
}

TEST(Distributions, NormalMeanAndVarianceWithinFiveSigma) {
  for (tessera::Dtype dtype : {tessera::kFloat32, tessera::kFloat64}) {
    Generator g(1002);
    const Moments m = moments(tessera::randn({kDraws}, g, dtype).to_vector<double>());
    EXPECT_NEAR(m.mean, 0.0, 5 / std::sqrt(static_cast<double>(kDraws)));
    EXPECT_NEAR(m.variance, 1.0, 5 * std::sqrt(2.0 / kDraws));
  }
  Generator g(1003);
  const Moments m = moments(tessera::normal(3.0, 2.0, {kDraws}, g).to_vector<double>());
  EXPECT_NEAR(m.mean, 3.0, 5 * 2 / std::sqrt(static_cast<double>(kDraws)));
  EXPECT_NEAR(m.variance, 4.0, 5 * 4 * std::sqrt(2.0 / kDraws));
}

TEST(Distributions, NormalWithTensorParameters) {
  Generator g(1004);
  const int64_t n = 200000;
  const Tensor mean = tessera::full({n}, 5.0, tessera::kFloat64);
  const Tensor std2 = tessera::full({n}, 0.5, tessera::kFloat64);
  for (const Tensor& r : {tessera::normal(mean, 0.5, g), tessera::normal(5.0, std2, g),
                          tessera::normal(mean, std2, g)}) {
    EXPECT_EQ(r.dtype(), tessera::kFloat64);
    const Moments m = moments(r.to_vector<double>());
    EXPECT_NEAR(m.mean, 5.0, 5 * 0.5 / std::sqrt(static_cast<double>(n)));
    EXPECT_NEAR(m.variance, 0.25, 5 * 0.25 * std::sqrt(2.0 / n));
  }
  // Broadcasting mean (2, 1) with std (3,): (2, 3), mean's dtype.
  const Tensor b = tessera::normal(tessera::zeros({2, 1}, tessera::kFloat32),
                                   tessera::ones({3}, tessera::kFloat64), g);
  EXPECT_EQ(b.sizes(), tessera::Dims({2, 3}));
  EXPECT_EQ(b.dtype(), tessera::kFloat32);
}

TEST(Distributions, BernoulliRateWithinFiveSigma) {
  for (double p : {0.0, 0.3, 0.9, 1.0}) {
    Generator g(1005);
    Tensor t = tessera::empty({kDraws}, tessera::kFloat32);
    tessera::bernoulli_(t, p, g);
    const Moments m = moments(t.to_vector<double>());
    EXPECT_NEAR(m.mean, p, 5 * std::sqrt(p * (1 - p) / kDraws) + 1e-12) << "p = " << p;
  }
  // Per-element probabilities, broadcast over the result.
  Generator g(1006);
  const Tensor probs = tessera::tensor({0.1, 0.5, 0.95}, tessera::kFloat64);
  Tensor out = tessera::empty({kDraws / 4, 3}, tessera::kInt64);
  tessera::bernoulli_(out, probs, g);
  const auto v = out.to_vector<int64_t>();
  for (int k = 0; k < 3; ++k) {
    double hits = 0;
    for (size_t i = static_cast<size_t>(k); i < v.size(); i += 3) hits += static_cast<double>(v[i]);
    const double n = static_cast<double>(v.size() / 3),
                 p = std::vector<double>{0.1, 0.5, 0.95}[static_cast<size_t>(k)];
    EXPECT_NEAR(hits / n, p, 5 * std::sqrt(p * (1 - p) / n));
  }
  const Tensor b = tessera::bernoulli(tessera::full({1000}, 0.25, tessera::kFloat32), g);
  EXPECT_EQ(b.dtype(), tessera::kFloat32);
  for (float x : b.to_vector<float>()) EXPECT_TRUE(x == 0.0f || x == 1.0f);
}

TEST(Distributions, RandintCoversItsRangeAndNothingElse) {
  Generator g(1007);
  const auto v = tessera::randint(-3, 7, {kDraws / 10}, g).to_vector<int64_t>();
  std::vector<double> counts(10, 0);
  for (int64_t x : v) {
    ASSERT_GE(x, -3);
    ASSERT_LT(x, 7);
    counts[static_cast<size_t>(x + 3)] += 1;
  }
  const double n = static_cast<double>(v.size()), p = 0.1;
  for (double c : counts) EXPECT_NEAR(c / n, p, 5 * std::sqrt(p * (1 - p) / n));
  const auto wide =
      tessera::randint(-(int64_t{1} << 50), int64_t{1} << 50, {1000}, g).to_vector<int64_t>();
  int64_t big = 0;
  for (int64_t x : wide) {
    EXPECT_GE(x, -(int64_t{1} << 50));
    EXPECT_LT(x, int64_t{1} << 50);
    big += std::llabs(x) > (int64_t{1} << 45);
  }
  EXPECT_GT(big, 900);  // the high lanes are used
  const Tensor r = tessera::randint(5, {3, 4}, g);
  EXPECT_EQ(r.dtype(), tessera::kInt64);
  EXPECT_EQ(r.sizes(), tessera::Dims({3, 4}));
}

TEST(Distributions, RandomInPlaceRespectsTheDtypesRange) {
  Generator g(1008);
  Tensor u8 = tessera::empty({10000}, tessera::kUInt8);
  tessera::random_(u8, g);
  std::set<int64_t> seen;
  for (int64_t x : u8.to_vector<int64_t>()) seen.insert(x);
  EXPECT_EQ(seen.size(), 256u);
  Tensor b = tessera::empty({1000}, tessera::kBool);
  tessera::random_(b, g);
  int64_t ones = 0;
  for (bool x : b.to_vector<bool>()) ones += x;
  EXPECT_GT(ones, 400);
  EXPECT_LT(ones, 600);
  Tensor f = tessera::empty({1000}, tessera::kFloat32);
  tessera::random_(f, int64_t{10}, std::optional<int64_t>(20), g);
  for (float x : f.to_vector<float>()) {
    EXPECT_GE(x, 10.0f);
    EXPECT_LT(x, 20.0f);
    EXPECT_EQ(x, std::floor(x));
  }
  Tensor i = tessera::empty({1000}, tessera::kInt32);
  tessera::random_(i, int64_t{3}, g);
  for (int32_t x : i.to_vector<int32_t>()) EXPECT_TRUE(x >= 0 && x < 3);
  Tensor l = tessera::empty({1000}, tessera::kInt64);
  tessera::random_(l, g);
  int64_t high = 0;
  for (int64_t x : l.to_vector<int64_t>()) {
    EXPECT_GE(x, 0);
    high += x > (int64_t{1} << 60);
  }
  EXPECT_GT(high, 800);
}

TEST(Distributions, ExponentialMeanWithinFiveSigma) {
  Generator g(1009);
  Tensor t = tessera::empty({kDraws}, tessera::kFloat64);
  tessera::exponential_(t, 2.0, g);
  const auto v = t.to_vector<double>();
  const Moments m = moments(v);
  EXPECT_NEAR(m.mean, 0.5, 5 * 0.5 / std::sqrt(static_cast<double>(kDraws)));
  EXPECT_GE(*std::min_element(v.begin(), v.end()), 0.0);
  EXPECT_TRUE(std::isfinite(*std::max_element(v.begin(), v.end())));
  Tensor inf = tessera::empty({3});
  tessera::exponential_(inf, 0.0, g);
  for (float x : inf.to_vector<float>()) EXPECT_TRUE(std::isinf(x));
}

TEST(Distributions, RandpermIsAPermutation) {
  Generator g(1010);
  for (int64_t n : {0, 1, 2, 17, 10000}) {
    const auto p = tessera::randperm(n, g).to_vector<int64_t>();
    std::vector<int64_t> sorted = p;
    std::sort(sorted.begin(), sorted.end());
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(sorted[static_cast<size_t>(i)], i);
    if (n == 10000) {
      int64_t fixed = 0;
      for (int64_t i = 0; i < n; ++i) fixed += p[static_cast<size_t>(i)] == i;
      EXPECT_LT(fixed, 10);  // ~1 expected for a uniform permutation
    }
  }
  const Tensor f = tessera::randperm(5, g, tessera::kFloat32);
  EXPECT_EQ(f.dtype(), tessera::kFloat32);
  Generator a(4), b(4);
  EXPECT_EQ(tessera::randperm(50, a).to_vector<int64_t>(),
            tessera::randperm(50, b).to_vector<int64_t>());
}

TEST(Distributions, MultinomialWithReplacementFrequencies) {
  Generator g(1011);
  const std::vector<double> w = {1, 0, 3, 6};  // unnormalised; category 1 impossible
  const Tensor probs = tessera::tensor({1.0, 0.0, 3.0, 6.0}, tessera::kFloat32);
  const int64_t n = 200000;
  const auto s = tessera::multinomial(probs, n, true, g).to_vector<int64_t>();
  ASSERT_EQ(static_cast<int64_t>(s.size()), n);
  std::vector<double> counts(4, 0);
  for (int64_t x : s) {
    ASSERT_GE(x, 0);
    ASSERT_LT(x, 4);
    counts[static_cast<size_t>(x)] += 1;
  }
  EXPECT_EQ(counts[1], 0);
  for (size_t k = 0; k < 4; ++k) {
    const double p = w[k] / 10.0;
    EXPECT_NEAR(counts[k] / n, p, 5 * std::sqrt(p * (1 - p) / n) + 1e-12) << "category " << k;
  }
  // 2-d: one distribution per row.
  const Tensor rows = tessera::tensor({0.0, 1.0, 1.0, 0.0}, {2, 2}, tessera::kFloat64);
  const Tensor r = tessera::multinomial(rows, 5, true, g);
  EXPECT_EQ(r.sizes(), tessera::Dims({2, 5}));
  const auto rv = r.to_vector<int64_t>();
  for (int i = 0; i < 5; ++i) EXPECT_EQ(rv[static_cast<size_t>(i)], 1);
  for (int i = 5; i < 10; ++i) EXPECT_EQ(rv[static_cast<size_t>(i)], 0);
}

TEST(Distributions, MultinomialWithoutReplacementGivesDistinctSamples) {
  Generator g(1012);
  const Tensor probs = tessera::tensor({0.1, 0.2, 0.3, 0.4, 0.5, 0.6}, tessera::kFloat32);
  std::vector<double> first(6, 0);
  const int trials = 4000;
  for (int t = 0; t < trials; ++t) {
    const auto s = tessera::multinomial(probs, 6, false, g).to_vector<int64_t>();
    ASSERT_EQ(std::set<int64_t>(s.begin(), s.end()).size(), 6u);
    first[static_cast<size_t>(s[0])] += 1;
  }
  for (size_t k = 0; k < 6; ++k) {
    const double p = (0.1 * static_cast<double>(k + 1)) / 2.1;  // first draw ~ weights
    EXPECT_NEAR(first[k] / trials, p, 5 * std::sqrt(p * (1 - p) / trials));
  }
  // Zero-probability categories come last.
  const auto z =
      tessera::multinomial(tessera::tensor({0.0, 1.0, 0.0, 2.0}), 2, false, g).to_vector<int64_t>();
  EXPECT_EQ(std::set<int64_t>(z.begin(), z.end()), (std::set<int64_t>{1, 3}));
}

// ---------------------------------------------------------------------------
// Shapes, dtypes, meta, and PyTorch's errors
// ---------------------------------------------------------------------------

TEST(RandomOps, LikeFormsKeepShapeDtypeAndDevice) {
  const Tensor base = tessera::zeros({2, 3}, tessera::kFloat64).t();
  const Tensor r = tessera::rand_like(base);
  EXPECT_EQ(r.sizes(), base.sizes());
  EXPECT_EQ(r.strides(), base.strides());
  EXPECT_EQ(r.dtype(), tessera::kFloat64);
  EXPECT_EQ(tessera::randn_like(base).dtype(), tessera::kFloat64);
  const auto ints =
      tessera::randint_like(tessera::zeros({100}, tessera::kInt32), 4, 9).to_vector<int32_t>();
  for (int32_t x : ints) EXPECT_TRUE(x >= 4 && x < 9);
  EXPECT_EQ(tessera::rand({2}).version(), 0u);
}

TEST(RandomOps, MetaTensorsGetShapesAndDrawNothing) {
  const auto before = Generator::default_generator(tessera::kMeta).get_state();
  const tessera::TensorOptions meta(tessera::kMeta);
  EXPECT_EQ(tessera::rand({2, 3}, meta).sizes(), tessera::Dims({2, 3}));
  EXPECT_EQ(tessera::randn({4}, meta).device(), tessera::kMeta);
  EXPECT_EQ(tessera::randperm(7, meta).sizes(), tessera::Dims({7}));
  EXPECT_EQ(tessera::randint(3, {5}, meta).dtype(), tessera::kInt64);
  const Tensor p = tessera::empty({2, 4}, meta);
  EXPECT_EQ(tessera::multinomial(p, 3, true).sizes(), tessera::Dims({2, 3}));
  Tensor m = tessera::empty({3}, meta);
  tessera::normal_(m);
  tessera::uniform_(m);
  tessera::bernoulli_(m, 0.5);
  EXPECT_EQ(Generator::default_generator(tessera::kMeta).get_state(), before);
}

TEST(RandomOps, RefuseBadArgumentsAsPyTorchDoes) {
  Tensor f = tessera::empty({3});
  Tensor i = tessera::empty({3}, tessera::kInt64);
  expect_error([&] { (void)tessera::rand({2}, tessera::kInt64); }, TSR_INVALID_ARGUMENT,
               {"rand.generator", "dtype", "int64", "floating"});
  expect_error([&] { (void)tessera::randn({-1}); }, TSR_INVALID_ARGUMENT,
               {"randn.generator", "size", "negative dimension -1"});
  expect_error([&] { tessera::normal_(f, 0.0, -1.0); }, TSR_INVALID_ARGUMENT,
               {"normal_", "std >= 0.0", "-1"});
  expect_error([&] { tessera::normal_(i); }, TSR_INVALID_ARGUMENT, {"normal_", "self", "int64"});
  expect_error([&] { (void)tessera::normal(0.0, tessera::full({2}, -1.0)); }, TSR_INVALID_ARGUMENT,
               {"normal.float_Tensor", "all elements of std >= 0.0"});
  expect_error([&] { (void)tessera::normal(tessera::zeros({2}, tessera::kInt64)); },
               TSR_INVALID_ARGUMENT, {"normal.Tensor_float", "mean", "int64"});
  expect_error([&] { tessera::uniform_(f, 3.0, 2.0); }, TSR_INVALID_ARGUMENT,
               {"uniform_", "from=3 > to=2"});
  expect_error([&] { tessera::uniform_(f, -3e38, 3e38); }, TSR_INVALID_ARGUMENT,
               {"uniform_", "to-from"});
  expect_error([&] { tessera::bernoulli_(f, 2.0); }, TSR_INVALID_ARGUMENT,
               {"bernoulli_.float", "p to be in [0, 1]", "p=2"});
  expect_error([&] { (void)tessera::bernoulli(tessera::full({2}, 1.5)); }, TSR_INVALID_ARGUMENT,
               {"bernoulli", "outside [0, 1]"});
  expect_error([&] { (void)tessera::bernoulli(i); }, TSR_INVALID_ARGUMENT, {"bernoulli", "int64"});
  expect_error([&] { (void)tessera::randint(5, 3, {2}); }, TSR_INVALID_ARGUMENT,
               {"randint.low_generator", "from=5 >= to=3"});
  expect_error([&] { (void)tessera::randint(0, {2}); }, TSR_INVALID_ARGUMENT,
               {"randint.generator", "from=0 >= to=0"});
  expect_error([&] { (void)tessera::randint(300, {2}, tessera::kUInt8); }, TSR_INVALID_ARGUMENT,
               {"randint.generator", "to - 1 is out of bounds for uint8"});
  expect_error([&] { (void)tessera::randint(-1, 3, {2}, tessera::kUInt8); }, TSR_INVALID_ARGUMENT,
               {"from is out of bounds for uint8"});
  expect_error([&] { (void)tessera::randint(0, std::numeric_limits<int64_t>::max(), {2}); },
               TSR_INVALID_ARGUMENT, {"randint.low_generator", "high", "exactly representable"});
  expect_error([&] { tessera::random_(f, int64_t{3}, std::optional<int64_t>(2)); },
               TSR_INVALID_ARGUMENT, {"random_.from", "from=3 >= to=2"});
  expect_error([&] { (void)tessera::randperm(-1); }, TSR_INVALID_ARGUMENT,
               {"randperm.generator", "non-negative, got -1"});
  expect_error([&] { (void)tessera::randperm(300, tessera::kUInt8); }, TSR_INVALID_ARGUMENT,
               {"randperm.generator", "uint8"});
  expect_error([&] { (void)tessera::randperm(5000, tessera::kFloat16); }, TSR_INVALID_ARGUMENT,
               {"randperm.generator", "float16"});
  expect_error([&] { tessera::exponential_(f, -1.0); }, TSR_INVALID_ARGUMENT,
               {"exponential_", "lambda >= 0.0", "lambda=-1"});
  const Tensor p = tessera::tensor({0.5, 0.5});
  expect_error([&] { (void)tessera::multinomial(p, 3); }, TSR_INVALID_ARGUMENT,
               {"multinomial", "n_sample > prob_dist.size(-1)"});
  expect_error([&] { (void)tessera::multinomial(p, 0); }, TSR_INVALID_ARGUMENT,
               {"multinomial", "n_sample <= 0"});
  expect_error(
      [&] {
        (void)tessera::multinomial(tessera::tensor({0.5, -0.5}), 1);
      },
      TSR_INVALID_ARGUMENT, {"multinomial", "element < 0"});
  expect_error([&] { (void)tessera::multinomial(tessera::zeros({2}), 1); }, TSR_INVALID_ARGUMENT,
               {"multinomial", "sum of probabilities <= 0"});
  expect_error(
      [&] {
        (void)tessera::multinomial(tessera::zeros({2, 2, 2}), 1);
      },
      TSR_INVALID_ARGUMENT, {"multinomial", "1 or 2 dim"});
  expect_error(
      [&] {
        (void)tessera::multinomial(tessera::tensor({1, 2}), 1);
      },
      TSR_INVALID_ARGUMENT, {"multinomial", "floating-point", "int64"});
  // pin_memory=True and a layout other than None are refused.
  tsr_value pin{};
  pin.tag = TSR_VALUE_BOOL;
  pin.u.b = 1;
  expect_error(
      [&] {
        (void)tessera::call_op(
            "rand", {tessera::detail::value(tessera::IntList({2})), tessera::detail::none(),
                     tessera::detail::none(), tessera::detail::none(), pin});
      },
      TSR_INVALID_ARGUMENT, {"rand", "pin_memory"});
}

TEST(RandomOps, InPlaceOpsRefuseOverlappingTargets) {
  const Tensor base = tessera::zeros({1});
  Tensor expanded = base.expand({4});
  expect_error([&] { tessera::normal_(expanded); }, TSR_INVALID_ARGUMENT,
               {"normal_", "more than one element of the written-to tensor"});
}

}  // namespace
