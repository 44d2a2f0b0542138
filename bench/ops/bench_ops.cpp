// bench_ops - throughput of the operator library's big CPU ops, side by side
// with libtorch in the same process.
//
// Cases (float32, contiguous):
//   add, mul      16M elements, into a preallocated output (add.out / mul.out)
//                 and with a fresh output; GB/s of traffic (bytes read +
//                 written) next to a memcpy moving the same traffic
//   matmul        1024^3 and 2048^3; GFLOP/s (2 n^3 per call) and % of peak
//   conv2d        N32 C64 56x56, K64 3x3, pad 1, NCHW in and out; GFLOP/s
//                 (2 N K C R S OH OW) and % of peak
//   softmax       over the last dim of 4096x4096; GB/s (read + write)
//   layer_norm    over the last dim of 4096x4096 with weight and bias; GB/s
//   sum           of 4096x4096 (all elements); GB/s (read)
//   attention     scaled_dot_product_attention at BERT-base-like shapes (batch
//                 8, 12 heads, 47 tokens, head dim 32): the CPU plugin's fused
//                 kernel, the same through its matmul + softmax decomposition,
//                 and libtorch's; time per call and GFLOP/s (4 B H L^2 D)
// The Tessera ops are called by registry name (tessera::call_op), so this
// builds whatever the registry holds; an op that is missing (or fails) at run
// time is reported as such in place of its numbers.
//
// Peak FLOP/s: measured, not assumed. BM_FmaPeak runs independent chains of
// fused multiply-adds on the widest vectors the processor has (AVX-512F,
// AVX2+FMA, else SSE multiply + add) on the same threads the ops use; "% of
// peak" is relative to it, so turbo clocks and virtualised cpuinfo do not
// skew it. The nominal figure (threads x clock x lanes x FMA units x 2, clock
// from cpufreq or /proc/cpuinfo) is printed beside it for reference; --ghz=
// and --fma-units= override its factors.
//
// Options (besides Google Benchmark's --benchmark_*):
//   --threads=N     threads for both sides (tessera's CPU plugin option
//                   "threads", at::set_num_threads, and the memcpy); default:
//                   libtorch's default (the hardware threads without libtorch)
//   --ghz=X         clock for the nominal peak (GHz)
//   --time=cpu      rates and times from the process's CPU time instead of
//                   wall time: on a machine shared with other work, a
//                   one-thread case then counts only the time it ran (the
//                   default, --time=wall, is right on a quiet machine and for
//                   more than one thread)
//   --fma-units=N   FMA units per core for the nominal peak
//   --isa=NAME      the CPU plugin's "isa" option (auto, avx512, avx2,
//                   baseline: which per-ISA loop bodies it runs); default auto
// By default each case runs 5 times, interleaved at random, and the summary
// reports medians (pass --benchmark_repetitions=1 for a quick look).
// Benchmarks only: nothing here asserts a time.
#include <benchmark/benchmark.h>
#include <omp.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tessera/tessera.hpp"

#ifdef TESSERA_BENCH_WITH_TORCH
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>
#include <torch/version.h>
#endif

