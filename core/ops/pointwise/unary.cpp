// Pointwise ops, unary part: the _unary primitive and every PyTorch op routed
// to it (exp, sin, relu, clamp, isnan, nan_to_num ...), in functional, in-place
// and out= form (the form comes from the schema, ops/pointwise/driver.h).
//
// Each code has a dtype domain (PyTorch's rules):
//  - floating functions (exp, sin, sigmoid, erf ...): integer and bool inputs
//    compute in the default float dtype;
//  - floating-only functions (frac and the activations): other dtypes are
//    rejected, as PyTorch's kernels do;
//  - numeric functions keeping the dtype (neg, abs, floor ... clamp): bool is
//    rejected (with PyTorch's message for neg), integer floor/ceil/round/trunc
//    are the identity;
//  - sign and nan_to_num accept every dtype; square of bool gives int64;
//  - bitwise_not takes integers and bool; predicates take anything and give bool.
// Scalar parameters travel as p0..p2 (meanings in tessera/opcodes.h).
#include <cfloat>
#include <cstring>

#include "dispatch/values.h"
#include "ops/op_impls.h"
#include "ops/op_util.h"
#include "ops/pointwise/driver.h"
#include "tessera/opcodes.h"
#include "tessera/sdk/primitives.hpp"
#include "util/error.h"

namespace tsr::ops {

namespace {

// The domains are the SDK's (tessera/sdk/primitives.hpp): one table for the
// core's checks here and for the code sets plugin tables claim.
using Domain = tessera::sdk::unary_domain;
constexpr Domain unary_domain(int32_t code) noexcept {
  return tessera::sdk::unary_code_domain(code);
}

bool is_predicate(int32_t code) { return unary_domain(code) == Domain::predicate; }

// The dtype `code` computes in for an input of dtype `in`; throws for dtypes
// outside its domain.
tsr_dtype unary_compute(const OpDef& op, int32_t code, tsr_dtype in) {
  const std::string& fn = op.schema.name;
  switch (unary_domain(code)) {
    case Domain::floating_fn:
      return is_integral(in, true) ? kDefaultFloat : in;
    case Domain::floating_only:
      if (is_integral(in, true))
        fail(TSR_INVALID_ARGUMENT,
             "op '{}': argument 'self' has dtype {}, but {} is defined for floating-point tensors "
             "only; convert it with to(float32)",
             op.name, dtype_name(in), fn);
      return in;
    case Domain::numeric:
      if (in == TSR_BOOL) {
        if (code == TSR_UNARY_NEG)
          fail(TSR_INVALID_ARGUMENT,
               "op '{}': Negation, the `-` operator, on a bool tensor is not supported. If you "
               "are trying to invert a mask, use the `~` or `logical_not()` operator instead.",
               op.name);
        fail(TSR_INVALID_ARGUMENT,
             "op '{}': argument 'self' is a bool tensor, which {} does not support; convert it "
             "with to(int64) or to(float32)",
             op.name, fn);
      }
      return in;
    case Domain::square:
      return in == TSR_BOOL ? TSR_INT64 : in;
    case Domain::bitwise:
      if (!is_integral(in, true))
        fail(TSR_INVALID_ARGUMENT,
             "op '{}': argument 'self' has dtype {}, but {} is defined for integer and bool "
             "tensors only",
             op.name, dtype_name(in), fn);
      return in;
    default:
      return in;
  }
}

// Runs _unary `code` on argument 0 of the call, computing in `compute`.
void run_unary(OpCall& c, int32_t code, tsr_dtype compute, const tsr_scalar& p0 = scalar_int(0),
               const tsr_scalar& p1 = scalar_int(0), const tsr_scalar& p2 = scalar_int(0)) {
  TensorImpl* target = nullptr;
  const Mode mode = mode_of(c, &target);
  EwInput in;
  in.tensor = c.tensor(0);
  in.dtype = compute;
  const tsr_value extra[4] = {v_int(code), v_scalar(p0), v_scalar(p1), v_scalar(p2)};
  EwKernel k;
  k.kernel_op = OpId::_unary;
  k.code = code;
  k.result = is_predicate(code) ? TSR_BOOL : compute;
  k.extra = extra;
  k.nextra = 4;
  run_pointwise(c, mode, target, &in, 1, k);
}

void run_default(OpCall& c, int32_t code) {
  run_unary(c, code, unary_compute(*c.op, code, c.tensor(0)->dtype));
}

double scalar_to_double(const tsr_scalar& s) {
  return s.kind == TSR_FLOAT64      ? s.v.f
         : s.kind == TSR_COMPLEX128 ? s.v.c.re
                                    : static_cast<double>(s.v.i);
}

bool scalar_negative(const tsr_scalar& s) { return scalar_to_double(s) < 0; }

// The largest finite value of a floating dtype (nan_to_num's default posinf).
double dtype_max(tsr_dtype d) {
  switch (d) {
    case TSR_FLOAT16:
      return 65504.0;
    case TSR_BFLOAT16:
      return 3.38953138925153547590470800371487866880e+38;
    case TSR_FLOAT32:
      return FLT_MAX;
    default:
      return DBL_MAX;
  }
}

}  // namespace

void unary_primitive(OpCall& c) {
  const int64_t code = c.int_arg(1);
  if (code < 0 || code >= TSR_UNARY_CODE_COUNT)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'op' = {} is not a _unary function code; use a tsr_unary_op value "
         "from tessera/opcodes.h (0 to {})",
         c.op->name, code, TSR_UNARY_CODE_COUNT - 1);
  const int32_t k = static_cast<int32_t>(code);
  run_unary(c, k, unary_compute(*c.op, k, c.tensor(0)->dtype), c.scalar(2), c.scalar(3),
            c.scalar(4));
}

