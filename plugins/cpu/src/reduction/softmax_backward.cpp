// softmax_backward.cpp - fused _softmax_backward_data and
// _log_softmax_backward_data kernels (the definition and the dtype contract
// are in core/ops/reduction/softmax_backward.cpp):
//   softmax:     grad_input = y (g - sum(g y))
//   log_softmax: grad_input = g - exp(y) sum(g)
// per line along `dim`, g = grad_output, y = the forward's output.
//
// Loops, as the forward kernels' (softmax.cpp): contiguous float32 lines in
// two sweeps (the sum, then the result; the AVX-512 or AVX2+FMA body of
// softmax_backward_lines.hpp where the processor and the plugin's "isa" option
// allow) - a line of a few thousand elements stays in L1/L2, so each input is
// read from memory once; lines along an outer dim in blocks of 64 adjacent
// lines (vectorised across them); any other layout or dtype gathers the line
// into float32 (float64 for float64) buffers, computes there and rounds once
// into the result's dtype (float16/bfloat16 results of float32 gradients: the
// backward of a half_to_float softmax). Sums accumulate in float64 off the
// AVX bodies. OpenMP over lines, as the forward.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "../convert.hpp"
#include "../isa.hpp"
#include "../parallel.hpp"
#include "../pointwise_loop.hpp"
#include "lines.hpp"
#include "reduction_kernels.hpp"
#include "softmax_backward_lines.hpp"

namespace tessera::cpu {
namespace {

// One line in the compute type C, contiguous buffers (out may alias g).
template <bool Log, class C>
void backward_line(const C* g, const C* y, C* out, int64_t n) noexcept {
  constexpr int kLanes = 8;
  double lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) {
      lanes[l] += Log ? static_cast<double>(g[i + l])
                      : static_cast<double>(g[i + l]) * static_cast<double>(y[i + l]);
    }
  }
  for (; i < n; ++i) lanes[0] += Log ? static_cast<double>(g[i]) : static_cast<double>(g[i] * y[i]);
  double total = 0;
  for (double v : lanes) total += v;
  const C s = static_cast<C>(total);
  if constexpr (Log) {
    for (int64_t k = 0; k < n; ++k) out[k] = g[k] - std::exp(y[k]) * s;
  } else {
#pragma omp simd
    for (int64_t k = 0; k < n; ++k) out[k] = y[k] * (g[k] - s);
  }
}

// Blocks of adjacent lines along an outer dim: element k of line j at
// base + k * step + j elements.
template <bool Log, class T, class O>
void backward_columns(const char* gb, const char* yb, char* ob, int64_t n, const int64_t (&step)[3],
                      int64_t width) noexcept {
  using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
  constexpr int64_t kBlock = 64;
  double s[kBlock] = {};
  for (int64_t k = 0; k < n; ++k) {
    const T* g = reinterpret_cast<const T*>(gb + k * step[0]);
    const T* y = reinterpret_cast<const T*>(yb + k * step[1]);
    for (int64_t j = 0; j < width; ++j) {
      const double gv = static_cast<double>(static_cast<C>(g[j]));
      s[j] += Log ? gv : gv * static_cast<double>(static_cast<C>(y[j]));
    }
  }
  C sc[kBlock];
  for (int64_t j = 0; j < width; ++j) sc[j] = static_cast<C>(s[j]);
  for (int64_t k = 0; k < n; ++k) {
    const T* g = reinterpret_cast<const T*>(gb + k * step[0]);
    const T* y = reinterpret_cast<const T*>(yb + k * step[1]);
    O* out = reinterpret_cast<O*>(ob + k * step[2]);
    for (int64_t j = 0; j < width; ++j) {
      const C gv = static_cast<C>(g[j]);
      const C yv = static_cast<C>(y[j]);
      out[j] = convert<O>(Log ? gv - std::exp(yv) * sc[j] : yv * (gv - sc[j]));
    }
  }
}

