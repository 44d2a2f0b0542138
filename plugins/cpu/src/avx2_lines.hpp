// avx2_lines.hpp - AVX2+FMA bodies of the CPU plugin's hottest contiguous loops.
//
// The plugin is built for the x86-64 baseline (SSE2) so that it loads on any
// x86-64 processor. The loops below carry most of the time of softmax,
// log_softmax and float sums over long contiguous lines, and at the baseline
// they are compute-bound (4-lane exp, 2-lane float64 accumulation); here they
// are compiled for AVX2+FMA (8 float lanes, fused multiply-add) and chosen per
// call by use_avx2(context) - the processor has both extensions and the
// plugin's "isa" option allows them (isa.hpp).
//
// Every function requires use_avx2() to have returned true on this process
// (calling one on a processor without AVX2 or FMA is an illegal instruction),
// n >= 0, and pointers to n contiguous elements. They exist only on x86-64
// builds (TESSERA_CPU_HAVE_AVX2 in isa.hpp); call sites are guarded by it. None throws or
// allocates. Results agree with the baseline bodies to within the float32 rounding of the exp
// approximation (both within 3 ulp of exp) and of the accumulation order.
#ifndef TESSERA_PLUGINS_CPU_AVX2_LINES_HPP_
#define TESSERA_PLUGINS_CPU_AVX2_LINES_HPP_

#include <cstdint>

namespace tessera::cpu::avx2 {

// y = softmax(x) over one line: exp(x - max) / sum, the sum accumulated in
// float32 lanes flushed into float64 every 1024 elements. A line containing
// NaN, or whose maximum is +-inf, is NaN throughout (as in PyTorch). y may
// alias x.
void softmax_line(const float* x, float* y, int64_t n) noexcept;

// y = log_softmax(x) = x - max - log(sum exp(x - max)); NaN rules as above.
// y may alias x.
void log_softmax_line(const float* x, float* y, int64_t n) noexcept;

// The sum of x[0..n): float32 input in blocks of 512 elements summed in 32
// float32 lanes (16 additions each), the block sums added in float64 - within
// a few ulp of the exact sum, where PyTorch's float32 cascade is within
// O(log n); float64 input in 32 float64 lanes.
double sum(const float* x, int64_t n) noexcept;
double sum(const double* x, int64_t n) noexcept;

}  // namespace tessera::cpu::avx2

#endif  // TESSERA_PLUGINS_CPU_AVX2_LINES_HPP_
