// bench_vulkan - the Vulkan plugin next to the CPU plugin, in one process.
//
// Cases (float32), each run on cpu:0 and on vulkan:0 (the first Vulkan
// device; on our machines Mesa's lavapipe):
//   matmul      1024^3 into a fresh output; GFLOP/s (2 n^3 per call)
//   conv 3x3    conv2d of a 4 x 16 x 32 x 32 input by 32 3 x 3 filters,
//               padding 1, bias; GFLOP/s (2 N O C 9 H W per call)
//   add         16M elements, add.out into a preallocated output; GB/s of
//               traffic (two reads and a write)
//   bias add    a 4096 x 4096 matrix plus a 4096 row broadcast to every row
//               (as linear's bias), add.out; GB/s of traffic (the matrix
//               read and written)
//   relu, exp   16M elements, out of place; GB/s of traffic (a read and a
//               write) - the pointwise kernels (_unary codes)
//   gelu, gelu tanh
//               gelu(approximate='none') and gelu(approximate='tanh') over
//               16M elements, out of place; GB/s of traffic
//   relu bwd    relu's backward over 16M elements as autograd runs it
//               (y > 0, then where(mask, grad, 0)); GB/s of traffic
//   sum dim1 L  sum over dim 1 of [8, L, 384] for L = 16, 17, 64, 384 (a
//               masked mean pooling's numerator: 3072 outputs of L elements,
//               strided); milliseconds per call
//   sum last L  sum over the last dim of [3072, L] (3072 contiguous rows of
//               L elements); milliseconds per call
//   queued      10,000 one-element adds (add.out, preallocated) issued back
//               to back, then one synchronize; microseconds per op
//   round trip  one one-element add followed by synchronize; microseconds -
//               the latency a host that waits after every op sees
//   upload      64 MiB host tensor -> device tensor (copy_); GB/s
//   download    64 MiB device tensor -> host tensor (copy_); GB/s
// and machine references: memcpy of 64 MiB for the copies, on one thread and
// split in equal parts across the copy threads the plugin uses (Note [Host
// copies], plugins/vulkan/src/host_copy.hpp: TESSERA_VULKAN_COPY_THREADS, or
// the hardware threads up to 4; threads started per copy), and a thread
// handoff (two threads passing a token through a mutex and condition
// variable: one round trip is two cross-thread wake-ups) for the small ops -
// lavapipe runs every dispatch on its worker threads the same way (its queue
// thread queues the work, wakes the workers and sleeps until the last one
// wakes it), so a small op costs up to one such round trip (less when a
// worker is still awake from the previous dispatch, far less when the threads
// share a core). The summary prints the Vulkan figure beside the CPU
// plugin's and the ratio vulkan/cpu.
//
// Options (besides Google Benchmark's --benchmark_*):
//   --threads=N   the CPU plugin's threads (option "threads"); default: its
//                 own default (the hardware threads). lavapipe's threads are
//                 LP_NUM_THREADS (default: the hardware threads).
// The Vulkan device must exist: without one the program says so and exits 1
// (a benchmark that silently measured nothing would read as a pass).
// Benchmarks only: nothing here asserts a time.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tessera/tessera.hpp"

namespace {

using tessera::Device;
using tessera::Tensor;
using tessera::detail::value;

constexpr int64_t kMatmulN = 1024;
constexpr int64_t kAddNumel = int64_t{16} << 20;
constexpr int64_t kQueued = 10000;
constexpr int64_t kCopyBytes = int64_t{64} << 20;
// The reduced lengths of the sum rows: either side of the old switch from an
// invocation per output to a workgroup per output (16 | 17), and longer.
constexpr int64_t kSumLengths[] = {16, 17, 64, 384};

std::optional<Device> g_vulkan;

// Deterministic values in [-1, 1).
std::vector<float> host_values(int64_t numel, uint32_t seed) {
  std::vector<float> v(static_cast<size_t>(numel));
  uint32_t x = seed * 2654435761u + 1u;
  for (auto& e : v) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    e = static_cast<float>(x >> 8) / static_cast<float>(1u << 23) - 1.0f;
  }
  return v;
}

Tensor input(std::vector<int64_t> shape, uint32_t seed, Device device) {
  int64_t numel = 1;
  for (int64_t s : shape) numel *= s;
  return tessera::tensor(host_values(numel, seed), tessera::IntList(shape)).to(device);
}

std::map<std::string, std::string>& skipped() {
  static std::map<std::string, std::string> reasons;
  return reasons;
}

