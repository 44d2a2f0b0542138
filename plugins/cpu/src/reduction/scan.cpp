// scan.cpp - the _scan kernel (CUMSUM, CUMPROD, LOGCUMSUMEXP, CUMMAX, CUMMIN:
// inclusive, along one dim, any strides) and the fused cummax / cummin
// kernels (values and indices in one pass).
//
// Accumulation: sums and products of integers wrap in 64 bits; float32 and
// float64 accumulate in float64, float16/bfloat16 in float32, complex in
// complex128 (each output is the running value rounded once).
// LOGCUMSUMEXP combines log(exp(a) + exp(b)) as max + log1p(exp(min - max)),
// exact for infinities (-inf is its identity). CUMMAX/CUMMIN propagate NaN;
// cummax/cummin indices follow PyTorch: an element equal to the running
// extreme (or a NaN) moves the index to it, so ties give the last index.
// Bool inputs (only through a direct _scan call; the core scans bools as
// int64): CUMSUM and CUMMAX are running or, CUMPROD and CUMMIN running and.
// Loops: per line (contiguous or strided), or blocks of adjacent lines
// scanned together when dim is outer (vectorised across lines). OpenMP over
// lines or blocks above kParallelMinElements.
#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <type_traits>

#include "../convert.hpp"
#include "../parallel.hpp"
#include "../pointwise_loop.hpp"
#include "lines.hpp"
#include "reduction_kernels.hpp"

namespace tessera::cpu {
namespace {

template <class T>
using scan_acc_t = std::conditional_t<
    is_integral_v<T>, uint64_t,
    std::conditional_t<
        is_complex_v<T>, std::complex<double>,
        std::conditional_t<std::is_same_v<T, bool>, bool,
                           std::conditional_t<is_reduced_float_v<T>, float, double>>>>;

// The running operation of code Code on element type T: accumulator A.
template <int Code, class T>
struct scanner {
  static constexpr bool kExtreme = Code == TSR_SCAN_CUMMAX || Code == TSR_SCAN_CUMMIN;
  using A = std::conditional_t<kExtreme, compute_t<T>, scan_acc_t<T>>;

  static A load(T x) noexcept {
    if constexpr (std::is_same_v<A, uint64_t>) {
      return static_cast<uint64_t>(static_cast<int64_t>(x));
    } else if constexpr (is_complex_v<T>) {
      return A(x.real(), x.imag());
    } else {
      return static_cast<A>(static_cast<compute_t<T>>(x));
    }
  }

  static A step(A acc, A x) noexcept {
    if constexpr (std::is_same_v<T, bool>) {
      if constexpr (Code == TSR_SCAN_CUMPROD || Code == TSR_SCAN_CUMMIN) {
        return acc && x;
      } else {
        return acc || x;
      }
    } else if constexpr (Code == TSR_SCAN_CUMSUM) {
      return acc + x;
    } else if constexpr (Code == TSR_SCAN_CUMPROD) {
      return acc * x;
    } else if constexpr (Code == TSR_SCAN_CUMMAX) {
      return (x > acc || nan_of(x)) ? x : acc;
    } else if constexpr (Code == TSR_SCAN_CUMMIN) {
      return (x < acc || nan_of(x)) ? x : acc;
    } else {  // LOGCUMSUMEXP (floating A only)
      if constexpr (std::is_floating_point_v<A>) {
        if (nan_of(acc) || nan_of(x)) return std::numeric_limits<A>::quiet_NaN();
        const A hi = std::max(acc, x);
        const A lo = std::min(acc, x);
        if (lo == -std::numeric_limits<A>::infinity() || hi == std::numeric_limits<A>::infinity())
          return hi;
        return hi + std::log1p(std::exp(lo - hi));
      } else {
        return acc;
      }
    }
  }

