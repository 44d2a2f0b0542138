// recording_probe - a fixed workload for counting what recording costs in
// instructions and heap allocations, which a shared VM measures far more
// steadily than time (scripts/recording-cost runs it under callgrind).
//
//   recording_probe N plain|grad|linear
//
// runs N 1-element float32 adds `a + b`; with `grad`, `a` requires grad, so
// every add records a node (and drops it with the result). `linear` runs N
// linear(x, w, bias) on 1x1 operands that require grad: a composite (t +
// addmm, itself a composite of mm and add_), so it measures what recording
// through decompositions costs, the reachability check included
// (TESSERA_AUTOGRAD_REACHABILITY=0 leaves it out). Prints the heap
// allocations per add, counted by interposing malloc (glibc; not in
// sanitizer builds, whose runtimes own malloc).
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tessera/tessera.hpp"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TESSERA_PROBE_COUNTS_MALLOC 0
#else
#define TESSERA_PROBE_COUNTS_MALLOC 1
#endif

namespace {
std::atomic<long> g_mallocs{0};
}  // namespace

#if TESSERA_PROBE_COUNTS_MALLOC
extern "C" void* __libc_malloc(size_t size);  // glibc's own, for counting

extern "C" void* malloc(size_t size) {
  g_mallocs.fetch_add(1, std::memory_order_relaxed);
  return __libc_malloc(size);
}
#endif

int main(int argc, char** argv) {
  if (argc != 3 || (std::strcmp(argv[2], "plain") != 0 && std::strcmp(argv[2], "grad") != 0 &&
                    std::strcmp(argv[2], "linear") != 0)) {
    std::fprintf(stderr, "usage: recording_probe N plain|grad|linear\n");
    return 2;
  }
  const long n = std::atol(argv[1]);
  if (argv[2][0] == 'l') {
    tessera::Tensor x = tessera::tensor({1.0f}, {1, 1});
    tessera::Tensor w = tessera::tensor({2.0f}, {1, 1});
    tessera::Tensor bias = tessera::tensor({3.0f});
    for (tessera::Tensor* t : {&x, &w, &bias}) t->requires_grad_();
    auto linear = [&] {
      return tessera::call_op("linear", {tessera::detail::value(x), tessera::detail::value(w),
                                         tessera::detail::value(bias)});
    };
    for (int i = 0; i < 100; ++i) tessera::Tensor warm = linear();
    const long start = g_mallocs.load();
    for (long i = 0; i < n; ++i) tessera::Tensor y = linear();
    const long end = g_mallocs.load();
    if (TESSERA_PROBE_COUNTS_MALLOC)
      std::printf("linear: %.2f heap allocations per call\n",
                  n > 0 ? static_cast<double>(end - start) / static_cast<double>(n) : 0.0);
    return 0;
  }
  tessera::Tensor a = tessera::tensor({1.0f});
  const tessera::Tensor b = tessera::tensor({2.0f});
  if (argv[2][0] == 'g') a.requires_grad_();
  for (int i = 0; i < 100; ++i) tessera::Tensor warm = a + b;
  const long before = g_mallocs.load();
  for (long i = 0; i < n; ++i) tessera::Tensor c = a + b;
  const long after = g_mallocs.load();
  if (!TESSERA_PROBE_COUNTS_MALLOC) return 0;
  std::printf("%s: %.2f heap allocations per add\n", argv[2],
              n > 0 ? static_cast<double>(after - before) / static_cast<double>(n) : 0.0);
  return 0;
}
