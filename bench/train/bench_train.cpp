// bench_train - one training step (zero_grad, forward, loss, backward,
// optimizer step) of two models, Tessera next to libtorch in the same process
// on the same cores:
//   mlp:       Linear(784, 256) -> ReLU -> Linear(256, 10), batch 64,
//              cross entropy, SGD (lr 0.01, momentum 0.9)
//   tinyblock: the TinyBlock model (samples/tinyblock), batch 32,
//              cross entropy, AdamW (lr 0.01), dropout on (training mode)
// libtorch runs in each of its thread settings - at::set_num_threads 1 and 2
// times OpenBLAS threads 1 and 2 (its matmul) - and the summary compares
// Tessera with libtorch's fastest, printing every setting. Tessera runs with
// its CPU plugin's default threads (printed). Benchmarks only: nothing here
// asserts a time.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tessera/nn.hpp"
#include "tessera/optim.hpp"
#include "tessera/tessera.hpp"
#include "tinyblock.hpp"

#ifdef TESSERA_BENCH_WITH_TORCH
#include <ATen/Parallel.h>
#include <torch/torch.h>
#include <torch/version.h>

// OpenBLAS's thread count, for a libtorch whose matmul goes through OpenBLAS;
// absent with PyPI's wheel, whose MKL follows at::set_num_threads.
extern "C" __attribute__((weak)) void openblas_set_num_threads(int);
extern "C" __attribute__((weak)) int openblas_get_num_threads();
#endif

namespace {

namespace nn = tessera::nn;
namespace optim = tessera::optim;
using tessera::Tensor;

// --- Tessera -------------------------------------------------------------

// Argument: 1 for the optimizers' multi-tensor path (Note [Flat parameters]).
void BM_TesseraMlp(benchmark::State& state) {
  tessera::manual_seed(0);
  auto model = std::make_shared<nn::Sequential>(std::initializer_list<std::shared_ptr<nn::Module>>{
      std::make_shared<nn::Linear>(784, 256), std::make_shared<nn::ReLU>(),
      std::make_shared<nn::Linear>(256, 10)});
  optim::SGD opt(model->parameters(),
                 {.lr = 0.01, .momentum = 0.9, .foreach = state.range(0) != 0});
  tessera::Generator gen(1);
  const Tensor x = tessera::randn({64, 784}, gen);
  const Tensor y = tessera::randint(10, {64}, gen, tessera::kInt64);
  for (auto _ : state) {
    opt.zero_grad();
    Tensor loss = tessera::cross_entropy((*model)(x), y);
    loss.backward();
    opt.step();
  }
}

void BM_TesseraTinyBlock(benchmark::State& state) {
  tessera::manual_seed(0);
  auto model = std::make_shared<tinyblock::TinyBlock>();
  optim::AdamW opt(model->parameters(), {.lr = 0.01, .foreach = state.range(0) != 0});
  tessera::Generator gen(2);
  const Tensor x = tessera::randn({32, 3}, gen);
  const Tensor y = tessera::randint(2, {32}, gen, tessera::kInt64);
  for (auto _ : state) {
    opt.zero_grad();
    Tensor loss = tessera::cross_entropy((*model)(x), y);
    loss.backward();
    opt.step();
  }
}

BENCHMARK(BM_TesseraMlp)
    ->ArgName("foreach")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMicrosecond)
    ->MinWarmUpTime(0.3);
BENCHMARK(BM_TesseraTinyBlock)
    ->ArgName("foreach")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMicrosecond)
    ->MinWarmUpTime(0.3);

#ifdef TESSERA_BENCH_WITH_TORCH

// Arguments: torch threads, OpenBLAS threads.
void set_torch_threads(const benchmark::State& state) {
  at::set_num_threads(static_cast<int>(state.range(0)));
  if (openblas_set_num_threads != nullptr)
    openblas_set_num_threads(static_cast<int>(state.range(1)));
}

struct TorchTinyBlock : torch::nn::Module {
  torch::nn::Linear up{nullptr}, down{nullptr};
  torch::nn::LayerNorm norm{nullptr};
  torch::nn::Dropout dropout{nullptr};
  torch::Tensor temperature;
  TorchTinyBlock() {
    up = register_module("up", torch::nn::Linear(3, 8));
    norm = register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({8})));
    dropout = register_module("dropout", torch::nn::Dropout(0.25));
    down = register_module("down", torch::nn::Linear(8, 2));
    temperature = register_buffer("temperature", torch::tensor(2.0f));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    auto h = torch::gelu(norm(up(x)));
    return down(dropout(h)) / temperature;
  }
};

