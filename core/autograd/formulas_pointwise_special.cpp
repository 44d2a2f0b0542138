// formulas_pointwise_special.cpp - derivatives of the pointwise ops that are
// not one row of formulas_pointwise.cpp's unary and binary tables: the special
// functions (lgamma, digamma with its trigamma, erfinv), SELU and CELU,
// nan_to_num, and the binary ops that are aliases or variants of others
// (true_divide, float_power, xlogy, copysign, logaddexp, clamp with tensor
// bounds, floor_divide, remainder with a Scalar self).
#include <cmath>
#include <numbers>

#include "autograd/formulas.h"
#include "autograd/grad_ops.h"
#include "dispatch/op_api.h"
#include "ops/shorthands.h"

namespace tsr::autograd {
namespace {

using namespace op;
using op::add;  // not autograd::add (grad_ops.h)

R g_of(BackwardContext& c) { return TensorRef::borrow(c.grad()); }
double arg_scalar(BackwardContext& c, int i) { return scalar_value(c.scalar(i)); }
R exp(const R& x) { return unary(OpId::exp, x); }
bool is_tensor_arg(BackwardContext& c, int i) {
  return c.op().schema.args[static_cast<size_t>(i)].kind == ArgKind::kTensor;
}

// trigamma(x) = d digamma / dx, built from registry ops so any device runs
// it: the recurrence trigamma(x) = 1/x^2 + trigamma(x + 1) carries x to
// z = x + 6, where the asymptotic series 1/z + 1/(2z^2) + 1/(6z^3) -
// 1/(30z^5) + 1/(42z^7) - 1/(30z^9) is accurate to ~1e-11; x < 0.5 reflects
// through trigamma(1 - x) + trigamma(x) = pi^2 / sin^2(pi x).
R trigamma_positive(const R& x) {
  R sum = zeros_like(x);
  R z = x;
  for (int k = 0; k < 6; ++k) {
    sum = add(sum, op::call(OpId::reciprocal, square(z)));
    z = add(z, 1.0);
  }
  R inv = op::call(OpId::reciprocal, z);
  R inv2 = square(inv);
  // 1/z + 1/(2z^2) + (1/z^3)(1/6 - 1/(30z^2) + 1/(42z^4) - 1/(30z^6))
  R tail = add(mul(inv2, -1.0 / 30.0), 1.0 / 42.0);
  tail = add(mul(tail, inv2), -1.0 / 30.0);
  tail = add(mul(tail, inv2), 1.0 / 6.0);
  R series = add(add(inv, mul(inv2, 0.5)), mul(mul(inv2, inv), tail));
  return add(sum, series);
}
R trigamma(const R& x) {
  R reflected_arg = op::call(OpId::rsub_Scalar, x, 1.0);  // 1 - x
  R small = lt(x, 0.5);
  R base = trigamma_positive(where(small, reflected_arg, x));
  R s_pi = unary(OpId::sin, mul(x, std::numbers::pi));
  R reflection = sub(
      op::call(OpId::reciprocal, mul(square(s_pi), 1.0 / (std::numbers::pi * std::numbers::pi))),
      base);
  return where(small, reflection, base);
}

void lgamma_f(BackwardContext& c) { c.set(0, mul(g_of(c), unary(OpId::digamma, c.input(0)))); }
void digamma_f(BackwardContext& c) { c.set(0, mul(g_of(c), trigamma(c.input(0)))); }
// erfinv' = sqrt(pi)/2 exp(erfinv(x)^2).
void erfinv_f(BackwardContext& c) {
  c.set(0, mul(g_of(c), mul(exp(square(c.result())), std::sqrt(std::numbers::pi) / 2.0)));
}

// selu = scale * elu(x, alpha); celu(x, alpha) = max(0, x) + min(0, alpha (exp(x/alpha) - 1)).
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;
void selu_f(BackwardContext& c) {
  R x = c.input(0);
  R g = g_of(c);
  c.set(0, where(gt(x, 0.0), mul(g, kSeluScale), mul(g, mul(exp(x), kSeluScale * kSeluAlpha))));
}
void celu_f(BackwardContext& c) {
  R x = c.input(0);
  R g = g_of(c);
  const double alpha = arg_scalar(c, 1);
  c.set(0, where(gt(x, 0.0), g, mul(g, exp(mul(x, 1.0 / alpha)))));
}

// true_divide = div.
void true_divide_f(BackwardContext& c) {
  R g = g_of(c);
  if (!is_tensor_arg(c, 1)) {
    c.set(0, mul(g, 1.0 / arg_scalar(c, 1)));
    return;
  }
  R b = c.input(1);
  if (c.needs(0)) c.set(0, div(g, b));
  if (c.needs(1)) c.set(1, neg(div(mul(g, c.input(0)), square(b))));
}
// float_power(Tensor self, Scalar e) = self^e in float64: e self^(e-1).
void float_power_ts_f(BackwardContext& c) {
  const double e = arg_scalar(c, 1);
  R x = c.input(0);
  R p = op::call(OpId::float_power_Tensor_Scalar, x, static_cast<double>(e - 1.0));
  c.set(0, mul(g_of(c), mul(p, e)));
}
// float_power(Scalar self, Tensor e): result log(self).
void float_power_st_f(BackwardContext& c) {
  c.set(1, mul(g_of(c), mul(c.result(), std::log(arg_scalar(c, 0)))));
}
// xlogy(x, y) = x log y (0 where x == 0). PyTorch 2's derivatives.yaml:
// d/dx = xlogy(g, y), zeroed where x == 0 and y <= 0 (1.13 gave 0 wherever
// x == 0; a plain g * log y gives -inf or NaN there, and NaN where g == 0 and
// y == 0); d/dy = g x / y.
void xlogy_f(BackwardContext& c) {
  R g = g_of(c);
  const bool x_tensor = is_tensor_arg(c, 0), y_tensor = is_tensor_arg(c, 1);
  if (x_tensor && c.needs(0)) {
    R x = c.input(0);
    R x_zero = op::call(OpId::eq_Scalar, x, 0.0);
    if (y_tensor) {
      R y = c.input(1);
      R r = op::call(OpId::xlogy_Tensor, g, y);
      c.set(0, where(x_zero, where(le(y, 0.0), zeros_like(r), r), r));
    } else {
      const double y = arg_scalar(c, 1);
      R r = op::call(OpId::xlogy_Scalar_Other, g, static_cast<double>(y));
      c.set(0, y > 0 ? r : where(x_zero, zeros_like(r), r));
    }
  }
  if (y_tensor && c.needs(1)) {
    R y = c.input(1);
    R x = x_tensor ? c.input(0) : add(zeros_like(y), arg_scalar(c, 0));
    c.set(1, mul(g, div(x, y)));
  }
}
// copysign(a, b) = |a| sign(b): d/da = result / a (0 where a == 0); b gets 0.
void copysign_f(BackwardContext& c) {
  R g = g_of(c);
  R a = c.input(0);
  R ratio = div(c.result(), a);
  R zero_a = op::call(OpId::eq_Scalar, a, 0.0);
  c.set(0, where(zero_a, zeros_like(g), mul(g, ratio)));
  if (is_tensor_arg(c, 1) && c.needs(1)) c.set(1, zeros_like(c.input(1)));
}
// logaddexp(a, b) = log(e^a + e^b): d/da = 1 / (1 + e^(b - a)).
void logaddexp_f(BackwardContext& c) {
  R g = g_of(c);
  R a = c.input(0), b = c.input(1);
  if (c.needs(0)) c.set(0, div(g, add(exp(sub(b, a)), 1.0)));
  if (c.needs(1)) c.set(1, div(g, add(exp(sub(a, b)), 1.0)));
}
// clamp_min(x, min) / clamp_max(x, max) with tensor bounds: the gradient goes
// to x where x is inside, to the bound where the bound was taken.
template <bool Min>
void clamp_tensor_f(BackwardContext& c) {
  R g = g_of(c);
  R x = c.input(0), bound = c.input(1);
  R inside = op::call(Min ? OpId::ge_Tensor : OpId::le_Tensor, x, bound);
  if (c.needs(0)) c.set(0, where(inside, g, zeros_like(g)));
  if (c.needs(1)) c.set(1, where(inside, zeros_like(g), g));
}
// floor_divide: piecewise constant, so zero almost everywhere (PyTorch's too).
void floor_divide_f(BackwardContext& c) {
  R g = g_of(c);
  c.set(0, zeros_like(g));
  if (is_tensor_arg(c, 1) && c.needs(1)) c.set(1, zeros_like(c.input(1)));
}
// nan_to_num: the identity where x is finite; replaced values are constants.
void nan_to_num_f(BackwardContext& c) {
  R g = g_of(c);
  c.set(0, where(unary(OpId::isfinite, c.input(0)), g, zeros_like(g)));
}
// remainder(Scalar self, Tensor other) = self - floor(self / other) other.
void remainder_scalar_tensor_f(BackwardContext& c) {
  R other = c.input(1);
  R q = unary(OpId::floor, div(add(zeros_like(other), arg_scalar(c, 0)), other));
  c.set(1, neg(mul(g_of(c), q)));
}
}  // namespace

void add_pointwise_special_formulas(FormulaTable& f) {
  const uint32_t self = arg_bit(0), result = arg_bit(0), both = arg_bit(0) | arg_bit(1);
  f.add({OpId::lgamma, OpId::lgamma_}, lgamma_f, self);
  f.add({OpId::digamma, OpId::digamma_}, digamma_f, self);
  f.add({OpId::erfinv, OpId::erfinv_}, erfinv_f, 0, result);
  f.add({OpId::selu, OpId::selu_}, selu_f, self);
  f.add({OpId::celu, OpId::celu_}, celu_f, self);
  f.add({OpId::true_divide_Tensor, OpId::true_divide__Tensor, OpId::true_divide_Scalar,
         OpId::true_divide__Scalar},
        true_divide_f, both);
  f.add({OpId::float_power_Tensor_Scalar, OpId::float_power__Scalar}, float_power_ts_f, self);
  f.add(OpId::float_power_Scalar, float_power_st_f, 0, result);
  f.add({OpId::xlogy_Tensor, OpId::xlogy__Tensor, OpId::xlogy_Scalar_Other,
         OpId::xlogy__Scalar_Other, OpId::xlogy_Scalar_Self},
        xlogy_f, both);
  f.add({OpId::copysign_Tensor, OpId::copysign__Tensor, OpId::copysign_Scalar,
         OpId::copysign__Scalar},
        copysign_f, both, result);
  f.add(OpId::logaddexp, logaddexp_f, both);
  f.add(OpId::clamp_min_Tensor, clamp_tensor_f<true>, both);
  f.add(OpId::clamp_max_Tensor, clamp_tensor_f<false>, both);
  f.add({OpId::floor_divide, OpId::floor_divide_Scalar, OpId::floor_divide__Tensor,
         OpId::floor_divide__Scalar},
        floor_divide_f, both);
  f.add(OpId::nan_to_num, nan_to_num_f, self);
  f.add(OpId::remainder_Scalar_Tensor, remainder_scalar_tensor_f, arg_bit(1));
}

}  // namespace tsr::autograd
