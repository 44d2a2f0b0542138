// softmax.cpp - fused _softmax and _log_softmax kernels.
//
// Per line along `dim`: m = max (NaN sticky), then softmax = exp(x - m) / sum
// and log_softmax = x - m - log(sum), the sum of exp(x - m) accumulated in
// float64. A line with a NaN, or whose maximum is infinite, is NaN throughout
// (inf - inf), as in PyTorch. float32 uses a vectorisable exp (Cody-Waite
// reduction + degree-6 polynomial, within 3 ulp; results below exp(-87) flush
// to 0); float64 uses std::exp; float16/bfloat16 compute in float32 and round
// once, into float32 when half_to_float.
// Loops: contiguous float32/float64 lines in three passes over the line (max,
// exp and sum, scale; float32 in avx512_lines.cpp or avx2_lines.cpp where the processor allows) - a
// line of a few thousand elements stays in L1/L2, so memory is read once and written once; lines
// along an outer dim in blocks of 64 adjacent lines (vectorised across them); any other layout is
// gathered into a float buffer per line. OpenMP over lines above kParallelMinElements.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "../avx2_lines.hpp"
#include "../avx512_lines.hpp"
#include "../convert.hpp"
#include "../exp_constants.hpp"
#include "../isa.hpp"
#include "../parallel.hpp"
#include "../pointwise_loop.hpp"
#include "lines.hpp"
#include "reduction_kernels.hpp"

namespace tessera::cpu {
namespace {

// exp(x) for x <= 88.3 (larger x give inf; x < -87 gives 0; NaN stays NaN):
// exp_constants.hpp's reduction and polynomial, 2^n put into the exponent bits. Written once for a
// vector of 4 floats (SSE, the plugin's baseline) with GCC/Clang vector extensions - explicit
// vector compares and selects, which the compiler would not if-convert from scalar code without
// -fno-trapping-math
// - and used by the scalar wrapper for loop tails.
using float4 = float __attribute__((vector_size(16)));
using int4v = int32_t __attribute__((vector_size(16)));

[[gnu::always_inline]] inline float4 exp4(float4 x) noexcept {
  using namespace exp_poly;
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  constexpr float4 lo = {kLowest, kLowest, kLowest, kLowest};
  constexpr float4 hi = {88.3f, 88.3f, 88.3f, 88.3f};
  constexpr float kInf = std::numeric_limits<float>::infinity();
  constexpr float4 inf = {kInf, kInf, kInf, kInf};
  constexpr float4 zero = {};
  float4 xc = x > lo ? x : lo;  // NaN -> lo (fixed at the end)
  xc = xc < hi ? xc : hi;
  const float4 n = (xc * kLog2e + kRound) - kRound;
  float4 r = xc - n * kLn2Hi;
  r = r - n * kLn2Lo;
  float4 p = r * kPoly[0] + kPoly[1];
  for (int i = 2; i < 7; ++i) p = p * r + kPoly[i];
  const int4v bits = (__builtin_convertvector(n, int4v) + 127) << 23;
  float4 result = p * __builtin_bit_cast(float4, bits);
  result = x < lo ? zero : result;
  result = x > hi ? inf : result;
  return x != x ? x : result;
}

inline float exp_approx(float x) noexcept {
  const float4 v = {x, x, x, x};
  return exp4(v)[0];
}

// y[i] = exp(x[i] - m) for n contiguous floats (y may alias x).
inline void exp_shifted(const float* x, float* y, int64_t n, float m) noexcept {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    float4 u, v;
    std::memcpy(&u, x + i, sizeof u);
    std::memcpy(&v, x + i + 4, sizeof v);
    u = exp4(u - m);
    v = exp4(v - m);
    std::memcpy(y + i, &u, sizeof u);
    std::memcpy(y + i + 4, &v, sizeof v);
  }
  for (; i < n; ++i) y[i] = exp_approx(x[i] - m);
}

template <class C>
inline C exp_of(C x) noexcept {
  if constexpr (std::is_same_v<C, float>) {
    return exp_approx(x);
  } else {
    return std::exp(x);
  }
}

// y[i] = exp(x[i] - m) over a contiguous line.
template <class C>
inline void exp_line(const C* x, C* y, int64_t n, C m) noexcept {
  if constexpr (std::is_same_v<C, float>) {
    exp_shifted(x, y, n, m);
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = std::exp(x[i] - m);
  }
}

template <class C>
inline C max_sticky(C m, C v) noexcept {
  return (v > m || v != v) ? v : m;
}

// The maximum of n contiguous values (NaN sticky): vectors of 4 floats, or
// 16 scalar lanes for float64.
template <class C>
C line_max(const C* x, int64_t n) noexcept {
  int64_t i = 0;
  C m = -std::numeric_limits<C>::infinity();
  if constexpr (std::is_same_v<C, float>) {
    float4 a = m - float4{}, b = a;
    for (; i + 8 <= n; i += 8) {
      float4 u, v;
      std::memcpy(&u, x + i, sizeof u);
      std::memcpy(&v, x + i + 4, sizeof v);
      a = (u > a) | (u != u) ? u : a;
      b = (v > b) | (v != v) ? v : b;
    }
    for (int l = 0; l < 4; ++l) m = max_sticky(max_sticky(m, a[l]), b[l]);
  } else {
    constexpr int kLanes = 16;
    C lanes[kLanes];
    std::fill(lanes, lanes + kLanes, m);
    for (; i + kLanes <= n; i += kLanes) {
      for (int l = 0; l < kLanes; ++l) lanes[l] = max_sticky(lanes[l], x[i + l]);
    }
    for (int l = 0; l < kLanes; ++l) m = max_sticky(m, lanes[l]);
  }
  for (; i < n; ++i) m = max_sticky(m, x[i]);
  return m;
}

// The sum of n contiguous values in float64, 8 lanes.
template <class C>
double line_sum(const C* y, int64_t n) noexcept {
  constexpr int kLanes = 8;
  double lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) lanes[l] += static_cast<double>(y[i + l]);
  }
  for (; i < n; ++i) lanes[0] += static_cast<double>(y[i]);
  double s = 0;
  for (int l = 0; l < kLanes; ++l) s += lanes[l];
  return s;
}

