// softmax_backward_lines.hpp - AVX-512 and AVX2+FMA bodies of the softmax
// backward kernels (softmax_backward.cpp) for one contiguous float32 line:
//   softmax:     out = y (g - sum(g y))
//   log_softmax: out = g - exp(y) sum(g)
// and the row of cross_entropy_loss_backward (nn/cross_entropy_backward.cpp):
//   out = a softmax(x) - b w      (w null: every w_c is 1)
// with softmax as the forward kernels compute it (max, then exp(x - max)
// stored in out, then scaled: three sweeps, exp evaluated once), and the
// row's logsumexp for the cross_entropy_loss forward (nn/cross_entropy.cpp):
//   lse = m + log sum exp(x - m),  m = max x (0 when the max is infinite, as
//   the forward's baseline loop: an infinite logit then poisons the sum)
// Two sweeps over the line (the sum, then the result); a line of a few
// thousand elements stays in L1/L2 between them. The sum runs in 4 vectors of
// float32 lanes flushed into float64 every 4096 elements. exp is the
// Cody-Waite reduction + degree-6 polynomial of the forward kernels (within
// 3 ulp; results below exp(-87) flush to 0), and the bodies use fused
// multiply-adds, so they agree with the baseline loops to within float32
// rounding, not bit for bit.
//
// Each function requires use_avx512() / use_avx2() (isa.hpp) to have returned
// true in this process, n >= 0, and pointers to n contiguous floats; out may
// alias g exactly. They exist only on x86-64 builds (TESSERA_CPU_HAVE_AVX2 /
// TESSERA_CPU_HAVE_AVX512); call sites are guarded by them. None throws.
#ifndef TESSERA_PLUGINS_CPU_REDUCTION_SOFTMAX_BACKWARD_LINES_HPP_
#define TESSERA_PLUGINS_CPU_REDUCTION_SOFTMAX_BACKWARD_LINES_HPP_

#include <cstdint>

namespace tessera::cpu {

namespace avx512 {
void softmax_backward_line(const float* g, const float* y, float* out, int64_t n) noexcept;
void log_softmax_backward_line(const float* g, const float* y, float* out, int64_t n) noexcept;
void softmax_affine_line(const float* x, float* out, int64_t n, float a, const float* w,
                         float b) noexcept;
float logsumexp_line(const float* x, int64_t n) noexcept;
}  // namespace avx512

namespace avx2 {
void softmax_backward_line(const float* g, const float* y, float* out, int64_t n) noexcept;
void log_softmax_backward_line(const float* g, const float* y, float* out, int64_t n) noexcept;
void softmax_affine_line(const float* x, float* out, int64_t n, float a, const float* w,
                         float b) noexcept;
float logsumexp_line(const float* x, int64_t n) noexcept;
}  // namespace avx2

}  // namespace tessera::cpu

#endif  // TESSERA_PLUGINS_CPU_REDUCTION_SOFTMAX_BACKWARD_LINES_HPP_
