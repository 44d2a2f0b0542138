// reduce.cpp - sum.dim_IntList and mean.dim.
//
// Contract (plugin.h, docs/operators.md): `dim` is resolved (sorted, unique,
// non-negative; None is read as "every dim"); the input is already in the
// output dtype; outs[0] has the input's ndim with size 1 on reduced dims. The
// input's dims split into kept dims (one output element per index) and reduced
// dims, each simplified into a strided layout. Two loops:
//   - per output element: walk the reduced dims in innermost runs, each summed
//     with 16 independent lanes (vectorised, latency-hiding) in blocks of 4096
//     whose results are added into a wide accumulator;
//   - column sums, when the innermost kept dim is contiguous and the reduced
//     dims are outer (e.g. summing a row-major matrix over dim 0): blocks of 1024
//     columns accumulate (in the wide type) row after row, reading memory in
//     order.
// Accumulators: float32 in float64 (a 1M-element sum stays within an ulp or two
// of the float64 result); float16/bfloat16 lanes in float32 with blocks added
// in float64; float64 in float64 with lanes and blocks (cascaded); complex in
// complex128; integers in 64 bits wrapping (the core casts them to int64). mean
// divides the wide sum by the reduced element count (0 elements: NaN).
// Parallel (OpenMP) above kParallelMinElements: over output elements when there
// are enough, else over chunks of the reduction with partial sums combined in a
// fixed order (deterministic for a given thread count).
#include <algorithm>
#include <complex>
#include <type_traits>

#include "convert.hpp"
#include "elementwise.hpp"
#include "half_convert.hpp"
#include "kernel_args.hpp"
#include "kernels.hpp"
#include "tessera/sdk/dtype_traits.hpp"
#include "tessera/sdk/status.hpp"

