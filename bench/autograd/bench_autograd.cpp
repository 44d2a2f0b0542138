// bench_autograd - what recording and replaying the autograd graph costs.
//
// 1. A 1-element float32 add with an input that requires grad (the op is
//    recorded), next to the same add without grad: the difference is the
//    recording cost per op.
// 2. Forward and backward of a chain of 100 ops (x * 1.0001 repeated) on a
//    1-element tensor: per-op cost of recording plus running the backward
//    nodes.
// 3. Training steps of fused ops: conv2d (8x32x32x32, 64 3x3 filters, padding
//    1), layer_norm (256 x 1024 with affine), max_pool2d and avg_pool2d
//    (8x64x56x56, 3x3 windows, stride 2, padding 1: overlapping), forward +
//    sum + backward into cleared .grad; they show whether training keeps the
//    fused kernels. softmax and log_softmax over the last dim of 256 x 1024
//    (loss (y * y).sum(), as layer_norm's) and cross_entropy on (256, 1000)
//    logits with class targets (mean) run their fused backward ops.
// 4. Attention training steps: scaled_dot_product_attention, (y*y).sum(),
//    backward into q, k, v at BERT-base heads (8, 12, 47, 47, 32) and at
//    (1, 12, 512, 512, 64) causal.
// With libtorch (TESSERA_BENCH_WITH_TORCH) the same cases run through ATen's
// autograd in the same process; the summary prints ns per op and the ratios.
// Benchmarks only: nothing here asserts a time.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "tessera/autograd.hpp"
#include "tessera/tessera.hpp"

#ifdef TESSERA_BENCH_WITH_TORCH
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/version.h>
#endif

