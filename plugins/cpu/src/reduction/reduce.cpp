// reduce.cpp - the _reduce kernel: SUM, PROD, MEAN, AMAX, AMIN, ANY, ALL over
// a dim list (abi/tessera/opcodes.h).
//
// Contract (plugin.h, opcodes.h): `dim` is resolved (sorted, unique,
// non-negative; empty only for a 0-d input); self and out share one dtype,
// except ANY/ALL whose out is bool; outs[0] has the input's ndim with size 1
// (stride 0) on reduced dims. The input's dims split into kept dims (one output
// element per index) and reduced dims, each simplified into a strided layout.
// Two loops, both templated per (code, dtype) so that nothing is switched
// inside them:
//   - per output element: walk the reduced dims in innermost runs, each
//     reduced with 16 independent lanes (vectorised, latency-hiding) in blocks
//     of 4096 whose results are combined into a wide accumulator (contiguous
//     float32/float64 sums: avx512::sum or avx2::sum where the processor
//     allows, isa.hpp);
//   - column reductions, when the innermost kept dim is contiguous and the
//     reduced dims are outer (a row-major matrix over dim 0): blocks of 1024
//     columns accumulate row after row, reading memory in order.
// Accumulators: sums of float32 in float64 (a 1M-element sum stays within an
// ulp or two of the exact one); float16/bfloat16 lanes in float32 (blocks added
// in float64); float64 in float64 lanes and blocks (cascaded); complex in
// complex128; integers in 64 bits wrapping. PROD multiplies in float64 (complex
// in complex128, integers wrapping in 64 bits); AMAX/AMIN compare in the
// compute type with NaN sticky; ANY/ALL or/and bytes. MEAN divides the wide sum
// by the reduced count (0 elements: NaN). Bool inputs: SUM and AMAX are ANY,
// PROD and AMIN are ALL. AMAX/AMIN of an empty reduction is refused (no
// identity; the core checks first).
// Parallel (OpenMP) above kParallelMinElements: over output elements when there
// are enough, else over chunks of the reduction with partial results combined
// in a fixed order (deterministic for a given thread count).
#include <algorithm>
#include <complex>
#include <limits>
#include <type_traits>

#include "../avx2_lines.hpp"
#include "../avx512_lines.hpp"
#include "../convert.hpp"
#include "../half_convert.hpp"
#include "../isa.hpp"
#include "../pointwise_loop.hpp"
#include "reduction_kernels.hpp"
#include "tessera/sdk/dtype_traits.hpp"
#include "tessera/sdk/kernel_args.hpp"
#include "tessera/sdk/op_checks.hpp"
#include "tessera/sdk/status.hpp"

namespace tessera::cpu {
namespace {

enum class rop { sum, mean, prod, amax, amin, any, all };

// Accumulation types of sums: `lane` inside a block, `wide` across blocks.
template <class T>
struct sum_types {
  using lane = std::conditional_t<
      is_integral_v<T>, uint64_t,
      std::conditional_t<is_complex_v<T>, std::complex<double>,
                         std::conditional_t<is_reduced_float_v<T>, float, double>>>;
  using wide =
      std::conditional_t<is_integral_v<T>, uint64_t,
                         std::conditional_t<is_complex_v<T>, std::complex<double>, double>>;
};

template <class T>
using prod_t =
    std::conditional_t<is_integral_v<T>, uint64_t,
                       std::conditional_t<is_complex_v<T>, std::complex<double>, double>>;

template <class A>
constexpr bool is_nan(A x) noexcept {
  if constexpr (std::is_floating_point_v<A>) {
    return x != x;
  } else {
    return false;
  }
}

// One reduction for element type T: the lane type L (inside a block), the
// wide type W (across blocks and threads), the output type O, and how
// elements combine. load() also accepts float for bulk-converted 16-bit data.
template <rop Op, class T>
struct reducer {
  static constexpr bool kSum = Op == rop::sum || Op == rop::mean;
  static constexpr bool kLogical = Op == rop::any || Op == rop::all;
  static constexpr bool kExtreme = Op == rop::amax || Op == rop::amin;
  using L = std::conditional_t<
      kSum, typename sum_types<T>::lane,
      std::conditional_t<kLogical, uint8_t,
                         std::conditional_t<Op == rop::prod, prod_t<T>, compute_t<T>>>>;
  using W = std::conditional_t<kSum, typename sum_types<T>::wide, L>;
  using O = std::conditional_t<kLogical, bool, T>;

