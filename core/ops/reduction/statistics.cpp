// Statistics and norms, composites of the family primitives and pointwise
// ops: var / std / var_mean / std_mean (two passes: the mean, then the sum of
// squared deviations, divided by max(0, n - correction) so that a correction
// >= n gives inf or NaN as in PyTorch), norm / frobenius_norm /
// linalg_vector_norm (p = 0, 1, 2, inf, -inf and general p) and logsumexp
// (shifted by the finite part of the maximum).
//
// float16/bfloat16 inputs are computed in float32 and rounded once at the end
// (PyTorch accumulates them in float32 too).
#include <cmath>
#include <limits>

#include "dispatch/kernel_call.h"
#include "dispatch/op_api.h"
#include "ops/op_impls.h"
#include "ops/reduction/reduce_common.h"
#include "ops/shorthands.h"
#include "runtime/runtime.h"
#include "util/error.h"

namespace tsr::ops {

namespace {

using namespace reduction;

bool is_reduced_float(tsr_dtype d) { return d == TSR_FLOAT16 || d == TSR_BFLOAT16; }

tsr_dtype real_of(tsr_dtype d) {
  if (d == TSR_COMPLEX64) return TSR_FLOAT32;
  if (d == TSR_COMPLEX128) return TSR_FLOAT64;
  return d;
}

struct Moments {
  TensorRef var;
  TensorRef mean;
};

// var (and mean) of `self` over `mask` with `correction`.
Moments moments(const OpDef& op, Runtime* rt, TensorImpl* self, uint32_t mask, double correction,
                bool keepdim) {
  if (!is_floating(self->dtype) && !is_complex(self->dtype))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': std and var only support floating point and complex dtypes, got {}; convert "
         "the input with to(float32)",
         op.name, dtype_name(self->dtype));
  if (is_complex(self->dtype))
    fail(TSR_UNIMPLEMENTED,
         "op '{}': complex inputs are not supported yet; compute the variance of the real and "
         "imaginary parts (var(re) + var(im))",
         op.name);
  const tsr_dtype work = is_reduced_float(self->dtype) ? TSR_FLOAT32 : self->dtype;
  TensorRef x = cast(self, work);
  const int64_t n = reduced_count(*self, mask);
  TensorRef m = run_reduce(op, x.get(), TSR_REDUCE_MEAN, mask, true);
  TensorRef d = op::sub(x.get(), m.get());
  TensorRef sq = op::mul(d.get(), d.get());
  TensorRef s = run_reduce(op, sq.get(), TSR_REDUCE_SUM, mask, keepdim);
  const double divisor = std::max(0.0, static_cast<double>(n) - correction);
  Moments r;
  r.var = op::call(rt, OpId::div_Scalar, s, static_cast<double>(divisor));
  r.mean = drop_dims(std::move(m), *self, mask, keepdim);
  r.var = cast(r.var.get(), self->dtype);
  r.mean = cast(r.mean.get(), self->dtype);
  return r;
}

// (mask, correction, keepdim) of the three overload shapes:
//   .correction(self, dim, *, correction, keepdim) / .dim(self, dim, unbiased,
//   keepdim) / (self, unbiased).
enum class Form { kCorrection, kDim, kAll };

Moments moments_of(OpCall& c, Form form) {
  const OpDef& op = *c.op;
  TensorImpl* self = c.tensor(0);
  uint32_t mask = all_dims_mask(*self);
  double correction = 1.0;
  bool keepdim = false;
  switch (form) {
    case Form::kCorrection:
      mask = dim_mask(op, *self, &c.args[1]);
      if (!c.is_none(2)) correction = static_cast<double>(c.int_arg(2));
      keepdim = c.bool_arg(3);
      break;
    case Form::kDim:
      mask = dim_mask(op, *self, &c.args[1]);
      correction = c.bool_arg(2) ? 1.0 : 0.0;
      keepdim = c.bool_arg(3);
      break;
    case Form::kAll:
      correction = c.bool_arg(1) ? 1.0 : 0.0;
      break;
  }
  return moments(op, c.runtime, self, mask, correction, keepdim);
}

TensorRef std_from_var(TensorImpl* var) { return op::unary(OpId::sqrt, var); }

// The p of a norm: a real Scalar (int or float).
double norm_order(const OpDef& op, const tsr_scalar& p, const char* arg) {
  switch (p.kind) {
    case TSR_INT64:
      return static_cast<double>(p.v.i);
    case TSR_FLOAT64:
      return p.v.f;
    case TSR_BOOL:
      return p.v.i != 0 ? 1.0 : 0.0;
    default:
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': argument '{}' must be a real number (0, 1, 2, inf, -inf or any p), got a "
           "complex Scalar",
           op.name, arg);
  }
}