namespace {

using tessera::Tensor;
using tessera::detail::value;

constexpr int64_t kElementwiseNumel = int64_t{16} << 20;  // 16M floats
constexpr int64_t kRows = 4096;
constexpr int64_t kCols = 4096;
constexpr double kF = sizeof(float);

// BERT-base-like attention: batch 8, 12 heads, 47 tokens, head dim 32.
struct Attention {
  static constexpr int64_t B = 8, H = 12, L = 47, D = 32;
  static constexpr double flops = 4.0 * B * H * L * L * D;  // two L x L x D products
};

struct Conv {
  static constexpr int64_t N = 32, C = 64, H = 56, W = 56, K = 64, R = 3, S = 3, pad = 1;
  static constexpr int64_t OH = H + 2 * pad - R + 1, OW = W + 2 * pad - S + 1;
  static constexpr double flops = 2.0 * N * K * C * R * S * OH * OW;
};

// ---------------------------------------------------------------------------
// Shared state: thread count, inputs, and what each side reported
// ---------------------------------------------------------------------------

int g_threads = 1;
// --time=cpu: report CPU time (and rates from it) instead of wall time.
bool g_cpu_time = false;

// Deterministic inputs in [-1, 1), made once per shape and shared by both sides.
const std::vector<float>& host_values(int64_t numel, uint32_t seed) {
  static std::map<std::pair<int64_t, uint32_t>, std::vector<float>> cache;
  auto& v = cache[{numel, seed}];
  if (v.empty()) {
    v.resize(static_cast<size_t>(numel));
    uint32_t x = seed * 2654435761u + 1u;
    for (auto& e : v) {
      x ^= x << 13;
      x ^= x >> 17;
      x ^= x << 5;
      e = static_cast<float>(x >> 8) / static_cast<float>(1u << 23) - 1.0f;
    }
  }
  return v;
}

Tensor tessera_input(std::vector<int64_t> shape, uint32_t seed) {
  int64_t numel = 1;
  for (int64_t s : shape) numel *= s;
  return tessera::tensor(host_values(numel, seed), tessera::IntList(shape));
}

// Why a Tessera case could not run (op missing, kernel missing, ...), by benchmark.
std::map<std::string, std::string>& skipped() {
  static std::map<std::string, std::string> reasons;
  return reasons;
}

// Runs `body` as the timed loop of a Tessera case; a tessera::Error (a missing
// op above all) skips the case with its message instead of ending the program.
// `key` names the case in the summary ("BM_TesseraMatmul/1024").
template <class Setup>
void run_tessera(benchmark::State& state, const std::string& key, Setup&& setup) {
  try {
    std::function<void()> body = setup();
    body();  // warm up and fail early
    tessera::synchronize(tessera::kCPU);
    for (auto _ : state) {
      body();
      tessera::synchronize(tessera::kCPU);
    }
  } catch (const tessera::Error& error) {
    const std::string why = std::string(error.code_name()) + ": " + error.what();
    skipped()[key] = why;
    state.SkipWithError(why.c_str());
  }
}

void set_bytes(benchmark::State& state, double bytes_per_op) {
  state.counters["GB/s"] = benchmark::Counter(
      bytes_per_op * 1e-9 * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void set_flops(benchmark::State& state, double flops_per_op) {
  state.counters["GFLOP/s"] = benchmark::Counter(
      flops_per_op * 1e-9 * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

// ---------------------------------------------------------------------------
// Tessera
// ---------------------------------------------------------------------------

void BM_TesseraBinaryOut(benchmark::State& state, const char* key, const char* out_op) {
  run_tessera(state, key, [&] {
    Tensor a = tessera_input({kElementwiseNumel}, 1);
    Tensor b = tessera_input({kElementwiseNumel}, 2);
    Tensor out = tessera::empty({kElementwiseNumel});
    return std::function<void()>([=] {
      // add.out(self, other, *, alpha, out) / mul.out(self, other, *, out)
      if (std::strcmp(out_op, "add.out") == 0) {
        tessera::call_op(out_op, {value(a), value(b), value(tessera::Scalar(1)), value(out)});
      } else {
        tessera::call_op(out_op, {value(a), value(b), value(out)});
      }
    });
  });
  set_bytes(state, 3 * kF * kElementwiseNumel);
}

void BM_TesseraBinaryFresh(benchmark::State& state, const char* key, const char* op) {
  run_tessera(state, key, [&] {
    Tensor a = tessera_input({kElementwiseNumel}, 1);
    Tensor b = tessera_input({kElementwiseNumel}, 2);
    return std::function<void()>([=] {
      Tensor c = tessera::call_op(op, {value(a), value(b)});
      benchmark::DoNotOptimize(c.get());
    });
  });
  set_bytes(state, 3 * kF * kElementwiseNumel);
}

void BM_TesseraMatmul(benchmark::State& state) {
  const int64_t n = state.range(0);
  run_tessera(state, "BM_TesseraMatmul/" + std::to_string(n), [&] {
    Tensor a = tessera_input({n, n}, 3);
    Tensor b = tessera_input({n, n}, 4);
    return std::function<void()>([=] {
      Tensor c = tessera::call_op("matmul", {value(a), value(b)});
      benchmark::DoNotOptimize(c.get());
    });
  });
  set_flops(state, 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n));
}

void BM_TesseraConv2d(benchmark::State& state) {
  run_tessera(state, "BM_TesseraConv2d", [&] {
    Tensor x = tessera_input({Conv::N, Conv::C, Conv::H, Conv::W}, 5);
    Tensor w = tessera_input({Conv::K, Conv::C, Conv::R, Conv::S}, 6);
    return std::function<void()>([=] {
      const int64_t stride[2] = {1, 1};
      const int64_t padding[2] = {Conv::pad, Conv::pad};
      // conv2d(input, weight, bias=None, stride, padding, dilation=1, groups=1)
      Tensor y = tessera::call_op(
          "conv2d", {value(x), value(w), tessera::detail::none(),
                     value(tessera::IntList(stride, 2)), value(tessera::IntList(padding, 2))});
      benchmark::DoNotOptimize(y.get());
    });
  });
  set_flops(state, Conv::flops);
}

void BM_TesseraSoftmax(benchmark::State& state) {
  run_tessera(state, "BM_TesseraSoftmax", [&] {
    Tensor x = tessera_input({kRows, kCols}, 7);
    return std::function<void()>([=] {
      Tensor y = tessera::call_op("softmax.int", {value(x), value(int64_t{1})});
      benchmark::DoNotOptimize(y.get());
    });
  });
  set_bytes(state, 2 * kF * kRows * kCols);
}

void BM_TesseraLayerNorm(benchmark::State& state) {
  run_tessera(state, "BM_TesseraLayerNorm", [&] {
    Tensor x = tessera_input({kRows, kCols}, 8);
    Tensor w = tessera_input({kCols}, 9);
    Tensor b = tessera_input({kCols}, 10);
    return std::function<void()>([=] {
      const int64_t normalized_shape = kCols;
      Tensor y = tessera::call_op(
          "layer_norm", {value(x), value(tessera::IntList(normalized_shape)), value(w), value(b)});
      benchmark::DoNotOptimize(y.get());
    });
  });
  set_bytes(state, kF * (2.0 * kRows * kCols + 2.0 * kCols));
}

void BM_TesseraSum(benchmark::State& state) {
  run_tessera(state, "BM_TesseraSum", [&] {
    Tensor x = tessera_input({kRows, kCols}, 11);
    return std::function<void()>([=] {
      Tensor s = tessera::call_op("sum", {value(x)});
      benchmark::DoNotOptimize(s.get());
    });
  });
  set_bytes(state, kF * kRows * kCols);
}

// The plugin's fused kernel (one op).
void BM_TesseraAttentionFused(benchmark::State& state) {
  run_tessera(state, "BM_TesseraAttentionFused", [&] {
    using A = Attention;
    Tensor q = tessera_input({A::B, A::H, A::L, A::D}, 12);
    Tensor k = tessera_input({A::B, A::H, A::L, A::D}, 13);
    Tensor v = tessera_input({A::B, A::H, A::L, A::D}, 14);
    return std::function<void()>([=] {
      Tensor o = tessera::call_op("scaled_dot_product_attention", {value(q), value(k), value(v)});
      benchmark::DoNotOptimize(o.get());
    });
  });
  set_flops(state, Attention::flops);
}

// softmax(q k^T / sqrt(D)) v through the plugin's matmul, mul and softmax.
void BM_TesseraAttentionDecomposed(benchmark::State& state) {
  run_tessera(state, "BM_TesseraAttentionDecomposed", [&] {
    using A = Attention;
    Tensor q = tessera_input({A::B, A::H, A::L, A::D}, 12);
    Tensor k = tessera_input({A::B, A::H, A::L, A::D}, 13);
    Tensor v = tessera_input({A::B, A::H, A::L, A::D}, 14);
    const double scale = 1.0 / std::sqrt(static_cast<double>(A::D));
    return std::function<void()>([=] {
      Tensor kt =
          tessera::call_op("transpose.int", {value(k), value(int64_t{-2}), value(int64_t{-1})});
      Tensor s = tessera::call_op("matmul", {value(q), value(kt)});
      Tensor scaled = tessera::call_op("mul.Scalar", {value(s), value(tessera::Scalar(scale))});
      Tensor p = tessera::call_op("softmax.int", {value(scaled), value(int64_t{-1})});
      Tensor o = tessera::call_op("matmul", {value(p), value(v)});
      benchmark::DoNotOptimize(o.get());
    });
  });
  set_flops(state, Attention::flops);
}

// ---------------------------------------------------------------------------
// The reference for FLOP/s: measured fused multiply-add throughput
// ---------------------------------------------------------------------------

// kChains independent accumulator chains keep both FMA pipes busy through
// their latency (4-5 cycles x 2 pipes < 12). Each returns the flops it did.
constexpr int kChains = 12;

#if defined(__x86_64__)
__attribute__((target("avx512f"))) double fma_chains_avx512(int64_t iterations) {
  __m512 acc[kChains];
  for (int k = 0; k < kChains; ++k) acc[k] = _mm512_set1_ps(1.0f + 0.01f * k);
  const __m512 b = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
  for (int64_t i = 0; i < iterations; ++i) {
    for (int k = 0; k < kChains; ++k) acc[k] = _mm512_fmadd_ps(acc[k], b, c);
  }
  for (int k = 1; k < kChains; ++k) acc[0] = _mm512_add_ps(acc[0], acc[k]);
  benchmark::DoNotOptimize(acc[0]);
  return 2.0 * 16 * kChains * static_cast<double>(iterations);
}

__attribute__((target("avx2,fma"))) double fma_chains_avx2(int64_t iterations) {
  __m256 acc[kChains];
  for (int k = 0; k < kChains; ++k) acc[k] = _mm256_set1_ps(1.0f + 0.01f * k);
  const __m256 b = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
  for (int64_t i = 0; i < iterations; ++i) {
    for (int k = 0; k < kChains; ++k) acc[k] = _mm256_fmadd_ps(acc[k], b, c);
  }
  for (int k = 1; k < kChains; ++k) acc[0] = _mm256_add_ps(acc[0], acc[k]);
  benchmark::DoNotOptimize(acc[0]);
  return 2.0 * 8 * kChains * static_cast<double>(iterations);
}
#endif

double fma_chains_portable(int64_t iterations) {
  float acc[kChains][4];
  for (int k = 0; k < kChains; ++k) std::fill(acc[k], acc[k] + 4, 1.0f + 0.01f * k);
  for (int64_t i = 0; i < iterations; ++i) {
    for (auto& chain : acc) {
      for (float& a : chain) a = a * 0.999999f + 1e-7f;
    }
  }
  benchmark::DoNotOptimize(acc);
  return 2.0 * 4 * kChains * static_cast<double>(iterations);
}

// The vector width of the measured peak, for the summary.
const char* fma_isa() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return "AVX-512F FMA";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "AVX2 FMA";
#endif
  return "4-lane multiply + add";
}

// The widest vector extensions the processor reports, for the summary.
const char* processor_isa() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
    return "AVX-512 F/BW/DQ/VL";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "AVX2+FMA";
  return "x86-64 baseline (SSE2)";
#else
  return "not x86-64";
#endif
}

double fma_chains(int64_t iterations) {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f")) return fma_chains_avx512(iterations);
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    return fma_chains_avx2(iterations);
  }
#endif
  return fma_chains_portable(iterations);
}

// The FMA throughput of g_threads threads, each running the chains.
void BM_FmaPeak(benchmark::State& state) {
  constexpr int64_t kIterations = 1 << 20;
  const int threads = g_threads;
  double flops = 0;
  for (auto _ : state) {
    double done = 0;
#pragma omp parallel for num_threads(threads) schedule(static, 1) reduction(+ : done)
    for (int t = 0; t < threads; ++t) done += fma_chains(kIterations);
    flops = done;
  }
  set_flops(state, flops);
}

// ---------------------------------------------------------------------------
// The reference: memcpy of the same traffic, on the same number of threads
// ---------------------------------------------------------------------------

// Copies `bytes` with g_threads threads; traffic = 2 * bytes (read + write).
// Source and destination come from the CPU plugin's allocator, as the ops'
// buffers do: with transparent huge pages on "madvise", a std::vector's 4 KiB
// pages would make memcpy miss the TLB 512x more often than the ops it is
// compared with (the plugin advises MADV_HUGEPAGE for large buffers).
void BM_Memcpy(benchmark::State& state) {
  const auto bytes = static_cast<size_t>(state.range(0));
  const auto floats = static_cast<int64_t>(bytes / sizeof(float));
  Tensor src_tensor = tessera::empty({floats});
  Tensor dst_tensor = tessera::empty({floats});
  char* src = static_cast<char*>(src_tensor.data_ptr());
  char* dst = static_cast<char*>(dst_tensor.data_ptr());
  std::memset(src, 1, bytes);  // fault every page in before timing
  std::memset(dst, 0, bytes);
  const int threads = g_threads;
  for (auto _ : state) {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int t = 0; t < threads; ++t) {
      const size_t begin = bytes * static_cast<size_t>(t) / static_cast<size_t>(threads);
      const size_t end = bytes * static_cast<size_t>(t + 1) / static_cast<size_t>(threads);
      std::memcpy(dst + begin, src + begin, end - begin);
    }
    benchmark::ClobberMemory();
  }
  set_bytes(state, 2.0 * static_cast<double>(bytes));
}

