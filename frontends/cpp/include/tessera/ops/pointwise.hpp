// tessera/ops/pointwise.hpp - typed wrappers of the pointwise op family
// (core/registry/defs/pointwise.def): elementwise math, activations, clamping,
// predicates, binary math, comparisons, where/masked_fill, lerp, addcmul.
//
// Naming follows PyTorch: `exp(t)` returns a new tensor, `exp_(t)` works in
// place and returns `t`, `exp_out(out, t)` writes into `out` (resized like
// PyTorch's out=) and returns it. Broadcasting and type promotion are
// PyTorch's (integer inputs to floating functions give the default float
// dtype, comparisons give bool). neg(t) is in ops/arithmetic.hpp.
#pragma once

#include <cstdint>
#include <optional>

#include "tessera/boxed_call.hpp"
#include "tessera/tensor.hpp"

namespace tessera {
namespace detail {

inline tsr_value pointwise_optional(std::optional<double> f) noexcept {
  return f ? value(*f) : none();
}
inline tsr_value pointwise_optional(const std::optional<Scalar>& s) noexcept {
  return s ? value(*s) : none();
}
inline tsr_value pointwise_optional_tensor(const Tensor& t) noexcept {
  return t.defined() ? value(t) : none();
}

}  // namespace detail

// ---------------------------------------------------------------------------
// Unary math: name(t), name_(t), name_out(out, t)
// ---------------------------------------------------------------------------

#define TESSERA_POINTWISE_FUNCTIONAL(name)             \
  inline Tensor name(const Tensor& self) {             \
    const tsr_value args[1] = {detail::value(self)};   \
    return detail::call(detail::op<#name>(), args, 1); \
  }
#define TESSERA_POINTWISE_IN_PLACE(name)                     \
  inline Tensor& name##_(Tensor& self) {                     \
    const tsr_value args[1] = {detail::value(self)};         \
    detail::call_in_place(detail::op<#name "_">(), args, 1); \
    return self;                                             \
  }
#define TESSERA_POINTWISE_OUT(name)                                      \
  inline Tensor& name##_out(Tensor& out, const Tensor& self) {           \
    const tsr_value args[2] = {detail::value(self), detail::value(out)}; \
    detail::call_in_place(detail::op<#name ".out">(), args, 2);          \
    return out;                                                          \
  }
#define TESSERA_POINTWISE_UNARY(name) \
  TESSERA_POINTWISE_FUNCTIONAL(name)  \
  TESSERA_POINTWISE_IN_PLACE(name)    \
  TESSERA_POINTWISE_OUT(name)

TESSERA_POINTWISE_IN_PLACE(neg)
TESSERA_POINTWISE_OUT(neg)
TESSERA_POINTWISE_UNARY(abs)
TESSERA_POINTWISE_UNARY(sign)
TESSERA_POINTWISE_UNARY(exp)
TESSERA_POINTWISE_UNARY(exp2)
TESSERA_POINTWISE_UNARY(expm1)
TESSERA_POINTWISE_UNARY(log)
TESSERA_POINTWISE_UNARY(log2)
TESSERA_POINTWISE_UNARY(log10)
TESSERA_POINTWISE_UNARY(log1p)
TESSERA_POINTWISE_UNARY(sqrt)
TESSERA_POINTWISE_UNARY(rsqrt)
TESSERA_POINTWISE_UNARY(reciprocal)
TESSERA_POINTWISE_UNARY(sin)
TESSERA_POINTWISE_UNARY(cos)
TESSERA_POINTWISE_UNARY(tan)
TESSERA_POINTWISE_UNARY(asin)
TESSERA_POINTWISE_UNARY(acos)
TESSERA_POINTWISE_UNARY(atan)
TESSERA_POINTWISE_UNARY(sinh)
TESSERA_POINTWISE_UNARY(cosh)
TESSERA_POINTWISE_UNARY(tanh)
TESSERA_POINTWISE_UNARY(asinh)
TESSERA_POINTWISE_UNARY(acosh)
TESSERA_POINTWISE_UNARY(atanh)
TESSERA_POINTWISE_UNARY(sigmoid)
TESSERA_POINTWISE_UNARY(erf)
TESSERA_POINTWISE_UNARY(erfc)
TESSERA_POINTWISE_UNARY(erfinv)
TESSERA_POINTWISE_UNARY(lgamma)
TESSERA_POINTWISE_UNARY(digamma)
TESSERA_POINTWISE_UNARY(floor)
TESSERA_POINTWISE_UNARY(ceil)
TESSERA_POINTWISE_UNARY(round)
TESSERA_POINTWISE_UNARY(trunc)
TESSERA_POINTWISE_UNARY(fix)
TESSERA_POINTWISE_UNARY(frac)
TESSERA_POINTWISE_UNARY(square)
TESSERA_POINTWISE_UNARY(bitwise_not)
TESSERA_POINTWISE_UNARY(logical_not)
TESSERA_POINTWISE_UNARY(relu)
TESSERA_POINTWISE_UNARY(silu)
TESSERA_POINTWISE_UNARY(mish)
TESSERA_POINTWISE_UNARY(hardsigmoid)
TESSERA_POINTWISE_UNARY(hardswish)
TESSERA_POINTWISE_FUNCTIONAL(selu)
TESSERA_POINTWISE_IN_PLACE(selu)

// Predicates (bool results).
TESSERA_POINTWISE_FUNCTIONAL(isnan)
TESSERA_POINTWISE_OUT(isnan)
TESSERA_POINTWISE_FUNCTIONAL(isinf)
TESSERA_POINTWISE_OUT(isinf)
TESSERA_POINTWISE_FUNCTIONAL(isposinf)
TESSERA_POINTWISE_OUT(isposinf)
TESSERA_POINTWISE_FUNCTIONAL(isneginf)
TESSERA_POINTWISE_OUT(isneginf)
TESSERA_POINTWISE_FUNCTIONAL(signbit)
TESSERA_POINTWISE_OUT(signbit)
TESSERA_POINTWISE_FUNCTIONAL(isfinite)

#undef TESSERA_POINTWISE_UNARY
#undef TESSERA_POINTWISE_OUT
#undef TESSERA_POINTWISE_IN_PLACE
#undef TESSERA_POINTWISE_FUNCTIONAL

// round to `decimals` digits (negative: tens, hundreds ...), half to even.
inline Tensor round(const Tensor& self, int64_t decimals) {
  const tsr_value args[2] = {detail::value(self), detail::value(decimals)};
  return detail::call(detail::op<"round.decimals">(), args, 2);
}

// log(x / (1 - x)), with x clamped to [eps, 1 - eps] when eps is given.
inline Tensor logit(const Tensor& self, std::optional<double> eps = std::nullopt) {
  const tsr_value args[2] = {detail::value(self), detail::pointwise_optional(eps)};
  return detail::call(detail::op<"logit">(), args, 2);
}

// NaN -> nan, +inf -> posinf, -inf -> neginf (defaults: 0, the dtype's max
// and lowest finite values).
inline Tensor nan_to_num(const Tensor& self, std::optional<double> nan = std::nullopt,
                         std::optional<double> posinf = std::nullopt,
                         std::optional<double> neginf = std::nullopt) {
  const tsr_value args[4] = {detail::value(self), detail::pointwise_optional(nan),
                             detail::pointwise_optional(posinf),
                             detail::pointwise_optional(neginf)};
  return detail::call(detail::op<"nan_to_num">(), args, 4);
}
inline Tensor& nan_to_num_(Tensor& self, std::optional<double> nan = std::nullopt,
                           std::optional<double> posinf = std::nullopt,
                           std::optional<double> neginf = std::nullopt) {
  const tsr_value args[4] = {detail::value(self), detail::pointwise_optional(nan),
                             detail::pointwise_optional(posinf),
                             detail::pointwise_optional(neginf)};
  detail::call_in_place(detail::op<"nan_to_num_">(), args, 4);
  return self;
}

// ---------------------------------------------------------------------------
// Activations with parameters (PyTorch's defaults)
// ---------------------------------------------------------------------------

inline Tensor leaky_relu(const Tensor& self, const Scalar& negative_slope = 0.01) {
  const tsr_value args[2] = {detail::value(self), detail::value(negative_slope)};
  return detail::call(detail::op<"leaky_relu">(), args, 2);
}
inline Tensor elu(const Tensor& self, const Scalar& alpha = 1, const Scalar& scale = 1,
                  const Scalar& input_scale = 1) {
  const tsr_value args[4] = {detail::value(self), detail::value(alpha), detail::value(scale),
                             detail::value(input_scale)};
  return detail::call(detail::op<"elu">(), args, 4);
}
inline Tensor celu(const Tensor& self, const Scalar& alpha = 1.0) {
  const tsr_value args[2] = {detail::value(self), detail::value(alpha)};
  return detail::call(detail::op<"celu">(), args, 2);
}
// approximate: "none" (x * Phi(x)) or "tanh".
inline Tensor gelu(const Tensor& self, const char* approximate = "none") {
  const tsr_value args[2] = {detail::value(self), detail::value(approximate)};
  return detail::call(detail::op<"gelu">(), args, 2);
}
inline Tensor softplus(const Tensor& self, const Scalar& beta = 1, const Scalar& threshold = 20) {
  const tsr_value args[3] = {detail::value(self), detail::value(beta), detail::value(threshold)};
  return detail::call(detail::op<"softplus">(), args, 3);
}
inline Tensor hardtanh(const Tensor& self, const Scalar& min_val = -1, const Scalar& max_val = 1) {
  const tsr_value args[3] = {detail::value(self), detail::value(min_val), detail::value(max_val)};
  return detail::call(detail::op<"hardtanh">(), args, 3);
}

// ---------------------------------------------------------------------------
// Clamping
// ---------------------------------------------------------------------------

// Scalar bounds (either may be nullopt, not both); max wins when min > max.
inline Tensor clamp(const Tensor& self, const std::optional<Scalar>& min,
                    const std::optional<Scalar>& max = std::nullopt) {
  const tsr_value args[3] = {detail::value(self), detail::pointwise_optional(min),
                             detail::pointwise_optional(max)};
  return detail::call(detail::op<"clamp">(), args, 3);
}
inline Tensor& clamp_(Tensor& self, const std::optional<Scalar>& min,
                      const std::optional<Scalar>& max = std::nullopt) {
  const tsr_value args[3] = {detail::value(self), detail::pointwise_optional(min),
                             detail::pointwise_optional(max)};
  detail::call_in_place(detail::op<"clamp_">(), args, 3);
  return self;
}
inline Tensor& clamp_out(Tensor& out, const Tensor& self, const std::optional<Scalar>& min,
                         const std::optional<Scalar>& max = std::nullopt) {
  const tsr_value args[4] = {detail::value(self), detail::pointwise_optional(min),
                             detail::pointwise_optional(max), detail::value(out)};
  detail::call_in_place(detail::op<"clamp.out">(), args, 4);
  return out;
}
// Tensor bounds (an undefined Tensor is None), broadcast with self.
inline Tensor clamp(const Tensor& self, const Tensor& min, const Tensor& max) {
  const tsr_value args[3] = {detail::value(self), detail::pointwise_optional_tensor(min),
                             detail::pointwise_optional_tensor(max)};
  return detail::call(detail::op<"clamp.Tensor">(), args, 3);
}
inline Tensor clip(const Tensor& self, const std::optional<Scalar>& min,
                   const std::optional<Scalar>& max = std::nullopt) {
  return clamp(self, min, max);
}
inline Tensor clamp_min(const Tensor& self, const Scalar& min) {
  const tsr_value args[2] = {detail::value(self), detail::value(min)};
  return detail::call(detail::op<"clamp_min">(), args, 2);
}
inline Tensor clamp_min(const Tensor& self, const Tensor& min) {
  const tsr_value args[2] = {detail::value(self), detail::value(min)};
  return detail::call(detail::op<"clamp_min.Tensor">(), args, 2);
}
inline Tensor clamp_max(const Tensor& self, const Scalar& max) {
  const tsr_value args[2] = {detail::value(self), detail::value(max)};
  return detail::call(detail::op<"clamp_max">(), args, 2);
}
inline Tensor clamp_max(const Tensor& self, const Tensor& max) {
  const tsr_value args[2] = {detail::value(self), detail::value(max)};
  return detail::call(detail::op<"clamp_max.Tensor">(), args, 2);
}

// ---------------------------------------------------------------------------
// Binary math and comparisons: name(a, b) for Tensor/Tensor and Tensor/Scalar,
// name_(self, other) in place, name_out(out, a, b)
// ---------------------------------------------------------------------------

#define TESSERA_POINTWISE_BINARY_TT(name, overload)                        \
  inline Tensor name(const Tensor& self, const Tensor& other) {            \
    const tsr_value args[2] = {detail::value(self), detail::value(other)}; \
    return detail::call(detail::op<overload>(), args, 2);                  \
  }
#define TESSERA_POINTWISE_BINARY_TS(name, overload)                        \
  inline Tensor name(const Tensor& self, const Scalar& other) {            \
    const tsr_value args[2] = {detail::value(self), detail::value(other)}; \
    return detail::call(detail::op<overload>(), args, 2);                  \
  }
#define TESSERA_POINTWISE_BINARY_IN_PLACE(name, overload, Other)           \
  inline Tensor& name##_(Tensor& self, const Other& other) {               \
    const tsr_value args[2] = {detail::value(self), detail::value(other)}; \
    detail::call_in_place(detail::op<overload>(), args, 2);                \
    return self;                                                           \
  }
#define TESSERA_POINTWISE_BINARY_OUT(name, overload)                                           \
  inline Tensor& name##_out(Tensor& out, const Tensor& self, const Tensor& other) {            \
    const tsr_value args[3] = {detail::value(self), detail::value(other), detail::value(out)}; \
    detail::call_in_place(detail::op<overload>(), args, 3);                                    \
    return out;                                                                                \
  }