// The vector p-norm of `self` over `mask`. `dtype`, when not TSR_DTYPE_COUNT,
// converts the input first.
TensorRef vector_norm(const OpDef& op, Runtime* rt, TensorImpl* self, double p, uint32_t mask,
                      bool keepdim, tsr_dtype dtype) {
  if (!is_floating(self->dtype) && !is_complex(self->dtype))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': Expected a floating point or complex tensor as input. Got {}; convert it "
         "with to(float32)",
         op.name, dtype_name(self->dtype));
  TensorRef x = dtype == TSR_DTYPE_COUNT ? TensorRef::borrow(self) : cast(self, dtype);
  const tsr_dtype result = real_of(x->dtype);
  if (is_reduced_float(x->dtype)) x = cast(x.get(), TSR_FLOAT32);
  constexpr OpId abs = OpId::abs;
  TensorRef r;
  if (p == 0) {
    TensorRef nz = op::call(rt, OpId::_to_copy, x, TSR_BOOL);
    nz = cast(nz.get(), real_of(x->dtype));
    r = run_reduce(op, nz.get(), TSR_REDUCE_SUM, mask, keepdim);
  } else if (std::isinf(p)) {
    if (reduced_count(*self, mask) == 0)
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': cannot compute the {} norm on an empty tensor (shape {}) because the "
           "operation does not have an identity",
           op.name, p > 0 ? "inf" : "-inf", shape_str(self->ndim, self->sizes));
    TensorRef a = op::unary(abs, x.get());
    r = run_reduce(op, a.get(), p > 0 ? TSR_REDUCE_AMAX : TSR_REDUCE_AMIN, mask, keepdim);
  } else if (p == 1) {
    TensorRef a = op::unary(abs, x.get());
    r = run_reduce(op, a.get(), TSR_REDUCE_SUM, mask, keepdim);
  } else if (p == 2) {
    TensorRef a = is_complex(x->dtype) ? op::unary(abs, x.get()) : x;
    TensorRef sq = op::mul(a.get(), a.get());
    TensorRef s = run_reduce(op, sq.get(), TSR_REDUCE_SUM, mask, keepdim);
    r = std_from_var(s.get());
  } else {
    constexpr OpId pow = OpId::pow_Tensor_Scalar;
    TensorRef a = op::unary(abs, x.get());
    TensorRef ap = op::call(rt, pow, a, static_cast<double>(p));
    TensorRef s = run_reduce(op, ap.get(), TSR_REDUCE_SUM, mask, keepdim);
    r = op::call(rt, pow, s, static_cast<double>(1.0 / p));
  }
  return cast(r.get(), result);
}

TensorRef logsumexp_of(OpCall& c) {
  const OpDef& op = *c.op;
  Runtime* rt = c.runtime;
  TensorImpl* self = c.tensor(0);
  TensorRef x =
      is_integral(self->dtype, true) ? cast(self, kDefaultFloat) : TensorRef::borrow(self);
  const uint32_t mask = dim_mask(op, *x, &c.args[1]);
  const bool keepdim = c.bool_arg(2);
  constexpr OpId exp = OpId::exp;
  constexpr OpId log = OpId::log;
  if (reduced_count(*x, mask) == 0) {  // log(0) = -inf, no shift needed
    TensorRef e = op::unary(exp, x.get());
    TensorRef s = run_reduce(op, e.get(), TSR_REDUCE_SUM, mask, keepdim);
    return op::unary(log, s.get());
  }
  // Shift by the maximum, with infinities and NaN replaced by 0: an infinite
  // maximum then gives inf or -inf through exp/log, a NaN propagates.
  constexpr OpId nan_to_num = OpId::nan_to_num;
  TensorRef m = run_reduce(op, x.get(), TSR_REDUCE_AMAX, mask, true);
  m = op::call(rt, nan_to_num, m, 0.0, 0.0, 0.0);
  TensorRef shifted = op::sub(x.get(), m.get());
  TensorRef e = op::unary(exp, shifted.get());
  TensorRef s = run_reduce(op, e.get(), TSR_REDUCE_SUM, mask, keepdim);
  TensorRef l = op::unary(log, s.get());
  m = drop_dims(std::move(m), *x, mask, keepdim);
  return op::call(rt, OpId::add_Tensor, l, m);
}

}  // namespace

