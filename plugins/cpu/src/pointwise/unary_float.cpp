// unary_float.cpp - _unary on float16, bfloat16, float32 and float64: one
// functor per code, each instantiated per dtype (16-bit floats compute in
// float32, special functions in float64). NaN and infinities follow PyTorch:
// NaN propagates through every function (clamp bounds that are NaN are
// ignored, as in PyTorch's scalar clamp); round is half-to-even.
#include <cmath>
#include <limits>
#include <numbers>

#include "loops.hpp"
#include "onednn_eltwise.hpp"
#include "pointwise_kernels.hpp"
#include "tessera/opcodes.h"
#include "tessera/sdk/dtype_traits.hpp"
#include "tessera/sdk/kernel_args.hpp"
#include "tessera/sdk/special.hpp"

namespace tessera::cpu::pointwise {
namespace {

constexpr int64_t kCheap = 1;  // per-element cost for parallel_ranges
constexpr int64_t kMath = 8;
constexpr int64_t kSpecial = 32;

template <class T>
void floating_typed(const tsr_plugin_context& context, const tsr_kernel_call& call, int code,
                    const tsr_tensor_desc& out, const tsr_tensor_desc& in, const tsr_scalar* p) {
  using C = compute_t<T>;
  const auto map = [&](int64_t cost, const auto& f) {
    unary_apply<T, T>(context, out, in, cost, f);
  };
  const auto test = [&](const auto& f) { unary_apply<T, bool>(context, out, in, kCheap, f); };
  const C p0 = scalar_convert<C>(p[0]), p1 = scalar_convert<C>(p[1]), p2 = scalar_convert<C>(p[2]);
  constexpr C kInf = std::numeric_limits<C>::infinity();
  switch (code) {
    case TSR_UNARY_NEG:
      return map(kCheap, [](C x) { return -x; });
    case TSR_UNARY_ABS:
      return map(kCheap, [](C x) { return std::abs(x); });
    case TSR_UNARY_SIGN:
      return map(kCheap, [](C x) { return C((x > 0) - (x < 0)); });  // NaN -> 0 as PyTorch
    case TSR_UNARY_EXP:
      return map(kMath, [](C x) { return std::exp(x); });
    case TSR_UNARY_EXP2:
      return map(kMath, [](C x) { return std::exp2(x); });
    case TSR_UNARY_EXPM1:
      return map(kMath, [](C x) { return std::expm1(x); });
    case TSR_UNARY_LOG:
      return map(kMath, [](C x) { return std::log(x); });
    case TSR_UNARY_LOG2:
      return map(kMath, [](C x) { return std::log2(x); });
    case TSR_UNARY_LOG10:
      return map(kMath, [](C x) { return std::log10(x); });
    case TSR_UNARY_LOG1P:
      return map(kMath, [](C x) { return std::log1p(x); });
    case TSR_UNARY_SQRT:
      return map(kCheap, [](C x) { return std::sqrt(x); });
    case TSR_UNARY_RSQRT:
      return map(kCheap, [](C x) { return C(1) / std::sqrt(x); });
    case TSR_UNARY_RECIPROCAL:
      return map(kCheap, [](C x) { return C(1) / x; });
    case TSR_UNARY_SIN:
      return map(kMath, [](C x) { return std::sin(x); });
    case TSR_UNARY_COS:
      return map(kMath, [](C x) { return std::cos(x); });
    case TSR_UNARY_TAN:
      return map(kMath, [](C x) { return std::tan(x); });
    case TSR_UNARY_ASIN:
      return map(kMath, [](C x) { return std::asin(x); });
    case TSR_UNARY_ACOS:
      return map(kMath, [](C x) { return std::acos(x); });
    case TSR_UNARY_ATAN:
      return map(kMath, [](C x) { return std::atan(x); });
    case TSR_UNARY_SINH:
      return map(kMath, [](C x) { return std::sinh(x); });
    case TSR_UNARY_COSH:
      return map(kMath, [](C x) { return std::cosh(x); });
    case TSR_UNARY_TANH:
      return map(kMath, [](C x) { return std::tanh(x); });
    case TSR_UNARY_ASINH:
      return map(kMath, [](C x) { return std::asinh(x); });
    case TSR_UNARY_ACOSH:
      return map(kMath, [](C x) { return std::acosh(x); });
    case TSR_UNARY_ATANH:
      return map(kMath, [](C x) { return std::atanh(x); });
    case TSR_UNARY_SIGMOID:
      return map(kMath, [](C x) { return C(1) / (C(1) + std::exp(-x)); });
    case TSR_UNARY_LOGIT:
      if (p0 < 0) return map(kMath, [](C x) { return std::log(x / (C(1) - x)); });
      return map(kMath, [lo = p0, hi = C(1) - p0](C x) {
        const C z = x < lo ? lo : (x > hi ? hi : x);
        return std::log(z / (C(1) - z));
      });
    case TSR_UNARY_ERF:
      return map(kMath, [](C x) { return std::erf(x); });
    case TSR_UNARY_ERFC:
      return map(kMath, [](C x) { return std::erfc(x); });
    case TSR_UNARY_ERFINV:
      return map(kSpecial, [](C x) { return static_cast<C>(sdk::erfinv(static_cast<double>(x))); });
    case TSR_UNARY_LGAMMA:
      return map(kSpecial, [](C x) { return static_cast<C>(sdk::lgamma(static_cast<double>(x))); });
    case TSR_UNARY_DIGAMMA:
      return map(kSpecial, [](C x) { return static_cast<C>(sdk::digamma(static_cast<double>(x))); });
    case TSR_UNARY_FLOOR:
      return map(kCheap, [](C x) { return std::floor(x); });
    case TSR_UNARY_CEIL:
      return map(kCheap, [](C x) { return std::ceil(x); });
    case TSR_UNARY_TRUNC:
      return map(kCheap, [](C x) { return std::trunc(x); });
    case TSR_UNARY_ROUND: {
      const int64_t decimals = p[0].kind == TSR_FLOAT64 ? static_cast<int64_t>(p[0].v.f) : p[0].v.i;
      if (decimals == 0) return map(kCheap, [](C x) { return std::nearbyint(x); });
      const C scale = static_cast<C>(std::pow(C(10), static_cast<C>(std::abs(decimals))));
      if (decimals > 0)
        return map(kCheap, [scale](C x) { return std::nearbyint(x * scale) / scale; });
      return map(kCheap, [scale](C x) { return std::nearbyint(x / scale) * scale; });
    }
    case TSR_UNARY_FRAC:
      return map(kCheap, [](C x) { return x - std::trunc(x); });
    case TSR_UNARY_RELU:
      return map(kCheap, [](C x) { return x < 0 ? C(0) : x; });
    case TSR_UNARY_LEAKY_RELU:
      return map(kCheap, [slope = p0](C x) { return x > 0 ? x : x * slope; });
    case TSR_UNARY_ELU:
      return map(kMath, [alpha = p0, scale = p1, input_scale = p2](C x) {
        return x > 0 ? x * scale : alpha * scale * std::expm1(x * input_scale);
      });
    case TSR_UNARY_GELU:
      return map(kMath, [](C x) {
        return C(0.5) * x * (C(1) + std::erf(x * static_cast<C>(std::numbers::sqrt2 / 2)));
      });
    case TSR_UNARY_GELU_TANH:
      return map(kMath, [](C x) {
        const C beta = static_cast<C>(std::numbers::sqrt2 * std::numbers::inv_sqrtpi);
        const C inner = beta * (x + C(0.044715) * x * x * x);
        return C(0.5) * x * (C(1) + std::tanh(inner));
      });
    case TSR_UNARY_SILU:
      return map(kMath, [](C x) { return x / (C(1) + std::exp(-x)); });
    case TSR_UNARY_MISH:
      return map(kMath, [](C x) { return x * std::tanh(std::log1p(std::exp(x))); });
    case TSR_UNARY_SOFTPLUS:
      return map(kMath, [beta = p0, threshold = p1](C x) {
        return x * beta > threshold ? x : std::log1p(std::exp(x * beta)) / beta;
      });
    case TSR_UNARY_CLAMP:
      return map(kCheap, [lo = p0, hi = p1](C x) {
        const C r = x < lo ? lo : x;
        return r > hi ? hi : r;
      });
    case TSR_UNARY_CLAMP_MIN:
      return map(kCheap, [lo = p0](C x) { return x < lo ? lo : x; });
    case TSR_UNARY_CLAMP_MAX:
      return map(kCheap, [hi = p0](C x) { return x > hi ? hi : x; });
    case TSR_UNARY_HARDSIGMOID:
      return map(kCheap, [](C x) {
        C t = x + C(3);
        t = t < 0 ? C(0) : t;
        t = t > C(6) ? C(6) : t;
        return t / C(6);
      });
    case TSR_UNARY_HARDSWISH:
      return map(kCheap, [](C x) {
        C t = x + C(3);
        t = t < 0 ? C(0) : t;
        t = t > C(6) ? C(6) : t;
        return x * t / C(6);
      });
    case TSR_UNARY_SQUARE:
      return map(kCheap, [](C x) { return x * x; });
    case TSR_UNARY_LOGICAL_NOT:
      return test([](C x) { return x == C(0); });
    case TSR_UNARY_ISNAN:
      return test([](C x) { return std::isnan(x); });
    case TSR_UNARY_ISINF:
      return test([](C x) { return std::isinf(x); });
    case TSR_UNARY_ISPOSINF:
      return test([](C x) { return x == kInf; });
    case TSR_UNARY_ISNEGINF:
      return test([](C x) { return x == -kInf; });
    case TSR_UNARY_ISFINITE:
      return test([](C x) { return std::isfinite(x); });
    case TSR_UNARY_SIGNBIT:
      return test([](C x) { return std::signbit(x); });
    case TSR_UNARY_NAN_TO_NUM:
      return map(kCheap, [nan = p0, posinf = p1, neginf = p2](C x) {
        return std::isnan(x) ? nan : x == kInf ? posinf : x == -kInf ? neginf : x;
      });
    default:
      sdk::throw_unsupported_dtype(call, "self", in.dtype, kPluginName);
  }
}

// A contiguous 1-d view of elements [begin, begin + count) of contiguous `d`.
tsr_tensor_desc flat_range(const tsr_tensor_desc& d, int64_t begin, int64_t count) {
  tsr_tensor_desc r = d;
  r.ndim = 1;
  r.sizes[0] = count;
  r.strides[0] = 1;
  r.data = static_cast<float*>(d.data) + begin;
  return r;
}

struct float_call {
  const tsr_plugin_context* context;
  const tsr_kernel_call* call;
  int code;
  const tsr_tensor_desc* out;
  const tsr_tensor_desc* in;
  const tsr_scalar* p;
};

void plain_range(void* context, int64_t begin, int64_t count) noexcept {
  const auto& f = *static_cast<const float_call*>(context);
  try {
    floating_typed<float>(*f.context, *f.call, f.code, flat_range(*f.out, begin, count),
                          flat_range(*f.in, begin, count), f.p);
  } catch (...) {  // unreachable: the code was dispatched before
  }
}

// float32: contiguous calls of codes oneDNN has go through its eltwise
// primitive (onednn_eltwise.hpp) for whole chunks; the rest runs here.
void float32_unary(const tsr_plugin_context& context, const tsr_kernel_call& call, int code,
                   const tsr_tensor_desc& out, const tsr_tensor_desc& in, const tsr_scalar* p) {
  const int64_t n = sdk::numel(out);
  if (n >= kChunk && sdk::is_contiguous(in) && sdk::is_contiguous(out)) {
    const float_call f{&context, &call, code, &out, &in, p};
    apply_thread_count(context);
    const int64_t done = onednn_eltwise(
        code, scalar_convert<float>(p[0]), scalar_convert<float>(p[1]), scalar_convert<float>(p[2]),
        static_cast<const float*>(in.data), static_cast<float*>(out.data), n, thread_count(context),
        plain_range, const_cast<float_call*>(&f));
    if (done > 0) {
      if (done < n) {
        floating_typed<float>(context, call, code, flat_range(out, done, n - done),
                              flat_range(in, done, n - done), p);
      }
      return;
    }
  }
  floating_typed<float>(context, call, code, out, in, p);
}

}  // namespace

void unary_floating(const tsr_plugin_context& context, const tsr_kernel_call& call, int code,
                    const tsr_tensor_desc& out, const tsr_tensor_desc& in, const tsr_scalar* p) {
  switch (in.dtype) {
    case TSR_FLOAT16:
      return floating_typed<half>(context, call, code, out, in, p);
    case TSR_BFLOAT16:
      return floating_typed<bfloat16>(context, call, code, out, in, p);
    case TSR_FLOAT32:
      return float32_unary(context, call, code, out, in, p);
    case TSR_FLOAT64:
      return floating_typed<double>(context, call, code, out, in, p);
    default:
      sdk::throw_unsupported_dtype(call, "self", in.dtype, kPluginName);
  }
}

}  // namespace tessera::cpu::pointwise