  static L identity() noexcept {
    if constexpr (kSum) {
      return L{};
    } else if constexpr (Op == rop::prod) {
      return L(1);
    } else if constexpr (Op == rop::any) {
      return 0;
    } else if constexpr (Op == rop::all) {
      return 1;
    } else if constexpr (Op == rop::amax) {
      return std::numeric_limits<L>::has_infinity ? -std::numeric_limits<L>::infinity()
                                                  : std::numeric_limits<L>::lowest();
    } else {
      return std::numeric_limits<L>::has_infinity ? std::numeric_limits<L>::infinity()
                                                  : std::numeric_limits<L>::max();
    }
  }

  template <class X>
  static L load(X x) noexcept {
    if constexpr (kLogical) {
      if constexpr (is_complex_v<X>) {
        return x.real() != 0 || x.imag() != 0;
      } else {
        return static_cast<compute_t<X>>(x) != compute_t<X>(0);
      }
    } else if constexpr (is_integral_v<X> && (kSum || Op == rop::prod)) {
      return static_cast<L>(static_cast<uint64_t>(static_cast<int64_t>(x)));
    } else if constexpr (is_complex_v<X>) {
      return L(x.real(), x.imag());
    } else {
      return static_cast<L>(static_cast<compute_t<X>>(x));
    }
  }

  template <class A>
  static A combine(A a, A b) noexcept {
    if constexpr (kSum) {
      return a + b;
    } else if constexpr (Op == rop::prod) {
      return a * b;
    } else if constexpr (Op == rop::any) {
      return a | b;
    } else if constexpr (Op == rop::all) {
      return a & b;
    } else if constexpr (Op == rop::amax) {
      return (b > a || is_nan(b)) ? b : a;  // NaN is sticky
    } else {
      return (b < a || is_nan(b)) ? b : a;
    }
  }