  static T store(A acc) noexcept {
    if constexpr (std::is_same_v<A, uint64_t>) {
      return static_cast<T>(acc);  // modular
    } else {
      return convert<T>(acc);
    }
  }
};

template <class S, class T>
void scan_line(const char* in, char* out, int64_t n, int64_t in_step, int64_t out_step) noexcept {
  using A = typename S::A;
  A acc = S::load(*reinterpret_cast<const T*>(in));
  *reinterpret_cast<T*>(out) = S::store(acc);
  for (int64_t i = 1; i < n; ++i) {
    acc = S::step(acc, S::load(*reinterpret_cast<const T*>(in + i * in_step)));
    *reinterpret_cast<T*>(out + i * out_step) = S::store(acc);
  }
}

template <class S, class T>
void scan_lines(const tsr_plugin_context& context, const line_layout<2>& l,
                char* const (&base)[2]) {
  using A = typename S::A;
  if (l.columns()) {
    constexpr int64_t kBlock = 512;
    const int64_t width_all = l.lines.inner_size();
    const int64_t blocks = (width_all + kBlock - 1) / kBlock;
    sdk::strided_layout<2> outer = l.lines;
    outer.ndim = l.lines.ndim - 1;
    const int64_t outer_count = l.line_count() / width_all;
    parallel_ranges(thread_count(context), outer_count * blocks, l.n * kBlock,
                    [&](int64_t begin, int64_t end) {
                      for (int64_t task = begin; task < end; ++task) {
                        const int64_t o = task / blocks;
                        const int64_t j0 = (task % blocks) * kBlock;
                        const int64_t width = std::min(kBlock, width_all - j0);
                        char* ptrs[2] = {nullptr, nullptr};
                        sdk::for_each_run(outer, base, o, o + 1, [&](char* const(&p)[2], int64_t) {
                          ptrs[0] = p[0];
                          ptrs[1] = p[1];
                        });
                        A acc[kBlock];
                        const T* x0 = reinterpret_cast<const T*>(ptrs[0]) + j0;
                        T* y0 = reinterpret_cast<T*>(ptrs[1]) + j0;
                        for (int64_t j = 0; j < width; ++j) {
                          acc[j] = S::load(x0[j]);
                          y0[j] = S::store(acc[j]);
                        }
                        for (int64_t k = 1; k < l.n; ++k) {
                          const T* x = reinterpret_cast<const T*>(ptrs[0] + k * l.step[0]) + j0;
                          T* y = reinterpret_cast<T*>(ptrs[1] + k * l.step[1]) + j0;
                          for (int64_t j = 0; j < width; ++j) {
                            acc[j] = S::step(acc[j], S::load(x[j]));
                            y[j] = S::store(acc[j]);
                          }
                        }
                      }
                    });
    return;
  }
  const int64_t in_inner = l.lines.inner_stride(0);
  const int64_t out_inner = l.lines.inner_stride(1);
  parallel_ranges(thread_count(context), l.line_count(), l.n, [&](int64_t begin, int64_t end) {
    sdk::for_each_run(l.lines, base, begin, end, [&](char* const(&p)[2], int64_t runs) {
      for (int64_t r = 0; r < runs; ++r) {
        scan_line<S, T>(p[0] + r * in_inner, p[1] + r * out_inner, l.n, l.step[0], l.step[1]);
      }
    });
  });
}

// cummax / cummin: values and indices.
template <bool Max, class T>
void cum_extreme_lines(const tsr_plugin_context& context, const line_layout<3>& l,
                       char* const (&base)[3]) {
  using C = compute_t<T>;
  auto take = [](C x, C best) {
    if constexpr (Max) {
      return x >= best || nan_of(x);
    } else {
      return x <= best || nan_of(x);
    }
  };
  if (l.columns()) {
    constexpr int64_t kBlock = 256;
    const int64_t width_all = l.lines.inner_size();
    const int64_t blocks = (width_all + kBlock - 1) / kBlock;
    sdk::strided_layout<3> outer = l.lines;
    outer.ndim = l.lines.ndim - 1;
    const int64_t outer_count = l.line_count() / width_all;
    parallel_ranges(thread_count(context), outer_count * blocks, l.n * kBlock,
                    [&](int64_t begin, int64_t end) {
                      for (int64_t task = begin; task < end; ++task) {
                        const int64_t o = task / blocks;
                        const int64_t j0 = (task % blocks) * kBlock;
                        const int64_t width = std::min(kBlock, width_all - j0);
                        char* ptrs[3] = {nullptr, nullptr, nullptr};
                        sdk::for_each_run(outer, base, o, o + 1, [&](char* const(&p)[3], int64_t) {
                          ptrs[0] = p[0];
                          ptrs[1] = p[1];
                          ptrs[2] = p[2];
                        });
                        C best[kBlock];
                        int64_t index[kBlock];
                        for (int64_t k = 0; k < l.n; ++k) {
                          const T* x = reinterpret_cast<const T*>(ptrs[0] + k * l.step[0]) + j0;
                          T* v = reinterpret_cast<T*>(ptrs[1] + k * l.step[1]) + j0;
                          int64_t* ix = reinterpret_cast<int64_t*>(ptrs[2] + k * l.step[2]) + j0;
                          for (int64_t j = 0; j < width; ++j) {
                            const C c = static_cast<C>(x[j]);
                            const bool t = k == 0 || take(c, best[j]);
                            best[j] = t ? c : best[j];
                            index[j] = t ? k : index[j];
                            v[j] = static_cast<T>(best[j]);
                            ix[j] = index[j];
                          }
                        }
                      }
                    });
    return;
  }
  const int64_t inner[3] = {l.lines.inner_stride(0), l.lines.inner_stride(1),
                            l.lines.inner_stride(2)};
  parallel_ranges(thread_count(context), l.line_count(), l.n, [&](int64_t begin, int64_t end) {
    sdk::for_each_run(l.lines, base, begin, end, [&](char* const(&p)[3], int64_t runs) {
      for (int64_t r = 0; r < runs; ++r) {
        const char* x = p[0] + r * inner[0];
        char* v = p[1] + r * inner[1];
        char* ix = p[2] + r * inner[2];
        C best = static_cast<C>(*reinterpret_cast<const T*>(x));
        int64_t index = 0;
        for (int64_t k = 0; k < l.n; ++k) {
          const C c = static_cast<C>(*reinterpret_cast<const T*>(x + k * l.step[0]));
          if (k == 0 || take(c, best)) {
            best = c;
            index = k;
          }
          *reinterpret_cast<T*>(v + k * l.step[1]) = static_cast<T>(best);
          *reinterpret_cast<int64_t*>(ix + k * l.step[2]) = index;
        }
      }
    });
  });
}

const char* scan_code_name(int64_t code) noexcept {
  static constexpr const char* names[] = {"CUMSUM", "CUMPROD", "LOGCUMSUMEXP", "CUMMAX", "CUMMIN"};
  return code >= 0 && code < TSR_SCAN_CODE_COUNT ? names[code] : "?";
}

void check_same_shape(const tsr_kernel_call& call, const tsr_tensor_desc& self,
                      const tsr_tensor_desc& out) {
  sdk::check_same_sizes(call, out, "out", self, "self");
}

template <bool Max>
void cum_extreme_kernel(const tsr_plugin_context& context, const tsr_kernel_call* raw_call) {
  const tsr_kernel_call& call = sdk::check_call(raw_call, 2, 2);
  const tsr_tensor_desc& self = sdk::tensor_arg(call, 0, "self");
  const int dim = resolved_dim_arg(call, 1, self.ndim);
  const tsr_tensor_desc& values = sdk::out_arg(call, 0);
  const tsr_tensor_desc& indices = sdk::out_arg(call, 1);
  sdk::check_dtype(call, values, "values", self.dtype);
  sdk::check_dtype(call, indices, "indices", TSR_INT64);
  check_same_shape(call, self, values);
  check_same_shape(call, self, indices);
  if (sdk::is_complex_dtype(self.dtype))
    sdk::throw_unsupported_dtype(call, "self", self.dtype, kPluginName);
  const tsr_tensor_desc* descs[3] = {&self, &values, &indices};
  const line_layout<3> l = make_lines<3>(descs, dim);
  if (l.line_count() == 0 || l.n == 0) return;
  char* const base[3] = {base_address(self), base_address(values), base_address(indices)};
  sdk::dispatch_dtype(self.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!is_complex_v<T>) cum_extreme_lines<Max, T>(context, l, base);
  });
}

}  // namespace