void var_correction(OpCall& c) { c.set_result(moments_of(c, Form::kCorrection).var); }
void var_dim(OpCall& c) { c.set_result(moments_of(c, Form::kDim).var); }
void var(OpCall& c) { c.set_result(moments_of(c, Form::kAll).var); }
void var_correction_out(OpCall& c) {
  TensorRef r = moments_of(c, Form::kCorrection).var;
  c.set_result(write_out(*c.op, c.tensor(4), r.get(), false));
}
void std_correction(OpCall& c) {
  c.set_result(std_from_var(moments_of(c, Form::kCorrection).var.get()));
}
void std_dim(OpCall& c) { c.set_result(std_from_var(moments_of(c, Form::kDim).var.get())); }
void std_all(OpCall& c) { c.set_result(std_from_var(moments_of(c, Form::kAll).var.get())); }
void std_correction_out(OpCall& c) {
  TensorRef r = std_from_var(moments_of(c, Form::kCorrection).var.get());
  c.set_result(write_out(*c.op, c.tensor(4), r.get(), false));
}

namespace {
void set_var_mean(OpCall& c, Form form, bool take_sqrt) {
  Moments m = moments_of(c, form);
  c.set_result(take_sqrt ? std_from_var(m.var.get()) : std::move(m.var));
  c.set_result(std::move(m.mean));
}
}  // namespace

void var_mean_correction(OpCall& c) { set_var_mean(c, Form::kCorrection, false); }
void var_mean_dim(OpCall& c) { set_var_mean(c, Form::kDim, false); }
void var_mean(OpCall& c) { set_var_mean(c, Form::kAll, false); }
void std_mean_correction(OpCall& c) { set_var_mean(c, Form::kCorrection, true); }
void std_mean_dim(OpCall& c) { set_var_mean(c, Form::kDim, true); }
void std_mean(OpCall& c) { set_var_mean(c, Form::kAll, true); }

void norm_Scalar(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  const double p = norm_order(*c.op, c.scalar(1), "p");
  c.set_result(
      vector_norm(*c.op, c.runtime, self, p, all_dims_mask(*self), false, TSR_DTYPE_COUNT));
}

namespace {
// norm.ScalarOpt_dim[_dtype] / norm.out: (self, p?, dim, keepdim, ...).
TensorRef norm_dims(OpCall& c, tsr_dtype dtype) {
  TensorImpl* self = c.tensor(0);
  const double p = c.is_none(1) ? 2.0 : norm_order(*c.op, c.scalar(1), "p");
  const uint32_t mask = dim_mask(*c.op, *self, &c.args[2]);
  return vector_norm(*c.op, c.runtime, self, p, mask, c.bool_arg(3), dtype);
}
}  // namespace

void norm_ScalarOpt_dim(OpCall& c) { c.set_result(norm_dims(c, TSR_DTYPE_COUNT)); }
void norm_ScalarOpt_dim_dtype(OpCall& c) {
  c.set_result(norm_dims(c, static_cast<tsr_dtype>(c.int_arg(4))));
}
void norm_out(OpCall& c) {
  TensorRef r = norm_dims(c, TSR_DTYPE_COUNT);
  c.set_result(write_out(*c.op, c.tensor(4), r.get(), false));
}
void frobenius_norm(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  c.set_result(
      vector_norm(*c.op, c.runtime, self, 2.0, all_dims_mask(*self), false, TSR_DTYPE_COUNT));
}
void frobenius_norm_dim(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  const uint32_t mask = dim_mask(*c.op, *self, &c.args[1]);
  c.set_result(vector_norm(*c.op, c.runtime, self, 2.0, mask, c.bool_arg(2), TSR_DTYPE_COUNT));
}

namespace {
// linalg_vector_norm[.out](self, ord, dim?, keepdim, *, dtype?)
TensorRef linalg_norm_of(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  const double p = norm_order(*c.op, c.scalar(1), "ord");
  const uint32_t mask = dim_mask(*c.op, *self, &c.args[2]);
  const tsr_dtype dtype = c.is_none(4) ? TSR_DTYPE_COUNT : static_cast<tsr_dtype>(c.int_arg(4));
  return vector_norm(*c.op, c.runtime, self, p, mask, c.bool_arg(3), dtype);
}
}  // namespace

void linalg_vector_norm(OpCall& c) { c.set_result(linalg_norm_of(c)); }
void linalg_vector_norm_out(OpCall& c) {
  TensorRef r = linalg_norm_of(c);
  c.set_result(write_out(*c.op, c.tensor(5), r.get(), false));
}

void logsumexp(OpCall& c) { c.set_result(logsumexp_of(c)); }
void logsumexp_out(OpCall& c) {
  TensorRef r = logsumexp_of(c);
  c.set_result(write_out(*c.op, c.tensor(3), r.get(), false));
}

}  // namespace tsr::ops