  static O finish(W w, int64_t count) noexcept {
    if constexpr (kLogical) {
      return w != 0;
    } else if constexpr (is_integral_v<T>) {
      return static_cast<T>(w);  // modular
    } else if constexpr (Op == rop::mean) {
      return convert<T>(w / static_cast<double>(count));
    } else {
      return convert<T>(w);
    }
  }
};

// Combines elements [i, len) in whole groups of 16 into 16 independent lanes
// (vectorised, and free of the latency chain); advances i.
template <class R, class X, int64_t Stride>
inline void lanes_run(const char* p, int64_t len, int64_t stride, typename R::L* lanes,
                      int64_t& i) noexcept {
  constexpr int kLanes = 16;
  const int64_t step = Stride ? Stride : stride;
  for (; i + kLanes <= len; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) {
      lanes[l] = R::combine(lanes[l], R::load(*reinterpret_cast<const X*>(p + (i + l) * step)));
    }
  }
}

// The reduction of n elements `stride` bytes apart starting at p; `isa`:
// contiguous float32/float64 sums may use avx512::sum or avx2::sum (isa.hpp).
template <class R, class T>
typename R::W reduce_run(const char* p, int64_t n, int64_t stride,
                         [[maybe_unused]] isa_level isa) noexcept {
  using L = typename R::L;
  using W = typename R::W;
#if TESSERA_CPU_HAVE_AVX2
  if constexpr (R::kSum && (std::is_same_v<T, float> || std::is_same_v<T, double>)) {
    if (stride == sizeof(T)) {
      if (isa >= isa_level::avx512) return avx512::sum(reinterpret_cast<const T*>(p), n);
      if (isa >= isa_level::avx2) return avx2::sum(reinterpret_cast<const T*>(p), n);
    }
  }
#endif
  constexpr int kLanes = 16;
  constexpr int64_t kBlock = 4096;
  W total = static_cast<W>(R::identity());
  for (int64_t b0 = 0; b0 < n; b0 += kBlock) {
    const int64_t len = std::min(kBlock, n - b0);
    const char* q = p + b0 * stride;
    L lanes[kLanes];
    std::fill(lanes, lanes + kLanes, R::identity());
    int64_t i = 0;
    if constexpr (is_reduced_float_v<T>) {
      if (stride == sizeof(T)) {
        // Bulk-convert (F16C for float16) and reduce the float32 copies.
        constexpr int64_t kChunk = 512;
        float converted[kChunk];
        for (; i + kChunk <= len; i += kChunk) {
          to_float(reinterpret_cast<const T*>(q + i * stride), converted, kChunk);
          int64_t c = 0;
          lanes_run<R, float, sizeof(float)>(reinterpret_cast<const char*>(converted), kChunk,
                                             sizeof(float), lanes, c);
        }
      }
    }
    if (stride == sizeof(T)) {
      lanes_run<R, T, sizeof(T)>(q, len, stride, lanes, i);
    } else {
      lanes_run<R, T, 0>(q, len, stride, lanes, i);
    }
    for (; i < len; ++i) {
      lanes[0] = R::combine(lanes[0], R::load(*reinterpret_cast<const T*>(q + i * stride)));
    }
    for (int width = kLanes / 2; width >= 1; width /= 2) {
      for (int l = 0; l < width; ++l) lanes[l] = R::combine(lanes[l], lanes[l + width]);
    }
    total = R::combine(total, static_cast<W>(lanes[0]));
  }
  return total;
}

// The reduction over the reduced layout of the elements starting at `base`,
// elements [begin, end) of the reduced iteration order.
template <class R, class T>
typename R::W reduce_range(const sdk::strided_layout<1>& reduced, char* base, int64_t begin,
                           int64_t end, isa_level isa) noexcept {
  using W = typename R::W;
  W total = static_cast<W>(R::identity());
  const int64_t stride = reduced.inner_stride(0);
  char* const bases[1] = {base};
  sdk::for_each_run(reduced, bases, begin, end, [&](char* const(&p)[1], int64_t n) {
    total = R::combine(total, reduce_run<R, T>(p[0], n, stride, isa));
  });
  return total;
}

struct reduce_plan {
  sdk::strided_layout<2> kept;     // operands: input, output
  sdk::strided_layout<1> reduced;  // operand: input
  int64_t outputs = 0;
  int64_t count = 0;  // reduced elements per output
};

template <class R, class T>
void reduce_per_output(const tsr_plugin_context& context, const reduce_plan& plan,
                       char* const (&base)[2]) {
  using W = typename R::W;
  using O = typename R::O;
  const int threads = thread_count(context);
  const isa_level isa = chosen_isa(context);
  const int64_t in_stride = plan.kept.inner_stride(0);
  const int64_t out_stride = plan.kept.inner_stride(1);
  const bool split_reduction =
      plan.outputs < 2 * threads && plan.count >= kParallelMinElements && threads > 1;
  auto reduce_outputs = [&](int64_t begin, int64_t end) {
    sdk::for_each_run(plan.kept, base, begin, end, [&](char* const(&p)[2], int64_t n) {
      for (int64_t j = 0; j < n; ++j) {
        char* in = p[0] + j * in_stride;
        W total;
        if (split_reduction) {
          constexpr int kMaxChunks = 64;
          const int chunks = std::min(threads, kMaxChunks);
          W partial[kMaxChunks];
#pragma omp parallel for schedule(static, 1) num_threads(chunks)
          for (int c = 0; c < chunks; ++c) {
            partial[c] = reduce_range<R, T>(plan.reduced, in, plan.count * c / chunks,
                                            plan.count * (c + 1) / chunks, isa);
          }
          total = partial[0];
          for (int c = 1; c < chunks; ++c) total = R::combine(total, partial[c]);
        } else {
          total = reduce_range<R, T>(plan.reduced, in, 0, plan.count, isa);
        }
        *reinterpret_cast<O*>(p[1] + j * out_stride) = R::finish(total, plan.count);
      }
    });
  };
  if (split_reduction) {
    reduce_outputs(0, plan.outputs);
  } else {
    parallel_ranges(threads, plan.outputs, plan.count, reduce_outputs);
  }
}

template <class R, class T>
void reduce_columns(const tsr_plugin_context& context, const reduce_plan& plan,
                    char* const (&base)[2]) {
  using W = typename R::W;
  using O = typename R::O;
  constexpr int64_t kColumns = 1024;  // accumulators stay in L1/L2 while rows stream in
  const int inner = plan.kept.ndim - 1;
  const int64_t columns = plan.kept.sizes[inner];
  const int64_t out_stride = plan.kept.strides[1][inner];
  // The kept dims other than the innermost, walked one element at a time.
  sdk::strided_layout<2> outer = plan.kept;
  outer.ndim = inner;
  const int64_t outer_count = plan.outputs / columns;
  const int64_t blocks = (columns + kColumns - 1) / kColumns;
  const int64_t row_stride = plan.reduced.inner_stride(0);
  parallel_ranges(thread_count(context), outer_count * blocks, plan.count * kColumns,
                  [&](int64_t begin, int64_t end) {
                    for (int64_t task = begin; task < end; ++task) {
                      const int64_t o = task / blocks;
                      const int64_t col0 = (task % blocks) * kColumns;
                      const int64_t width = std::min(kColumns, columns - col0);
                      char* ptrs[2] = {nullptr, nullptr};
                      sdk::for_each_run(outer, base, o, o + 1, [&](char* const(&p)[2], int64_t) {
                        ptrs[0] = p[0];
                        ptrs[1] = p[1];
                      });
                      W acc[kColumns];
                      std::fill(acc, acc + width, static_cast<W>(R::identity()));
                      char* const in[1] = {ptrs[0] + col0 * static_cast<int64_t>(sizeof(T))};
                      sdk::for_each_run(
                          plan.reduced, in, 0, plan.count, [&](char* const(&p)[1], int64_t rows) {
                            for (int64_t r = 0; r < rows; ++r) {
                              const T* row = reinterpret_cast<const T*>(p[0] + r * row_stride);
                              for (int64_t j = 0; j < width; ++j) {
                                acc[j] = R::combine(acc[j], static_cast<W>(R::load(row[j])));
                              }
                            }
                          });
                      for (int64_t j = 0; j < width; ++j) {
                        *reinterpret_cast<O*>(ptrs[1] + (col0 + j) * out_stride) =
                            R::finish(acc[j], plan.count);
                      }
                    }
                  });
}

template <rop Op, class T>
void run_reduction(const tsr_plugin_context& context, const reduce_plan& plan,
                   char* const (&base)[2], bool columns) {
  using R = reducer<Op, T>;
  if (columns) {
    reduce_columns<R, T>(context, plan, base);
  } else {
    reduce_per_output<R, T>(context, plan, base);
  }
}

const char* code_name(int64_t code) noexcept {
  static constexpr const char* names[] = {"SUM", "PROD", "MEAN", "AMAX", "AMIN", "ANY", "ALL"};
  return code >= 0 && code < TSR_REDUCE_CODE_COUNT ? names[code] : "?";
}

}  // namespace

