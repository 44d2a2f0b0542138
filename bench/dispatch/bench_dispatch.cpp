// bench_dispatch - what one operator call costs through the C++ frontend.
//
// 1. A 1-element float32 add, the pure dispatch path (frontend -> ABI ->
//    core -> CPU kernel): (a) `c = a + b` with a fresh output each iteration,
//    (b) `add_out(out, a, b)` into a preallocated output.
// 2. A 16M-float contiguous add into a preallocated output (and, for the
//    allocator's sake, with a fresh one), as GB/s of traffic (bytes read +
//    written), next to a memcpy moving the same traffic.
// With libtorch (built with TESSERA_BENCH_WITH_TORCH) the same cases run
// through ATen in the same process, and a summary prints per-op ns, GB/s,
// the ratios tessera/libtorch and the thread settings of both sides.
//
// Options (besides Google Benchmark's --benchmark_*):
//   --threads=N   threads for both sides (tessera's CPU plugin option
//                 "threads" and at::set_num_threads); default: libtorch's
//                 default (1 without libtorch).
// Benchmarks only: nothing here asserts a time.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "tessera/tessera.hpp"

#ifdef TESSERA_BENCH_WITH_TORCH
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/version.h>
#endif

namespace {

using tessera::Tensor;

constexpr int64_t kBigNumel = int64_t{16} << 20;  // 16M floats = 64 MiB per tensor
// An add reads two operands and writes one result.
constexpr double kBigAddTraffic = 3.0 * sizeof(float) * static_cast<double>(kBigNumel);
// memcpy reads and writes each byte once: copying half the traffic moves all of it.
constexpr size_t kMemcpyBytes = static_cast<size_t>(kBigAddTraffic / 2);

void set_traffic(benchmark::State& state, double bytes_per_op) {
  state.counters["GB/s"] = benchmark::Counter(
      bytes_per_op * 1e-9 * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

// ---------------------------------------------------------------------------
// Tessera
// ---------------------------------------------------------------------------

void BM_TesseraAdd1Fresh(benchmark::State& state) {
  const Tensor a = tessera::tensor({1.0f});
  const Tensor b = tessera::tensor({2.0f});
  for (auto _ : state) {
    Tensor c = a + b;
    benchmark::DoNotOptimize(c.get());
  }
}

void BM_TesseraAdd1Out(benchmark::State& state) {
  const Tensor a = tessera::tensor({1.0f});
  const Tensor b = tessera::tensor({2.0f});
  Tensor out = tessera::empty({1});
  for (auto _ : state) {
    tessera::add_out(out, a, b);
    benchmark::ClobberMemory();
  }
  if (out.item<float>() != 3.0f) state.SkipWithError("tessera add_out computed a wrong sum");
}

void BM_TesseraAdd16MOut(benchmark::State& state) {
  const Tensor a = tessera::full({kBigNumel}, 1.0f);
  const Tensor b = tessera::full({kBigNumel}, 2.0f);
  Tensor out = tessera::zeros({kBigNumel});
  for (auto _ : state) {
    tessera::add_out(out, a, b);
    tessera::synchronize(tessera::kCPU);
  }
  set_traffic(state, kBigAddTraffic);
  if (out[kBigNumel - 1].item<float>() != 3.0f) state.SkipWithError("wrong sum");
}

void BM_TesseraAdd16MFresh(benchmark::State& state) {
  const Tensor a = tessera::full({kBigNumel}, 1.0f);
  const Tensor b = tessera::full({kBigNumel}, 2.0f);
  for (auto _ : state) {
    Tensor c = a + b;
    tessera::synchronize(tessera::kCPU);
    benchmark::DoNotOptimize(c.get());
  }
  set_traffic(state, kBigAddTraffic);
}

// The same fresh-output add through tessera.h directly (no frontend): the
// difference to BM_TesseraAdd1Fresh is what the C++ frontend adds.
void BM_CAbiAdd1Fresh(benchmark::State& state) {
  const Tensor a = tessera::tensor({1.0f});
  const Tensor b = tessera::tensor({2.0f});
  const tsr_op* add = nullptr;
  tessera::check(tsr_op_find(tessera::default_runtime(), "add.Tensor", &add));
  tsr_value args[2] = {};
  args[0].tag = args[1].tag = TSR_VALUE_TENSOR;
  args[0].u.tensor = a.get();
  args[1].u.tensor = b.get();
  for (auto _ : state) {
    tsr_value out{};
    tsr_status* status = tsr_op_call(add, args, 2, &out, 1);
    if (status != nullptr) {
      tsr_status_free(status);
      state.SkipWithError("tsr_op_call failed");
      break;
    }
    benchmark::DoNotOptimize(out.u.tensor);
    tsr_tensor_release(out.u.tensor);
  }
}

// ---------------------------------------------------------------------------
// The reference: memcpy of the same traffic
// ---------------------------------------------------------------------------

void BM_MemcpySameTraffic(benchmark::State& state) {
  std::vector<char> src(kMemcpyBytes, 1);
  std::vector<char> dst(kMemcpyBytes, 0);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), kMemcpyBytes);
    benchmark::ClobberMemory();
  }
  set_traffic(state, 2.0 * static_cast<double>(kMemcpyBytes));
}

