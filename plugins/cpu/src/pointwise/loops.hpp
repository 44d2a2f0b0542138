// loops.hpp - the elementwise loops of the pointwise kernels (_unary,
// _binary, where.self).
//
// A kernel picks a functor per (code, dtype) outside the loop; these templates
// run it over any strides:
//  - the operands' descriptors become one simplified sdk::strided_layout and
//    are visited as innermost-dim runs (a contiguous tensor is one run);
//  - a run whose operands are all contiguous (or broadcast scalars, stride 0)
//    takes a plain indexed loop the compiler vectorises (-O3, `omp simd`);
//    other runs take a strided loop;
//  - float16/bfloat16 operands are converted to float32 in blocks of kBlock
//    (F16C for float16), computed in float32 and rounded once on the way out;
//  - work above kParallelMinElements / cost elements is split between OpenMP
//    threads by element range (parallel.hpp); `cost` is a rough per-element
//    price (1 for an add, ~10 for a transcendental function).
// Functors take and return compute_t<T> (float for the 16-bit floats), or
// return bool for predicates; they must not throw. Outputs may alias an input
// exactly (in-place calls): every element is read before it is written.
#ifndef TESSERA_PLUGINS_CPU_POINTWISE_LOOPS_HPP_
#define TESSERA_PLUGINS_CPU_POINTWISE_LOOPS_HPP_

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "../convert.hpp"
#include "../half_convert.hpp"
#include "../parallel.hpp"
#include "../pointwise_loop.hpp"
#include "tessera/sdk/strided.hpp"

namespace tessera::cpu::pointwise {

inline constexpr int64_t kBlock = 256;

// Integer arithmetic that wraps modulo 2^bits happens in these unsigned types
// (no signed overflow, no promotion of 16-bit operands to int).
using sdk::wrap_t;

template <class T>
inline const T& at(const char* p, int64_t i, int64_t stride) noexcept {
  return *reinterpret_cast<const T*>(p + i * stride);
}
template <class T>
inline T& at(char* p, int64_t i, int64_t stride) noexcept {
  return *reinterpret_cast<T*>(p + i * stride);
}

// len elements of T at p (byte stride `stride`, 0 for a broadcast scalar) as
// float32 in buf.
template <class T>
inline void gather_float(const char* p, int64_t stride, int64_t len, float* buf) noexcept {
  if (stride == static_cast<int64_t>(sizeof(T))) {
    to_float(reinterpret_cast<const T*>(p), buf, len);
  } else {
    for (int64_t i = 0; i < len; ++i) buf[i] = static_cast<float>(at<T>(p, i, stride));
  }
}

// Stores len float32 values as O (float16/bfloat16, or a type the value converts to).
template <class O>
inline void scatter_float(const float* buf, char* p, int64_t stride, int64_t len) noexcept {
  if constexpr (is_reduced_float_v<O>) {
    if (stride == static_cast<int64_t>(sizeof(O))) {
      from_float(buf, reinterpret_cast<O*>(p), len);
      return;
    }
  }
  for (int64_t i = 0; i < len; ++i) at<O>(p, i, stride) = static_cast<O>(buf[i]);
}

// Visits the layout's runs, in parallel when the work is large enough.
template <size_t N, class Run>
void for_each_run(const tsr_plugin_context& context, const sdk::strided_layout<N>& layout,
                  char* const (&base)[N], int64_t cost, Run&& run) {
  const int64_t n = layout.numel();
  if (n == 0) return;
  parallel_ranges(thread_count(context), n, cost, [&](int64_t begin, int64_t end) {
    sdk::for_each_run(layout, base, begin, end, run);
  });
}

// ---- unary: out[i] = f(x[i]) ---------------------------------------------------

template <class T, class O, class F>
void unary_run(const F& f, char* o, const char* a, int64_t n, int64_t so, int64_t sa) noexcept {
  if constexpr (is_reduced_float_v<T>) {
    float xs[kBlock];
    for (int64_t i0 = 0; i0 < n; i0 += kBlock) {
      const int64_t len = std::min(kBlock, n - i0);
      gather_float<T>(a + i0 * sa, sa, len, xs);
      if constexpr (std::is_same_v<O, bool>) {
        for (int64_t i = 0; i < len; ++i) at<bool>(o + i0 * so, i, so) = f(xs[i]);
      } else {
        float rs[kBlock];
#pragma omp simd
        for (int64_t i = 0; i < len; ++i) rs[i] = f(xs[i]);
        scatter_float<O>(rs, o + i0 * so, so, len);
      }
    }
  } else {
    if (so == static_cast<int64_t>(sizeof(O)) && sa == static_cast<int64_t>(sizeof(T))) {
      O* out = reinterpret_cast<O*>(o);
      const T* x = reinterpret_cast<const T*>(a);
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) out[i] = static_cast<O>(f(x[i]));
      return;
    }
    for (int64_t i = 0; i < n; ++i) at<O>(o, i, so) = static_cast<O>(f(at<T>(a, i, sa)));
  }
}