namespace {

using tessera::Tensor;

constexpr int kChain = 100;

void BM_TesseraAdd1(benchmark::State& state) {
  Tensor a = tessera::tensor({1.0f});
  const Tensor b = tessera::tensor({2.0f});
  for (auto _ : state) {
    Tensor c = a + b;
    benchmark::DoNotOptimize(c.get());
  }
}

void BM_TesseraAdd1RequiresGrad(benchmark::State& state) {
  Tensor a = tessera::tensor({1.0f});
  a.requires_grad_();
  const Tensor b = tessera::tensor({2.0f});
  for (auto _ : state) {
    Tensor c = a + b;
    benchmark::DoNotOptimize(c.get());
  }
}

void BM_TesseraChainBackward(benchmark::State& state) {
  Tensor x = tessera::tensor({1.0f});
  x.requires_grad_();
  for (auto _ : state) {
    Tensor y = x;
    for (int i = 0; i < kChain; ++i) y = y * 1.0001;
    y.backward();
  }
  state.counters["ns/op"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * kChain,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

using tessera::detail::value;

void BM_TesseraConvTrain(benchmark::State& state) {
  tessera::Generator gen(1);
  Tensor x = tessera::randn({8, 32, 32, 32}, gen);
  Tensor w = tessera::randn({64, 32, 3, 3}, gen) * 0.05;
  Tensor b = tessera::zeros({64});
  x.requires_grad_();
  w.requires_grad_();
  b.requires_grad_();
  const int64_t one[2] = {1, 1};
  for (auto _ : state) {
    Tensor y =
        tessera::call_op("conv2d", {value(x), value(w), value(b), value(tessera::IntList(one, 2)),
                                    value(tessera::IntList(one, 2))});
    y.sum().backward();
    for (Tensor* t : {&x, &w, &b}) t->set_grad(Tensor());
  }
}

void BM_TesseraLayerNormTrain(benchmark::State& state) {
  tessera::Generator gen(2);
  Tensor x = tessera::randn({256, 1024}, gen);
  Tensor w = tessera::ones({1024});
  Tensor b = tessera::zeros({1024});
  for (Tensor* t : {&x, &w, &b}) t->requires_grad_();
  const int64_t n = 1024;
  for (auto _ : state) {
    Tensor y =
        tessera::call_op("layer_norm", {value(x), value(tessera::IntList(n)), value(w), value(b)});
    (y * y).sum().backward();
    for (Tensor* t : {&x, &w, &b}) t->set_grad(Tensor());
  }
}

// 8x64x56x56 through a 3x3 stride-2 padding-1 pool, fwd + sum + bwd.
template <bool kMax>
void BM_TesseraPoolTrain(benchmark::State& state) {
  tessera::Generator gen(3);
  Tensor x = tessera::randn({8, 64, 56, 56}, gen);
  x.requires_grad_();
  const int64_t k[2] = {3, 3}, s[2] = {2, 2}, p[2] = {1, 1};
  using tessera::IntList;
  for (auto _ : state) {
    Tensor y = kMax ? tessera::call_op("max_pool2d", {value(x), value(IntList(k, 2)),
                                                      value(IntList(s, 2)), value(IntList(p, 2))})
                    : tessera::call_op("avg_pool2d", {value(x), value(IntList(k, 2)),
                                                      value(IntList(s, 2)), value(IntList(p, 2))});
    y.sum().backward();
    x.set_grad(Tensor());
  }
}

// (B, H, L = S, E) of the attention steps, and whether causal.
struct AttnShape {
  int64_t b, h, l, e;
  bool causal;
};
constexpr AttnShape kAttn[2] = {{8, 12, 47, 32, false}, {1, 12, 512, 64, true}};

void BM_TesseraSdpaTrain(benchmark::State& state) {
  const AttnShape a = kAttn[state.range(0)];
  tessera::Generator gen(3);
  Tensor q = tessera::randn({a.b, a.h, a.l, a.e}, gen);
  Tensor k = tessera::randn({a.b, a.h, a.l, a.e}, gen);
  Tensor v = tessera::randn({a.b, a.h, a.l, a.e}, gen);
  for (Tensor* t : {&q, &k, &v}) t->requires_grad_();
  for (auto _ : state) {
    Tensor y = tessera::scaled_dot_product_attention(q, k, v, {}, 0.0, a.causal);
    (y * y).sum().backward();
    for (Tensor* t : {&q, &k, &v}) t->set_grad(Tensor());
  }
}

// Composed: backward with create_graph, where the formulas take their
// composed (differentiable) form - the softmax formulas' registry ops and
// cross_entropy's recomputed decomposition, i.e. what ran before the fused
// backward ops existed, plus the recording of those few ops.
template <bool Log, bool Composed>
void BM_TesseraSoftmaxTrain(benchmark::State& state) {
  tessera::Generator gen(3);
  Tensor x = tessera::randn({256, 1024}, gen);
  x.requires_grad_();
  for (auto _ : state) {
    Tensor y = Log ? tessera::log_softmax(x, -1) : tessera::softmax(x, -1);
    (y * y).sum().backward(Tensor(), false, Composed);
    x.set_grad(Tensor());
  }
}

template <bool Composed>
void BM_TesseraCrossEntropyTrain(benchmark::State& state) {
  tessera::Generator gen(4);
  Tensor x = tessera::randn({256, 1000}, gen);
  const Tensor target = tessera::randint(1000, {256}, gen);
  x.requires_grad_();
  for (auto _ : state) {
    tessera::cross_entropy(x, target).backward(Tensor(), false, Composed);
    x.set_grad(Tensor());
  }
}

#ifdef TESSERA_BENCH_WITH_TORCH
template <bool Log>
void BM_TorchSoftmaxTrain(benchmark::State& state) {
  at::Tensor x = at::randn({256, 1024});
  x.set_requires_grad(true);
  for (auto _ : state) {
    at::Tensor y = Log ? at::log_softmax(x, -1) : at::softmax(x, -1);
    (y * y).sum().backward();
    x.mutable_grad() = at::Tensor();
  }
}

void BM_TorchCrossEntropyTrain(benchmark::State& state) {
  at::Tensor x = at::randn({256, 1000});
  const at::Tensor target = at::randint(1000, {256}, at::kLong);
  x.set_requires_grad(true);
  for (auto _ : state) {
    at::cross_entropy_loss(x, target).backward();
    x.mutable_grad() = at::Tensor();
  }
}

template <bool kMax>
void BM_TorchPoolTrain(benchmark::State& state) {
  at::Tensor x = at::randn({8, 64, 56, 56});
  x.set_requires_grad(true);
  for (auto _ : state) {
    at::Tensor y = kMax ? at::max_pool2d(x, {3, 3}, {2, 2}, {1, 1})
                        : at::avg_pool2d(x, {3, 3}, {2, 2}, {1, 1});
    y.sum().backward();
    x.mutable_grad() = at::Tensor();
  }
}

void BM_TorchSdpaTrain(benchmark::State& state) {
  const AttnShape a = kAttn[state.range(0)];
  at::Tensor q = at::randn({a.b, a.h, a.l, a.e});
  at::Tensor k = at::randn({a.b, a.h, a.l, a.e});
  at::Tensor v = at::randn({a.b, a.h, a.l, a.e});
  for (at::Tensor* t : {&q, &k, &v}) t->set_requires_grad(true);
  for (auto _ : state) {
    at::Tensor y = at::scaled_dot_product_attention(q, k, v, {}, 0.0, a.causal);
    (y * y).sum().backward();
    for (at::Tensor* t : {&q, &k, &v}) t->mutable_grad() = at::Tensor();
  }
}

void BM_TorchConvTrain(benchmark::State& state) {
  at::Tensor x = at::randn({8, 32, 32, 32});
  at::Tensor w = at::randn({64, 32, 3, 3}) * 0.05;
  at::Tensor b = at::zeros({64});
  for (at::Tensor* t : {&x, &w, &b}) t->set_requires_grad(true);
  for (auto _ : state) {
    at::Tensor y = at::conv2d(x, w, b, 1, 1);
    y.sum().backward();
    for (at::Tensor* t : {&x, &w, &b}) t->mutable_grad() = at::Tensor();
  }
}

void BM_TorchLayerNormTrain(benchmark::State& state) {
  at::Tensor x = at::randn({256, 1024});
  at::Tensor w = at::ones({1024});
  at::Tensor b = at::zeros({1024});
  for (at::Tensor* t : {&x, &w, &b}) t->set_requires_grad(true);
  for (auto _ : state) {
    at::Tensor y = at::layer_norm(x, {1024}, w, b);
    (y * y).sum().backward();
    for (at::Tensor* t : {&x, &w, &b}) t->mutable_grad() = at::Tensor();
  }
}

void BM_TorchAdd1(benchmark::State& state) {
  at::Tensor a = at::full({1}, 1.0f);
  const at::Tensor b = at::full({1}, 2.0f);
  for (auto _ : state) {
    at::Tensor c = at::add(a, b);
    benchmark::DoNotOptimize(c.unsafeGetTensorImpl());
  }
}

void BM_TorchAdd1RequiresGrad(benchmark::State& state) {
  at::Tensor a = at::full({1}, 1.0f);
  a.set_requires_grad(true);
  const at::Tensor b = at::full({1}, 2.0f);
  for (auto _ : state) {
    at::Tensor c = at::add(a, b);
    benchmark::DoNotOptimize(c.unsafeGetTensorImpl());
  }
}

void BM_TorchChainBackward(benchmark::State& state) {
  at::Tensor x = at::full({1}, 1.0f);
  x.set_requires_grad(true);
  for (auto _ : state) {
    at::Tensor y = x;
    for (int i = 0; i < kChain; ++i) y = at::mul(y, 1.0001);
    y.backward();
  }
}
#endif

class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.error_occurred || run.iterations == 0) continue;
      const bool median = run.run_type == Run::RT_Aggregate && run.aggregate_name == "median";
      if (run.run_type == Run::RT_Aggregate && !median) continue;
      const double ns =
          run.GetAdjustedRealTime() / benchmark::GetTimeUnitMultiplier(run.time_unit) * 1e9;
      const std::string& args = run.run_name.args;
      auto& slot = results_[run.run_name.function_name + (args.empty() ? "" : "/" + args)];
      if (median || !slot.second) slot = {ns, median};
    }
    ConsoleReporter::ReportRuns(runs);
  }
  const double* find(const std::string& name) const {
    const auto it = results_.find(name);
    return it == results_.end() ? nullptr : &it->second.first;
  }

 private:
  std::map<std::string, std::pair<double, bool>> results_;
};