// ---------------------------------------------------------------------------
// libtorch
// ---------------------------------------------------------------------------
#ifdef TESSERA_BENCH_WITH_TORCH
void BM_TorchAdd1Fresh(benchmark::State& state) {
  const at::Tensor a = at::full({1}, 1.0f);
  const at::Tensor b = at::full({1}, 2.0f);
  for (auto _ : state) {
    at::Tensor c = at::add(a, b);
    benchmark::DoNotOptimize(c.unsafeGetTensorImpl());
  }
}

void BM_TorchAdd1Out(benchmark::State& state) {
  const at::Tensor a = at::full({1}, 1.0f);
  const at::Tensor b = at::full({1}, 2.0f);
  at::Tensor out = at::empty({1});
  for (auto _ : state) {
    at::add_out(out, a, b);
    benchmark::ClobberMemory();
  }
}

void BM_TorchAdd16MOut(benchmark::State& state) {
  const at::Tensor a = at::full({kBigNumel}, 1.0f);
  const at::Tensor b = at::full({kBigNumel}, 2.0f);
  at::Tensor out = at::zeros({kBigNumel});
  for (auto _ : state) {
    at::add_out(out, a, b);
    benchmark::ClobberMemory();
  }
  set_traffic(state, kBigAddTraffic);
}

void BM_TorchAdd16MFresh(benchmark::State& state) {
  const at::Tensor a = at::full({kBigNumel}, 1.0f);
  const at::Tensor b = at::full({kBigNumel}, 2.0f);
  for (auto _ : state) {
    at::Tensor c = at::add(a, b);
    benchmark::DoNotOptimize(c.unsafeGetTensorImpl());
  }
  set_traffic(state, kBigAddTraffic);
}
#endif

// Keeps per-op time and GB/s of each benchmark (the median when repeated)
// while the console reporter prints as usual.
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  struct Result {
    double ns_per_op = 0;  // wall time
    double cpu_ns_per_op = 0;
    double gb_per_s = 0;
  };

  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.error_occurred || run.iterations == 0) continue;
      const bool median = run.run_type == Run::RT_Aggregate && run.aggregate_name == "median";
      if (run.run_type == Run::RT_Aggregate && !median) continue;
      Result result;
      result.ns_per_op =
          run.GetAdjustedRealTime() / benchmark::GetTimeUnitMultiplier(run.time_unit) * 1e9;
      result.cpu_ns_per_op =
          run.GetAdjustedCPUTime() / benchmark::GetTimeUnitMultiplier(run.time_unit) * 1e9;
      const auto counter = run.counters.find("GB/s");
      if (counter != run.counters.end()) result.gb_per_s = counter->second.value;
      auto& slot = results_[run.run_name.function_name];
      if (median || !slot.from_median) slot = {result, median};
    }
    ConsoleReporter::ReportRuns(runs);
  }

  const Result* find(const std::string& name) const {
    const auto it = results_.find(name);
    return it == results_.end() ? nullptr : &it->second.result;
  }

 private:
  struct Slot {
    Result result;
    bool from_median = false;
  };
  std::map<std::string, Slot> results_;
};

