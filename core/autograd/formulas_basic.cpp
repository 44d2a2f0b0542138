// formulas_basic.cpp - derivatives of arithmetic, matrix products, the
// common unary functions, reductions to a scalar or along dims, softmax,
// copies and views. Formulas as in PyTorch's derivatives.yaml.
#include <cmath>
#include <numbers>

#include "autograd/formulas.h"
#include "autograd/grad_ops.h"
#include "dispatch/op_api.h"
#include "dispatch/op_call.h"
#include "ops/shorthands.h"
#include "registry/registry.h"
#include "tensor/grad_mode.h"
#include "util/error.h"

namespace tsr::autograd {
namespace {

using namespace op;
using op::add;  // not autograd::add (grad_ops.h)

R grad_of(BackwardContext& c) { return TensorRef::borrow(c.grad()); }
using op::div;
using op::mul;
using op::neg;

// ---- arithmetic ----

// add/sub(self, other, alpha): d/dself = g, d/dother = +-alpha g.
template <int Sign>
void add_sub(BackwardContext& c) {
  const bool scalar_other = c.op().schema.args[1].kind != ArgKind::kTensor;
  c.set(0, grad_of(c));
  if (!scalar_other && c.needs(1)) {
    const double alpha = c.op().schema.args.size() > 2 ? scalar_value(c.scalar(2)) : 1.0;
    c.set(1, alpha * Sign == 1 ? grad_of(c) : mul(c.grad(), alpha * Sign));
  }
}

void mul_tensor(BackwardContext& c) {
  if (c.needs(0)) c.set(0, mul(c.grad(), c.input(1)));
  if (c.needs(1)) c.set(1, mul(c.grad(), c.input(0)));
}
void mul_scalar(BackwardContext& c) { c.set(0, mul(c.grad(), scalar_value(c.scalar(1)))); }

void div_tensor(BackwardContext& c) {
  R other = c.input(1);
  if (c.needs(0)) c.set(0, div(c.grad(), other));
  if (c.needs(1)) {
    // -g * self / other^2
    R q = div(c.input(0), mul(other, other));
    c.set(1, neg(mul(c.grad(), q).get()));
  }
}
// div.Tensor_mode: true division without a mode; floor/trunc are piecewise
// constant (zero gradient).
void div_mode(BackwardContext& c) {
  if (c.is_none(2)) {
    div_tensor(c);
    return;
  }
  if (c.needs(0)) c.set(0, op::zeros_like(c.input(0)));
  if (c.needs(1)) c.set(1, op::zeros_like(c.input(1)));
}
void div_scalar(BackwardContext& c) { c.set(0, mul(c.grad(), 1.0 / scalar_value(c.scalar(1)))); }
void neg_formula(BackwardContext& c) { c.set(0, neg(c.grad())); }

// ---- matrix products ----

// Whether a matrix is stored column-major (a transposed row-major matrix,
// such as linear's weight.t()).
bool column_major(const TensorImpl& m) {
  return m.ndim == 2 && m.strides[0] == 1 && (m.strides[1] == m.sizes[0] || m.sizes[1] == 1) &&
         m.sizes[0] > 1;
}

// mm(a, b): da = g b^T, db = a^T g. As PyTorch's mm_mat1/mm_mat2_backward,
// an input stored column-major gets its gradient computed transposed -
// (b g^T)^T, (g^T a)^T - so the gradient comes out in the input's own layout
// (Note [Gradient layout contract], node.cpp): no transposing copy when it
// is accumulated, and the optimizer's updates stream.
void mm_formula(BackwardContext& c) {
  const auto tr = [](const auto& x) { return op::call(OpId::t, x); };
  if (c.needs(0)) {
    if (column_major(*c.input(0))) {
      c.set(0, tr(op::call(OpId::mm, c.input(1), tr(c.grad()))));
    } else {
      c.set(0, op::call(OpId::mm, c.grad(), tr(c.input(1))));
    }
  }
  if (c.needs(1)) {
    if (column_major(*c.input(1))) {
      c.set(1, tr(op::call(OpId::mm, tr(c.grad()), c.input(0))));
    } else {
      c.set(1, op::call(OpId::mm, tr(c.input(0)), c.grad()));
    }
  }
}
void bmm_formula(BackwardContext& c) {
  auto tr = [](const R& x) { return op::call(OpId::transpose_int, x, 1, 2); };
  if (c.needs(0)) c.set(0, op::call(OpId::bmm, c.grad(), tr(c.input(1))));
  if (c.needs(1)) c.set(1, op::call(OpId::bmm, tr(c.input(0)), c.grad()));
}

// ---- unary functions of self (in terms of self or of the result) ----

void exp_formula(BackwardContext& c) { c.set(0, mul(c.grad(), c.result())); }
void log_formula(BackwardContext& c) { c.set(0, div(c.grad(), c.input(0))); }
void tanh_formula(BackwardContext& c) {
  R y = c.result();
  c.set(0, mul(c.grad(), rsub(1.0, mul(y, y))));
}
void sigmoid_formula(BackwardContext& c) {
  R y = c.result();
  c.set(0, mul(c.grad(), mul(y, rsub(1.0, y))));
}
void sqrt_formula(BackwardContext& c) { c.set(0, div(mul(c.grad(), 0.5), c.result())); }
void rsqrt_formula(BackwardContext& c) {
  R y = c.result();
  c.set(0, mul(mul(c.grad(), -0.5), mul(y, mul(y, y))));
}
void sin_formula(BackwardContext& c) { c.set(0, mul(c.grad(), op::call(OpId::cos, c.input(0)))); }
void cos_formula(BackwardContext& c) {
  c.set(0, neg(mul(c.grad(), op::call(OpId::sin, c.input(0))).get()));
}
void abs_formula(BackwardContext& c) { c.set(0, mul(c.grad(), op::call(OpId::sign, c.input(0)))); }
void relu_formula(BackwardContext& c) {
  // PyTorch's threshold_backward: 0 where result <= 0, so a NaN passes g.
  R y = c.result();
  R clipped = op::call(OpId::le_Scalar, y, 0.0);
  c.set(0, op::call(OpId::where_self, clipped, op::call(OpId::zeros_like, y), c.grad()));
}
// pow(self, exponent): g * exponent * self^(exponent - 1).
void pow_scalar_formula(BackwardContext& c) {
  const double e = scalar_value(c.scalar(1));
  if (e == 0.0) {
    c.set(0, op::call(OpId::zeros_like, c.input(0)));
    return;
  }
  R base = op::call(OpId::pow_Tensor_Scalar, c.input(0), static_cast<double>(e - 1.0));
  c.set(0, mul(mul(c.grad(), e), base));
}
// gelu(self, approximate='none'): g * (Phi(x) + x phi(x)).
void gelu_formula(BackwardContext& c) {
  R x = c.input(0);
  const char* approximate = c.arg(1).u.str;
  if (approximate != nullptr && std::string(approximate) == "tanh") {
    // y = 0.5 x (1 + tanh(u)), u = k (x + 0.044715 x^3), k = sqrt(2/pi)
    const double k = std::sqrt(2.0 / std::numbers::pi);
    R x2 = mul(x, x);
    R inner = mul(op::call(OpId::add_Tensor, x, mul(mul(x2, x), 0.044715)), k);
    R th = op::call(OpId::tanh, inner);
    R dinner = mul(op::call(OpId::add_Scalar, mul(x2, 3 * 0.044715), 1.0), k);
    R left = mul(op::call(OpId::add_Scalar, th, 1.0), 0.5);
    R right = mul(mul(mul(x, 0.5), rsub(1.0, mul(th, th))), dinner);
    c.set(0, mul(c.grad(), op::call(OpId::add_Tensor, left, right)));
    return;
  }
  // Phi(x) = 0.5 (1 + erf(x / sqrt 2)), phi(x) = exp(-x^2/2) / sqrt(2 pi)
  R cdf =
      mul(op::call(OpId::add_Scalar, op::call(OpId::erf, mul(x, 1.0 / std::sqrt(2.0))), 1.0), 0.5);
  R pdf = mul(op::call(OpId::exp, mul(mul(x, x), -0.5)), 1.0 / std::sqrt(2.0 * std::numbers::pi));
  c.set(0, mul(c.grad(), op::call(OpId::add_Tensor, cdf, mul(x, pdf))));
}

// ---- reductions ----

// The gradient of a reduction over `dims` (all when empty or None), expanded
// back to the input's shape.
R expand_reduced(BackwardContext& c, TensorImpl* g, const tsr_value* dims, bool keepdim) {
  const TensorMeta& m = c.input_meta(0);
  R out = TensorRef::borrow(g);
  if (!keepdim && m.ndim > 0) {
    bool reduced[TSR_MAX_DIMS] = {};
    const bool all = dims == nullptr || dims->tag == TSR_VALUE_NONE || dims->len == 0;
    for (int32_t d = 0; d < m.ndim; ++d) reduced[d] = all;
    if (!all) {
      for (int32_t k = 0; k < dims->len; ++k) {
        int64_t d = dims->u.ints[k];
        if (d < 0) d += m.ndim;
        reduced[d] = true;
      }
    }
    int64_t sizes[TSR_MAX_DIMS];
    for (int32_t d = 0; d < m.ndim; ++d) sizes[d] = reduced[d] ? 1 : m.sizes[d];
    out = op::call(OpId::reshape, out, op::ints(sizes, m.ndim));
  }
  return op::call(OpId::expand, out, op::ints(m.sizes, m.ndim));
}

int64_t reduced_count(BackwardContext& c, const tsr_value* dims) {
  const TensorMeta& m = c.input_meta(0);
  const bool all = dims == nullptr || dims->tag == TSR_VALUE_NONE || dims->len == 0;
  int64_t n = 1;
  if (all) {
    for (int32_t d = 0; d < m.ndim; ++d) n *= m.sizes[d];
    return n;
  }
  for (int32_t k = 0; k < dims->len; ++k) {
    int64_t d = dims->u.ints[k];
    if (d < 0) d += m.ndim;
    n *= m.sizes[d];
  }
  return n;
}

void sum_all(BackwardContext& c) { c.set(0, expand_reduced(c, c.grad(), nullptr, false)); }
void sum_dim(BackwardContext& c) {
  c.set(0, expand_reduced(c, c.grad(), &c.arg(1), c.bool_arg(2)));
}
void mean_all(BackwardContext& c) {
  const double n = static_cast<double>(reduced_count(c, nullptr));
  c.set(0, mul(expand_reduced(c, c.grad(), nullptr, false), 1.0 / n));
}
void mean_dim(BackwardContext& c) {
  const double n = static_cast<double>(reduced_count(c, &c.arg(1)));
  c.set(0, mul(expand_reduced(c, c.grad(), &c.arg(1), c.bool_arg(2)), 1.0 / n));
}

// softmax: y (g - sum(g y)); log_softmax: g - exp(y) sum(g). Without
// create_graph that is one call of PyTorch's backward op
// (_softmax_backward_data / _log_softmax_backward_data: a fused kernel where
// the device has one, core/ops/reduction/softmax_backward.cpp). Under
// create_graph the formula composes registry ops instead, so the gradient
// records as a function of y and g and higher orders follow it.
R softmax_backward_op(BackwardContext& c, OpId id) {
  const int64_t dim = c.int_arg(1);
  R g = TensorRef::borrow(c.grad());
  return op::call(id, g, c.result(), dim, c.input_meta(0).dtype);
}
void softmax_formula(BackwardContext& c) {
  if (!grad_enabled()) {
    c.set(0, softmax_backward_op(c, OpId::_softmax_backward_data));
    return;
  }
  R y = c.result();
  const int64_t dim = c.int_arg(1);
  R gy = mul(c.grad(), y);
  R total = op::call(OpId::sum_dim_IntList, gy, op::ints(&dim, 1), true);
  c.set(0, mul(y, sub(grad_of(c), total)));
}
void log_softmax_formula(BackwardContext& c) {
  if (!grad_enabled()) {
    c.set(0, softmax_backward_op(c, OpId::_log_softmax_backward_data));
    return;
  }
  R y = c.result();
  const int64_t dim = c.int_arg(1);
  R total = op::call(OpId::sum_dim_IntList, c.grad(), op::ints(&dim, 1), true);
  c.set(0, sub(grad_of(c), mul(op::call(OpId::exp, y), total)));
}

// ---- copies and selection ----

// copy_(self, src): self is overwritten (no gradient back to its old value);
// src receives g, reduced to its shape and cast to its dtype.
void copy_formula(BackwardContext& c) { c.set(1, grad_of(c)); }
// fill_: the result does not depend on the old value.
void fill_formula(BackwardContext&) {}
void where_formula(BackwardContext& c) {
  R cond = c.input(0);
  R zeros = op::call(OpId::zeros_like, c.grad());
  if (c.needs(1)) c.set(1, op::call(OpId::where_self, cond, c.grad(), zeros));
  if (c.needs(2)) c.set(2, op::call(OpId::where_self, cond, zeros, c.grad()));
}

// ---- views: the gradient mapped back to the input's shape ----

void reshape_back(BackwardContext& c) {
  const TensorMeta& m = c.input_meta(0);
  c.set(0, op::call(OpId::reshape, c.grad(), op::ints(m.sizes, m.ndim)));
}
void transpose_formula(BackwardContext& c) {
  c.set(0, op::call(OpId::transpose_int, c.grad(), c.int_arg(1), c.int_arg(2)));
}
void t_formula(BackwardContext& c) { c.set(0, op::call(OpId::t, c.grad())); }
void permute_formula(BackwardContext& c) {
  const auto dims = c.ints(1);
  const int32_t n = static_cast<int32_t>(dims.size());
  int64_t inverse[TSR_MAX_DIMS];
  for (int32_t i = 0; i < n; ++i) {
    int64_t d = dims[static_cast<size_t>(i)];
    if (d < 0) d += n;
    inverse[d] = i;
  }
  c.set(0, op::call(OpId::permute, c.grad(), op::ints(inverse, n)));
}
// expand: the node's reduce_to sums the gradient over the expanded dims.
void expand_formula(BackwardContext& c) { c.set(0, grad_of(c)); }
void alias_formula(BackwardContext& c) { c.set(0, grad_of(c)); }
// clone, _to_copy: the gradient itself (cast back to the input's dtype).
void identity_formula(BackwardContext& c) { c.set(0, grad_of(c)); }
// select/slice: the gradient scattered into zeros of the input's shape.
void select_formula(BackwardContext& c) {
  R z = zeros_of(c.runtime(), c.input_meta(0));
  R view = op::call(OpId::select_int, z, c.int_arg(1), c.int_arg(2));
  op::call(c.runtime(), OpId::copy_, view, c.grad());
  c.set(0, z);
}
void slice_formula(BackwardContext& c) {
  R z = zeros_of(c.runtime(), c.input_meta(0));
  R view = op::call(OpId::slice_Tensor, z, c.int_arg(1), c.arg(2), c.arg(3), c.int_arg(4));
  op::call(c.runtime(), OpId::copy_, view, c.grad());
  c.set(0, z);
}

}  // namespace

void add_basic_formulas(FormulaTable& f) {
  const uint32_t self = arg_bit(0), other = arg_bit(1), both = self | other;
  const uint32_t result = arg_bit(0);
  f.add({OpId::add_Tensor, OpId::add_Scalar, OpId::add__Tensor, OpId::add__Scalar}, add_sub<1>, 0);
  f.add({OpId::sub_Tensor, OpId::sub_Scalar, OpId::sub__Tensor, OpId::sub__Scalar}, add_sub<-1>, 0);
  f.add({OpId::mul_Tensor, OpId::mul__Tensor}, mul_tensor, both);
  f.add({OpId::mul_Scalar, OpId::mul__Scalar}, mul_scalar, 0);
  f.add({OpId::div_Tensor, OpId::div__Tensor}, div_tensor, both);
  f.add({OpId::div_Scalar, OpId::div__Scalar}, div_scalar, 0);
  f.add(OpId::div_Tensor_mode, div_mode, both);
  f.add({OpId::neg, OpId::neg_}, neg_formula, 0);
  f.add(OpId::mm, mm_formula, both);
  f.add(OpId::bmm, bmm_formula, both);
  f.add(OpId::exp, exp_formula, 0, result);
  f.add({OpId::log, OpId::log_}, log_formula, self);
  f.add(OpId::tanh, tanh_formula, 0, result);
  f.add(OpId::sigmoid, sigmoid_formula, 0, result);
  f.add(OpId::sqrt, sqrt_formula, 0, result);
  f.add(OpId::rsqrt, rsqrt_formula, 0, result);
  f.add({OpId::sin, OpId::sin_}, sin_formula, self);
  f.add({OpId::cos, OpId::cos_}, cos_formula, self);
  f.add({OpId::abs, OpId::abs_}, abs_formula, self);
  f.add(OpId::relu, relu_formula, 0, result);
  f.add({OpId::pow_Tensor_Scalar, OpId::pow__Scalar}, pow_scalar_formula, self);
  f.add(OpId::gelu, gelu_formula, self);
  f.add(OpId::sum, sum_all, 0);
  f.add(OpId::sum_dim_IntList, sum_dim, 0);
  f.add(OpId::mean, mean_all, 0);
  f.add(OpId::mean_dim, mean_dim, 0);
  f.add(OpId::_softmax, softmax_formula, 0, result);
  f.add(OpId::_log_softmax, log_softmax_formula, 0, result);
  f.add(OpId::copy_, copy_formula, 0);
  f.add(OpId::fill__Scalar, fill_formula, 0);
  f.add(OpId::where_self, where_formula, self);
  f.add({OpId::view, OpId::reshape, OpId::unsqueeze, OpId::squeeze, OpId::squeeze_dim},
        reshape_back, 0);
  f.add_nondifferentiable({OpId::zeros_like, OpId::ones_like, OpId::empty_like, OpId::full_like,
                           OpId::rand_like, OpId::randn_like, OpId::randint_like,
                           OpId::randint_like_low_dtype, OpId::detach, OpId::bernoulli,
                           OpId::bernoulli_p, OpId::multinomial, OpId::argsort, OpId::argmax,
                           OpId::argmin});
  f.add(OpId::transpose_int, transpose_formula, 0);
  f.add(OpId::t, t_formula, 0);
  f.add(OpId::permute, permute_formula, 0);
  f.add(OpId::expand, expand_formula, 0);
  f.add(OpId::alias, alias_formula, 0);
  f.add({OpId::clone, OpId::_to_copy, OpId::contiguous}, identity_formula, 0);
  f.add(OpId::select_int, select_formula, 0);
  f.add(OpId::slice_Tensor, slice_formula, 0);
}

}  // namespace tsr::autograd