void scan_kernel(const tsr_plugin_context& context, const tsr_kernel_call* raw_call) {
  const tsr_kernel_call& call = sdk::check_call(raw_call, 3, 1);
  const tsr_tensor_desc& self = sdk::tensor_arg(call, 0, "self");
  const int64_t code = sdk::int_arg(call, 1, "op");
  const int dim = resolved_dim_arg(call, 2, self.ndim);
  const tsr_tensor_desc& out = sdk::out_arg(call, 0);
  if (code < 0 || code >= TSR_SCAN_CODE_COUNT) {
    sdk::throw_status(TSR_UNIMPLEMENTED, "%s: _scan code %lld is not implemented by this kernel",
                      sdk::op_name(call), static_cast<long long>(code));
  }
  sdk::check_dtype(call, out, "out", self.dtype);
  check_same_shape(call, self, out);
  const bool complex = sdk::is_complex_dtype(self.dtype);
  if ((code == TSR_SCAN_LOGCUMSUMEXP && !sdk::is_floating_dtype(self.dtype)) ||
      ((code == TSR_SCAN_CUMMAX || code == TSR_SCAN_CUMMIN) && complex)) {
    sdk::throw_status(TSR_UNIMPLEMENTED, "%s: _scan %s is not defined for dtype %s",
                      sdk::op_name(call), scan_code_name(code), sdk::dtype_name(self.dtype));
  }
  const tsr_tensor_desc* descs[2] = {&self, &out};
  const line_layout<2> l = make_lines<2>(descs, dim);
  if (l.line_count() == 0 || l.n == 0) return;
  char* const base[2] = {base_address(self), base_address(out)};
  sdk::dispatch_dtype(self.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    switch (code) {
      case TSR_SCAN_CUMSUM:
        scan_lines<scanner<TSR_SCAN_CUMSUM, T>, T>(context, l, base);
        break;
      case TSR_SCAN_CUMPROD:
        scan_lines<scanner<TSR_SCAN_CUMPROD, T>, T>(context, l, base);
        break;
      case TSR_SCAN_LOGCUMSUMEXP:
        if constexpr (sdk::is_floating_v<T>) {
          scan_lines<scanner<TSR_SCAN_LOGCUMSUMEXP, T>, T>(context, l, base);
        }
        break;
      case TSR_SCAN_CUMMAX:
        if constexpr (!is_complex_v<T>)
          scan_lines<scanner<TSR_SCAN_CUMMAX, T>, T>(context, l, base);
        break;
      default:
        if constexpr (!is_complex_v<T>)
          scan_lines<scanner<TSR_SCAN_CUMMIN, T>, T>(context, l, base);
        break;
    }
  });
}

void cummax_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call) {
  cum_extreme_kernel<true>(context, call);
}

void cummin_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call) {
  cum_extreme_kernel<false>(context, call);
}

}  // namespace tessera::cpu