void print_time_row(const SummaryReporter& r, const char* label, const char* tessera_name,
                    const char* torch_name) {
  const auto* t = r.find(tessera_name);
  const auto* p = r.find(torch_name);
  std::printf("  %-36s tessera %7.1f ns/op (cpu %7.1f)", label, t ? t->ns_per_op : 0.0,
              t ? t->cpu_ns_per_op : 0.0);
  if (p != nullptr) {
    std::printf("   libtorch %7.1f ns/op (cpu %7.1f)   tessera/libtorch %.2f (cpu %.2f)",
                p->ns_per_op, p->cpu_ns_per_op, t ? t->ns_per_op / p->ns_per_op : 0.0,
                t ? t->cpu_ns_per_op / p->cpu_ns_per_op : 0.0);
  }
  std::printf("\n");
}

void print_bandwidth_row(const SummaryReporter& r, const char* label, const char* tessera_name,
                         const char* torch_name) {
  const auto* t = r.find(tessera_name);
  const auto* p = r.find(torch_name);
  const auto* m = r.find("BM_MemcpySameTraffic");
  std::printf("  %-36s tessera %6.1f GB/s (%.2f ms", label, t ? t->gb_per_s : 0.0,
              t ? t->ns_per_op * 1e-6 : 0.0);
  if (t != nullptr && m != nullptr) std::printf(", %.2f of memcpy", t->gb_per_s / m->gb_per_s);
  std::printf(")");
  if (p != nullptr) {
    std::printf("   libtorch %6.1f GB/s (%.2f ms)   tessera/libtorch %.2f", p->gb_per_s,
                p->ns_per_op * 1e-6, t ? t->gb_per_s / p->gb_per_s : 0.0);
  }
  std::printf("\n");
}

