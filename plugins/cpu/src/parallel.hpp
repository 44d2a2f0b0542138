// parallel.hpp - the one way the CPU plugin's kernels go parallel.
//
// Work below kParallelMinElements runs inline on the calling thread: no OpenMP
// region, no allocation, so small calls cost nanoseconds. Larger work is split
// into one contiguous [begin, end) range per thread with `#pragma omp parallel
// for`; the same GNU OpenMP pool serves oneDNN. The body must not throw (an
// exception leaving an OpenMP region terminates the process): kernels validate
// everything before they get here.
#ifndef TESSERA_PLUGINS_CPU_PARALLEL_HPP_
#define TESSERA_PLUGINS_CPU_PARALLEL_HPP_

#include <omp.h>

#include <algorithm>
#include <cstdint>

#include "context.hpp"

namespace tessera::cpu {

// Elements (or element-sized steps of work) below which a loop stays serial.
inline constexpr int64_t kParallelMinElements = int64_t{1} << 16;

// The thread count kernels use: the "threads" option or OpenMP's default.
inline int thread_count(const tsr_plugin_context& context) noexcept {
  return context.threads.load(std::memory_order_relaxed);
}

// Makes the calling thread's OpenMP default match the plugin's thread count, so
// oneDNN (which reads omp_get_max_threads()) uses it too.
inline void apply_thread_count(const tsr_plugin_context& context) noexcept {
  const int threads = thread_count(context);
  if (omp_get_max_threads() != threads) omp_set_num_threads(threads);
}

// Calls body(begin, end) over [0, n), split between at most `threads` threads
// when n * cost_per_element reaches kParallelMinElements, else once inline.
template <class Body>
void parallel_ranges(int threads, int64_t n, int64_t cost_per_element, Body&& body) {
  if (n <= 0) return;
  const int64_t work = n * std::max<int64_t>(cost_per_element, 1);
  const int chunks =
      static_cast<int>(std::min<int64_t>({threads, n, work / (kParallelMinElements / 2)}));
  if (chunks <= 1 || work < kParallelMinElements || omp_in_parallel()) {
    body(int64_t{0}, n);
    return;
  }
#pragma omp parallel for schedule(static, 1) num_threads(chunks)
  for (int c = 0; c < chunks; ++c) {
    const int64_t begin = n * c / chunks;
    const int64_t end = n * (c + 1) / chunks;
    body(begin, end);
  }
}

}  // namespace tessera::cpu

#endif  // TESSERA_PLUGINS_CPU_PARALLEL_HPP_