namespace tessera::cpu {
namespace {

// Accumulation types: `lane` inside a block, `wide` across blocks and outputs.
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
using lane_t = typename sum_types<T>::lane;
template <class T>
using wide_t = typename sum_types<T>::wide;

template <class T>
inline lane_t<T> to_lane(T x) noexcept {
  if constexpr (is_integral_v<T>) {
    return static_cast<uint64_t>(static_cast<int64_t>(x));
  } else if constexpr (is_complex_v<T>) {
    return std::complex<double>(x.real(), x.imag());
  } else {
    return static_cast<lane_t<T>>(static_cast<compute_t<T>>(x));
  }
}

template <class T>
inline wide_t<T> to_wide(T x) noexcept {
  if constexpr (is_reduced_float_v<T>) {
    return static_cast<double>(static_cast<float>(x));
  } else {
    return static_cast<wide_t<T>>(to_lane<T>(x));
  }
}

// The output value of a wide sum over `count` elements.
template <class T, bool Mean>
inline T finish(wide_t<T> sum, int64_t count) noexcept {
  if constexpr (is_integral_v<T>) {
    return static_cast<T>(sum);  // modular
  } else {
    if constexpr (Mean) sum /= static_cast<double>(count);
    if constexpr (is_complex_v<T>) {
      using R = typename T::value_type;
      return T(static_cast<R>(sum.real()), static_cast<R>(sum.imag()));
    } else {
      return T(sum);
    }
  }
}

// Adds elements [i, len) in whole groups of 16 into 16 independent lanes of
// type L (vectorised, and free of the add latency chain); advances i.
template <class T, int64_t Stride, class L>
inline void add_lanes(const char* p, int64_t len, int64_t stride, L* lanes, int64_t& i) noexcept {
  constexpr int kLanes = 16;
  const int64_t step = Stride ? Stride : stride;
  for (; i + kLanes <= len; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) {
      lanes[l] += static_cast<L>(to_lane<T>(*reinterpret_cast<const T*>(p + (i + l) * step)));
    }
  }
}

// Sum of n elements `stride` bytes apart starting at p.
template <class T>
wide_t<T> sum_run(const char* p, int64_t n, int64_t stride) noexcept {
  using L = lane_t<T>;
  constexpr int kLanes = 16;
  constexpr int64_t kBlock = 4096;
  wide_t<T> total{};
  for (int64_t b0 = 0; b0 < n; b0 += kBlock) {
    const int64_t len = std::min(kBlock, n - b0);
    const char* q = p + b0 * stride;
    L lanes[kLanes] = {};
    int64_t i = 0;
    if constexpr (is_reduced_float_v<T>) {
      if (stride == sizeof(T)) {
        // Bulk-convert (F16C for float16) and sum the float32 copies.
        constexpr int64_t kChunk = 512;
        float converted[kChunk];
        for (; i + kChunk <= len; i += kChunk) {
          to_float(reinterpret_cast<const T*>(q + i * stride), converted, kChunk);
          int64_t c = 0;
          add_lanes<float, sizeof(float)>(reinterpret_cast<const char*>(converted), kChunk,
                                          sizeof(float), lanes, c);
        }
      }
    }
    if (stride == sizeof(T)) {
      add_lanes<T, sizeof(T)>(q, len, stride, lanes, i);
    } else {
      add_lanes<T, 0>(q, len, stride, lanes, i);
    }
    for (; i < len; ++i) lanes[0] += to_lane<T>(*reinterpret_cast<const T*>(q + i * stride));
    for (int width = kLanes / 2; width >= 1; width /= 2) {
      for (int l = 0; l < width; ++l) lanes[l] += lanes[l + width];
    }
    total += static_cast<wide_t<T>>(lanes[0]);
  }
  return total;
}

// Sum over the reduced layout of the elements starting at `base`, elements
// [begin, end) of the reduced iteration order.
template <class T>
wide_t<T> sum_reduced(const sdk::strided_layout<1>& reduced, char* base, int64_t begin,
                      int64_t end) noexcept {
  wide_t<T> total{};
  const int64_t stride = reduced.inner_stride(0);
  char* const bases[1] = {base};
  sdk::for_each_run(reduced, bases, begin, end,
                    [&](char* const(&p)[1], int64_t n) { total += sum_run<T>(p[0], n, stride); });
  return total;
}

struct reduce_plan {
  sdk::strided_layout<2> kept;     // operands: input, output
  sdk::strided_layout<1> reduced;  // operand: input
  int64_t outputs = 0;
  int64_t count = 0;  // reduced elements per output
};

template <class T, bool Mean>
void reduce_per_output(const tsr_plugin_context& context, const reduce_plan& plan,
                       char* const (&base)[2]) {
  const int threads = thread_count(context);
  const int64_t in_stride = plan.kept.inner_stride(0);
  const int64_t out_stride = plan.kept.inner_stride(1);
  const bool split_reduction =
      plan.outputs < 2 * threads && plan.count >= kParallelMinElements && threads > 1;
  auto reduce_outputs = [&](int64_t begin, int64_t end) {
    sdk::for_each_run(plan.kept, base, begin, end, [&](char* const(&p)[2], int64_t n) {
      for (int64_t j = 0; j < n; ++j) {
        char* in = p[0] + j * in_stride;
        wide_t<T> total{};
        if (split_reduction) {
          const int chunks = std::min(threads, 64);
          wide_t<T> partial[64] = {};
#pragma omp parallel for schedule(static, 1) num_threads(chunks)
          for (int c = 0; c < chunks; ++c) {
            partial[c] = sum_reduced<T>(plan.reduced, in, plan.count * c / chunks,
                                        plan.count * (c + 1) / chunks);
          }
          for (int c = 0; c < chunks; ++c) total += partial[c];
        } else {
          total = sum_reduced<T>(plan.reduced, in, 0, plan.count);
        }
        *reinterpret_cast<T*>(p[1] + j * out_stride) = finish<T, Mean>(total, plan.count);
      }
    });
  };
  if (split_reduction) {
    reduce_outputs(0, plan.outputs);
  } else {
    parallel_ranges(threads, plan.outputs, plan.count, reduce_outputs);
  }
}

template <class T, bool Mean>
void reduce_columns(const tsr_plugin_context& context, const reduce_plan& plan,
                    char* const (&base)[2]) {
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
                      wide_t<T> acc[kColumns] = {};
                      char* const in[1] = {ptrs[0] + col0 * static_cast<int64_t>(sizeof(T))};
                      sdk::for_each_run(
                          plan.reduced, in, 0, plan.count, [&](char* const(&p)[1], int64_t rows) {
                            for (int64_t r = 0; r < rows; ++r) {
                              const T* row = reinterpret_cast<const T*>(p[0] + r * row_stride);
                              for (int64_t j = 0; j < width; ++j) {
                                acc[j] += to_wide<T>(row[j]);
                              }
                            }
                          });
                      for (int64_t j = 0; j < width; ++j) {
                        *reinterpret_cast<T*>(ptrs[1] + (col0 + j) * out_stride) =
                            finish<T, Mean>(acc[j], plan.count);
                      }
                    }
                  });
}

