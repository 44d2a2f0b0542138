// formulas_reduction.cpp - derivatives of the reduction family's ops whose
// formulas are not the basic sum/mean ones (formulas_basic.cpp): cumulative
// ops (logcumsumexp, cummax, cummin) and aminmax.
#include "autograd/formulas.h"
#include "autograd/grad_ops.h"
#include "dispatch/op_api.h"
#include "ops/shorthands.h"

namespace tsr::autograd {
namespace {

using namespace op;
using op::add;  // not autograd::add (grad_ops.h)

R g_of(BackwardContext& c) { return TensorRef::borrow(c.grad()); }
R exp(const R& x) { return unary(OpId::exp, x); }

// logcumsumexp(x, dim): out_j = log sum_{i<=j} e^{x_i}, so
// dx_i = sum_{j>=i} g_j e^{x_i - out_j} = e^{x_i} revcumsum(g e^{-out})_i.
void logcumsumexp_f(BackwardContext& c) {
  R x = c.input(0);
  const int64_t dim = c.int_arg(1);
  R w = mul(g_of(c), exp(neg(c.result())));
  R flipped = op::call(OpId::flip, w, op::ints(&dim, 1));
  R rev = op::call(OpId::flip, op::call(OpId::cumsum, flipped, dim), op::ints(&dim, 1));
  c.set(0, mul(exp(x), rev));
}
// cummax / cummin (values, indices): each value's gradient goes to the
// element it was taken from.
void cumulative_extreme_f(BackwardContext& c) {
  R g = g_of(c);
  c.set(0, op::call(OpId::scatter_add, zeros_like(g), c.int_arg(1), c.result(1), g));
}

// aminmax(self, *, dim?, keepdim) -> (min, max): each extreme's gradient is
// shared evenly by the elements equal to it (amin/amax's rule).
void aminmax_f(BackwardContext& c) {
  R x = c.input(0);
  const bool all = c.is_none(1);
  const int64_t dim = all ? 0 : c.int_arg(1);
  const bool keepdim = c.bool_arg(2);
  R total = zeros_like(x);
  for (int k = 0; k < 2; ++k) {
    R r = c.result(k);
    R g = TensorRef::borrow(c.grad(k));
    if (!all && !keepdim) {
      r = op::call(OpId::unsqueeze, r, dim);
      g = op::call(OpId::unsqueeze, g, dim);
    }
    R hit = where(op::call(OpId::eq_Tensor, x, r), op::call(OpId::ones_like, x), zeros_like(x));
    R count = all ? op::call(OpId::sum, hit, op::none)
                  : op::call(OpId::sum_dim_IntList, hit, op::ints(&dim, 1), true);
    total = add(total, mul(hit, div(g, count)));
  }
  c.set(0, total);
}
}  // namespace

void add_reduction_formulas(FormulaTable& f) {
  const uint32_t self = arg_bit(0), result = arg_bit(0);
  f.add(OpId::logcumsumexp, logcumsumexp_f, self, result);
  f.add({OpId::cummax, OpId::cummin}, cumulative_extreme_f, 0, arg_bit(1));
  f.add(OpId::aminmax, aminmax_f, self, arg_bit(0) | arg_bit(1));
}

}  // namespace tsr::autograd