// ---------------------------------------------------------------------------
// libtorch (InferenceMode: no autograd bookkeeping, its fastest eager setting)
// ---------------------------------------------------------------------------
#ifdef TESSERA_BENCH_WITH_TORCH
at::Tensor torch_input(std::vector<int64_t> shape, uint32_t seed) {
  int64_t numel = 1;
  for (int64_t s : shape) numel *= s;
  const auto& host = host_values(numel, seed);
  return at::from_blob(const_cast<float*>(host.data()), shape, at::kFloat).clone();
}

void BM_TorchAddOut(benchmark::State& state) {
  c10::InferenceMode guard;
  at::Tensor a = torch_input({kElementwiseNumel}, 1), b = torch_input({kElementwiseNumel}, 2);
  at::Tensor out = at::empty({kElementwiseNumel});
  for (auto _ : state) at::add_out(out, a, b);
  set_bytes(state, 3 * kF * kElementwiseNumel);
}
void BM_TorchMulOut(benchmark::State& state) {
  c10::InferenceMode guard;
  at::Tensor a = torch_input({kElementwiseNumel}, 1), b = torch_input({kElementwiseNumel}, 2);
  at::Tensor out = at::empty({kElementwiseNumel});
  for (auto _ : state) at::mul_out(out, a, b);
  set_bytes(state, 3 * kF * kElementwiseNumel);
}
void BM_TorchAddFresh(benchmark::State& state) {
  c10::InferenceMode guard;
  at::Tensor a = torch_input({kElementwiseNumel}, 1), b = torch_input({kElementwiseNumel}, 2);
  for (auto _ : state) benchmark::DoNotOptimize(at::add(a, b).unsafeGetTensorImpl());
  set_bytes(state, 3 * kF * kElementwiseNumel);
}
void BM_TorchMulFresh(benchmark::State& state) {
  c10::InferenceMode guard;
  at::Tensor a = torch_input({kElementwiseNumel}, 1), b = torch_input({kElementwiseNumel}, 2);
  for (auto _ : state) benchmark::DoNotOptimize(at::mul(a, b).unsafeGetTensorImpl());
  set_bytes(state, 3 * kF * kElementwiseNumel);
}
void BM_TorchMatmul(benchmark::State& state) {
  c10::InferenceMode guard;
  const int64_t n = state.range(0);
  at::Tensor a = torch_input({n, n}, 3), b = torch_input({n, n}, 4);
  for (auto _ : state) benchmark::DoNotOptimize(at::matmul(a, b).unsafeGetTensorImpl());
  set_flops(state, 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n));
}
void BM_TorchConv2d(benchmark::State& state) {
  c10::InferenceMode guard;
  at::Tensor x = torch_input({Conv::N, Conv::C, Conv::H, Conv::W}, 5);
  at::Tensor w = torch_input({Conv::K, Conv::C, Conv::R, Conv::S}, 6);
  for (auto _ : state)
    benchmark::DoNotOptimize(
        at::conv2d(x, w, {}, {1, 1}, {Conv::pad, Conv::pad}).unsafeGetTensorImpl());
  set_flops(state, Conv::flops);
}
void BM_TorchSoftmax(benchmark::State& state) {
  c10::InferenceMode guard;
  at::Tensor x = torch_input({kRows, kCols}, 7);
  for (auto _ : state) benchmark::DoNotOptimize(at::softmax(x, 1).unsafeGetTensorImpl());
  set_bytes(state, 2 * kF * kRows * kCols);
}
void BM_TorchLayerNorm(benchmark::State& state) {
  c10::InferenceMode guard;
  at::Tensor x = torch_input({kRows, kCols}, 8);
  at::Tensor w = torch_input({kCols}, 9), b = torch_input({kCols}, 10);
  for (auto _ : state)
    benchmark::DoNotOptimize(at::layer_norm(x, {kCols}, w, b).unsafeGetTensorImpl());
  set_bytes(state, kF * (2.0 * kRows * kCols + 2.0 * kCols));
}
void BM_TorchSum(benchmark::State& state) {
  c10::InferenceMode guard;
  at::Tensor x = torch_input({kRows, kCols}, 11);
  for (auto _ : state) benchmark::DoNotOptimize(at::sum(x).unsafeGetTensorImpl());
  set_bytes(state, kF * kRows * kCols);
}
void BM_TorchAttention(benchmark::State& state) {
  c10::InferenceMode guard;
  using A = Attention;
  at::Tensor q = torch_input({A::B, A::H, A::L, A::D}, 12);
  at::Tensor k = torch_input({A::B, A::H, A::L, A::D}, 13);
  at::Tensor v = torch_input({A::B, A::H, A::L, A::D}, 14);
  for (auto _ : state)
    benchmark::DoNotOptimize(at::scaled_dot_product_attention(q, k, v).unsafeGetTensorImpl());
  set_flops(state, Attention::flops);
}