// One contiguous line: y = softmax(x) or log_softmax(x). y may alias x.
template <bool Log, class C>
void softmax_line(const C* x, C* y, int64_t n) noexcept {
  const C m = line_max(x, n);
  if constexpr (Log) {
    // sum exp(x - m) in blocks through y as scratch (x is still needed).
    constexpr int64_t kBlock = 1024;
    C tmp[kBlock];
    double s = 0;
    for (int64_t b = 0; b < n; b += kBlock) {
      const int64_t len = std::min(kBlock, n - b);
      exp_line(x + b, tmp, len, m);
      s += line_sum(tmp, len);
    }
    const C shift = m + static_cast<C>(std::log(s));
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] - shift;
  } else {
    exp_line(x, y, n, m);
    const C inv = static_cast<C>(1.0 / line_sum(y, n));
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] *= inv;
  }
}

// Blocks of adjacent lines along an outer dim: element k of line j at
// x + k * step_x + j (in elements of T / O).
template <bool Log, class T, class O>
void softmax_columns(const char* xb, char* yb, int64_t n, int64_t step_x, int64_t step_y,
                     int64_t width) noexcept {
  using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
  constexpr int64_t kBlock = 64;
  C m[kBlock];
  double s[kBlock];
  C shift[kBlock];
  for (int64_t j = 0; j < width; ++j) {
    m[j] = -std::numeric_limits<C>::infinity();
    s[j] = 0;
  }
  for (int64_t k = 0; k < n; ++k) {
    const T* x = reinterpret_cast<const T*>(xb + k * step_x);
    for (int64_t j = 0; j < width; ++j) m[j] = max_sticky(m[j], static_cast<C>(x[j]));
  }
  for (int64_t k = 0; k < n; ++k) {
    const T* x = reinterpret_cast<const T*>(xb + k * step_x);
#pragma omp simd
    for (int64_t j = 0; j < width; ++j) s[j] += exp_of<C>(static_cast<C>(x[j]) - m[j]);
  }
  for (int64_t j = 0; j < width; ++j) {
    shift[j] = Log ? m[j] + static_cast<C>(std::log(s[j])) : static_cast<C>(1.0 / s[j]);
  }
  for (int64_t k = 0; k < n; ++k) {
    const T* x = reinterpret_cast<const T*>(xb + k * step_x);
    O* y = reinterpret_cast<O*>(yb + k * step_y);
    for (int64_t j = 0; j < width; ++j) {
      const C v = static_cast<C>(x[j]);
      const C r = Log ? v - shift[j] : exp_of<C>(v - m[j]) * shift[j];
      y[j] = convert<O>(r);
    }
  }
}