void row(const SummaryReporter& r, const char* label, const char* ours, const char* theirs,
         double per) {
  const double* t = r.find(ours);
  const double* p = r.find(theirs);
  std::printf("  %-44s", label);
  if (t) std::printf(" tessera %8.1f ns", *t / per);
  if (p) std::printf("   libtorch %8.1f ns", *p / per);
  if (t && p) std::printf("   tessera/libtorch %.2f", *t / *p);
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  tessera::set_num_threads(1);
#ifdef TESSERA_BENCH_WITH_TORCH
  at::set_num_threads(1);
#endif
  for (auto [name, fn] : std::vector<std::pair<const char*, void (*)(benchmark::State&)>>{
           {"BM_TesseraAdd1", BM_TesseraAdd1},
           {"BM_TesseraAdd1RequiresGrad", BM_TesseraAdd1RequiresGrad},
           {"BM_TesseraChainBackward", BM_TesseraChainBackward},
           {"BM_TesseraConvTrain", BM_TesseraConvTrain},
           {"BM_TesseraLayerNormTrain", BM_TesseraLayerNormTrain},
           {"BM_TesseraMaxPoolTrain", BM_TesseraPoolTrain<true>},
           {"BM_TesseraAvgPoolTrain", BM_TesseraPoolTrain<false>},
           {"BM_TesseraSoftmaxTrain", BM_TesseraSoftmaxTrain<false, false>},
           {"BM_TesseraSoftmaxTrainComposed", BM_TesseraSoftmaxTrain<false, true>},
           {"BM_TesseraLogSoftmaxTrain", BM_TesseraSoftmaxTrain<true, false>},
           {"BM_TesseraLogSoftmaxTrainComposed", BM_TesseraSoftmaxTrain<true, true>},
           {"BM_TesseraCrossEntropyTrain", BM_TesseraCrossEntropyTrain<false>},
           {"BM_TesseraCrossEntropyTrainComposed", BM_TesseraCrossEntropyTrain<true>},
#ifdef TESSERA_BENCH_WITH_TORCH
           {"BM_TorchConvTrain", BM_TorchConvTrain},
           {"BM_TorchLayerNormTrain", BM_TorchLayerNormTrain},
           {"BM_TorchMaxPoolTrain", BM_TorchPoolTrain<true>},
           {"BM_TorchAvgPoolTrain", BM_TorchPoolTrain<false>},
           {"BM_TorchSoftmaxTrain", BM_TorchSoftmaxTrain<false>},
           {"BM_TorchLogSoftmaxTrain", BM_TorchSoftmaxTrain<true>},
           {"BM_TorchCrossEntropyTrain", BM_TorchCrossEntropyTrain},
           {"BM_TorchAdd1", BM_TorchAdd1},
           {"BM_TorchAdd1RequiresGrad", BM_TorchAdd1RequiresGrad},
           {"BM_TorchChainBackward", BM_TorchChainBackward},
#endif
       }) {
    benchmark::RegisterBenchmark(name, fn)->UseRealTime()->MinWarmUpTime(0.1);
  }
  // Alternated per shape, so that both sides see the same load.
  for (int64_t shape = 0; shape < 2; ++shape) {
    benchmark::RegisterBenchmark("BM_TesseraSdpaTrain", BM_TesseraSdpaTrain)
        ->Arg(shape)
        ->UseRealTime()
        ->MinWarmUpTime(0.1);
#ifdef TESSERA_BENCH_WITH_TORCH
    benchmark::RegisterBenchmark("BM_TorchSdpaTrain", BM_TorchSdpaTrain)
        ->Arg(shape)
        ->UseRealTime()
        ->MinWarmUpTime(0.1);
#endif
  }
  SummaryReporter reporter;
  try {
    benchmark::RunSpecifiedBenchmarks(&reporter);
  } catch (const tessera::Error& error) {
    std::fprintf(stderr, "bench_autograd: %s: %s\n", error.code_name(), error.what());
    return 2;
  }
  benchmark::Shutdown();
  std::printf("\n== bench_autograd summary (1 thread each) ==\n");
#ifndef __OPTIMIZE__
  std::printf("WARNING: built without optimisation; configure with -DCMAKE_BUILD_TYPE=Release\n");
#endif
#ifdef TESSERA_BENCH_WITH_TORCH
  std::printf("libtorch %d.%d.%d\n", TORCH_VERSION_MAJOR, TORCH_VERSION_MINOR, TORCH_VERSION_PATCH);
#endif
  row(reporter, "add, 1 element, no grad", "BM_TesseraAdd1", "BM_TorchAdd1", 1);
  row(reporter, "add, 1 element, input requires grad", "BM_TesseraAdd1RequiresGrad",
      "BM_TorchAdd1RequiresGrad", 1);
  const double* g = reporter.find("BM_TesseraAdd1RequiresGrad");
  const double* n = reporter.find("BM_TesseraAdd1");
  if (g && n) std::printf("  %-44s tessera %8.1f ns\n", "recording cost per op", *g - *n);
  row(reporter, "100-op chain forward + backward, per op", "BM_TesseraChainBackward",
      "BM_TorchChainBackward", kChain);
  row(reporter, "conv2d training step (fwd + bwd), per step", "BM_TesseraConvTrain",
      "BM_TorchConvTrain", 1);
  row(reporter, "layer_norm training step (fwd + bwd), per step", "BM_TesseraLayerNormTrain",
      "BM_TorchLayerNormTrain", 1);
  row(reporter, "max_pool2d training step (fwd + bwd), per step", "BM_TesseraMaxPoolTrain",
      "BM_TorchMaxPoolTrain", 1);
  row(reporter, "avg_pool2d training step (fwd + bwd), per step", "BM_TesseraAvgPoolTrain",
      "BM_TorchAvgPoolTrain", 1);
  row(reporter, "sdpa (8,12,47,47,32) training step", "BM_TesseraSdpaTrain/0",
      "BM_TorchSdpaTrain/0", 1);
  row(reporter, "sdpa (1,12,512,512,64) causal training step", "BM_TesseraSdpaTrain/1",
      "BM_TorchSdpaTrain/1", 1);
  row(reporter, "softmax training step (fwd + bwd), per step", "BM_TesseraSoftmaxTrain",
      "BM_TorchSoftmaxTrain", 1);
  row(reporter, "log_softmax training step (fwd + bwd), per step", "BM_TesseraLogSoftmaxTrain",
      "BM_TorchLogSoftmaxTrain", 1);
  row(reporter, "cross_entropy training step (fwd + bwd), per step", "BM_TesseraCrossEntropyTrain",
      "BM_TorchCrossEntropyTrain", 1);
  row(reporter, "softmax step, composed backward", "BM_TesseraSoftmaxTrainComposed",
      "BM_TorchSoftmaxTrain", 1);
  row(reporter, "log_softmax step, composed backward", "BM_TesseraLogSoftmaxTrainComposed",
      "BM_TorchLogSoftmaxTrain", 1);
  row(reporter, "cross_entropy step, composed backward", "BM_TesseraCrossEntropyTrainComposed",
      "BM_TorchCrossEntropyTrain", 1);
  return 0;
}
