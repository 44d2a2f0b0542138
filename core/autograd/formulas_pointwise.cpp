// formulas_pointwise.cpp - derivatives of the pointwise functions beyond
// add/sub/mul/div (formulas as in PyTorch's derivatives.yaml). Rounding and sign
// functions have zero derivative; comparisons and bitwise ops have integer
// or bool results and never reach autograd.
#include <cmath>
#include <numbers>
#include <string>

#include "autograd/formulas.h"
#include "ops/shorthands.h"

namespace tsr::autograd {
namespace {

using namespace op;
using op::add;  // not autograd::add (grad_ops.h)

R g_of(BackwardContext& c) { return TensorRef::borrow(c.grad()); }
R x_of(BackwardContext& c) { return c.input(0); }
double arg_scalar(BackwardContext& c, int i) { return scalar_value(c.scalar(i)); }

// d/dx f(x) = g * h, for h computed from x or the result.
void set_times(BackwardContext& c, const R& h) { c.set(0, mul(g_of(c), h)); }

void exp2_f(BackwardContext& c) { set_times(c, mul(c.result(), std::numbers::ln2)); }
void expm1_f(BackwardContext& c) { set_times(c, add(c.result(), 1.0)); }
void log2_f(BackwardContext& c) { c.set(0, div(g_of(c), mul(x_of(c), std::numbers::ln2))); }
void log10_f(BackwardContext& c) { c.set(0, div(g_of(c), mul(x_of(c), std::numbers::ln10))); }
void log1p_f(BackwardContext& c) { c.set(0, div(g_of(c), add(x_of(c), 1.0))); }
void reciprocal_f(BackwardContext& c) { set_times(c, neg(square(c.result()))); }
void tan_f(BackwardContext& c) { set_times(c, add(square(c.result()), 1.0)); }
void asin_f(BackwardContext& c) {
  c.set(0, div(g_of(c), unary(OpId::sqrt, rsub(1.0, square(x_of(c))))));
}
void acos_f(BackwardContext& c) {
  c.set(0, neg(div(g_of(c), unary(OpId::sqrt, rsub(1.0, square(x_of(c)))))));
}
void atan_f(BackwardContext& c) { c.set(0, div(g_of(c), add(square(x_of(c)), 1.0))); }
void sinh_f(BackwardContext& c) { set_times(c, unary(OpId::cosh, x_of(c))); }
void cosh_f(BackwardContext& c) { set_times(c, unary(OpId::sinh, x_of(c))); }
void asinh_f(BackwardContext& c) {
  c.set(0, div(g_of(c), unary(OpId::sqrt, add(square(x_of(c)), 1.0))));
}
void acosh_f(BackwardContext& c) {
  c.set(0, div(g_of(c), unary(OpId::sqrt, add(square(x_of(c)), -1.0))));
}
void atanh_f(BackwardContext& c) { c.set(0, div(g_of(c), rsub(1.0, square(x_of(c))))); }
// erf' = 2/sqrt(pi) exp(-x^2); erfc' = -erf'.
template <int Sign>
void erf_f(BackwardContext& c) {
  R e = unary(OpId::exp, neg(square(x_of(c))));
  set_times(c, mul(e, Sign * 2.0 / std::sqrt(std::numbers::pi)));
}
void square_f(BackwardContext& c) { set_times(c, mul(x_of(c), 2.0)); }
void zero_f(BackwardContext& c) { c.set(0, zeros_like(g_of(c))); }
void identity_f(BackwardContext& c) { c.set(0, g_of(c)); }
// silu' = s (1 + x (1 - s)), s = sigmoid(x).
void silu_f(BackwardContext& c) {
  R x = x_of(c);
  R sg = unary(OpId::sigmoid, x);
  set_times(c, mul(sg, add(mul(x, rsub(1.0, sg)), 1.0)));
}
// mish = x tanh(softplus(x)); mish' = tanh(sp) + x sigmoid(x) (1 - tanh(sp)^2).
void mish_f(BackwardContext& c) {
  R x = x_of(c);
  R tsp = unary(OpId::tanh, op::call(OpId::softplus, x, 1.0, 20.0));
  R sg = unary(OpId::sigmoid, x);
  set_times(c, add(tsp, mul(mul(x, sg), rsub(1.0, square(tsp)))));
}
// softplus(x, beta, threshold): sigmoid(beta x) below the threshold, 1 above.
void softplus_f(BackwardContext& c) {
  R x = x_of(c);
  const double beta = arg_scalar(c, 1), threshold = arg_scalar(c, 2);
  R bx = mul(x, beta);
  R sg = unary(OpId::sigmoid, bx);
  R g = g_of(c);
  c.set(0, where(gt(bx, threshold), g, mul(g, sg)));
}
void leaky_relu_f(BackwardContext& c) {
  R g = g_of(c);
  c.set(0, where(gt(x_of(c), 0.0), g, mul(g, arg_scalar(c, 1))));
}
// elu(x, alpha, scale, input_scale): scale for x > 0, else
// input_scale * alpha * scale * exp(x * input_scale).
void elu_f(BackwardContext& c) {
  R x = x_of(c);
  const double alpha = arg_scalar(c, 1), scale = arg_scalar(c, 2), in_scale = arg_scalar(c, 3);
  R g = g_of(c);
  R negative = mul(unary(OpId::exp, mul(x, in_scale)), in_scale * alpha * scale);
  c.set(0, where(gt(x, 0.0), mul(g, scale), mul(g, negative)));
}
// hardtanh: g strictly inside (min_val, max_val), else 0.
void hardtanh_f(BackwardContext& c) {
  R x = x_of(c);
  R g = g_of(c);
  R inside = op::call(OpId::logical_and, gt(x, arg_scalar(c, 1)), lt(x, arg_scalar(c, 2)));
  c.set(0, where(inside, g, zeros_like(g)));
}
// clamp(x, min?, max?): g where min <= x <= max.
void clamp_f(BackwardContext& c) {
  R x = x_of(c);
  R g = g_of(c);
  R keep = op::call(OpId::ones_like, g);
  R mask = gt(keep, 0.0);
  if (!c.is_none(1)) mask = op::call(OpId::logical_and, mask, ge(x, arg_scalar(c, 1)));
  if (!c.is_none(2)) mask = op::call(OpId::logical_and, mask, le(x, arg_scalar(c, 2)));
  c.set(0, where(mask, g, zeros_like(g)));
}
void clamp_min_f(BackwardContext& c) {
  R g = g_of(c);
  c.set(0, where(ge(x_of(c), arg_scalar(c, 1)), g, zeros_like(g)));
}
void clamp_max_f(BackwardContext& c) {
  R g = g_of(c);
  c.set(0, where(le(x_of(c), arg_scalar(c, 1)), g, zeros_like(g)));
}
void hardsigmoid_f(BackwardContext& c) {
  R x = x_of(c);
  R g = g_of(c);
  R inside = op::call(OpId::logical_and, gt(x, -3.0), lt(x, 3.0));
  c.set(0, where(inside, mul(g, 1.0 / 6.0), zeros_like(g)));
}
// hardswish' = 0 below -3, 1 above 3, (2x + 3) / 6 between.
void hardswish_f(BackwardContext& c) {
  R x = x_of(c);
  R g = g_of(c);
  R mid = mul(g, add(mul(x, 1.0 / 3.0), 0.5));
  c.set(0, where(lt(x, -3.0), zeros_like(g), where(le(x, 3.0), mid, g)));
}
// logit(x, eps): 1 / (x (1 - x)); with eps, 0 outside [eps, 1 - eps].
void logit_f(BackwardContext& c) {
  R x = x_of(c);
  R g = g_of(c);
  R d = div(g, mul(x, rsub(1.0, x)));
  if (c.is_none(1)) {
    c.set(0, d);
    return;
  }
  const double eps = c.float_arg(1);
  R inside = op::call(OpId::logical_and, ge(x, eps), le(x, 1.0 - eps));
  c.set(0, where(inside, d, zeros_like(g)));
}

// ---- binary ----

// pow(self, exponent): d/dself = e self^(e-1), d/de = result log(self).
void pow_tt_f(BackwardContext& c) {
  R x = c.input(0), e = c.input(1);
  R g = g_of(c);
  if (c.needs(0)) {
    R p = op::call(OpId::pow_Tensor_Tensor, x, add(e, -1.0));
    c.set(0, mul(g, mul(e, p)));
  }
  if (c.needs(1)) c.set(1, mul(g, mul(c.result(), unary(OpId::log, x))));
}
// pow(Scalar self, Tensor exponent): result log(self).
void pow_st_f(BackwardContext& c) {
  c.set(1, mul(g_of(c), mul(c.result(), std::log(arg_scalar(c, 0)))));
}
void atan2_f(BackwardContext& c) {
  R a = c.input(0), b = c.input(1);
  R g = g_of(c);
  R denom = add(square(a), square(b));
  if (c.needs(0)) c.set(0, mul(g, div(b, denom)));
  if (c.needs(1)) c.set(1, neg(mul(g, div(a, denom))));
}
// maximum/minimum (PyTorch's derivatives.yaml): the gradient goes to the
// selected side, split evenly on ties; where a NaN makes neither side win,
// both get it (where(a == b, g / 2, g) with the losing side masked out).
template <bool Max>
void extreme_f(BackwardContext& c) {
  R a = c.input(0), b = c.input(1);
  R g = g_of(c);
  R zeros = zeros_like(g);
  R shared = where(op::call(OpId::eq_Tensor, a, b), mul(g, 0.5), g);
  R a_loses = op::call(Max ? OpId::lt_Tensor : OpId::gt_Tensor, a, b);
  if (c.needs(0)) c.set(0, where(a_loses, zeros, shared));
  R b_loses = op::call(Max ? OpId::gt_Tensor : OpId::lt_Tensor, a, b);
  if (c.needs(1)) c.set(1, where(b_loses, zeros, shared));
}
// fmax/fmin (PyTorch's derivatives.yaml): self gets g where it is selected
// (self >= other for fmax, ties included) or other is NaN; other elsewhere.
template <bool Max>
void fextreme_f(BackwardContext& c) {
  R a = c.input(0), b = c.input(1);
  R g = g_of(c);
  R zeros = zeros_like(g);
  R self_selected =
      op::call(OpId::logical_or, op::call(Max ? OpId::ge_Tensor : OpId::le_Tensor, a, b),
               op::call(OpId::isnan, b));
  if (c.needs(0)) c.set(0, where(self_selected, g, zeros));
  if (c.needs(1)) c.set(1, where(self_selected, zeros, g));
}
// remainder: self - floor(self/other) other; fmod: with trunc.
template <OpId Round>
void mod_f(BackwardContext& c) {
  R g = g_of(c);
  c.set(0, g);
  if (c.op().schema.args[1].kind == ArgKind::kTensor && c.needs(1)) {
    R q = unary(Round, div(c.input(0), c.input(1)));
    c.set(1, neg(mul(g, q)));
  }
}
void hypot_f(BackwardContext& c) {
  R g = g_of(c);
  R r = c.result();
  if (c.needs(0)) c.set(0, mul(g, div(c.input(0), r)));
  if (c.needs(1)) c.set(1, mul(g, div(c.input(1), r)));
}
// rsub(self, other, alpha) = other - alpha self.
void rsub_f(BackwardContext& c) {
  R g = g_of(c);
  const double alpha = arg_scalar(c, 2);
  c.set(0, mul(g, -alpha));
  if (c.op().schema.args[1].kind == ArgKind::kTensor) c.set(1, g);
}
// lerp(self, end, weight) = self + weight (end - self).
void lerp_scalar_f(BackwardContext& c) {
  R g = g_of(c);
  const double w = arg_scalar(c, 2);
  c.set(0, mul(g, 1.0 - w));
  c.set(1, mul(g, w));
}
void lerp_tensor_f(BackwardContext& c) {
  R g = g_of(c);
  R w = c.input(2);
  if (c.needs(0)) c.set(0, mul(g, rsub(1.0, w)));
  if (c.needs(1)) c.set(1, mul(g, w));
  if (c.needs(2)) c.set(2, mul(g, sub(c.input(1), c.input(0))));
}
// addcmul(self, t1, t2, value) = self + value t1 t2.
void addcmul_f(BackwardContext& c) {
  R g = g_of(c);
  const double v = arg_scalar(c, 3);
  c.set(0, g);
  if (c.needs(1)) c.set(1, mul(mul(g, c.input(2)), v));
  if (c.needs(2)) c.set(2, mul(mul(g, c.input(1)), v));
}
// addcdiv(self, t1, t2, value) = self + value t1 / t2.
void addcdiv_f(BackwardContext& c) {
  R g = g_of(c);
  const double v = arg_scalar(c, 3);
  R t2 = c.input(2);
  c.set(0, g);
  if (c.needs(1)) c.set(1, mul(div(g, t2), v));
  if (c.needs(2)) c.set(2, neg(mul(div(mul(g, c.input(1)), square(t2)), v)));
}

}  // namespace

void add_pointwise_formulas(FormulaTable& f) {
  const uint32_t self = arg_bit(0), result = arg_bit(0);
  f.add(OpId::exp2, exp2_f, 0, result);
  f.add(OpId::expm1, expm1_f, 0, result);
  f.add(OpId::log2, log2_f, self);
  f.add(OpId::log10, log10_f, self);
  f.add(OpId::log1p, log1p_f, self);
  f.add(OpId::reciprocal, reciprocal_f, 0, result);
  f.add(OpId::tan, tan_f, 0, result);
  f.add(OpId::asin, asin_f, self);
  f.add(OpId::acos, acos_f, self);
  f.add(OpId::atan, atan_f, self);
  f.add(OpId::sinh, sinh_f, self);
  f.add(OpId::cosh, cosh_f, self);
  f.add(OpId::asinh, asinh_f, self);
  f.add(OpId::acosh, acosh_f, self);
  f.add(OpId::atanh, atanh_f, self);
  f.add(OpId::erf, erf_f<1>, self);
  f.add(OpId::erfc, erf_f<-1>, self);
  f.add(OpId::square, square_f, self);
  f.add({OpId::floor, OpId::ceil, OpId::round, OpId::trunc, OpId::fix, OpId::sign,
         OpId::round_decimals},
        zero_f, 0);
  f.add(OpId::frac, identity_f, 0);
  f.add(OpId::silu, silu_f, self);
  f.add(OpId::mish, mish_f, self);
  f.add(OpId::softplus, softplus_f, self);
  f.add(OpId::leaky_relu, leaky_relu_f, self);
  f.add(OpId::elu, elu_f, self);
  f.add(OpId::hardtanh, hardtanh_f, self);
  f.add({OpId::clamp, OpId::clip}, clamp_f, self);
  f.add(OpId::clamp_min, clamp_min_f, self);
  f.add(OpId::clamp_max, clamp_max_f, self);
  f.add(OpId::hardsigmoid, hardsigmoid_f, self);
  f.add(OpId::hardswish, hardswish_f, self);
  f.add(OpId::logit, logit_f, self);
  f.add({OpId::pow_Tensor_Tensor, OpId::float_power_Tensor_Tensor, OpId::pow__Tensor,
         OpId::float_power__Tensor},
        pow_tt_f, arg_bit(0) | arg_bit(1), result);
  f.add(OpId::pow_Scalar, pow_st_f, 0, result);
  f.add(OpId::atan2, atan2_f, arg_bit(0) | arg_bit(1));
  f.add({OpId::maximum, OpId::max_other}, extreme_f<true>, arg_bit(0) | arg_bit(1));
  f.add({OpId::minimum, OpId::min_other}, extreme_f<false>, arg_bit(0) | arg_bit(1));
  f.add(OpId::fmax, fextreme_f<true>, arg_bit(0) | arg_bit(1));
  f.add(OpId::fmin, fextreme_f<false>, arg_bit(0) | arg_bit(1));
  f.add({OpId::remainder_Tensor, OpId::remainder_Scalar}, mod_f<OpId::floor>,
        arg_bit(0) | arg_bit(1));
  f.add({OpId::fmod_Tensor, OpId::fmod_Scalar}, mod_f<OpId::trunc>, arg_bit(0) | arg_bit(1));
  f.add(OpId::hypot, hypot_f, arg_bit(0) | arg_bit(1), result);
  f.add({OpId::rsub_Tensor, OpId::rsub_Scalar}, rsub_f, 0);
  f.add(OpId::lerp_Scalar, lerp_scalar_f, 0);
  f.add(OpId::lerp_Tensor, lerp_tensor_f, arg_bit(0) | arg_bit(1) | arg_bit(2));
  f.add(OpId::addcmul, addcmul_f, arg_bit(1) | arg_bit(2));
  f.add(OpId::addcdiv, addcdiv_f, arg_bit(1) | arg_bit(2));
}

}  // namespace tsr::autograd