template <bool Log, class T, class O>
void backward_lines(const tsr_plugin_context& context, const line_layout<3>& l,
                    char* const (&base)[3]) {
  using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const int threads = thread_count(context);
  if (l.columns()) {
    constexpr int64_t kBlock = 64;
    const int64_t width_all = l.lines.inner_size();
    const int64_t blocks = (width_all + kBlock - 1) / kBlock;
    sdk::strided_layout<3> outer = l.lines;
    outer.ndim = l.lines.ndim - 1;
    const int64_t outer_count = l.line_count() / width_all;
    parallel_ranges(threads, outer_count * blocks, l.n * kBlock * 4,
                    [&](int64_t begin, int64_t end) {
                      for (int64_t task = begin; task < end; ++task) {
                        const int64_t o = task / blocks;
                        const int64_t j0 = (task % blocks) * kBlock;
                        char* ptrs[3] = {nullptr, nullptr, nullptr};
                        sdk::for_each_run(outer, base, o, o + 1, [&](char* const(&p)[3], int64_t) {
                          for (int k = 0; k < 3; ++k) ptrs[k] = p[k];
                        });
                        const auto in_off = j0 * static_cast<int64_t>(sizeof(T));
                        backward_columns<Log, T, O>(ptrs[0] + in_off, ptrs[1] + in_off,
                                                    ptrs[2] + j0 * static_cast<int64_t>(sizeof(O)),
                                                    l.n, l.step, std::min(kBlock, width_all - j0));
                      }
                    });
    return;
  }
  int64_t inner[3];
  for (size_t k = 0; k < 3; ++k) inner[k] = l.lines.inner_stride(k);
  constexpr bool kDirect = std::is_same_v<T, C> && std::is_same_v<O, C>;
  const bool direct = kDirect && l.contiguous_lines();
  [[maybe_unused]] const bool avx2 = std::is_same_v<T, float> && direct && use_avx2(context);
  [[maybe_unused]] const bool avx512 = std::is_same_v<T, float> && direct && use_avx512(context);
  std::atomic<bool> out_of_memory{false};
  parallel_ranges(threads, l.line_count(), l.n * 6, [&](int64_t begin, int64_t end) {
    std::vector<C> buffer;
    try {
      buffer.resize(direct ? 0 : static_cast<size_t>(2 * l.n));
    } catch (...) {  // nothing may leave an OpenMP region
      out_of_memory = true;
      return;
    }
    sdk::for_each_run(l.lines, base, begin, end, [&](char* const(&p)[3], int64_t runs) {
      for (int64_t r = 0; r < runs; ++r) {
        const char* g = p[0] + r * inner[0];
        const char* y = p[1] + r * inner[1];
        char* out = p[2] + r * inner[2];
        if constexpr (kDirect) {
          if (direct) {
            const C* gc = reinterpret_cast<const C*>(g);
            const C* yc = reinterpret_cast<const C*>(y);
            C* oc = reinterpret_cast<C*>(out);
#if TESSERA_CPU_HAVE_AVX512
            if constexpr (std::is_same_v<C, float>) {
              if (avx512) {
                if constexpr (Log) {
                  avx512::log_softmax_backward_line(gc, yc, oc, l.n);
                } else {
                  avx512::softmax_backward_line(gc, yc, oc, l.n);
                }
                continue;
              }
              if (avx2) {
                if constexpr (Log) {
                  avx2::log_softmax_backward_line(gc, yc, oc, l.n);
                } else {
                  avx2::softmax_backward_line(gc, yc, oc, l.n);
                }
                continue;
              }
            }
#endif
            backward_line<Log, C>(gc, yc, oc, l.n);
            continue;
          }
        }
        C* gbuf = buffer.data();
        C* ybuf = buffer.data() + l.n;
        for (int64_t i = 0; i < l.n; ++i) {
          gbuf[i] = static_cast<C>(*reinterpret_cast<const T*>(g + i * l.step[0]));
          ybuf[i] = static_cast<C>(*reinterpret_cast<const T*>(y + i * l.step[1]));
        }
        backward_line<Log, C>(gbuf, ybuf, gbuf, l.n);
        for (int64_t i = 0; i < l.n; ++i) {
          *reinterpret_cast<O*>(out + i * l.step[2]) = convert<O>(gbuf[i]);
        }
      }
    });
  });
  if (out_of_memory) {
    sdk::throw_status(TSR_RESOURCE_EXHAUSTED,
                      "softmax backward: out of host memory for a %lld-element line",
                      static_cast<long long>(l.n));
  }
}

template <bool Log>
void softmax_backward_impl(const tsr_plugin_context& context, const tsr_kernel_call* raw_call) {
  const tsr_kernel_call& call = sdk::check_call(raw_call, 4, 1);
  const tsr_tensor_desc& grad = sdk::tensor_arg(call, 0, "grad_output");
  const tsr_tensor_desc& output = sdk::tensor_arg(call, 1, "output");
  const int dim = resolved_dim_arg(call, 2, grad.ndim);
  const std::optional<int32_t> input_dtype = sdk::optional_dtype_arg(call, 3, "input_dtype");
  const tsr_tensor_desc& out = sdk::out_arg(call, 0);
  if (!sdk::is_floating_dtype(grad.dtype))
    sdk::throw_unsupported_dtype(call, "grad_output", grad.dtype, kPluginName);
  sdk::check_dtype(call, output, "output", grad.dtype);
  sdk::check_same_sizes(call, output, "output", grad, "grad_output");
  sdk::check_same_sizes(call, out, "out", grad, "grad_output");
  if (!input_dtype)
    sdk::throw_status(TSR_INVALID_ARGUMENT, "%s: argument 'input_dtype' is None; pass a dtype",
                      sdk::op_name(call));
  const bool half_input =
      (*input_dtype == TSR_FLOAT16 || *input_dtype == TSR_BFLOAT16) && grad.dtype == TSR_FLOAT32;
  if (*input_dtype != grad.dtype && !half_input)
    sdk::throw_status(TSR_INVALID_ARGUMENT,
                      "%s: input_dtype %s does not fit grad_output of dtype %s (pass the same "
                      "dtype, or float16/bfloat16 with float32 gradients)",
                      sdk::op_name(call), sdk::dtype_name(*input_dtype),
                      sdk::dtype_name(grad.dtype));
  sdk::check_dtype(call, out, "out", *input_dtype);
  const tsr_tensor_desc* descs[3] = {&grad, &output, &out};
  const line_layout<3> l = make_lines<3>(descs, dim);
  if (l.line_count() == 0 || l.n == 0) return;
  char* const base[3] = {base_address(grad), base_address(output), base_address(out)};
  if (half_input) {
    if (*input_dtype == TSR_FLOAT16) {
      backward_lines<Log, float, sdk::half>(context, l, base);
    } else {
      backward_lines<Log, float, sdk::bfloat16>(context, l, base);
    }
    return;
  }
  sdk::dispatch_dtype(grad.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (sdk::is_floating_v<T>) backward_lines<Log, T, T>(context, l, base);
  });
}

}  // namespace

void softmax_backward_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call) {
  softmax_backward_impl<false>(context, call);
}

void log_softmax_backward_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call) {
  softmax_backward_impl<true>(context, call);
}

}  // namespace tessera::cpu
