// arg_reduce.cpp - the _arg_reduce kernel: ARGMAX, ARGMIN along one dim.
//
// Contract (opcodes.h): out is int64 in the keepdim layout (size 1, stride 0
// along `dim`); the result is the first index of the extreme value, a NaN
// being the extreme (its first index wins). Empty reductions are refused (the
// core checks first). Values compare in compute_t<T> (float for float16 and
// bfloat16).
// Loops: contiguous lines (dim innermost) in two passes - the extreme value
// with 16 vectorised lanes, then the first index holding it (a short scan that
// stops there); strided lines in one scalar pass; and, when dim is outer,
// blocks of adjacent lines updated together (vectorised across lines).
// OpenMP over lines or blocks above kParallelMinElements.
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "../convert.hpp"
#include "../parallel.hpp"
#include "../pointwise_loop.hpp"
#include "lines.hpp"
#include "reduction_kernels.hpp"

namespace tessera::cpu {
namespace {

// x replaces the current best: strictly more extreme, or the first NaN.
template <bool Max, class C>
inline bool better(C x, C best) noexcept {
  if constexpr (Max) {
    return x > best || (nan_of(x) && !nan_of(best));
  } else {
    return x < best || (nan_of(x) && !nan_of(best));
  }
}

template <bool Max, class T>
int64_t arg_line_strided(const char* p, int64_t n, int64_t step) noexcept {
  using C = compute_t<T>;
  C best = static_cast<C>(*reinterpret_cast<const T*>(p));
  int64_t index = 0;
  for (int64_t i = 1; i < n; ++i) {
    const C x = static_cast<C>(*reinterpret_cast<const T*>(p + i * step));
    if (better<Max>(x, best)) {
      best = x;
      index = i;
    }
  }
  return index;
}

template <bool Max, class T>
int64_t arg_line_contiguous(const T* x, int64_t n) noexcept {
  using C = compute_t<T>;
  if (n < 64 || is_reduced_float_v<T>) {
    return arg_line_strided<Max, T>(reinterpret_cast<const char*>(x), n, sizeof(T));
  }
  // Pass 1: the extreme value (NaN sticky), 16 lanes.
  constexpr int kLanes = 16;
  C lanes[kLanes];
  std::fill(lanes, lanes + kLanes, static_cast<C>(x[0]));
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) {
      const C v = static_cast<C>(x[i + l]);
      if constexpr (Max) {
        lanes[l] = (v > lanes[l] || nan_of(v)) ? v : lanes[l];
      } else {
        lanes[l] = (v < lanes[l] || nan_of(v)) ? v : lanes[l];
      }
    }
  }
  C best = lanes[0];
  for (int l = 1; l < kLanes; ++l) {
    if (better<Max>(lanes[l], best)) best = lanes[l];
  }
  for (; i < n; ++i) {
    if (better<Max>(static_cast<C>(x[i]), best)) best = static_cast<C>(x[i]);
  }
  // Pass 2: its first index.
  if (nan_of(best)) {
    for (int64_t j = 0; j < n; ++j) {
      if (nan_of(static_cast<C>(x[j]))) return j;
    }
  } else {
    for (int64_t j = 0; j < n; ++j) {
      if (static_cast<C>(x[j]) == best) return j;
    }
  }
  return 0;
}