// out (dtype O) = f(in (dtype T)) elementwise; descriptors validated by the caller.
template <class T, class O, class F>
void unary_apply(const tsr_plugin_context& context, const tsr_tensor_desc& out,
                 const tsr_tensor_desc& in, int64_t cost, const F& f) {
  const tsr_tensor_desc* descs[2] = {&out, &in};
  const auto layout = sdk::make_layout(descs);
  const int64_t so = layout.inner_stride(0), sa = layout.inner_stride(1);
  char* const base[2] = {base_address(out), base_address(in)};
  for_each_run(context, layout, base, cost,
               [&](char* const(&p)[2], int64_t n) { unary_run<T, O>(f, p[0], p[1], n, so, sa); });
}

// ---- binary: out[i] = f(x[i], y[i]) --------------------------------------------

template <class T, class O, class F>
void binary_run(const F& f, char* o, const char* a, const char* b, int64_t n, int64_t so,
                int64_t sa, int64_t sb) noexcept {
  constexpr int64_t S = sizeof(T);
  if constexpr (is_reduced_float_v<T>) {
    float xs[kBlock], ys[kBlock];
    for (int64_t i0 = 0; i0 < n; i0 += kBlock) {
      const int64_t len = std::min(kBlock, n - i0);
      gather_float<T>(a + i0 * sa, sa, len, xs);
      gather_float<T>(b + i0 * sb, sb, len, ys);
      if constexpr (std::is_same_v<O, bool>) {
        for (int64_t i = 0; i < len; ++i) at<bool>(o + i0 * so, i, so) = f(xs[i], ys[i]);
      } else {
        float rs[kBlock];
#pragma omp simd
        for (int64_t i = 0; i < len; ++i) rs[i] = f(xs[i], ys[i]);
        scatter_float<O>(rs, o + i0 * so, so, len);
      }
    }
  } else {
    if (so == static_cast<int64_t>(sizeof(O))) {
      O* out = reinterpret_cast<O*>(o);
      const T* x = reinterpret_cast<const T*>(a);
      const T* y = reinterpret_cast<const T*>(b);
      if (sa == S && sb == S) {
#pragma omp simd
        for (int64_t i = 0; i < n; ++i) out[i] = static_cast<O>(f(x[i], y[i]));
        return;
      }
      if (sa == S && sb == 0) {
        const T yv = *y;
#pragma omp simd
        for (int64_t i = 0; i < n; ++i) out[i] = static_cast<O>(f(x[i], yv));
        return;
      }
      if (sa == 0 && sb == S) {
        const T xv = *x;
#pragma omp simd
        for (int64_t i = 0; i < n; ++i) out[i] = static_cast<O>(f(xv, y[i]));
        return;
      }
    }
    for (int64_t i = 0; i < n; ++i)
      at<O>(o, i, so) = static_cast<O>(f(at<T>(a, i, sa), at<T>(b, i, sb)));
  }
}

template <class T, class O, class F>
void binary_apply(const tsr_plugin_context& context, const tsr_tensor_desc& out,
                  const tsr_tensor_desc& x, const tsr_tensor_desc& y, int64_t cost, const F& f) {
  const tsr_tensor_desc* descs[3] = {&out, &x, &y};
  const auto layout = sdk::make_layout(descs);
  const int64_t so = layout.inner_stride(0), sa = layout.inner_stride(1),
                sb = layout.inner_stride(2);
  char* const base[3] = {base_address(out), base_address(x), base_address(y)};
  for_each_run(context, layout, base, cost, [&](char* const(&p)[3], int64_t n) {
    binary_run<T, O>(f, p[0], p[1], p[2], n, so, sa, sb);
  });
}

}  // namespace tessera::cpu::pointwise

#endif  // TESSERA_PLUGINS_CPU_POINTWISE_LOOPS_HPP_