// Runs `setup()`'s body as the timed loop, synchronizing `device` after each
// iteration; a tessera::Error skips the case with its message.
template <class Setup>
void run_case(benchmark::State& state, const char* name, Device device, Setup&& setup) {
  try {
    std::function<void()> body = setup();
    body();  // warm up (pipelines are created on first use) and fail early
    tessera::synchronize(device);
    for (auto _ : state) {
      body();
      tessera::synchronize(device);
    }
  } catch (const tessera::Error& error) {
    const std::string why = std::string(error.code_name()) + ": " + error.what();
    std::ostringstream key;
    key << name << "/" << device;
    skipped()[key.str()] = why;
    state.SkipWithError(why.c_str());
  }
}

void rate(benchmark::State& state, const char* unit, double per_op) {
  state.counters[unit] = benchmark::Counter(per_op * 1e-9 * static_cast<double>(state.iterations()),
                                            benchmark::Counter::kIsRate);
}

void add_out(const Tensor& a, const Tensor& b, const Tensor& out) {
  tessera::call_op("add.out", {value(a), value(b), value(tessera::Scalar(1)), value(out)});
}

void BM_Matmul(benchmark::State& state, Device device) {
  run_case(state, "matmul", device, [&] {
    Tensor a = input({kMatmulN, kMatmulN}, 3, device);
    Tensor b = input({kMatmulN, kMatmulN}, 4, device);
    return std::function<void()>([=] {
      Tensor c = tessera::call_op("mm", {value(a), value(b)});
      benchmark::DoNotOptimize(c.get());
    });
  });
  rate(state, "GFLOP/s", 2.0 * kMatmulN * kMatmulN * kMatmulN);
}

// conv2d, 4 x 16 x 32 x 32 input, 32 filters of 3 x 3, padding 1, bias: the
// size the direct kernel was measured at (Note [Convolution through matmul]).
void BM_Conv(benchmark::State& state, Device device) {
  run_case(state, "conv", device, [&] {
    Tensor x = input({4, 16, 32, 32}, 7, device);
    Tensor w = input({32, 16, 3, 3}, 8, device);
    Tensor b = input({32}, 9, device);
    return std::function<void()>([=] {
      Tensor y = tessera::conv2d(x, w, b, 1, 1);
      benchmark::DoNotOptimize(y.get());
    });
  });
  rate(state, "GFLOP/s", 2.0 * 4 * 32 * 32 * 32 * 16 * 9);
}

void BM_Add(benchmark::State& state, Device device) {
  run_case(state, "add", device, [&] {
    Tensor a = input({kAddNumel}, 1, device);
    Tensor b = input({kAddNumel}, 2, device);
    Tensor out = tessera::empty({kAddNumel}, device);
    return std::function<void()>([=] { add_out(a, b, out); });
  });
  rate(state, "GB/s", 3.0 * sizeof(float) * kAddNumel);
}

void BM_BiasAdd(benchmark::State& state, Device device) {
  constexpr int64_t kSide = 4096;
  run_case(state, "bias add", device, [&] {
    Tensor x = input({kSide, kSide}, 1, device);
    Tensor bias = input({kSide}, 2, device);
    Tensor out = tessera::empty({kSide, kSide}, device);
    return std::function<void()>([=] { add_out(x, bias, out); });
  });
  rate(state, "GB/s", 2.0 * sizeof(float) * kSide * kSide);
}

// `op` (a one-input op name) over 16M float32 elements, out of place.
void BM_Unary(benchmark::State& state, Device device, const char* op) {
  run_case(state, op, device, [&] {
    Tensor x = input({kAddNumel}, 7, device);
    return std::function<void()>([=] {
      Tensor y = tessera::call_op(op, {value(x)});
      benchmark::DoNotOptimize(y.get());
    });
  });
  rate(state, "GB/s", 2.0 * sizeof(float) * kAddNumel);
}

// gelu over 16M float32 elements, out of place, `approximate` "none" or "tanh".
void BM_Gelu(benchmark::State& state, Device device, const char* approximate) {
  run_case(state, "gelu", device, [&] {
    Tensor x = input({kAddNumel}, 7, device);
    return std::function<void()>([=] {
      Tensor y = tessera::gelu(x, approximate);
      benchmark::DoNotOptimize(y.get());
    });
  });
  rate(state, "GB/s", 2.0 * sizeof(float) * kAddNumel);
}