template <bool Mean>
void reduce_kernel(const tsr_plugin_context& context, const tsr_kernel_call* raw_call) {
  const tsr_kernel_call& call = check_call(raw_call, 4, 1);
  const tsr_tensor_desc& self = tensor_arg(call, 0, "self");
  const auto dims = optional_int_list_arg(call, 1, "dim");
  (void)bool_arg(call, 2, "keepdim");          // the core reshapes; outs[0] is keepdim-shaped
  (void)optional_dtype_arg(call, 3, "dtype");  // the core already cast self
  const tsr_tensor_desc& out = out_arg(call, 0);
  check_dtype(call, self, "self", out.dtype);
  if constexpr (Mean) {
    if (!sdk::is_floating_dtype(out.dtype) && !sdk::is_complex_dtype(out.dtype)) {
      throw_unsupported_dtype(call, "self", out.dtype);
    }
  } else {
    if (out.dtype == TSR_BOOL) throw_unsupported_dtype(call, "self", out.dtype);
  }

  bool reduced[TSR_MAX_DIMS] = {};
  if (!dims) {
    std::fill(reduced, reduced + self.ndim, true);
  } else {
    int64_t previous = -1;
    for (const int64_t d : *dims) {
      if (d <= previous || d < 0 || (d >= self.ndim && !(self.ndim == 0 && d == 0))) {
        sdk::throw_status(TSR_INVALID_ARGUMENT,
                          "%s: dim %lld is not valid for a %d-d input (dims must be resolved: "
                          "non-negative, below ndim, sorted and unique)",
                          op_name(call), static_cast<long long>(d), static_cast<int>(self.ndim));
      }
      if (d < self.ndim) reduced[d] = true;
      previous = d;
    }
  }
  if (out.ndim != self.ndim) {
    sdk::throw_status(TSR_INVALID_ARGUMENT,
                      "%s: out has %d dims but self has %d; the kernel expects the keepdim "
                      "layout",
                      op_name(call), static_cast<int>(out.ndim), static_cast<int>(self.ndim));
  }
  for (int d = 0; d < self.ndim; ++d) {
    const int64_t expected = reduced[d] ? 1 : self.sizes[d];
    if (out.sizes[d] != expected) {
      sdk::throw_status(
          TSR_INVALID_ARGUMENT, "%s: out has size %lld in dim %d, expected %lld (keepdim layout)",
          op_name(call), static_cast<long long>(out.sizes[d]), d, static_cast<long long>(expected));
    }
  }

  int kept_ndim = 0, reduced_ndim = 0;
  int64_t kept_sizes[TSR_MAX_DIMS], kept_in[TSR_MAX_DIMS], kept_out[TSR_MAX_DIMS];
  int64_t reduced_sizes[TSR_MAX_DIMS], reduced_in[TSR_MAX_DIMS];
  for (int d = 0; d < self.ndim; ++d) {
    if (reduced[d]) {
      reduced_sizes[reduced_ndim] = self.sizes[d];
      reduced_in[reduced_ndim++] = self.strides[d];
    } else {
      kept_sizes[kept_ndim] = self.sizes[d];
      kept_in[kept_ndim] = self.strides[d];
      kept_out[kept_ndim++] = out.strides[d];
    }
  }
  const size_t size = sdk::element_size(out.dtype);
  reduce_plan plan;
  const int64_t* kept_strides[2] = {kept_in, kept_out};
  const size_t kept_sizes_bytes[2] = {size, size};
  plan.kept = sdk::make_layout<2>(kept_ndim, kept_sizes, kept_strides, kept_sizes_bytes);
  const int64_t* reduced_strides[1] = {reduced_in};
  const size_t reduced_sizes_bytes[1] = {size};
  plan.reduced =
      sdk::make_layout<1>(reduced_ndim, reduced_sizes, reduced_strides, reduced_sizes_bytes);
  plan.outputs = plan.kept.numel();
  plan.count = plan.reduced.numel();
  if (plan.outputs == 0) return;

  char* const base[2] = {base_address(self), base_address(out)};
  const bool columns = plan.kept.ndim >= 1 && plan.reduced.ndim >= 1 && plan.count > 1 &&
                       plan.kept.inner_stride(0) == static_cast<int64_t>(size) &&
                       plan.kept.inner_size() >= 8 &&
                       plan.reduced.inner_stride(0) != static_cast<int64_t>(size);
  sdk::dispatch_dtype(out.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, bool>) {
      if (columns) {
        reduce_columns<T, Mean>(context, plan, base);
      } else {
        reduce_per_output<T, Mean>(context, plan, base);
      }
    }
  });
}

}  // namespace

void sum_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call) {
  reduce_kernel<false>(context, call);
}

void mean_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call) {
  reduce_kernel<true>(context, call);
}

}  // namespace tessera::cpu