// Runs each Tessera op once next to libtorch on the same inputs and returns
// the largest |difference| / (1 + |torch|), so a fast but wrong kernel shows.
std::map<std::string, std::string> agreement() {
  c10::InferenceMode guard;
  std::map<std::string, std::string> out;
  auto compare = [&](const std::string& name, const std::function<Tensor()>& ours,
                     const std::function<at::Tensor()>& theirs) {
    try {
      const Tensor t = ours();
      const at::Tensor r = theirs().contiguous();
      const std::vector<float> got = t.contiguous().to_vector<float>();
      if (static_cast<int64_t>(got.size()) != r.numel()) {
        out[name] = "DIFFERENT SIZE";
        return;
      }
      const float* ref = r.data_ptr<float>();
      double worst = 0;
      for (size_t i = 0; i < got.size(); ++i) {
        const double d =
            std::fabs(static_cast<double>(got[i]) - ref[i]) / (1.0 + std::fabs(ref[i]));
        worst = std::isnan(d) ? INFINITY : std::max(worst, d);
      }
      char text[64];
      std::snprintf(text, sizeof text, "max rel. difference %.1e", worst);
      out[name] = text;
    } catch (const tessera::Error& error) {
      out[name] = std::string("not run: ") + error.code_name();
    }
  };
  const int64_t n = 256;  // small shapes: a check, not a measurement
  compare(
      "add",
      [&] {
        return tessera::call_op("add.Tensor",
                                {value(tessera_input({4096}, 1)), value(tessera_input({4096}, 2))});
      },
      [&] { return at::add(torch_input({4096}, 1), torch_input({4096}, 2)); });
  compare(
      "mul",
      [&] {
        return tessera::call_op("mul.Tensor",
                                {value(tessera_input({4096}, 1)), value(tessera_input({4096}, 2))});
      },
      [&] { return at::mul(torch_input({4096}, 1), torch_input({4096}, 2)); });
  compare(
      "matmul",
      [&] {
        return tessera::call_op("matmul",
                                {value(tessera_input({n, n}, 3)), value(tessera_input({n, n}, 4))});
      },
      [&] {
        return at::matmul(torch_input({n, n}, 3), torch_input({n, n}, 4));
      });
  compare(
      "conv2d",
      [&] {
        const int64_t one[2] = {1, 1};
        return tessera::call_op("conv2d",
                                {value(tessera_input({2, 8, 10, 10}, 5)),
                                 value(tessera_input({4, 8, 3, 3}, 6)), tessera::detail::none(),
                                 value(tessera::IntList(one, 2)), value(tessera::IntList(one, 2))});
      },
      [&] {
        return at::conv2d(torch_input({2, 8, 10, 10}, 5), torch_input({4, 8, 3, 3}, 6), {}, {1, 1},
                          {1, 1});
      });
  compare(
      "softmax",
      [&] {
        return tessera::call_op("softmax.int", {value(tessera_input({64, n}, 7)), value(1)});
      },
      [&] {
        return at::softmax(torch_input({64, n}, 7), 1);
      });
  compare(
      "layer_norm",
      [&] {
        const int64_t cols = n;
        return tessera::call_op("layer_norm",
                                {value(tessera_input({64, n}, 8)), value(tessera::IntList(cols)),
                                 value(tessera_input({n}, 9)), value(tessera_input({n}, 10))});
      },
      [&] {
        return at::layer_norm(torch_input({64, n}, 8), {n}, torch_input({n}, 9),
                              torch_input({n}, 10));
      });
  compare(
      "sum",
      [&] {
        return tessera::call_op("sum", {value(tessera_input({64, n}, 11))});
      },
      [&] {
        return at::sum(torch_input({64, n}, 11));
      });
  using A = Attention;
  compare(
      "scaled_dot_product_attention",
      [&] {
        return tessera::call_op("scaled_dot_product_attention",
                                {value(tessera_input({A::B, A::H, A::L, A::D}, 12)),
                                 value(tessera_input({A::B, A::H, A::L, A::D}, 13)),
                                 value(tessera_input({A::B, A::H, A::L, A::D}, 14))});
      },
      [&] {
        return at::scaled_dot_product_attention(torch_input({A::B, A::H, A::L, A::D}, 12),
                                                torch_input({A::B, A::H, A::L, A::D}, 13),
                                                torch_input({A::B, A::H, A::L, A::D}, 14));
      });
  return out;
}
#endif

