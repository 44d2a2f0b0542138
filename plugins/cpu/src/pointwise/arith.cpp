// binary.cpp - add.Tensor, sub.Tensor (with alpha), mul.Tensor, div.Tensor.
//
// Inputs arrive broadcast to the output's shape (stride 0 on broadcast dims)
// and in the output's dtype; outs[0] may alias an input exactly. Arithmetic:
//   - bool: add is logical or (alpha: a | (alpha & b)), mul logical and; no sub
//     or div;
//   - integers wrap modulo 2^bits, computed in unsigned types (no UB);
//   - float16/bfloat16 compute each element in float32 and round once (blocks
//     are converted in bulk, with F16C where the CPU has it);
//   - complex uses std::complex; div is true division (floating/complex only).
// Speed: each innermost run picks a vectorised loop when every operand is
// contiguous, or when one input is a broadcast scalar (stride 0); otherwise a
// strided loop. float32 runs of that kind take the AVX-512 body where the
// processor and the "isa" option allow (avx512_lines.hpp; bit-identical
// results), with streaming stores for an output larger than the last-level
// cache (isa.hpp). Nothing allocates; OpenMP only above kParallelMinElements,
// so a 1-element call costs a few nanoseconds of validation and dispatch.
#include <algorithm>
#include <complex>
#include <type_traits>

#include "../avx512_lines.hpp"
#include "../convert.hpp"
#include "../half_convert.hpp"
#include "../isa.hpp"
#include "../kernels.hpp"
#include "../pointwise_loop.hpp"
#include "tessera/sdk/dtype_traits.hpp"
#include "tessera/sdk/kernel_args.hpp"
#include "tessera/sdk/status.hpp"

namespace tessera::cpu {
namespace {

enum class binary_op { add, sub, mul, div };

using sdk::wrap_t;

template <binary_op Op, class T>
constexpr bool supports() {
  if constexpr (Op == binary_op::sub) return !std::is_same_v<T, bool>;
  if constexpr (Op == binary_op::div) return !std::is_integral_v<T>;  // bool is integral too
  return true;
}

// r = a op (alpha * b), or a op b when !HasAlpha, in compute_t<T>, stored as T.
template <binary_op Op, bool HasAlpha, class T>
struct binary_fn {
  using C = compute_t<T>;
  C alpha{};

  T operator()(T a, T b) const noexcept {
    if constexpr (std::is_same_v<T, bool>) {
      const bool y = HasAlpha ? (alpha && b) : b;
      return Op == binary_op::add ? (a || y) : (a && b);
    } else if constexpr (is_integral_v<T>) {
      using U = wrap_t<T>;
      const U x = static_cast<U>(a);
      U y = static_cast<U>(b);
      if constexpr (HasAlpha) y = static_cast<U>(static_cast<U>(alpha) * y);
      if constexpr (Op == binary_op::add) return static_cast<T>(x + y);
      if constexpr (Op == binary_op::sub) return static_cast<T>(x - y);
      return static_cast<T>(x * y);  // mul
    } else {
      return static_cast<T>(compute(static_cast<C>(a), static_cast<C>(b)));
    }
  }

  // The floating / complex arithmetic, in the compute type.
  C compute(C x, C y) const noexcept {
    if constexpr (HasAlpha) y = alpha * y;
    if constexpr (Op == binary_op::add) return x + y;
    if constexpr (Op == binary_op::sub) return x - y;
    if constexpr (Op == binary_op::mul) return x * y;
    if constexpr (Op == binary_op::div) return x / y;
  }
};

// float16/bfloat16 with contiguous or broadcast-scalar operands: convert
// blocks to float32 in bulk (F16C for float16), compute, convert back.
template <class T, class Fn>
void reduced_float_run(const Fn& fn, T* out, const T* x, const T* y, int64_t n, bool x_scalar,
                       bool y_scalar) noexcept {
  constexpr int64_t kBlock = 256;
  float xs[kBlock], ys[kBlock], rs[kBlock];
  const float xv = static_cast<float>(*x), yv = static_cast<float>(*y);
  for (int64_t i0 = 0; i0 < n; i0 += kBlock) {
    const int64_t len = std::min(kBlock, n - i0);
    if (!x_scalar) to_float(x + i0, xs, len);
    if (!y_scalar) to_float(y + i0, ys, len);
    if (x_scalar) {
#pragma omp simd
      for (int64_t i = 0; i < len; ++i) rs[i] = fn.compute(xv, ys[i]);
    } else if (y_scalar) {
#pragma omp simd
      for (int64_t i = 0; i < len; ++i) rs[i] = fn.compute(xs[i], yv);
    } else {
#pragma omp simd
      for (int64_t i = 0; i < len; ++i) rs[i] = fn.compute(xs[i], ys[i]);
    }
    from_float(rs, out + i0, len);
  }
}

// How a kernel call may run its float32 runs: the AVX-512 body or not, and
// whether that body streams its stores (isa.hpp).
struct float_path {
  bool avx512 = false;
  bool stream = false;
};

#if TESSERA_CPU_HAVE_AVX512
constexpr avx512::arith avx512_op(binary_op op) noexcept {
  switch (op) {
    case binary_op::add:
      return avx512::arith::add;
    case binary_op::sub:
      return avx512::arith::sub;
    case binary_op::mul:
      return avx512::arith::mul;
    case binary_op::div:
      break;
  }
  return avx512::arith::div;
}

// Runs a float32 run on the AVX-512 body when its operands are contiguous (or
// `other` is a broadcast scalar); returns false, having done nothing, otherwise.
template <binary_op Op, bool HasAlpha>
bool avx512_run(const binary_fn<Op, HasAlpha, float>& fn, char* o, const char* a, const char* b,
                int64_t n, int64_t sa, int64_t sb, bool stream) noexcept {
  constexpr int64_t S = sizeof(float);
  if (sa != S || (sb != S && sb != 0)) return false;
  avx512::binary_line(avx512_op(Op), reinterpret_cast<const float*>(a),
                      reinterpret_cast<const float*>(b), sb == 0, HasAlpha ? fn.alpha : 1.0f,
                      reinterpret_cast<float*>(o), n, stream);
  return true;
}
#endif

template <class T, class Fn>
void binary_run(const Fn& fn, char* o, const char* a, const char* b, int64_t n, int64_t so,
                int64_t sa, int64_t sb, [[maybe_unused]] float_path path) noexcept {
  constexpr int64_t S = sizeof(T);
  if (so == S) {
#if TESSERA_CPU_HAVE_AVX512
    if constexpr (std::is_same_v<T, float>) {
      if (path.avx512 && avx512_run(fn, o, a, b, n, sa, sb, path.stream)) return;
    }
#endif
    T* out = reinterpret_cast<T*>(o);
    const T* x = reinterpret_cast<const T*>(a);
    const T* y = reinterpret_cast<const T*>(b);
    if constexpr (is_reduced_float_v<T>) {
      if ((sa == S || sa == 0) && (sb == S || sb == 0) && n > 1) {
        reduced_float_run<T>(fn, out, x, y, n, sa == 0, sb == 0);
        return;
      }
    }
    if (sa == S && sb == S) {
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) out[i] = fn(x[i], y[i]);
      return;
    }
    if (sa == S && sb == 0) {
      const T yv = *y;
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) out[i] = fn(x[i], yv);
      return;
    }
    if (sa == 0 && sb == S) {
      const T xv = *x;
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) out[i] = fn(xv, y[i]);
      return;
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    *reinterpret_cast<T*>(o + i * so) =
        fn(*reinterpret_cast<const T*>(a + i * sa), *reinterpret_cast<const T*>(b + i * sb));
  }
}

