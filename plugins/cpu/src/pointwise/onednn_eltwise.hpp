// onednn_eltwise.hpp - float32 transcendental _unary codes through oneDNN's
// eltwise primitive (vectorised polynomial kernels, JIT-compiled per CPU).
//
// Measured on the development machine (one thread, 1M contiguous floats) the
// primitive beats the scalar libm loop 6x for exp and logistic, 4.5x for
// tanh, 2.3x for log and 19x for gelu_erf, so contiguous float32 calls of
// at least kChunk elements go through it. To avoid compiling a primitive per
// tensor size, one primitive of kChunk elements per (algorithm, parameters) is
// created once and cached; the call runs it over the whole chunks (split
// between threads, each with its own stream) and leaves the tail to the caller.
// Accuracy: oneDNN's float32 eltwise is within a few ulps of libm, inside the
// loose float32 tolerance of conformance/tolerances.hpp; infinities follow
// the functions' limits, and so does NaN except for exp (oneDNN gives +inf),
// whose chunks holding a NaN take the plain loop.
#ifndef TESSERA_PLUGINS_CPU_POINTWISE_ONEDNN_ELTWISE_HPP_
#define TESSERA_PLUGINS_CPU_POINTWISE_ONEDNN_ELTWISE_HPP_

#include <cstdint>

namespace tessera::cpu::pointwise {

inline constexpr int64_t kChunk = 8192;

// Computes elements [begin, begin + count) the plain way (when oneDNN fails
// while running a chunk).
using chunk_fallback = void (*)(void* context, int64_t begin, int64_t count) noexcept;

// dst[i] = f(src[i]) for i < n / kChunk * kChunk (src may equal dst), where f
// is _unary `code` with parameters p0..p2, with up to `threads` threads.
// Returns the number of elements done: 0 when oneDNN has no primitive for the
// code (nothing was touched; the caller computes everything). A chunk whose
// execution fails goes to `fallback`. Never throws.
int64_t onednn_eltwise(int code, float p0, float p1, float p2, const float* src, float* dst,
                       int64_t n, int threads, chunk_fallback fallback,
                       void* fallback_context) noexcept;

}  // namespace tessera::cpu::pointwise

#endif  // TESSERA_PLUGINS_CPU_POINTWISE_ONEDNN_ELTWISE_HPP_