// ---------------------------------------------------------------------------
// Peak FLOP/s
// ---------------------------------------------------------------------------

struct Peak {
  double ghz = 0;
  std::string ghz_source;
  int lanes = 4;
  std::string isa = "SSE";
  int fma_units = 2;
  std::string fma_source = "assumed (two FMA pipes per core)";
  double gflops(int threads) const { return threads * ghz * lanes * fma_units * 2.0; }
};

Peak detect_peak(double ghz_override, int fma_override) {
  Peak p;
  if (std::ifstream f("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"); f) {
    double khz = 0;
    if (f >> khz && khz > 0) {
      p.ghz = khz * 1e-6;
      p.ghz_source = "cpufreq cpuinfo_max_freq";
    }
  }
  if (std::ifstream f("/proc/cpuinfo"); f) {
    std::string line;
    while (std::getline(f, line)) {
      if (line.rfind("cpu MHz", 0) == 0) {
        const double mhz = std::atof(line.substr(line.find(':') + 1).c_str());
        if (mhz * 1e-3 > p.ghz) {
          p.ghz = mhz * 1e-3;
          p.ghz_source = "/proc/cpuinfo \"cpu MHz\"";
        }
        break;
      }
    }
  }
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) {
    p.lanes = 16;
    p.isa = "AVX-512F";
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    p.lanes = 8;
    p.isa = "AVX2+FMA";
  }
  if (ghz_override > 0) {
    p.ghz = ghz_override;
    p.ghz_source = "--ghz";
  }
  if (fma_override > 0) {
    p.fma_units = fma_override;
    p.fma_source = "--fma-units";
  }
  return p;
}

// ---------------------------------------------------------------------------
// Summary
// ---------------------------------------------------------------------------