void BM_TorchMlp(benchmark::State& state) {
  set_torch_threads(state);
  torch::manual_seed(0);
  torch::nn::Sequential model(torch::nn::Linear(784, 256), torch::nn::ReLU(),
                              torch::nn::Linear(256, 10));
  torch::optim::SGD opt(model->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
  const auto x = torch::randn({64, 784});
  const auto y = torch::randint(10, {64}, torch::kLong);
  for (auto _ : state) {
    for (auto& p : opt.param_groups()[0].params())
      p.mutable_grad() = torch::Tensor();  // set_to_none
    auto loss = torch::nn::functional::cross_entropy(model->forward(x), y);
    loss.backward();
    opt.step();
  }
}

void BM_TorchTinyBlock(benchmark::State& state) {
  set_torch_threads(state);
  torch::manual_seed(0);
  auto model = std::make_shared<TorchTinyBlock>();
  torch::optim::AdamW opt(model->parameters(), torch::optim::AdamWOptions(0.01));
  const auto x = torch::randn({32, 3});
  const auto y = torch::randint(2, {32}, torch::kLong);
  for (auto _ : state) {
    for (auto& p : opt.param_groups()[0].params())
      p.mutable_grad() = torch::Tensor();  // set_to_none
    auto loss = torch::nn::functional::cross_entropy(model->forward(x), y);
    loss.backward();
    opt.step();
  }
}

void torch_settings(benchmark::internal::Benchmark* b) {
  const int blas_settings = openblas_set_num_threads != nullptr ? 2 : 1;
  for (int t : {1, 2})
    for (int blas = 1; blas <= blas_settings; ++blas) b->Args({t, blas});
  b->ArgNames({"torch_threads", "blas_threads"})->Unit(benchmark::kMicrosecond)->MinWarmUpTime(0.3);
}
BENCHMARK(BM_TorchMlp)->Apply(torch_settings);
BENCHMARK(BM_TorchTinyBlock)->Apply(torch_settings);

#endif

// Keeps each benchmark's time per step (µs; the median when repeated).
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.error_occurred || run.iterations == 0) continue;
      const bool median = run.run_type == Run::RT_Aggregate && run.aggregate_name == "median";
      if (run.run_type == Run::RT_Aggregate && !median) continue;
      const double us =
          run.GetAdjustedRealTime() / benchmark::GetTimeUnitMultiplier(run.time_unit) * 1e6;
      std::string key = run.run_name.function_name;
      if (!run.run_name.args.empty()) key += "/" + run.run_name.args;
      auto& slot = results_[key];
      if (median || !slot.second) slot = {us, median};
    }
    ConsoleReporter::ReportRuns(runs);
  }
  // Entries whose name starts with `prefix`, in name order.
  std::vector<std::pair<std::string, double>> matching(const std::string& prefix) const {
    std::vector<std::pair<std::string, double>> out;
    for (const auto& [name, r] : results_)
      if (name.rfind(prefix, 0) == 0) out.emplace_back(name, r.first);
    return out;
  }

 private:
  std::map<std::string, std::pair<double, bool>> results_;
};

void summarize(const SummaryReporter& r, const char* label, const std::string& ours,
               const std::string& theirs, double target) {
  const auto t = r.matching(ours + "/");
  const auto p = r.matching(theirs + "/");
  if (t.empty()) return;
  // the faster of the per-parameter and foreach paths
  auto fastest = t[0];
  for (const auto& e : t)
    if (e.second < fastest.second) fastest = e;
  std::printf("  %-10s tessera %8.1f us/step (%s)", label, fastest.second,
              fastest.first.substr(ours.size() + 1).c_str());
  double best = std::numeric_limits<double>::infinity();
  std::string best_name;
  for (const auto& [name, us] : p) {
    if (us < best) {
      best = us;
      best_name = name.substr(theirs.size() + 1);
    }
  }
  for (const auto& [name, us] : t)
    if (name != fastest.first)
      std::printf("   (%s %.1f)", name.substr(ours.size() + 1).c_str(), us);
  if (!p.empty()) {
    std::printf("   libtorch best %8.1f us/step (%s)   speedup %.2fx (target >= %.1fx)\n", best,
                best_name.c_str(), best / fastest.second, target);
    for (const auto& [name, us] : p)
      std::printf("  %-10s   libtorch %-34s %8.1f us/step\n", "",
                  name.substr(theirs.size() + 1).c_str(), us);
  } else {
    std::printf("   (libtorch not built in)\n");
  }
}

}  // namespace

int main(int argc, char** argv) {
  // --tessera_threads=N sets the CPU plugin's thread count (default: OpenMP's).
  std::string threads = "default (OpenMP: all cores)";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--tessera_threads=", 0) == 0) {
      threads = arg.substr(18);
      tessera::set_option(tessera::kCPU, "threads", threads);
      for (int k = i; k + 1 < argc; ++k) argv[k] = argv[k + 1];
      --argc;
      break;
    }
  }
  std::printf("tessera: CPU plugin threads %s\n", threads.c_str());
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
#ifdef TESSERA_BENCH_WITH_TORCH
  std::printf("libtorch %s, OpenBLAS thread control %s\n", TORCH_VERSION,
              openblas_set_num_threads != nullptr ? "available" : "absent (not OpenBLAS)");
#endif
  SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  std::printf(
      "\nTraining step, Tessera vs libtorch's fastest setting (speedup = libtorch / tessera):\n");
  summarize(reporter, "mlp", "BM_TesseraMlp", "BM_TorchMlp", 1.5);
  summarize(reporter, "tinyblock", "BM_TesseraTinyBlock", "BM_TorchTinyBlock", 2.0);
  benchmark::Shutdown();
  return 0;
}
