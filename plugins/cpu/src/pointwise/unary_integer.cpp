// unary_integer.cpp - _unary on bool and the integer dtypes. Arithmetic wraps
// modulo 2^bits (neg and abs of the minimum value give it back, as in
// PyTorch); floor, ceil, round, trunc and nan_to_num are the identity; the
// floating-point predicates are constant (isnan false, isfinite true).
#include <type_traits>

#include "loops.hpp"
#include "pointwise_kernels.hpp"
#include "tessera/opcodes.h"
#include "tessera/sdk/dtype_traits.hpp"
#include "tessera/sdk/kernel_args.hpp"

namespace tessera::cpu::pointwise {
namespace {

template <class T>
void integer_typed(const tsr_plugin_context& context, const tsr_kernel_call& call, int code,
                   const tsr_tensor_desc& out, const tsr_tensor_desc& in, const tsr_scalar* p) {
  constexpr bool kBool = std::is_same_v<T, bool>;
  using W = wrap_t<T>;
  const auto map = [&](const auto& f) { unary_apply<T, T>(context, out, in, 1, f); };
  const auto test = [&](const auto& f) { unary_apply<T, bool>(context, out, in, 1, f); };
  const auto identity = [](T x) { return x; };
  switch (code) {
    case TSR_UNARY_SIGN:
      if constexpr (kBool || std::is_unsigned_v<T>) {
        return map([](T x) { return static_cast<T>(x != 0); });
      } else {
        return map([](T x) { return static_cast<T>((x > 0) - (x < 0)); });
      }
    case TSR_UNARY_NAN_TO_NUM:
      return map(identity);
    case TSR_UNARY_LOGICAL_NOT:
      return test([](T x) { return x == T(0); });
    case TSR_UNARY_ISNAN:
    case TSR_UNARY_ISINF:
    case TSR_UNARY_ISPOSINF:
    case TSR_UNARY_ISNEGINF:
      return test([](T) { return false; });
    case TSR_UNARY_ISFINITE:
      return test([](T) { return true; });
    case TSR_UNARY_SIGNBIT:
      if constexpr (std::is_signed_v<T>) {
        return test([](T x) { return x < 0; });
      } else {
        return test([](T) { return false; });
      }
    case TSR_UNARY_BITWISE_NOT:
      if constexpr (kBool) {
        return map([](T x) { return !x; });
      } else {
        return map([](T x) { return static_cast<T>(~x); });
      }
    default:
      break;
  }
  if constexpr (!kBool) {
    const T p0 = scalar_convert<T>(p[0]), p1 = scalar_convert<T>(p[1]);
    switch (code) {
      case TSR_UNARY_NEG:
        return map([](T x) { return static_cast<T>(W(0) - static_cast<W>(x)); });
      case TSR_UNARY_ABS:
        if constexpr (std::is_signed_v<T>) {
          return map([](T x) { return x < 0 ? static_cast<T>(W(0) - static_cast<W>(x)) : x; });
        } else {
          return map(identity);
        }
      case TSR_UNARY_FLOOR:
      case TSR_UNARY_CEIL:
      case TSR_UNARY_ROUND:
      case TSR_UNARY_TRUNC:
        return map(identity);
      case TSR_UNARY_RELU:
        return map([](T x) { return x < 0 ? T(0) : x; });
      case TSR_UNARY_SQUARE:
        return map([](T x) { return static_cast<T>(static_cast<W>(x) * static_cast<W>(x)); });
      case TSR_UNARY_CLAMP:
        return map([lo = p0, hi = p1](T x) {
          const T r = x < lo ? lo : x;
          return r > hi ? hi : r;
        });
      case TSR_UNARY_CLAMP_MIN:
        return map([lo = p0](T x) { return x < lo ? lo : x; });
      case TSR_UNARY_CLAMP_MAX:
        return map([hi = p0](T x) { return x > hi ? hi : x; });
      default:
        break;
    }
  }
  sdk::throw_unsupported_dtype(call, "self", in.dtype, kPluginName);
}

}  // namespace

void unary_integer(const tsr_plugin_context& context, const tsr_kernel_call& call, int code,
                   const tsr_tensor_desc& out, const tsr_tensor_desc& in, const tsr_scalar* p) {
  switch (in.dtype) {
    case TSR_BOOL:
      return integer_typed<bool>(context, call, code, out, in, p);
    case TSR_UINT8:
      return integer_typed<uint8_t>(context, call, code, out, in, p);
    case TSR_INT8:
      return integer_typed<int8_t>(context, call, code, out, in, p);
    case TSR_INT16:
      return integer_typed<int16_t>(context, call, code, out, in, p);
    case TSR_INT32:
      return integer_typed<int32_t>(context, call, code, out, in, p);
    case TSR_INT64:
      return integer_typed<int64_t>(context, call, code, out, in, p);
    default:
      sdk::throw_unsupported_dtype(call, "self", in.dtype, kPluginName);
  }
}

}  // namespace tessera::cpu::pointwise
