// binary_code.cpp - the _binary kernel: one functor per (code, dtype).
//
// Contract (tessera/opcodes.h): self and other share one dtype and arrive
// broadcast to out's shape; out has that dtype too, except for the logical and
// comparison codes (out bool). Semantics are PyTorch's:
//  - maximum/minimum propagate NaN, fmax/fmin ignore it;
//  - remainder has the sign of the divisor (Python's %), fmod of the dividend;
//    div_floor rounds toward -inf (Python's //), div_trunc toward zero;
//  - integer division by zero (remainder, fmod, div_*) is an error, reported
//    before anything is written: INVALID_ARGUMENT "ZeroDivisionError";
//    the minimum value divided by -1 wraps (no SIGFPE);
//  - integer pow with a negative exponent is 0 except for bases 1 and -1;
//  - shifts by a negative amount or by at least the bit width give 0 (left) or
//    the sign fill (right) - PyTorch 2's definition, not C's undefined behaviour;
//  - xlogy is 0 where x == 0 unless y is NaN; logaddexp is exact at infinities.
#include <cmath>
#include <type_traits>

#include "loops.hpp"
#include "pointwise_kernels.hpp"
#include "tessera/opcodes.h"
#include "tessera/sdk/dtype_traits.hpp"
#include "tessera/sdk/kernel_args.hpp"
#include "tessera/sdk/special.hpp"
#include "tessera/sdk/status.hpp"