// Parses and removes --threads=N; returns -1 when absent.
int take_threads_flag(int* argc, char** argv) {
  int threads = -1;
  int kept = 1;
  for (int i = 1; i < *argc; ++i) {
    if (std::strncmp(argv[i], "--threads=", 10) == 0) {
      threads = std::atoi(argv[i] + 10);
    } else {
      argv[kept++] = argv[i];
    }
  }
  *argc = kept;
  return threads;
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  int threads = take_threads_flag(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;

#ifdef TESSERA_BENCH_WITH_TORCH
  if (threads > 0) at::set_num_threads(threads);
  threads = at::get_num_threads();
#else
  if (threads <= 0) threads = 1;
#endif
  std::string tessera_threads = std::to_string(threads);
  try {
    tessera::set_option(tessera::kCPU, "threads", tessera_threads);
    tessera_threads += " (set with tsr_device_set_option(cpu:0, \"threads\"))";
  } catch (const tessera::Error& error) {
    tessera_threads = std::string("plugin default (option \"threads\" refused: ") +
                      error.code_name() + ": " + error.what() + ")";
  }

  const double warm_up_s = 0.2;  // the first 50-100 ms of multi-threaded work run slow
  benchmark::RegisterBenchmark("BM_TesseraAdd1Fresh", BM_TesseraAdd1Fresh)
      ->Unit(benchmark::kNanosecond)
      ->MinWarmUpTime(warm_up_s);
  benchmark::RegisterBenchmark("BM_TesseraAdd1Out", BM_TesseraAdd1Out)
      ->Unit(benchmark::kNanosecond)
      ->MinWarmUpTime(warm_up_s);
  benchmark::RegisterBenchmark("BM_CAbiAdd1Fresh", BM_CAbiAdd1Fresh)
      ->Unit(benchmark::kNanosecond)
      ->MinWarmUpTime(warm_up_s);
#ifdef TESSERA_BENCH_WITH_TORCH
  benchmark::RegisterBenchmark("BM_TorchAdd1Fresh", BM_TorchAdd1Fresh)
      ->Unit(benchmark::kNanosecond)
      ->MinWarmUpTime(warm_up_s);
  benchmark::RegisterBenchmark("BM_TorchAdd1Out", BM_TorchAdd1Out)
      ->Unit(benchmark::kNanosecond)
      ->MinWarmUpTime(warm_up_s);
#endif
  benchmark::RegisterBenchmark("BM_MemcpySameTraffic", BM_MemcpySameTraffic)
      ->Unit(benchmark::kMillisecond)
      ->MinWarmUpTime(warm_up_s)
      ->UseRealTime();
  benchmark::RegisterBenchmark("BM_TesseraAdd16MOut", BM_TesseraAdd16MOut)
      ->Unit(benchmark::kMillisecond)
      ->MinWarmUpTime(warm_up_s)
      ->UseRealTime();
  benchmark::RegisterBenchmark("BM_TesseraAdd16MFresh", BM_TesseraAdd16MFresh)
      ->Unit(benchmark::kMillisecond)
      ->MinWarmUpTime(warm_up_s)
      ->UseRealTime();
#ifdef TESSERA_BENCH_WITH_TORCH
  benchmark::RegisterBenchmark("BM_TorchAdd16MOut", BM_TorchAdd16MOut)
      ->Unit(benchmark::kMillisecond)
      ->MinWarmUpTime(warm_up_s)
      ->UseRealTime();
  benchmark::RegisterBenchmark("BM_TorchAdd16MFresh", BM_TorchAdd16MFresh)
      ->Unit(benchmark::kMillisecond)
      ->MinWarmUpTime(warm_up_s)
      ->UseRealTime();
#endif

  SummaryReporter reporter;
  try {
    benchmark::RunSpecifiedBenchmarks(&reporter);
  } catch (const tessera::Error& error) {
    std::fprintf(stderr, "bench_dispatch: %s: %s\n", error.code_name(), error.what());
    return 2;
  }
  benchmark::Shutdown();

  std::printf("\n== bench_dispatch summary ==\n");
#ifndef __OPTIMIZE__
  std::printf("WARNING: built without optimisation; configure with -DCMAKE_BUILD_TYPE=Release\n");
#endif
  double load[3] = {0, 0, 0};
  if (getloadavg(load, 3) == 3) {
    std::printf(
        "load average %.2f %.2f %.2f (wall times are unreliable when it exceeds the cores)\n",
        load[0], load[1], load[2]);
  }
  std::printf("threads: tessera cpu plugin %s\n", tessera_threads.c_str());
#ifdef TESSERA_BENCH_WITH_TORCH
  std::printf("         libtorch %d.%d.%d: at::get_num_threads() = %d, interop = %d\n",
              TORCH_VERSION_MAJOR, TORCH_VERSION_MINOR, TORCH_VERSION_PATCH, at::get_num_threads(),
              static_cast<int>(at::get_num_interop_threads()));
#else
  std::printf("         libtorch: not built in (no PyPI torch found: TESSERA_TORCH_DIR)\n");
#endif
  std::printf("1-element float32 add:\n");
  print_time_row(reporter, "c = a + b (fresh output)", "BM_TesseraAdd1Fresh", "BM_TorchAdd1Fresh");
  print_time_row(reporter, "add_out(out, a, b) (preallocated)", "BM_TesseraAdd1Out",
                 "BM_TorchAdd1Out");
  if (const auto* c = reporter.find("BM_CAbiAdd1Fresh")) {
    const auto* f = reporter.find("BM_TesseraAdd1Fresh");
    std::printf("  %-36s tessera %7.1f ns/op (cpu %7.1f)   the C++ frontend adds %.1f ns (cpu)\n",
                "tsr_op_call directly (fresh output)", c->ns_per_op, c->cpu_ns_per_op,
                f ? f->cpu_ns_per_op - c->cpu_ns_per_op : 0.0);
  }
  std::printf("16M float32 add, traffic = 2 reads + 1 write = %.0f MB per op:\n",
              kBigAddTraffic * 1e-6);
  print_bandwidth_row(reporter, "add_out (preallocated output)", "BM_TesseraAdd16MOut",
                      "BM_TorchAdd16MOut");
  print_bandwidth_row(reporter, "a + b (fresh output)", "BM_TesseraAdd16MFresh",
                      "BM_TorchAdd16MFresh");
  if (const auto* m = reporter.find("BM_MemcpySameTraffic")) {
    std::printf("  %-36s         %6.1f GB/s (%.2f ms, %.0f MB copied)\n", "memcpy, same traffic",
                m->gb_per_s, m->ns_per_op * 1e-6, static_cast<double>(kMemcpyBytes) * 1e-6);
  }
  return 0;
}
