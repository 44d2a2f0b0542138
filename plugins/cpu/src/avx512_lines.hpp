// avx512_lines.hpp - AVX-512 bodies of the CPU plugin's bandwidth-bound loops.
//
// Compiled per function for AVX-512 F/BW/DQ/VL + FMA and chosen per call by
// use_avx512(context) (isa.hpp); the rest of the plugin stays at the x86-64
// baseline. Next to the 16-lane arithmetic, what these bodies add over the
// AVX2 ones is the choice of *streaming* (non-temporal) stores for outputs
// too large to stay cached (`stream`, isa.hpp's stream_output): a normal store
// to a line not in cache first reads it (read-for-ownership), so an add moves
// 4 bytes per 3 it needs and a softmax 3 per 2. Streaming bodies end with an
// sfence, so their stores are ordered before whatever the caller does next
// (an OpenMP barrier, a stream event).
//
// Every function requires use_avx512() to have returned true on this process
// (calling one on a processor without AVX-512 is an illegal instruction),
// n >= 0, and pointers to n contiguous elements. They exist only on x86-64
// builds (TESSERA_CPU_HAVE_AVX512); call sites are guarded by it. None throws
// or allocates. Rounding:
//   - binary_line rounds as the baseline loop does (alpha * y, then the op:
//     two roundings, no fused multiply-add), so the bodies agree bit for bit;
//   - softmax and sums agree with the other bodies to within the float32
//     rounding of the exp approximation (within 3 ulp of exp) and of the
//     accumulation order (avx2_lines.hpp states the same bounds);
//   - layer_norm_row accumulates in 16 float32 lanes, as the baseline body.
#ifndef TESSERA_PLUGINS_CPU_AVX512_LINES_HPP_
#define TESSERA_PLUGINS_CPU_AVX512_LINES_HPP_

#include <cstdint>

namespace tessera::cpu::avx512 {

enum class arith { add, sub, mul, div };

// out = x op (alpha * y) for add/sub, x op y for mul/div (alpha ignored), over
// n float32 elements; y_scalar: y is one value broadcast to every element.
// out may alias x or y exactly.
void binary_line(arith op, const float* x, const float* y, bool y_scalar, float alpha, float* out,
                 int64_t n, bool stream) noexcept;

// y = softmax(x) over one line: exp(x - max) / sum, the sum accumulated in
// float32 lanes flushed into float64 every 1024 elements. A line containing
// NaN, or whose maximum is +-inf, is NaN throughout (as in PyTorch). y may
// alias x.
void softmax_line(const float* x, float* y, int64_t n, bool stream) noexcept;

// y = log_softmax(x) = x - max - log(sum exp(x - max)); NaN rules as above.
// y may alias x.
void log_softmax_line(const float* x, float* y, int64_t n, bool stream) noexcept;

// The sum of x[0..n): float32 input in blocks of 1024 elements summed in 64
// float32 lanes (16 additions each, then 2 levels combining them), the block
// sums added in float64 - the same error bound as avx2::sum; float64 input in
// 64 float64 lanes.
double sum(const float* x, int64_t n) noexcept;
double sum(const double* x, int64_t n) noexcept;

// One row of layer_norm: mean and biased variance (two passes, 16 float32
// lanes each), rstd = 1 / sqrt(var + eps), then y = (x - mean) * rstd * w + b
// (w, b may be null: 1 and 0). n >= 1; y may alias x exactly.
void layer_norm_row(const float* x, float* y, int64_t n, const float* w, const float* b, float eps,
                    float* out_mean, float* out_rstd, bool stream) noexcept;

}  // namespace tessera::cpu::avx512

#endif  // TESSERA_PLUGINS_CPU_AVX512_LINES_HPP_