// sum over `dim` of a float32 tensor of `shape`; milliseconds per call.
void BM_SumDim(benchmark::State& state, Device device, std::vector<int64_t> shape, int64_t dim) {
  run_case(state, "sum", device, [&] {
    Tensor x = input(shape, 12, device);
    return std::function<void()>([=] {
      Tensor y = tessera::sum(x, {dim});
      benchmark::DoNotOptimize(y.get());
    });
  });
  state.counters["ms/op"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * 1e-3,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// relu's backward as autograd runs it: mask = y > 0 (bool), out = where(mask,
// grad, 0); GB/s of traffic (y, the mask written and read, grad, out: 14
// bytes per element).
void BM_ReluBackward(benchmark::State& state, Device device) {
  run_case(state, "relu backward", device, [&] {
    Tensor y = input({kAddNumel}, 10, device);
    Tensor grad = input({kAddNumel}, 11, device);
    return std::function<void()>([=] {
      Tensor mask = tessera::gt(y, 0.0);
      Tensor out = tessera::where(mask, grad, 0.0);
      benchmark::DoNotOptimize(out.get());
    });
  });
  rate(state, "GB/s", 14.0 * kAddNumel);
}

void BM_Queued(benchmark::State& state, Device device) {
  run_case(state, "queued", device, [&] {
    Tensor a = input({1}, 1, device);
    Tensor b = input({1}, 2, device);
    Tensor out = tessera::empty({1}, device);
    return std::function<void()>([=] {
      for (int64_t i = 0; i < kQueued; ++i) add_out(a, b, out);
    });
  });
  state.counters["us/op"] =
      benchmark::Counter(static_cast<double>(state.iterations() * kQueued) * 1e-6,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_RoundTrip(benchmark::State& state, Device device) {
  run_case(state, "round trip", device, [&] {
    Tensor a = input({1}, 1, device);
    Tensor b = input({1}, 2, device);
    Tensor out = tessera::empty({1}, device);
    return std::function<void()>([=] { add_out(a, b, out); });
  });
  state.counters["us/op"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * 1e-6,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_Upload(benchmark::State& state, Device device) {
  run_case(state, "upload", device, [&] {
    Tensor host = input({kCopyBytes / 4}, 5, tessera::kCPU);
    Tensor dev = tessera::empty({kCopyBytes / 4}, device);
    return std::function<void()>([=]() mutable { dev.copy_(host); });
  });
  rate(state, "GB/s", static_cast<double>(kCopyBytes));
}

void BM_Download(benchmark::State& state, Device device) {
  run_case(state, "download", device, [&] {
    Tensor dev = input({kCopyBytes / 4}, 6, device);
    Tensor host = tessera::empty({kCopyBytes / 4}, tessera::kCPU);
    return std::function<void()>([=]() mutable { host.copy_(dev); });
  });
  rate(state, "GB/s", static_cast<double>(kCopyBytes));
}

void BM_Memcpy(benchmark::State& state) {
  std::vector<char> src(static_cast<size_t>(kCopyBytes), 1), dst(static_cast<size_t>(kCopyBytes));
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), src.size());
    benchmark::ClobberMemory();
  }
  rate(state, "GB/s", static_cast<double>(kCopyBytes));
}

// The copy threads of Note [Host copies], as the plugin picks them.
int copy_threads() {
  if (const char* env = std::getenv("TESSERA_VULKAN_COPY_THREADS"); env != nullptr)
    return std::max(1, std::atoi(env));
  return static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 4u));
}

void BM_MemcpySplit(benchmark::State& state) {
  const int threads = copy_threads();
  std::vector<char> src(static_cast<size_t>(kCopyBytes), 1), dst(static_cast<size_t>(kCopyBytes));
  const size_t part = src.size() / static_cast<size_t>(threads);
  for (auto _ : state) {
    std::vector<std::thread> workers;
    for (int t = 1; t < threads; ++t) {
      const size_t begin = part * static_cast<size_t>(t);
      const size_t end = t + 1 == threads ? src.size() : begin + part;
      workers.emplace_back(
          [&, begin, end] { std::memcpy(dst.data() + begin, src.data() + begin, end - begin); });
    }
    std::memcpy(dst.data(), src.data(), part);
    for (auto& w : workers) w.join();
    benchmark::ClobberMemory();
  }
  rate(state, "GB/s", static_cast<double>(kCopyBytes));
}

// One iteration: the token goes to a second thread and back (two wake-ups
// of a sleeping thread).
void BM_Handoff(benchmark::State& state) {
  std::mutex mu;
  std::condition_variable to_worker, to_main;
  uint64_t sent = 0, returned = 0;
  bool stop = false;
  std::thread worker([&] {
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      to_worker.wait(lock, [&] { return stop || sent != returned; });
      if (stop) return;
      returned = sent;
      to_main.notify_one();
    }
  });
  for (auto _ : state) {
    std::unique_lock<std::mutex> lock(mu);
    ++sent;
    to_worker.notify_one();
    to_main.wait(lock, [&] { return returned == sent; });
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    stop = true;
  }
  to_worker.notify_one();
  worker.join();
  state.counters["us/op"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * 1e-6,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// Keeps each run's counters while the console reporter prints as usual.
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.error_occurred || run.iterations == 0) continue;
      if (run.run_type == Run::RT_Aggregate && run.aggregate_name != "median") continue;
      for (const auto& [name, counter] : run.counters)
        results_[run.benchmark_name()][name] = counter.value;
    }
    ConsoleReporter::ReportRuns(runs);
  }
  std::optional<double> get(const std::string& bench, const char* counter) const {
    for (const auto& [name, counters] : results_) {
      if (name.rfind(bench, 0) != 0) continue;
      if (auto it = counters.find(counter); it != counters.end()) return it->second;
    }
    return std::nullopt;
  }

 private:
  std::map<std::string, std::map<std::string, double>> results_;
};