TESSERA_POINTWISE_BINARY_TT(pow, "pow.Tensor_Tensor")
TESSERA_POINTWISE_BINARY_TS(pow, "pow.Tensor_Scalar")
TESSERA_POINTWISE_BINARY_IN_PLACE(pow, "pow_.Tensor", Tensor)
TESSERA_POINTWISE_BINARY_IN_PLACE(pow, "pow_.Scalar", Scalar)
TESSERA_POINTWISE_BINARY_OUT(pow, "pow.Tensor_Tensor_out")
TESSERA_POINTWISE_BINARY_TT(float_power, "float_power.Tensor_Tensor")
TESSERA_POINTWISE_BINARY_TS(float_power, "float_power.Tensor_Scalar")
TESSERA_POINTWISE_BINARY_TT(atan2, "atan2")
TESSERA_POINTWISE_BINARY_IN_PLACE(atan2, "atan2_", Tensor)
TESSERA_POINTWISE_BINARY_OUT(atan2, "atan2.out")
TESSERA_POINTWISE_BINARY_TT(maximum, "maximum")
TESSERA_POINTWISE_BINARY_OUT(maximum, "maximum.out")
TESSERA_POINTWISE_BINARY_TT(minimum, "minimum")
TESSERA_POINTWISE_BINARY_OUT(minimum, "minimum.out")
TESSERA_POINTWISE_BINARY_TT(fmax, "fmax")
TESSERA_POINTWISE_BINARY_TT(fmin, "fmin")
TESSERA_POINTWISE_BINARY_TT(remainder, "remainder.Tensor")
TESSERA_POINTWISE_BINARY_TS(remainder, "remainder.Scalar")
TESSERA_POINTWISE_BINARY_IN_PLACE(remainder, "remainder_.Tensor", Tensor)
TESSERA_POINTWISE_BINARY_OUT(remainder, "remainder.Tensor_out")
TESSERA_POINTWISE_BINARY_TT(fmod, "fmod.Tensor")
TESSERA_POINTWISE_BINARY_TS(fmod, "fmod.Scalar")
TESSERA_POINTWISE_BINARY_IN_PLACE(fmod, "fmod_.Tensor", Tensor)
TESSERA_POINTWISE_BINARY_OUT(fmod, "fmod.Tensor_out")
TESSERA_POINTWISE_BINARY_TT(floor_divide, "floor_divide")
TESSERA_POINTWISE_BINARY_TS(floor_divide, "floor_divide.Scalar")
TESSERA_POINTWISE_BINARY_IN_PLACE(floor_divide, "floor_divide_.Tensor", Tensor)
TESSERA_POINTWISE_BINARY_TT(true_divide, "true_divide.Tensor")
TESSERA_POINTWISE_BINARY_TS(true_divide, "true_divide.Scalar")
TESSERA_POINTWISE_BINARY_TT(bitwise_and, "bitwise_and.Tensor")
TESSERA_POINTWISE_BINARY_TS(bitwise_and, "bitwise_and.Scalar")
TESSERA_POINTWISE_BINARY_IN_PLACE(bitwise_and, "bitwise_and_.Tensor", Tensor)
TESSERA_POINTWISE_BINARY_TT(bitwise_or, "bitwise_or.Tensor")
TESSERA_POINTWISE_BINARY_TS(bitwise_or, "bitwise_or.Scalar")
TESSERA_POINTWISE_BINARY_IN_PLACE(bitwise_or, "bitwise_or_.Tensor", Tensor)
TESSERA_POINTWISE_BINARY_TT(bitwise_xor, "bitwise_xor.Tensor")
TESSERA_POINTWISE_BINARY_TS(bitwise_xor, "bitwise_xor.Scalar")
TESSERA_POINTWISE_BINARY_IN_PLACE(bitwise_xor, "bitwise_xor_.Tensor", Tensor)
TESSERA_POINTWISE_BINARY_TT(bitwise_left_shift, "bitwise_left_shift.Tensor")
TESSERA_POINTWISE_BINARY_TS(bitwise_left_shift, "bitwise_left_shift.Tensor_Scalar")
TESSERA_POINTWISE_BINARY_TT(bitwise_right_shift, "bitwise_right_shift.Tensor")
TESSERA_POINTWISE_BINARY_TS(bitwise_right_shift, "bitwise_right_shift.Tensor_Scalar")
TESSERA_POINTWISE_BINARY_TT(logical_and, "logical_and")
TESSERA_POINTWISE_BINARY_IN_PLACE(logical_and, "logical_and_", Tensor)
TESSERA_POINTWISE_BINARY_OUT(logical_and, "logical_and.out")
TESSERA_POINTWISE_BINARY_TT(logical_or, "logical_or")
TESSERA_POINTWISE_BINARY_IN_PLACE(logical_or, "logical_or_", Tensor)
TESSERA_POINTWISE_BINARY_OUT(logical_or, "logical_or.out")
TESSERA_POINTWISE_BINARY_TT(logical_xor, "logical_xor")
TESSERA_POINTWISE_BINARY_IN_PLACE(logical_xor, "logical_xor_", Tensor)
TESSERA_POINTWISE_BINARY_OUT(logical_xor, "logical_xor.out")
TESSERA_POINTWISE_BINARY_TT(eq, "eq.Tensor")
TESSERA_POINTWISE_BINARY_TS(eq, "eq.Scalar")
TESSERA_POINTWISE_BINARY_IN_PLACE(eq, "eq_.Tensor", Tensor)
TESSERA_POINTWISE_BINARY_OUT(eq, "eq.Tensor_out")
TESSERA_POINTWISE_BINARY_TT(ne, "ne.Tensor")
TESSERA_POINTWISE_BINARY_TS(ne, "ne.Scalar")
TESSERA_POINTWISE_BINARY_IN_PLACE(ne, "ne_.Tensor", Tensor)
TESSERA_POINTWISE_BINARY_OUT(ne, "ne.Tensor_out")
TESSERA_POINTWISE_BINARY_TT(lt, "lt.Tensor")
TESSERA_POINTWISE_BINARY_TS(lt, "lt.Scalar")
TESSERA_POINTWISE_BINARY_IN_PLACE(lt, "lt_.Tensor", Tensor)
TESSERA_POINTWISE_BINARY_OUT(lt, "lt.Tensor_out")
TESSERA_POINTWISE_BINARY_TT(le, "le.Tensor")
TESSERA_POINTWISE_BINARY_TS(le, "le.Scalar")
TESSERA_POINTWISE_BINARY_IN_PLACE(le, "le_.Tensor", Tensor)
TESSERA_POINTWISE_BINARY_OUT(le, "le.Tensor_out")
TESSERA_POINTWISE_BINARY_TT(gt, "gt.Tensor")
TESSERA_POINTWISE_BINARY_TS(gt, "gt.Scalar")
TESSERA_POINTWISE_BINARY_IN_PLACE(gt, "gt_.Tensor", Tensor)
TESSERA_POINTWISE_BINARY_OUT(gt, "gt.Tensor_out")
TESSERA_POINTWISE_BINARY_TT(ge, "ge.Tensor")
TESSERA_POINTWISE_BINARY_TS(ge, "ge.Scalar")
TESSERA_POINTWISE_BINARY_IN_PLACE(ge, "ge_.Tensor", Tensor)
TESSERA_POINTWISE_BINARY_OUT(ge, "ge.Tensor_out")
TESSERA_POINTWISE_BINARY_TT(copysign, "copysign.Tensor")
TESSERA_POINTWISE_BINARY_TS(copysign, "copysign.Scalar")
TESSERA_POINTWISE_BINARY_TT(hypot, "hypot")
TESSERA_POINTWISE_BINARY_TT(xlogy, "xlogy.Tensor")
TESSERA_POINTWISE_BINARY_TS(xlogy, "xlogy.Scalar_Other")
TESSERA_POINTWISE_BINARY_TT(logaddexp, "logaddexp")