template <bool Max, class T>
void arg_reduce_lines(const tsr_plugin_context& context, const line_layout<2>& l,
                      char* const (&base)[2]) {
  using C = compute_t<T>;
  const int threads = thread_count(context);
  const int64_t count = l.line_count();
  if (l.columns()) {
    // Blocks of adjacent lines, element k of each adjacent in memory.
    constexpr int64_t kBlock = 256;
    const int64_t width_all = l.lines.inner_size();
    const int64_t blocks = (width_all + kBlock - 1) / kBlock;
    sdk::strided_layout<2> outer = l.lines;
    outer.ndim = l.lines.ndim - 1;
    const int64_t outer_count = count / width_all;
    parallel_ranges(threads, outer_count * blocks, l.n * kBlock, [&](int64_t begin, int64_t end) {
      for (int64_t task = begin; task < end; ++task) {
        const int64_t o = task / blocks;
        const int64_t j0 = (task % blocks) * kBlock;
        const int64_t width = std::min(kBlock, width_all - j0);
        char* ptrs[2] = {nullptr, nullptr};
        sdk::for_each_run(outer, base, o, o + 1, [&](char* const(&p)[2], int64_t) {
          ptrs[0] = p[0];
          ptrs[1] = p[1];
        });
        const T* first = reinterpret_cast<const T*>(ptrs[0]) + j0;
        C best[kBlock];
        int64_t index[kBlock];
        for (int64_t j = 0; j < width; ++j) {
          best[j] = static_cast<C>(first[j]);
          index[j] = 0;
        }
        for (int64_t k = 1; k < l.n; ++k) {
          const T* row = reinterpret_cast<const T*>(ptrs[0] + k * l.step[0]) + j0;
          for (int64_t j = 0; j < width; ++j) {
            const C x = static_cast<C>(row[j]);
            const bool take = better<Max>(x, best[j]);
            best[j] = take ? x : best[j];
            index[j] = take ? k : index[j];
          }
        }
        int64_t* out = reinterpret_cast<int64_t*>(ptrs[1]) + j0;
        std::copy(index, index + width, out);
      }
    });
    return;
  }
  const int64_t in_inner = l.lines.inner_stride(0);
  const int64_t out_inner = l.lines.inner_stride(1);
  const bool contiguous = l.step[0] == static_cast<int64_t>(sizeof(T));
  parallel_ranges(threads, count, l.n, [&](int64_t begin, int64_t end) {
    sdk::for_each_run(l.lines, base, begin, end, [&](char* const(&p)[2], int64_t runs) {
      for (int64_t r = 0; r < runs; ++r) {
        const char* in = p[0] + r * in_inner;
        const int64_t index = contiguous
                                  ? arg_line_contiguous<Max, T>(reinterpret_cast<const T*>(in), l.n)
                                  : arg_line_strided<Max, T>(in, l.n, l.step[0]);
        *reinterpret_cast<int64_t*>(p[1] + r * out_inner) = index;
      }
    });
  });
}

}  // namespace

void arg_reduce_kernel(const tsr_plugin_context& context, const tsr_kernel_call* raw_call) {
  const tsr_kernel_call& call = sdk::check_call(raw_call, 4, 1);
  const tsr_tensor_desc& self = sdk::tensor_arg(call, 0, "self");
  const int64_t code = sdk::int_arg(call, 1, "op");
  const int dim = resolved_dim_arg(call, 2, self.ndim);
  (void)sdk::bool_arg(call, 3, "keepdim");  // outs[0] is keepdim-shaped
  const tsr_tensor_desc& out = sdk::out_arg(call, 0);
  if (code != TSR_ARG_REDUCE_ARGMAX && code != TSR_ARG_REDUCE_ARGMIN) {
    sdk::throw_status(TSR_UNIMPLEMENTED,
                      "%s: _arg_reduce code %lld is not implemented by this kernel",
                      sdk::op_name(call), static_cast<long long>(code));
  }
  sdk::check_dtype(call, out, "out", TSR_INT64);
  if (sdk::is_complex_dtype(self.dtype))
    sdk::throw_unsupported_dtype(call, "self", self.dtype, kPluginName);
  bool shape_ok = out.ndim == self.ndim;
  for (int d = 0; shape_ok && d < self.ndim; ++d) {
    shape_ok = out.sizes[d] == (d == dim ? 1 : self.sizes[d]);
  }
  if (!shape_ok) {
    sdk::throw_status(TSR_INVALID_ARGUMENT,
                      "%s: out must have self's shape with size 1 along dim %d (keepdim layout)",
                      sdk::op_name(call), dim);
  }
  const tsr_tensor_desc* descs[2] = {&self, &out};
  line_layout<2> l = make_lines<2>(descs, dim);
  if (l.line_count() == 0) return;
  if (l.n == 0) {
    sdk::throw_status(TSR_INVALID_ARGUMENT,
                      "%s: _arg_reduce along the empty dim %d has no result (the core must "
                      "refuse it)",
                      sdk::op_name(call), dim);
  }
  char* const base[2] = {base_address(self), base_address(out)};
  sdk::dispatch_dtype(self.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!is_complex_v<T>) {
      if (code == TSR_ARG_REDUCE_ARGMAX) {
        arg_reduce_lines<true, T>(context, l, base);
      } else {
        arg_reduce_lines<false, T>(context, l, base);
      }
    }
  });
}

}  // namespace tessera::cpu