template <bool Log, class T, class O>
void softmax_lines(const tsr_plugin_context& context, const line_layout<2>& l,
                   char* const (&base)[2]) {
  using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const int threads = thread_count(context);
  if (l.columns()) {
    constexpr int64_t kBlock = 64;
    const int64_t width_all = l.lines.inner_size();
    const int64_t blocks = (width_all + kBlock - 1) / kBlock;
    sdk::strided_layout<2> outer = l.lines;
    outer.ndim = l.lines.ndim - 1;
    const int64_t outer_count = l.line_count() / width_all;
    parallel_ranges(
        threads, outer_count * blocks, l.n * kBlock * 4, [&](int64_t begin, int64_t end) {
          for (int64_t task = begin; task < end; ++task) {
            const int64_t o = task / blocks;
            const int64_t j0 = (task % blocks) * kBlock;
            char* ptrs[2] = {nullptr, nullptr};
            sdk::for_each_run(outer, base, o, o + 1, [&](char* const(&p)[2], int64_t) {
              ptrs[0] = p[0];
              ptrs[1] = p[1];
            });
            softmax_columns<Log, T, O>(ptrs[0] + j0 * static_cast<int64_t>(sizeof(T)),
                                       ptrs[1] + j0 * static_cast<int64_t>(sizeof(O)), l.n,
                                       l.step[0], l.step[1], std::min(kBlock, width_all - j0));
          }
        });
    return;
  }
  const int64_t in_inner = l.lines.inner_stride(0);
  const int64_t out_inner = l.lines.inner_stride(1);
  constexpr bool kDirect = std::is_same_v<T, C> && std::is_same_v<O, C>;
  const bool direct = kDirect && l.contiguous_lines();
  // Contiguous float32 lines (the common case) run the AVX-512 or AVX2+FMA
  // body where allowed; the AVX-512 one streams an output larger than the
  // last-level cache (isa.hpp).
  [[maybe_unused]] const bool avx2 = std::is_same_v<T, float> && direct && use_avx2(context);
  [[maybe_unused]] const bool avx512 = std::is_same_v<T, float> && direct && use_avx512(context);
  [[maybe_unused]] const bool stream =
      stream_output(context, l.line_count() * l.n * static_cast<int64_t>(sizeof(O)));
  std::atomic<bool> out_of_memory{false};
  parallel_ranges(threads, l.line_count(), l.n * 4, [&](int64_t begin, int64_t end) {
    std::vector<C> buffer;
    try {
      buffer.resize(direct ? 0 : static_cast<size_t>(l.n));
    } catch (...) {  // nothing may leave an OpenMP region
      out_of_memory = true;
      return;
    }
    sdk::for_each_run(l.lines, base, begin, end, [&](char* const(&p)[2], int64_t runs) {
      for (int64_t r = 0; r < runs; ++r) {
        const char* x = p[0] + r * in_inner;
        char* y = p[1] + r * out_inner;
        if constexpr (kDirect) {
#if TESSERA_CPU_HAVE_AVX2
          if constexpr (std::is_same_v<C, float>) {
            if (avx512) {
              if constexpr (Log) {
                avx512::log_softmax_line(reinterpret_cast<const float*>(x),
                                         reinterpret_cast<float*>(y), l.n, stream);
              } else {
                avx512::softmax_line(reinterpret_cast<const float*>(x), reinterpret_cast<float*>(y),
                                     l.n, stream);
              }
              continue;
            }
            if (avx2) {
              if constexpr (Log) {
                avx2::log_softmax_line(reinterpret_cast<const float*>(x),
                                       reinterpret_cast<float*>(y), l.n);
              } else {
                avx2::softmax_line(reinterpret_cast<const float*>(x), reinterpret_cast<float*>(y),
                                   l.n);
              }
              continue;
            }
          }
#endif
          if (direct) {
            softmax_line<Log, C>(reinterpret_cast<const C*>(x), reinterpret_cast<C*>(y), l.n);
            continue;
          }
        }
        for (int64_t i = 0; i < l.n; ++i) {
          buffer[i] = static_cast<C>(*reinterpret_cast<const T*>(x + i * l.step[0]));
        }
        softmax_line<Log, C>(buffer.data(), buffer.data(), l.n);
        for (int64_t i = 0; i < l.n; ++i) {
          *reinterpret_cast<O*>(y + i * l.step[1]) = convert<O>(buffer[i]);
        }
      }
    });
  });
  if (out_of_memory) {
    sdk::throw_status(TSR_RESOURCE_EXHAUSTED, "softmax: out of host memory for a %lld-element line",
                      static_cast<long long>(l.n));
  }
}