#undef TESSERA_POINTWISE_BINARY_OUT
#undef TESSERA_POINTWISE_BINARY_IN_PLACE
#undef TESSERA_POINTWISE_BINARY_TS
#undef TESSERA_POINTWISE_BINARY_TT

// Scalar base.
inline Tensor pow(const Scalar& self, const Tensor& exponent) {
  const tsr_value args[2] = {detail::value(self), detail::value(exponent)};
  return detail::call(detail::op<"pow.Scalar">(), args, 2);
}

// Division with rounding_mode "trunc" or "floor" (nullptr: true division).
inline Tensor div(const Tensor& self, const Tensor& other, const char* rounding_mode) {
  const tsr_value args[3] = {detail::value(self), detail::value(other),
                             rounding_mode ? detail::value(rounding_mode) : detail::none()};
  return detail::call(detail::op<"div.Tensor_mode">(), args, 3);
}
inline Tensor div(const Tensor& self, const Scalar& other, const char* rounding_mode) {
  const tsr_value args[3] = {detail::value(self), detail::value(other),
                             rounding_mode ? detail::value(rounding_mode) : detail::none()};
  return detail::call(detail::op<"div.Scalar_mode">(), args, 3);
}

// other - alpha * self
inline Tensor rsub(const Tensor& self, const Tensor& other, const Scalar& alpha = 1) {
  const tsr_value args[3] = {detail::value(self), detail::value(other), detail::value(alpha)};
  return detail::call(detail::op<"rsub.Tensor">(), args, 3);
}
inline Tensor rsub(const Tensor& self, const Scalar& other, const Scalar& alpha = 1) {
  const tsr_value args[3] = {detail::value(self), detail::value(other), detail::value(alpha)};
  return detail::call(detail::op<"rsub.Scalar">(), args, 3);
}