// Keeps time and counters of each benchmark (the median when repeated) while
// the console reporter prints as usual.
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  struct Result {
    double ms = 0;
    double gb_per_s = 0;
    double gflop_per_s = 0;
  };

  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.error_occurred || run.iterations == 0) continue;
      const bool median = run.run_type == Run::RT_Aggregate && run.aggregate_name == "median";
      if (run.run_type == Run::RT_Aggregate && !median) continue;
      Result r;
      r.ms = (g_cpu_time ? run.GetAdjustedCPUTime() : run.GetAdjustedRealTime()) /
             benchmark::GetTimeUnitMultiplier(run.time_unit) * 1e3;
      if (auto it = run.counters.find("GB/s"); it != run.counters.end()) r.gb_per_s = it->second;
      if (auto it = run.counters.find("GFLOP/s"); it != run.counters.end())
        r.gflop_per_s = it->second;
      std::string key = run.run_name.function_name;
      if (!run.run_name.args.empty()) key += "/" + run.run_name.args;
      auto& slot = results_[key];
      if (median || !slot.second) slot = {r, median};
    }
    ConsoleReporter::ReportRuns(runs);
  }

  const Result* find(const std::string& name) const {
    const auto it = results_.find(name);
    return it == results_.end() ? nullptr : &it->second.first;
  }

 private:
  std::map<std::string, std::pair<Result, bool>> results_;
};

std::string missing_reason(const std::string& name) {
  const auto it = skipped().find(name);
  return it != skipped().end() ? it->second : "did not run (filtered out?)";
}

void print_bandwidth_row(const SummaryReporter& r, const char* label, const std::string& ours,
                         const std::string& theirs, const std::string& memcpy_name) {
  const auto* t = r.find(ours);
  const auto* p = r.find(theirs);
  const auto* m = r.find(memcpy_name);
  std::printf("  %-30s", label);
  if (t != nullptr) {
    std::printf(" tessera %6.1f GB/s (%7.2f ms", t->gb_per_s, t->ms);
    if (m != nullptr) std::printf(", %.2f of memcpy", t->gb_per_s / m->gb_per_s);
    std::printf(")");
  } else {
    std::printf(" tessera: %s", missing_reason(ours).c_str());
  }
  if (p != nullptr) {
    std::printf("   libtorch %6.1f GB/s (%7.2f ms", p->gb_per_s, p->ms);
    if (m != nullptr) std::printf(", %.2f of memcpy", p->gb_per_s / m->gb_per_s);
    std::printf(")");
    if (t != nullptr) std::printf("   tessera/libtorch %.2f", t->gb_per_s / p->gb_per_s);
  }
  std::printf("\n");
}

void print_flops_row(const SummaryReporter& r, const char* label, const std::string& ours,
                     const std::string& theirs, double peak) {
  const auto* t = r.find(ours);
  const auto* p = r.find(theirs);
  std::printf("  %-30s", label);
  if (t != nullptr) {
    std::printf(" tessera %7.1f GFLOP/s (%5.1f%% of peak, %8.2f ms)", t->gflop_per_s,
                100.0 * t->gflop_per_s / peak, t->ms);
  } else {
    std::printf(" tessera: %s", missing_reason(ours).c_str());
  }
  if (p != nullptr) {
    std::printf("   libtorch %7.1f GFLOP/s (%5.1f%%, %8.2f ms)", p->gflop_per_s,
                100.0 * p->gflop_per_s / peak, p->ms);
    if (t != nullptr) std::printf("   tessera/libtorch %.2f", t->gflop_per_s / p->gflop_per_s);
  }
  std::printf("\n");
}

#ifdef TESSERA_BENCH_WITH_TORCH
// The BLAS library mapped into this process (libtorch's matmul goes through
// it): the netlib reference BLAS is an order of magnitude slower than an
// optimised one, which makes libtorch's matmul figures no fastest setting.
std::string loaded_blas() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    const size_t slash = line.find('/');
    if (slash == std::string::npos) continue;
    const std::string path = line.substr(slash);
    const std::string file = path.substr(path.rfind('/') + 1);
    if (file.find("blas") != std::string::npos || file.find("mkl_rt") != std::string::npos ||
        file.find("blis") != std::string::npos) {
      std::string note = path;
      if (path.find("/blas/") != std::string::npos && file.rfind("libblas.so", 0) == 0)
        note +=
            " (netlib reference BLAS: install an optimised one, e.g. libopenblas0, and "
            "select it with update-alternatives, for a fair libtorch matmul)";
      return note;
    }
  }
  return "none mapped";
}
#endif

// Parses and removes --name=value; returns the value or nullopt.
std::optional<std::string> take_flag(int* argc, char** argv, const char* name) {
  std::optional<std::string> found;
  const size_t len = std::strlen(name);
  int kept = 1;
  for (int i = 1; i < *argc; ++i) {
    if (std::strncmp(argv[i], name, len) == 0 && argv[i][len] == '=') {
      found = std::string(argv[i] + len + 1);
    } else {
      argv[kept++] = argv[i];
    }
  }
  *argc = kept;
  return found;
}

std::string memcpy_name(double traffic_bytes) {
  return "BM_Memcpy/" + std::to_string(static_cast<int64_t>(traffic_bytes / 2));
}

}  // namespace