template <binary_op Op>
void binary_kernel(const tsr_plugin_context& context, const tsr_kernel_call* raw_call) {
  constexpr bool kHasAlphaArg = Op == binary_op::add || Op == binary_op::sub;
  const tsr_kernel_call& call = sdk::check_call(raw_call, kHasAlphaArg ? 3 : 2, 1);
  const tsr_tensor_desc& self = sdk::tensor_arg(call, 0, "self");
  const tsr_tensor_desc& other = sdk::tensor_arg(call, 1, "other");
  const tsr_scalar* alpha = kHasAlphaArg ? &sdk::scalar_arg(call, 2, "alpha") : nullptr;
  const tsr_tensor_desc& out = sdk::out_arg(call, 0);
  sdk::check_same_sizes(call, self, "self", out, "out");
  sdk::check_same_sizes(call, other, "other", out, "out");
  sdk::check_dtype(call, self, "self", out.dtype);
  sdk::check_dtype(call, other, "other", out.dtype);

  // Small contiguous calls (1-element ones included) skip the layout machinery.
  const bool small_contiguous = sdk::numel(out) < kParallelMinElements && sdk::is_contiguous(out) &&
                                sdk::is_contiguous(self) && sdk::is_contiguous(other);

  sdk::dispatch_dtype(out.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!supports<Op, T>()) {
      sdk::throw_unsupported_dtype(call, "self", out.dtype, kPluginName);
    } else {
      float_path path;
      if constexpr (std::is_same_v<T, float>) {
        path.avx512 = use_avx512(context);
        path.stream = stream_output(context, sdk::numel(out) * static_cast<int64_t>(sizeof(T)));
      }
      auto run_with = [&](const auto& fn) {
        constexpr int64_t S = sizeof(T);
        if (small_contiguous) {
          binary_run<T>(fn, base_address(out), base_address(self), base_address(other),
                        sdk::numel(out), S, S, S, path);
          return;
        }
        const tsr_tensor_desc* descs[3] = {&out, &self, &other};
        const auto layout = sdk::make_layout(descs);
        const int64_t so = layout.inner_stride(0);
        const int64_t sa = layout.inner_stride(1);
        const int64_t sb = layout.inner_stride(2);
        char* const base[3] = {base_address(out), base_address(self), base_address(other)};
        for_each_element_run(context, layout, base, [&](char* const(&p)[3], int64_t n) {
          binary_run<T>(fn, p[0], p[1], p[2], n, so, sa, sb, path);
        });
      };
      if (alpha != nullptr && !sdk::scalar_is_one(*alpha)) {
        run_with(binary_fn<Op, true, T>{sdk::alpha_value<T, compute_t<T>>(call, *alpha)});
      } else {
        if (alpha != nullptr) (void)sdk::alpha_value<T, compute_t<T>>(call, *alpha);  // type check
        run_with(binary_fn<Op, false, T>{});
      }
    }
  });
}

}  // namespace

void add_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call) {
  binary_kernel<binary_op::add>(context, call);
}
void sub_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call) {
  binary_kernel<binary_op::sub>(context, call);
}
void mul_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call) {
  binary_kernel<binary_op::mul>(context, call);
}
void div_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call) {
  binary_kernel<binary_op::div>(context, call);
}

}  // namespace tessera::cpu