void unary_op(OpCall& c) { run_default(c, c.op->code); }

void round_decimals_op(OpCall& c) {
  const int64_t decimals = c.int_arg(1);
  const tsr_dtype in = c.tensor(0)->dtype;
  if (decimals != 0 && is_integral(in, true))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'self' has dtype {}; rounding to {} decimals is defined for "
         "floating-point tensors only (convert it with to(float32))",
         c.op->name, dtype_name(in), decimals);
  run_unary(c, TSR_UNARY_ROUND, unary_compute(*c.op, TSR_UNARY_ROUND, in), scalar_int(decimals));
}

void logit_op(OpCall& c) {
  const double eps = c.is_none(1) ? -1.0 : c.float_arg(1);
  run_unary(c, TSR_UNARY_LOGIT, unary_compute(*c.op, TSR_UNARY_LOGIT, c.tensor(0)->dtype),
            scalar_float(eps));
}

void nan_to_num_op(OpCall& c) {
  const tsr_dtype d = c.tensor(0)->dtype;
  const double big = is_floating(d) ? dtype_max(d) : 0.0;
  const double nan = c.is_none(1) ? 0.0 : c.float_arg(1);
  const double posinf = c.is_none(2) ? big : c.float_arg(2);
  const double neginf = c.is_none(3) ? -big : c.float_arg(3);
  run_unary(c, TSR_UNARY_NAN_TO_NUM, unary_compute(*c.op, TSR_UNARY_NAN_TO_NUM, d),
            scalar_float(nan), scalar_float(posinf), scalar_float(neginf));
}

void leaky_relu_op(OpCall& c) {
  run_unary(c, TSR_UNARY_LEAKY_RELU, unary_compute(*c.op, TSR_UNARY_LEAKY_RELU, c.tensor(0)->dtype),
            c.scalar(1));
}

void elu_op(OpCall& c) {
  run_unary(c, TSR_UNARY_ELU, unary_compute(*c.op, TSR_UNARY_ELU, c.tensor(0)->dtype), c.scalar(1),
            c.scalar(2), c.scalar(3));
}