int main(int argc, char** argv) {
  // Unless told otherwise, every case runs 5 times in random order and the
  // summary uses medians: on a shared VM a single run of a memory-bound case
  // can be off by 30 %, and interleaving keeps slow phases from landing on one
  // side of a comparison.
  std::vector<char*> args(argv, argv + argc);
  std::string repetitions = "--benchmark_repetitions=5";
  std::string interleave = "--benchmark_enable_random_interleaving=true";
  auto given = [&](const char* prefix) {
    return std::any_of(args.begin() + 1, args.end(), [&](const char* a) {
      return std::strncmp(a, prefix, std::strlen(prefix)) == 0;
    });
  };
  if (!given("--benchmark_repetitions")) args.push_back(repetitions.data());
  if (!given("--benchmark_enable_random_interleaving")) args.push_back(interleave.data());
  argc = static_cast<int>(args.size());
  args.push_back(nullptr);
  argv = args.data();
  benchmark::Initialize(&argc, argv);
  const auto threads_flag = take_flag(&argc, argv, "--threads");
  const auto ghz_flag = take_flag(&argc, argv, "--ghz");
  const auto fma_flag = take_flag(&argc, argv, "--fma-units");
  const auto isa_flag = take_flag(&argc, argv, "--isa");
  const auto time_flag = take_flag(&argc, argv, "--time");
  if (time_flag && *time_flag != "cpu" && *time_flag != "wall") {
    std::fprintf(stderr, "bench_ops: --time must be 'cpu' or 'wall', got '%s'\n",
                 time_flag->c_str());
    return 1;
  }
  g_cpu_time = time_flag && *time_flag == "cpu";
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;

  int threads = threads_flag ? std::atoi(threads_flag->c_str()) : -1;
#ifdef TESSERA_BENCH_WITH_TORCH
  if (threads > 0) at::set_num_threads(threads);
  threads = at::get_num_threads();
#else
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
#endif
  g_threads = threads;
  std::string tessera_threads = std::to_string(threads);
  try {
    tessera::set_option(tessera::kCPU, "threads", tessera_threads);
    tessera_threads += " (set with tsr_device_set_option(cpu:0, \"threads\"))";
  } catch (const tessera::Error& error) {
    tessera_threads = std::string("plugin default (option \"threads\" refused: ") +
                      error.code_name() + ": " + error.what() + ")";
  }
  std::string plugin_isa = isa_flag ? *isa_flag : std::string("auto");
  try {
    tessera::set_option(tessera::kCPU, "isa", plugin_isa);
  } catch (const tessera::Error& error) {
    std::fprintf(stderr, "bench_ops: --isa=%s: %s\n", plugin_isa.c_str(), error.what());
    return 1;
  }
  const Peak peak = detect_peak(ghz_flag ? std::atof(ghz_flag->c_str()) : 0,
                                fma_flag ? std::atoi(fma_flag->c_str()) : 0);

  const double warm_up_s = 0.2;
  auto reg = [&](const std::string& name, auto fn) {
    auto* b = benchmark::RegisterBenchmark(name.c_str(), fn)
                  ->Unit(benchmark::kMillisecond)
                  ->MinWarmUpTime(warm_up_s);
    return g_cpu_time ? b : b->UseRealTime();
  };
  const double binary_traffic = 3 * kF * kElementwiseNumel;
  const double rowwise_traffic = 2 * kF * kRows * kCols;
  const double sum_traffic = kF * kRows * kCols;
  for (double traffic : {binary_traffic, rowwise_traffic, sum_traffic})
    reg("BM_Memcpy", BM_Memcpy)->Arg(static_cast<int64_t>(traffic / 2));
  reg("BM_FmaPeak", BM_FmaPeak);

  reg("BM_TesseraAddOut",
      [](benchmark::State& s) { BM_TesseraBinaryOut(s, "BM_TesseraAddOut", "add.out"); });
  reg("BM_TesseraAddFresh",
      [](benchmark::State& s) { BM_TesseraBinaryFresh(s, "BM_TesseraAddFresh", "add.Tensor"); });
  reg("BM_TesseraMulOut",
      [](benchmark::State& s) { BM_TesseraBinaryOut(s, "BM_TesseraMulOut", "mul.out"); });
  reg("BM_TesseraMulFresh",
      [](benchmark::State& s) { BM_TesseraBinaryFresh(s, "BM_TesseraMulFresh", "mul.Tensor"); });
  reg("BM_TesseraMatmul", BM_TesseraMatmul)->Arg(1024)->Arg(2048);
  reg("BM_TesseraConv2d", BM_TesseraConv2d);
  reg("BM_TesseraSoftmax", BM_TesseraSoftmax);
  reg("BM_TesseraLayerNorm", BM_TesseraLayerNorm);
  reg("BM_TesseraSum", BM_TesseraSum);
  reg("BM_TesseraAttentionFused", BM_TesseraAttentionFused)->Unit(benchmark::kMicrosecond);
  reg("BM_TesseraAttentionDecomposed", BM_TesseraAttentionDecomposed)
      ->Unit(benchmark::kMicrosecond);
#ifdef TESSERA_BENCH_WITH_TORCH
  reg("BM_TorchAddOut", BM_TorchAddOut);
  reg("BM_TorchAddFresh", BM_TorchAddFresh);
  reg("BM_TorchMulOut", BM_TorchMulOut);
  reg("BM_TorchMulFresh", BM_TorchMulFresh);
  reg("BM_TorchMatmul", BM_TorchMatmul)->Arg(1024)->Arg(2048);
  reg("BM_TorchConv2d", BM_TorchConv2d);
  reg("BM_TorchSoftmax", BM_TorchSoftmax);
  reg("BM_TorchLayerNorm", BM_TorchLayerNorm);
  reg("BM_TorchSum", BM_TorchSum);
  reg("BM_TorchAttention", BM_TorchAttention)->Unit(benchmark::kMicrosecond);
#endif

  SummaryReporter reporter;
  try {
    benchmark::RunSpecifiedBenchmarks(&reporter);
  } catch (const tessera::Error& error) {
    std::fprintf(stderr, "bench_ops: %s: %s\n", error.code_name(), error.what());
    return 2;
  }
  benchmark::Shutdown();

  std::printf("\n== bench_ops summary ==\n");
#ifndef __OPTIMIZE__
  std::printf("WARNING: built without optimisation; configure with -DCMAKE_BUILD_TYPE=Release\n");
#endif
  double load[3] = {0, 0, 0};
  if (getloadavg(load, 3) == 3) {
    std::printf(
        "load average %.2f %.2f %.2f (wall times are unreliable when it exceeds the cores)\n",
        load[0], load[1], load[2]);
  }
  std::printf("threads: tessera cpu plugin %s; memcpy %d (OpenMP)\n", tessera_threads.c_str(),
              threads);
  std::printf("time: %s\n", g_cpu_time ? "process CPU time (--time=cpu)" : "wall time");
  std::printf("isa: tessera cpu plugin option \"isa\" = %s (processor: %s)\n", plugin_isa.c_str(),
              processor_isa());
#ifdef TESSERA_BENCH_WITH_TORCH
  std::printf(
      "         libtorch %d.%d.%d: at::get_num_threads() = %d, interop = %d, InferenceMode\n",
      TORCH_VERSION_MAJOR, TORCH_VERSION_MINOR, TORCH_VERSION_PATCH, at::get_num_threads(),
      static_cast<int>(at::get_num_interop_threads()));
  std::printf("         BLAS: %s\n", loaded_blas().c_str());
#else
  std::printf("         libtorch: not built in (no PyPI torch found: TESSERA_TORCH_DIR)\n");
#endif
  const double nominal_gflops = peak.gflops(threads);
  const auto* measured = reporter.find("BM_FmaPeak");
  const double peak_gflops = measured != nullptr ? measured->gflop_per_s : nominal_gflops;
  if (measured != nullptr) {
    std::printf(
        "peak float32 FMA, measured: %.1f GFLOP/s (%d threads, %s chains); %% of peak "
        "below is of this\n",
        measured->gflop_per_s, threads, fma_isa());
  } else {
    std::printf(
        "peak float32 FMA, measured: did not run (filtered out?); %% of peak below is of "
        "the nominal figure\n");
  }
  std::printf(
      "peak float32 FMA, nominal: %.1f GFLOP/s = %d threads x %.3f GHz (%s) x %d lanes (%s) x %d "
      "FMA units (%s) x 2 flops\n",
      nominal_gflops, threads, peak.ghz,
      peak.ghz_source.empty() ? "unknown" : peak.ghz_source.c_str(), peak.lanes, peak.isa.c_str(),
      peak.fma_units, peak.fma_source.c_str());

  std::printf("elementwise, 16M float32, traffic = 2 reads + 1 write = %.0f MB per op:\n",
              binary_traffic * 1e-6);
  const std::string m_bin = memcpy_name(binary_traffic);
  print_bandwidth_row(reporter, "add_out (preallocated)", "BM_TesseraAddOut", "BM_TorchAddOut",
                      m_bin);
  print_bandwidth_row(reporter, "add (fresh output)", "BM_TesseraAddFresh", "BM_TorchAddFresh",
                      m_bin);
  print_bandwidth_row(reporter, "mul_out (preallocated)", "BM_TesseraMulOut", "BM_TorchMulOut",
                      m_bin);
  print_bandwidth_row(reporter, "mul (fresh output)", "BM_TesseraMulFresh", "BM_TorchMulFresh",
                      m_bin);
  if (const auto* m = reporter.find(m_bin))
    std::printf("  %-30s         %6.1f GB/s (%7.2f ms)\n", "memcpy, same traffic", m->gb_per_s,
                m->ms);
  std::printf("matmul float32 (2 n^3 flops):\n");
  print_flops_row(reporter, "1024^3", "BM_TesseraMatmul/1024", "BM_TorchMatmul/1024", peak_gflops);
  print_flops_row(reporter, "2048^3", "BM_TesseraMatmul/2048", "BM_TorchMatmul/2048", peak_gflops);
  std::printf("conv2d N32 C64 56x56 K64 3x3 pad 1, NCHW (%.2f GFLOP per call):\n",
              Conv::flops * 1e-9);
  print_flops_row(reporter, "conv2d", "BM_TesseraConv2d", "BM_TorchConv2d", peak_gflops);
  std::printf("rowwise over 4096x4096 float32 (traffic = read + write = %.0f MB per op):\n",
              rowwise_traffic * 1e-6);
  const std::string m_row = memcpy_name(rowwise_traffic);
  print_bandwidth_row(reporter, "softmax(dim=1)", "BM_TesseraSoftmax", "BM_TorchSoftmax", m_row);
  print_bandwidth_row(reporter, "layer_norm([4096], w, b)", "BM_TesseraLayerNorm",
                      "BM_TorchLayerNorm", m_row);
  if (const auto* m = reporter.find(m_row))
    std::printf("  %-30s         %6.1f GB/s (%7.2f ms)\n", "memcpy, same traffic", m->gb_per_s,
                m->ms);
  std::printf("sum of 4096x4096 float32 (traffic = read = %.0f MB per op):\n", sum_traffic * 1e-6);
  const std::string m_sum = memcpy_name(sum_traffic);
  print_bandwidth_row(reporter, "sum()", "BM_TesseraSum", "BM_TorchSum", m_sum);
  if (const auto* m = reporter.find(m_sum))
    std::printf("  %-30s         %6.1f GB/s (%7.2f ms)\n", "memcpy, same traffic", m->gb_per_s,
                m->ms);
  std::printf(
      "scaled_dot_product_attention, batch %lld, %lld heads, %lld tokens, head dim %lld (%.1f "
      "MFLOP per call):\n",
      static_cast<long long>(Attention::B), static_cast<long long>(Attention::H),
      static_cast<long long>(Attention::L), static_cast<long long>(Attention::D),
      Attention::flops * 1e-6);
  print_flops_row(reporter, "fused kernel", "BM_TesseraAttentionFused", "BM_TorchAttention",
                  peak_gflops);
  print_flops_row(reporter, "matmul + softmax decomposition", "BM_TesseraAttentionDecomposed",
                  "BM_TorchAttention", peak_gflops);
  if (const auto* f = reporter.find("BM_TesseraAttentionFused"),
      *d = reporter.find("BM_TesseraAttentionDecomposed");
      f != nullptr && d != nullptr) {
    std::printf("  %-30s %.2f x faster than the decomposition\n", "fused kernel", d->ms / f->ms);
  }
#ifdef TESSERA_BENCH_WITH_TORCH
  std::printf("agreement with libtorch (small shapes, same inputs):\n");
  for (const auto& [name, text] : agreement())
    std::printf("  %-30s %s\n", name.c_str(), text.c_str());
#endif
  return 0;
}
