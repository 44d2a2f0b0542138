// where.cpp - where.self(Tensor condition, Tensor self, Tensor other): out =
// condition ? self : other. condition is bool; self, other and out share one
// dtype; all arrive broadcast to out's shape. The select moves bits, so it runs
// per element size (1, 2, 4, 8, 16 bytes), not per dtype.
#include <cstdint>
#include <type_traits>

#include "loops.hpp"
#include "pointwise_kernels.hpp"
#include "tessera/sdk/dtype_traits.hpp"
#include "tessera/sdk/kernel_args.hpp"
#include "tessera/sdk/status.hpp"

namespace tessera::cpu {
namespace {

using pointwise::at;

struct bits128 {
  uint64_t lo, hi;
};

// cond ? x : y as a bit blend, which vectorises (a `?:` on loaded values
// becomes a select of addresses, which does not).
template <class U>
inline U blend(uint8_t cond, U x, U y) noexcept {
  if constexpr (std::is_integral_v<U>) {
    const U mask = static_cast<U>(U(0) - static_cast<U>(cond != 0));
    return static_cast<U>((x & mask) | (y & static_cast<U>(~mask)));
  } else {
    return cond != 0 ? x : y;
  }
}

template <class U>
void where_run(char* o, const char* c, const char* a, const char* b, int64_t n, int64_t so,
               int64_t sc, int64_t sa, int64_t sb) noexcept {
  constexpr int64_t S = sizeof(U);
  if (so == S && sc == 1 && sb == S && (sa == S || sa == 0)) {
    U* out = reinterpret_cast<U*>(o);
    const uint8_t* cond = reinterpret_cast<const uint8_t*>(c);
    const U* x = reinterpret_cast<const U*>(a);
    const U* y = reinterpret_cast<const U*>(b);
    if (sa == 0) {  // masked_fill: a broadcast value
      const U v = *x;
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) out[i] = blend(cond[i], v, y[i]);
    } else {
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) out[i] = blend(cond[i], x[i], y[i]);
    }
    return;
  }
  for (int64_t i = 0; i < n; ++i)
    at<U>(o, i, so) = blend(at<uint8_t>(c, i, sc), at<U>(a, i, sa), at<U>(b, i, sb));
}

template <class U>
void where_typed(const tsr_plugin_context& context, const tsr_tensor_desc& out,
                 const tsr_tensor_desc& cond, const tsr_tensor_desc& x, const tsr_tensor_desc& y) {
  const tsr_tensor_desc* descs[4] = {&out, &cond, &x, &y};
  const auto layout = sdk::make_layout(descs);
  const int64_t so = layout.inner_stride(0), sc = layout.inner_stride(1),
                sa = layout.inner_stride(2), sb = layout.inner_stride(3);
  char* const base[4] = {base_address(out), base_address(cond), base_address(x), base_address(y)};
  pointwise::for_each_run(context, layout, base, 1, [&](char* const(&p)[4], int64_t n) {
    where_run<U>(p[0], p[1], p[2], p[3], n, so, sc, sa, sb);
  });
}

}  // namespace

void where_kernel(const tsr_plugin_context& context, const tsr_kernel_call* raw_call) {
  const tsr_kernel_call& call = sdk::check_call(raw_call, 3, 1);
  const tsr_tensor_desc& cond = sdk::tensor_arg(call, 0, "condition");
  const tsr_tensor_desc& self = sdk::tensor_arg(call, 1, "self");
  const tsr_tensor_desc& other = sdk::tensor_arg(call, 2, "other");
  const tsr_tensor_desc& out = sdk::out_arg(call, 0);
  sdk::check_same_sizes(call, cond, "condition", out, "out");
  sdk::check_same_sizes(call, self, "self", out, "out");
  sdk::check_same_sizes(call, other, "other", out, "out");
  sdk::check_dtype(call, cond, "condition", TSR_BOOL);
  sdk::check_dtype(call, self, "self", out.dtype);
  sdk::check_dtype(call, other, "other", out.dtype);
  switch (sdk::element_size(out.dtype)) {
    case 1:
      return where_typed<uint8_t>(context, out, cond, self, other);
    case 2:
      return where_typed<uint16_t>(context, out, cond, self, other);
    case 4:
      return where_typed<uint32_t>(context, out, cond, self, other);
    case 8:
      return where_typed<uint64_t>(context, out, cond, self, other);
    case 16:
      return where_typed<bits128>(context, out, cond, self, other);
    default:
      sdk::throw_unsupported_dtype(call, "self", out.dtype, kPluginName);
  }
}

}  // namespace tessera::cpu