template <bool Log>
void softmax_kernel_impl(const tsr_plugin_context& context, const tsr_kernel_call* raw_call) {
  const tsr_kernel_call& call = sdk::check_call(raw_call, 3, 1);
  const tsr_tensor_desc& self = sdk::tensor_arg(call, 0, "self");
  const int dim = resolved_dim_arg(call, 1, self.ndim);
  const bool half_to_float = sdk::bool_arg(call, 2, "half_to_float");
  const tsr_tensor_desc& out = sdk::out_arg(call, 0);
  if (!sdk::is_floating_dtype(self.dtype))
    sdk::throw_unsupported_dtype(call, "self", self.dtype, kPluginName);
  const bool reduced = self.dtype == TSR_FLOAT16 || self.dtype == TSR_BFLOAT16;
  if (half_to_float && !reduced) {
    sdk::throw_status(TSR_INVALID_ARGUMENT,
                      "%s: half_to_float needs a float16 or bfloat16 input, got %s",
                      sdk::op_name(call), sdk::dtype_name(self.dtype));
  }
  sdk::check_dtype(call, out, "out", half_to_float ? TSR_FLOAT32 : self.dtype);
  sdk::check_same_sizes(call, out, "out", self, "self");
  const tsr_tensor_desc* descs[2] = {&self, &out};
  const line_layout<2> l = make_lines<2>(descs, dim);
  if (l.line_count() == 0 || l.n == 0) return;
  char* const base[2] = {base_address(self), base_address(out)};
  sdk::dispatch_dtype(self.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (sdk::is_floating_v<T>) {
      if constexpr (is_reduced_float_v<T>) {
        if (half_to_float) {
          softmax_lines<Log, T, float>(context, l, base);
          return;
        }
      }
      softmax_lines<Log, T, T>(context, l, base);
    }
  });
}

}  // namespace

void softmax_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call) {
  softmax_kernel_impl<false>(context, call);
}

void log_softmax_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call) {
  softmax_kernel_impl<true>(context, call);
}

}  // namespace tessera::cpu