namespace tessera::cpu {
namespace {

using pointwise::at;
using pointwise::binary_apply;
using pointwise::wrap_t;

constexpr int64_t kCheap = 1;
constexpr int64_t kMath = 8;

bool bool_result(int64_t code) noexcept {
  return (code >= TSR_BINARY_LOGICAL_AND && code <= TSR_BINARY_LOGICAL_XOR) ||
         (code >= TSR_BINARY_EQ && code <= TSR_BINARY_GE);
}

// Comparison and logical codes, for any dtype (compute type C).
template <class T, class C, class Ctx>
bool run_predicate(const Ctx& test, int code) {
  switch (code) {
    case TSR_BINARY_LOGICAL_AND:
      test([](C x, C y) { return (x != C(0)) && (y != C(0)); });
      return true;
    case TSR_BINARY_LOGICAL_OR:
      test([](C x, C y) { return (x != C(0)) || (y != C(0)); });
      return true;
    case TSR_BINARY_LOGICAL_XOR:
      test([](C x, C y) { return (x != C(0)) != (y != C(0)); });
      return true;
    case TSR_BINARY_EQ:
      test([](C x, C y) { return x == y; });
      return true;
    case TSR_BINARY_NE:
      test([](C x, C y) { return x != y; });
      return true;
    case TSR_BINARY_LT:
      test([](C x, C y) { return x < y; });
      return true;
    case TSR_BINARY_LE:
      test([](C x, C y) { return x <= y; });
      return true;
    case TSR_BINARY_GT:
      test([](C x, C y) { return x > y; });
      return true;
    case TSR_BINARY_GE:
      test([](C x, C y) { return x >= y; });
      return true;
    default:
      return false;
  }
}

template <class T>
void floating_typed(const tsr_plugin_context& context, const tsr_kernel_call& call, int code,
                    const tsr_tensor_desc& out, const tsr_tensor_desc& x,
                    const tsr_tensor_desc& y) {
  using C = compute_t<T>;
  const auto map = [&](int64_t cost, const auto& f) {
    binary_apply<T, T>(context, out, x, y, cost, f);
  };
  const auto test = [&](const auto& f) { binary_apply<T, bool>(context, out, x, y, kCheap, f); };
  if (run_predicate<T, C>(test, code)) return;
  switch (code) {
    case TSR_BINARY_POW:
      return map(kMath, [](C a, C b) { return std::pow(a, b); });
    case TSR_BINARY_ATAN2:
      return map(kMath, [](C a, C b) { return std::atan2(a, b); });
    case TSR_BINARY_MAXIMUM:  // a + b is the NaN when either is one
      return map(kCheap, [](C a, C b) { return (a != a || b != b) ? a + b : (a > b ? a : b); });
    case TSR_BINARY_MINIMUM:
      return map(kCheap, [](C a, C b) { return (a != a || b != b) ? a + b : (a < b ? a : b); });
    case TSR_BINARY_FMAX:
      return map(kCheap, [](C a, C b) { return std::fmax(a, b); });
    case TSR_BINARY_FMIN:
      return map(kCheap, [](C a, C b) { return std::fmin(a, b); });
    case TSR_BINARY_REMAINDER:
      return map(kMath, [](C a, C b) {
        C r = std::fmod(a, b);
        if (r != C(0) && ((b < C(0)) != (r < C(0)))) r += b;
        return r;
      });
    case TSR_BINARY_FMOD:
      return map(kMath, [](C a, C b) { return std::fmod(a, b); });
    case TSR_BINARY_DIV_TRUNC:
      return map(kCheap, [](C a, C b) { return std::trunc(a / b); });
    case TSR_BINARY_DIV_FLOOR:
      return map(kMath, [](C a, C b) { return sdk::floor_divide(a, b); });
    case TSR_BINARY_COPYSIGN:
      return map(kCheap, [](C a, C b) { return std::copysign(a, b); });
    case TSR_BINARY_HYPOT:
      return map(kMath, [](C a, C b) { return std::hypot(a, b); });
    case TSR_BINARY_XLOGY:
      return map(kMath, [](C a, C b) {
        if (std::isnan(b)) return b;
        return a == C(0) ? C(0) : a * std::log(b);
      });
    case TSR_BINARY_LOGADDEXP:
      return map(kMath, [](C a, C b) {
        if (std::isinf(a) && a == b) return a;
        const C m = (a != a || b != b) ? a + b : (a > b ? a : b);
        return m + std::log1p(std::exp(-std::abs(a - b)));
      });
    default:
      sdk::throw_unsupported_dtype(call, "self", x.dtype, kPluginName);
  }
}

// True when some element of `d` (an integer tensor) is zero.
template <class T>
bool has_zero(const tsr_tensor_desc& d) {
  const tsr_tensor_desc* descs[1] = {&d};
  const auto layout = sdk::make_layout(descs);
  const int64_t stride = layout.inner_stride(0);
  char* const base[1] = {base_address(d)};
  bool zero = false;
  sdk::for_each_run(layout, base, 0, layout.numel(), [&](char* const(&p)[1], int64_t n) {
    for (int64_t i = 0; i < n; ++i) zero |= at<T>(p[0], i, stride) == T(0);
  });
  return zero;
}

template <class T>
void integer_typed(const tsr_plugin_context& context, const tsr_kernel_call& call, int code,
                   const tsr_tensor_desc& out, const tsr_tensor_desc& x, const tsr_tensor_desc& y) {
  constexpr bool kBool = std::is_same_v<T, bool>;
  constexpr bool kSigned = std::is_signed_v<T>;
  using W = wrap_t<T>;
  const auto map = [&](const auto& f) { binary_apply<T, T>(context, out, x, y, kCheap, f); };
  const auto test = [&](const auto& f) { binary_apply<T, bool>(context, out, x, y, kCheap, f); };
  if (run_predicate<T, T>(test, code)) return;
  switch (code) {
    case TSR_BINARY_MAXIMUM:
    case TSR_BINARY_FMAX:
      return map([](T a, T b) { return a > b ? a : b; });
    case TSR_BINARY_MINIMUM:
    case TSR_BINARY_FMIN:
      return map([](T a, T b) { return a < b ? a : b; });
    case TSR_BINARY_BITWISE_AND:
      return map([](T a, T b) { return static_cast<T>(a & b); });
    case TSR_BINARY_BITWISE_OR:
      return map([](T a, T b) { return static_cast<T>(a | b); });
    case TSR_BINARY_BITWISE_XOR:
      return map([](T a, T b) { return static_cast<T>(a ^ b); });
    default:
      break;
  }
  if constexpr (!kBool) {
    const bool divides = code == TSR_BINARY_REMAINDER || code == TSR_BINARY_FMOD ||
                         code == TSR_BINARY_DIV_TRUNC || code == TSR_BINARY_DIV_FLOOR;
    if (divides && has_zero<T>(y)) {
      sdk::throw_status(TSR_INVALID_ARGUMENT,
                        "%s: ZeroDivisionError: integer division or modulo by zero (argument "
                        "'other' has a zero element); use floating-point inputs to get inf/nan",
                        sdk::op_name(call));
    }
    constexpr T kBits = static_cast<T>(sizeof(T) * 8);
    const auto negate = [](T a) { return static_cast<T>(W(0) - static_cast<W>(a)); };
    switch (code) {
      case TSR_BINARY_POW:
        return map([](T a, T b) { return sdk::integer_pow(a, b); });
      case TSR_BINARY_REMAINDER:
        return map([](T a, T b) {
          if constexpr (kSigned) {
            if (b == T(-1)) return T(0);
            T r = static_cast<T>(a % b);
            if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
            return r;
          } else {
            return static_cast<T>(a % b);
          }
        });
      case TSR_BINARY_FMOD:
        return map([](T a, T b) {
          if constexpr (kSigned) {
            if (b == T(-1)) return T(0);
          }
          return static_cast<T>(a % b);
        });
      case TSR_BINARY_DIV_TRUNC:
        return map([negate](T a, T b) {
          if constexpr (kSigned) {
            if (b == T(-1)) return negate(a);
          }
          return static_cast<T>(a / b);
        });
      case TSR_BINARY_DIV_FLOOR:
        return map([negate](T a, T b) {
          if constexpr (kSigned) {
            if (b == T(-1)) return negate(a);
            T q = static_cast<T>(a / b);
            if (a % b != 0 && ((a < 0) != (b < 0))) q = static_cast<T>(q - 1);
            return q;
          } else {
            return static_cast<T>(a / b);
          }
        });
      case TSR_BINARY_LSHIFT:
        return map([](T a, T b) {
          if constexpr (kSigned) {
            if (b < 0) return T(0);
          }
          if (b >= kBits) return T(0);
          return static_cast<T>(static_cast<W>(a) << b);
        });
      case TSR_BINARY_RSHIFT:
        return map([](T a, T b) {
          if constexpr (kSigned) {
            if (b < 0 || b >= kBits) return a < 0 ? T(-1) : T(0);
          } else {
            if (b >= kBits) return T(0);
          }
          return static_cast<T>(a >> b);
        });
      default:
        break;
    }
  }
  sdk::throw_unsupported_dtype(call, "self", x.dtype, kPluginName);
}

}  // namespace

void binary_code_kernel(const tsr_plugin_context& context, const tsr_kernel_call* raw_call) {
  const tsr_kernel_call& call = sdk::check_call(raw_call, 4, 1);
  const tsr_tensor_desc& self = sdk::tensor_arg(call, 0, "self");
  const tsr_tensor_desc& other = sdk::tensor_arg(call, 1, "other");
  const int64_t code = sdk::int_arg(call, 2, "op");
  (void)sdk::scalar_arg(call, 3, "p0");
  const tsr_tensor_desc& out = sdk::out_arg(call, 0);
  sdk::check_same_sizes(call, self, "self", out, "out");
  sdk::check_same_sizes(call, other, "other", out, "out");
  sdk::check_dtype(call, other, "other", self.dtype);
  if (code < 0 || code >= TSR_BINARY_CODE_COUNT) {
    sdk::throw_status(TSR_INVALID_ARGUMENT,
                      "%s: argument 'op' = %lld is not a tsr_binary_op code (0 to %d)",
                      sdk::op_name(call), static_cast<long long>(code), TSR_BINARY_CODE_COUNT - 1);
  }
  sdk::check_dtype(call, out, "out", bool_result(code) ? TSR_BOOL : self.dtype);
  const int c = static_cast<int>(code);
  switch (self.dtype) {
    case TSR_BOOL:
      return integer_typed<bool>(context, call, c, out, self, other);
    case TSR_UINT8:
      return integer_typed<uint8_t>(context, call, c, out, self, other);
    case TSR_INT8:
      return integer_typed<int8_t>(context, call, c, out, self, other);
    case TSR_INT16:
      return integer_typed<int16_t>(context, call, c, out, self, other);
    case TSR_INT32:
      return integer_typed<int32_t>(context, call, c, out, self, other);
    case TSR_INT64:
      return integer_typed<int64_t>(context, call, c, out, self, other);
    case TSR_FLOAT16:
      return floating_typed<half>(context, call, c, out, self, other);
    case TSR_BFLOAT16:
      return floating_typed<bfloat16>(context, call, c, out, self, other);
    case TSR_FLOAT32:
      return floating_typed<float>(context, call, c, out, self, other);
    case TSR_FLOAT64:
      return floating_typed<double>(context, call, c, out, self, other);
    default:
      sdk::throw_unsupported_dtype(call, "self", self.dtype, kPluginName);
  }
}

}  // namespace tessera::cpu
