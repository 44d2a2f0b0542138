// factory/iota.cpp - the _iota_ kernel: element i of self in row-major order
// (i < n = numel) becomes start + i * step, or end - (n - 1 - i) * step for
// i >= n / 2 when `end` is given (linspace's symmetric form). Integer outputs
// with integral start/step/end compute in int64 (wrapping, then reduced modulo
// the dtype's width as PyTorch's arange does); everything else computes in
// double and converts (to integers: truncation toward zero, saturating at the
// int64 range, then modulo the width). Any strides; contiguous runs get a
// vectorisable loop; large outputs are split between threads by element range.
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <type_traits>

#include "../pointwise_loop.hpp"
#include "factory_kernels.hpp"
#include "tessera/sdk/dtype_traits.hpp"
#include "tessera/sdk/kernel_args.hpp"
#include "tessera/sdk/status.hpp"
#include "tessera/sdk/strided.hpp"

namespace tessera::cpu {
namespace {

struct iota_params {
  int64_t n;
  int64_t mirror_from;  // first element computed from `end` (n when there is none)
};

int64_t saturate_to_int64(double v) noexcept {
  if (std::isnan(v)) return 0;
  if (v >= 9223372036854775808.0) return std::numeric_limits<int64_t>::max();
  if (v < -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

template <class T>
T from_double(double v) noexcept {
  if constexpr (sdk::is_reduced_float_v<T>)
    return T(v);
  else if constexpr (std::is_floating_point_v<T>)
    return static_cast<T>(v);
  else
    return static_cast<T>(saturate_to_int64(v));  // modulo 2^bits
}

// Writes run [i0, i0 + count) at p (byte stride `stride`) with value(i).
template <class T, class Value>
void write_run(char* p, int64_t stride, int64_t i0, int64_t count, Value&& value) noexcept {
  if (stride == static_cast<int64_t>(sizeof(T))) {
    T* d = reinterpret_cast<T*>(p);
    for (int64_t k = 0; k < count; ++k) d[k] = value(i0 + k);
  } else {
    for (int64_t k = 0; k < count; ++k) *reinterpret_cast<T*>(p + k * stride) = value(i0 + k);
  }
}

template <class T, class Value>
void run_iota(const tsr_plugin_context& context, const tsr_tensor_desc& out, Value&& value) {
  const tsr_tensor_desc* descs[1] = {&out};
  const auto layout = sdk::make_layout(descs);
  const int64_t stride = layout.inner_stride(0);
  char* const base[1] = {base_address(out)};
  parallel_ranges(thread_count(context), layout.numel(), 1, [&](int64_t begin, int64_t end) {
    int64_t i = begin;
    sdk::for_each_run(layout, base, begin, end, [&](char* const(&p)[1], int64_t count) {
      write_run<T>(p[0], stride, i, count, value);
      i += count;
    });
  });
}

template <class T>
void iota_integer(const tsr_plugin_context& context, const tsr_tensor_desc& out,
                  const iota_params& params, int64_t start, int64_t step, int64_t end) {
  const auto ustart = static_cast<uint64_t>(start), ustep = static_cast<uint64_t>(step);
  const auto uend = static_cast<uint64_t>(end);
  const int64_t last = params.n - 1, mirror_from = params.mirror_from;
  run_iota<T>(context, out, [=](int64_t i) {
    const uint64_t v = i < mirror_from ? ustart + static_cast<uint64_t>(i) * ustep
                                       : uend - static_cast<uint64_t>(last - i) * ustep;
    return static_cast<T>(static_cast<int64_t>(v));
  });
}

template <class T>
void iota_real(const tsr_plugin_context& context, const tsr_tensor_desc& out,
               const iota_params& params, double start, double step, double end) {
  const int64_t last = params.n - 1, mirror_from = params.mirror_from;
  run_iota<T>(context, out, [=](int64_t i) {
    if (i < mirror_from) {
      const double offset = static_cast<double>(i) * step;
      return from_double<T>(start + offset);
    }
    const double offset = static_cast<double>(last - i) * step;
    return from_double<T>(end - offset);
  });
}

bool integral_kind(const tsr_scalar& s) noexcept {
  return s.kind == TSR_BOOL || s.kind == TSR_INT64;
}
int64_t as_int64(const tsr_scalar& s) noexcept { return s.v.i; }
double as_double(const tsr_scalar& s) noexcept {
  switch (s.kind) {
    case TSR_BOOL:
    case TSR_INT64:
      return static_cast<double>(s.v.i);
    case TSR_FLOAT64:
      return s.v.f;
    default:
      return s.v.c.re;
  }
}

}  // namespace

void iota_kernel(const tsr_plugin_context& context, const tsr_kernel_call* raw_call) {
  const tsr_kernel_call& call = sdk::check_call(raw_call, 4, 1);
  const tsr_tensor_desc& self = sdk::tensor_arg(call, 0, "self");
  const tsr_scalar& start = sdk::scalar_arg(call, 1, "start");
  const tsr_scalar& step = sdk::scalar_arg(call, 2, "step");
  const tsr_scalar* end = sdk::optional_scalar_arg(call, 3, "end");
  tsr_tensor_desc& out = sdk::out_arg(call, 0);
  sdk::check_same_sizes(call, out, "out", self, "self");
  sdk::check_dtype(call, out, "out", self.dtype);
  if (out.dtype == TSR_BOOL || sdk::is_complex_dtype(out.dtype))
    sdk::throw_unsupported_dtype(call, "self", out.dtype, kPluginName);
  for (const tsr_scalar* s : {&start, &step, end}) {
    if (s != nullptr && s->kind == TSR_COMPLEX128) {
      sdk::throw_status(TSR_INVALID_ARGUMENT, "%s: start, step and end must be real, not complex",
                        sdk::op_name(call));
    }
  }
  iota_params params;
  params.n = sdk::numel(out);
  params.mirror_from = end != nullptr ? params.n / 2 : params.n;
  const bool integer_math = !sdk::is_floating_dtype(out.dtype) && integral_kind(start) &&
                            integral_kind(step) && (end == nullptr || integral_kind(*end));
  sdk::dispatch_dtype(out.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, bool> && !sdk::is_complex_v<T>) {
      if constexpr (sdk::is_integral_v<T>) {
        if (integer_math) {
          iota_integer<T>(context, out, params, as_int64(start), as_int64(step),
                          end ? as_int64(*end) : 0);
          return;
        }
      }
      {
        iota_real<T>(context, out, params, as_double(start), as_double(step),
                     end ? as_double(*end) : 0.0);
      }
    }
  });
}

}  // namespace tessera::cpu