// ---------------------------------------------------------------------------
// Selection and composites
// ---------------------------------------------------------------------------

// condition ? self : other, broadcast together; condition must be bool.
inline Tensor where(const Tensor& condition, const Tensor& self, const Tensor& other) {
  const tsr_value args[3] = {detail::value(condition), detail::value(self), detail::value(other)};
  return detail::call(detail::op<"where.self">(), args, 3);
}
inline Tensor where(const Tensor& condition, const Scalar& self, const Tensor& other) {
  const tsr_value args[3] = {detail::value(condition), detail::value(self), detail::value(other)};
  return detail::call(detail::op<"where.ScalarSelf">(), args, 3);
}
inline Tensor where(const Tensor& condition, const Tensor& self, const Scalar& other) {
  const tsr_value args[3] = {detail::value(condition), detail::value(self), detail::value(other)};
  return detail::call(detail::op<"where.ScalarOther">(), args, 3);
}
inline Tensor where(const Tensor& condition, const Scalar& self, const Scalar& other) {
  const tsr_value args[3] = {detail::value(condition), detail::value(self), detail::value(other)};
  return detail::call(detail::op<"where.Scalar">(), args, 3);
}

// self with `value` where the bool `mask` is true (value: a Scalar or a 0-d tensor).
inline Tensor masked_fill(const Tensor& self, const Tensor& mask, const Scalar& value) {
  const tsr_value args[3] = {detail::value(self), detail::value(mask), detail::value(value)};
  return detail::call(detail::op<"masked_fill.Scalar">(), args, 3);
}
inline Tensor masked_fill(const Tensor& self, const Tensor& mask, const Tensor& value) {
  const tsr_value args[3] = {detail::value(self), detail::value(mask), detail::value(value)};
  return detail::call(detail::op<"masked_fill.Tensor">(), args, 3);
}
inline Tensor& masked_fill_(Tensor& self, const Tensor& mask, const Scalar& value) {
  const tsr_value args[3] = {detail::value(self), detail::value(mask), detail::value(value)};
  detail::call_in_place(detail::op<"masked_fill_.Scalar">(), args, 3);
  return self;
}