void print_row(const SummaryReporter& r, const char* label, const std::string& name,
               const char* counter, bool lower_is_better) {
  const auto cpu = r.get(name + "/cpu", counter);
  const auto vk = r.get(name + "/vulkan", counter);
  std::printf("  %-12s", label);
  if (vk)
    std::printf(" vulkan %9.2f %-7s", *vk, counter);
  else
    std::printf(" vulkan %17s", "-");
  if (cpu)
    std::printf("   cpu %9.2f %-7s", *cpu, counter);
  else
    std::printf("   cpu %17s", "-");
  if (vk && cpu) std::printf("   vulkan/cpu %.3f", lower_is_better ? *cpu / *vk : *vk / *cpu);
  std::printf("\n");
}

std::optional<std::string> take_flag(int* argc, char** argv, const char* name) {
  std::optional<std::string> found;
  const size_t len = std::strlen(name);
  int kept = 1;
  for (int i = 1; i < *argc; ++i) {
    if (std::strncmp(argv[i], name, len) == 0 && argv[i][len] == '=')
      found = std::string(argv[i] + len + 1);
    else
      argv[kept++] = argv[i];
  }
  *argc = kept;
  return found;
}

}  // namespace

int main(int argc, char** argv) {
  const auto threads = take_flag(&argc, argv, "--threads");
  for (const Device& d : tessera::devices()) {
    std::ostringstream label;
    label << d;
    if (label.str().rfind("vulkan", 0) == 0) {
      g_vulkan = d;
      break;
    }
  }
  if (!g_vulkan) {
    std::fprintf(stderr,
                 "bench_vulkan: no vulkan device (is libtessera-vulkan built, and a Vulkan "
                 "driver such as mesa-vulkan-drivers installed? see `tessera devices`)\n");
    return 1;
  }
  if (threads) tessera::set_option(tessera::kCPU, "threads", *threads);
  const tsr_device_properties props = tessera::properties(*g_vulkan);

  struct Named {
    const char* label;
    Device device;
  };
  for (const Named& d : {Named{"cpu", tessera::kCPU}, Named{"vulkan", *g_vulkan}}) {
    const std::string s = d.label;
    benchmark::RegisterBenchmark(("BM_Matmul1024/" + s).c_str(), BM_Matmul, d.device)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("BM_Conv3x3/" + s).c_str(), BM_Conv, d.device)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("BM_Add16M/" + s).c_str(), BM_Add, d.device)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("BM_BiasAdd4096/" + s).c_str(), BM_BiasAdd, d.device)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    for (const char* op : {"relu", "exp"})
      benchmark::RegisterBenchmark(("BM_Unary16M/" + std::string(op) + "/" + s).c_str(), BM_Unary,
                                   d.device, op)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    for (const char* approximate : {"none", "tanh"})
      benchmark::RegisterBenchmark(("BM_Gelu16M/" + std::string(approximate) + "/" + s).c_str(),
                                   BM_Gelu, d.device, approximate)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    for (int64_t length : kSumLengths) {
      const std::string l = std::to_string(length);
      benchmark::RegisterBenchmark(("BM_SumDim1/" + l + "/" + s).c_str(), BM_SumDim, d.device,
                                   std::vector<int64_t>{8, length, 384}, int64_t{1})
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
      benchmark::RegisterBenchmark(("BM_SumLast/" + l + "/" + s).c_str(), BM_SumDim, d.device,
                                   std::vector<int64_t>{3072, length}, int64_t{1})
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
    benchmark::RegisterBenchmark(("BM_ReluBackward16M/" + s).c_str(), BM_ReluBackward, d.device)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("BM_Queued10k/" + s).c_str(), BM_Queued, d.device)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("BM_RoundTrip/" + s).c_str(), BM_RoundTrip, d.device)
        ->Unit(benchmark::kMicrosecond)
        ->UseRealTime();
  }
  benchmark::RegisterBenchmark("BM_Upload64M/vulkan", BM_Upload, *g_vulkan)
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
  benchmark::RegisterBenchmark("BM_Download64M/vulkan", BM_Download, *g_vulkan)
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
  benchmark::RegisterBenchmark("BM_Memcpy64M/cpu", BM_Memcpy)
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
  benchmark::RegisterBenchmark("BM_MemcpySplit64M/cpu", BM_MemcpySplit)
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
  benchmark::RegisterBenchmark("BM_ThreadHandoff/cpu", BM_Handoff)
      ->Unit(benchmark::kMicrosecond)
      ->UseRealTime();

  benchmark::Initialize(&argc, argv);
  SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);

  const char* lp = std::getenv("LP_NUM_THREADS");
  std::printf("\nvulkan: %s; cpu plugin threads: %s; LP_NUM_THREADS: %s\n", props.name,
              threads ? threads->c_str() : "default", lp != nullptr ? lp : "unset (all cores)");
  print_row(reporter, "matmul 1024", "BM_Matmul1024", "GFLOP/s", false);
  print_row(reporter, "conv 3x3", "BM_Conv3x3", "GFLOP/s", false);
  print_row(reporter, "add 16M", "BM_Add16M", "GB/s", false);
  print_row(reporter, "bias add", "BM_BiasAdd4096", "GB/s", false);
  print_row(reporter, "relu 16M", "BM_Unary16M/relu", "GB/s", false);
  print_row(reporter, "exp 16M", "BM_Unary16M/exp", "GB/s", false);
  print_row(reporter, "gelu 16M", "BM_Gelu16M/none", "GB/s", false);
  print_row(reporter, "gelu tanh", "BM_Gelu16M/tanh", "GB/s", false);
  print_row(reporter, "relu bwd 16M", "BM_ReluBackward16M", "GB/s", false);
  for (int64_t length : kSumLengths) {
    const std::string l = std::to_string(length);
    print_row(reporter, ("sum dim1 " + l).c_str(), "BM_SumDim1/" + l, "ms/op", true);
    print_row(reporter, ("sum last " + l).c_str(), "BM_SumLast/" + l, "ms/op", true);
  }
  print_row(reporter, "queued op", "BM_Queued10k", "us/op", true);
  print_row(reporter, "round trip", "BM_RoundTrip", "us/op", true);
  if (const auto h = reporter.get("BM_ThreadHandoff", "us/op"))
    std::printf(
        "  %-12s %9.2f us    (two threads, a token there and back: what lavapipe pays "
        "per dispatch)\n",
        "handoff", *h);
  const auto up = reporter.get("BM_Upload64M", "GB/s");
  const auto down = reporter.get("BM_Download64M", "GB/s");
  const auto mc = reporter.get("BM_Memcpy64M", "GB/s");
  const auto split = reporter.get("BM_MemcpySplit64M", "GB/s");
  if (mc && split)
    std::printf("  %-12s 1 thread %7.2f GB/s   %d threads %7.2f GB/s   (the copies' references)\n",
                "memcpy", *mc, copy_threads(), *split);
  for (const auto& [label, value] : {std::pair{"upload", up}, std::pair{"download", down}})
    if (value && split)
      std::printf("  %-12s vulkan %9.2f GB/s      memcpy x%d %7.2f GB/s   ratio %.3f\n", label,
                  *value, copy_threads(), *split, *value / *split);
  for (const auto& [name, why] : skipped())
    std::printf("  skipped %s: %s\n", name.c_str(), why.c_str());
  return 0;
}