void reduce_kernel(const tsr_plugin_context& context, const tsr_kernel_call* raw_call) {
  const tsr_kernel_call& call = sdk::check_call(raw_call, 4, 1);
  const tsr_tensor_desc& self = sdk::tensor_arg(call, 0, "self");
  const int64_t code = sdk::int_arg(call, 1, "op");
  (void)sdk::bool_arg(call, 3, "keepdim");  // the core reshapes; outs[0] is keepdim-shaped
  const tsr_tensor_desc& out = sdk::out_arg(call, 0);
  if (code < 0 || code >= TSR_REDUCE_CODE_COUNT) {
    sdk::throw_status(TSR_UNIMPLEMENTED, "%s: _reduce code %lld is not implemented by this kernel",
                      sdk::op_name(call), static_cast<long long>(code));
  }
  const bool logical = code == TSR_REDUCE_ANY || code == TSR_REDUCE_ALL;
  sdk::check_dtype(call, out, "out", logical ? TSR_BOOL : self.dtype);
  const bool complex = sdk::is_complex_dtype(self.dtype);
  if ((code == TSR_REDUCE_MEAN && !sdk::is_floating_dtype(self.dtype) && !complex) ||
      ((code == TSR_REDUCE_AMAX || code == TSR_REDUCE_AMIN) && complex)) {
    sdk::throw_status(TSR_UNIMPLEMENTED, "%s: _reduce %s is not defined for dtype %s",
                      sdk::op_name(call), code_name(code), sdk::dtype_name(self.dtype));
  }

  const sdk::reduced_dims reduced = sdk::reduced_dims_arg(call, 2, self);
  sdk::check_keepdim(call, self, out, reduced);
  const sdk::reduction_split split = sdk::split_reduction(self, out, reduced);
  const size_t in_size = sdk::element_size(self.dtype);
  const size_t out_size = sdk::element_size(out.dtype);
  reduce_plan plan;
  const int64_t* kept_strides[2] = {split.kept_strides[0], split.kept_strides[1]};
  plan.kept =
      sdk::make_layout<2>(split.kept_ndim, split.kept_sizes, kept_strides, {in_size, out_size});
  const int64_t* reduced_strides[1] = {split.reduced_strides};
  plan.reduced =
      sdk::make_layout<1>(split.reduced_ndim, split.reduced_sizes, reduced_strides, {in_size});
  plan.outputs = plan.kept.numel();
  plan.count = plan.reduced.numel();
  if (plan.outputs == 0) return;
  if (plan.count == 0 && (code == TSR_REDUCE_AMAX || code == TSR_REDUCE_AMIN)) {
    sdk::throw_status(TSR_INVALID_ARGUMENT,
                      "%s: _reduce %s over an empty reduction has no identity (the core must "
                      "refuse it)",
                      sdk::op_name(call), code_name(code));
  }

  char* const base[2] = {base_address(self), base_address(out)};
  const bool columns = plan.kept.ndim >= 1 && plan.reduced.ndim >= 1 && plan.count > 1 &&
                       plan.kept.inner_stride(0) == static_cast<int64_t>(in_size) &&
                       plan.kept.inner_size() >= 8 &&
                       plan.reduced.inner_stride(0) != static_cast<int64_t>(in_size);
  sdk::dispatch_dtype(self.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      // Bool: SUM/AMAX are ANY, PROD/AMIN are ALL (MEAN was refused above).
      if (code == TSR_REDUCE_PROD || code == TSR_REDUCE_AMIN || code == TSR_REDUCE_ALL) {
        run_reduction<rop::all, T>(context, plan, base, columns);
      } else {
        run_reduction<rop::any, T>(context, plan, base, columns);
      }
    } else {
      switch (code) {
        case TSR_REDUCE_SUM:
          run_reduction<rop::sum, T>(context, plan, base, columns);
          break;
        case TSR_REDUCE_PROD:
          run_reduction<rop::prod, T>(context, plan, base, columns);
          break;
        case TSR_REDUCE_MEAN:
          if constexpr (!is_integral_v<T>)
            run_reduction<rop::mean, T>(context, plan, base, columns);
          break;
        case TSR_REDUCE_AMAX:
          if constexpr (!is_complex_v<T>) run_reduction<rop::amax, T>(context, plan, base, columns);
          break;
        case TSR_REDUCE_AMIN:
          if constexpr (!is_complex_v<T>) run_reduction<rop::amin, T>(context, plan, base, columns);
          break;
        case TSR_REDUCE_ANY:
          run_reduction<rop::any, T>(context, plan, base, columns);
          break;
        default:
          run_reduction<rop::all, T>(context, plan, base, columns);
          break;
      }
    }
  });
}

}  // namespace tessera::cpu