// self + weight * (end - self)
inline Tensor lerp(const Tensor& self, const Tensor& end, const Scalar& weight) {
  const tsr_value args[3] = {detail::value(self), detail::value(end), detail::value(weight)};
  return detail::call(detail::op<"lerp.Scalar">(), args, 3);
}
inline Tensor lerp(const Tensor& self, const Tensor& end, const Tensor& weight) {
  const tsr_value args[3] = {detail::value(self), detail::value(end), detail::value(weight)};
  return detail::call(detail::op<"lerp.Tensor">(), args, 3);
}

// self + value * tensor1 * tensor2
inline Tensor addcmul(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2,
                      const Scalar& value = 1) {
  const tsr_value args[4] = {detail::value(self), detail::value(tensor1), detail::value(tensor2),
                             detail::value(value)};
  return detail::call(detail::op<"addcmul">(), args, 4);
}
// self + value * tensor1 / tensor2
inline Tensor addcdiv(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2,
                      const Scalar& value = 1) {
  const tsr_value args[4] = {detail::value(self), detail::value(tensor1), detail::value(tensor2),
                             detail::value(value)};
  return detail::call(detail::op<"addcdiv">(), args, 4);
}

// In place: self += weight * (end - self); self += value * tensor1 * tensor2;
// self += value * tensor1 / tensor2 (the optimizers' update steps).
inline Tensor& lerp_(Tensor& self, const Tensor& end, const Scalar& weight) {
  const tsr_value args[3] = {detail::value(self), detail::value(end), detail::value(weight)};
  detail::call_in_place(detail::op<"lerp_.Scalar">(), args, 3);
  return self;
}
inline Tensor& addcmul_(Tensor& self, const Tensor& tensor1, const Tensor& tensor2,
                        const Scalar& value = 1) {
  const tsr_value args[4] = {detail::value(self), detail::value(tensor1), detail::value(tensor2),
                             detail::value(value)};
  detail::call_in_place(detail::op<"addcmul_">(), args, 4);
  return self;
}
inline Tensor& addcdiv_(Tensor& self, const Tensor& tensor1, const Tensor& tensor2,
                        const Scalar& value = 1) {
  const tsr_value args[4] = {detail::value(self), detail::value(tensor1), detail::value(tensor2),
                             detail::value(value)};
  detail::call_in_place(detail::op<"addcdiv_">(), args, 4);
  return self;
}

}  // namespace tessera