void selu_op(OpCall& c) {
  // SELU's constants (Klambauer et al. 2017), as PyTorch defines them.
  constexpr double kAlpha = 1.6732632423543772848170429916717;
  constexpr double kScale = 1.0507009873554804934193349852946;
  run_unary(c, TSR_UNARY_ELU, unary_compute(*c.op, TSR_UNARY_ELU, c.tensor(0)->dtype),
            scalar_float(kAlpha), scalar_float(kScale), scalar_float(1.0));
}

void celu_op(OpCall& c) {
  const double alpha = scalar_to_double(c.scalar(1));
  if (alpha == 0.0)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'alpha' = 0 is invalid: ZeroDivisionError, alpha cannot be 0 for "
         "CELU; pass a non-zero alpha",
         c.op->name);
  run_unary(c, TSR_UNARY_ELU, unary_compute(*c.op, TSR_UNARY_ELU, c.tensor(0)->dtype),
            scalar_float(alpha), scalar_float(1.0), scalar_float(1.0 / alpha));
}

void gelu_op(OpCall& c) {
  const char* approximate = c.args[1].u.str;
  int32_t code;
  if (std::strcmp(approximate, "none") == 0)
    code = TSR_UNARY_GELU;
  else if (std::strcmp(approximate, "tanh") == 0)
    code = TSR_UNARY_GELU_TANH;
  else
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'approximate' = '{}' is invalid: approximate argument must be either "
         "none or tanh.",
         c.op->name, approximate);
  run_default(c, code);
}

void softplus_op(OpCall& c) {
  run_unary(c, TSR_UNARY_SOFTPLUS, unary_compute(*c.op, TSR_UNARY_SOFTPLUS, c.tensor(0)->dtype),
            c.scalar(1), c.scalar(2));
}

void hardtanh_op(OpCall& c) {
  const tsr_dtype d = c.tensor(0)->dtype;
  if (d == TSR_BOOL)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': Bool inputs not supported for hardtanh; convert 'self' with to(float32)",
         c.op->name);
  if (d == TSR_UINT8 && (scalar_negative(c.scalar(1)) || scalar_negative(c.scalar(2))))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': cannot do hardtanh on an unsigned type with negative limits (min_val {}, "
         "max_val {})",
         c.op->name, scalar_to_double(c.scalar(1)), scalar_to_double(c.scalar(2)));
  run_unary(c, TSR_UNARY_CLAMP, unary_compute(*c.op, TSR_UNARY_CLAMP, d), c.scalar(1), c.scalar(2));
}

// clamp / clip with Scalar? bounds: the bounds take part in type promotion as
// wrapped numbers.
void clamp_op(OpCall& c) {
  const bool has_min = !c.is_none(1), has_max = !c.is_none(2);
  if (!has_min && !has_max)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': torch.clamp: At least one of 'min' or 'max' must not be None; pass a bound",
         c.op->name);
  EwInput in[3] = {input_of(c, 0)};
  int32_t n = 1;
  if (has_min) in[n++] = input_of(c, 1);
  if (has_max) in[n++] = input_of(c, 2);
  const tsr_dtype compute = result_type(in, n);
  if (compute == TSR_BOOL)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': clamping bool values is not supported; convert 'self' with to(int64)",
         c.op->name);
  if (has_min && has_max)
    run_unary(c, TSR_UNARY_CLAMP, compute, c.scalar(1), c.scalar(2));
  else if (has_min)
    run_unary(c, TSR_UNARY_CLAMP_MIN, compute, c.scalar(1));
  else
    run_unary(c, TSR_UNARY_CLAMP_MAX, compute, c.scalar(2));
}

// clamp_min / clamp_max with a Scalar bound.
void unary_bound_op(OpCall& c) {
  EwInput in[2] = {input_of(c, 0), input_of(c, 1)};
  const tsr_dtype compute = result_type(in, 2);
  if (compute == TSR_BOOL)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': clamping bool values is not supported; convert 'self' with to(int64)",
         c.op->name);
  run_unary(c, c.op->code, compute, c.scalar(1));
}

}  // namespace tsr::ops
