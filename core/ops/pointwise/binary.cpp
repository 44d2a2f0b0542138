// Pointwise ops, binary part: the _binary primitive and every PyTorch op routed
// to it (pow, atan2, maximum, remainder, bitwise and shifts, logical ops,
// comparisons, copysign, hypot, xlogy, logaddexp), float_power, div with a
// rounding mode, true_divide and rsub.
//
// Operands are promoted together (result_type, scalars wrapped), then each code
// applies its domain: floating functions (atan2, copysign, xlogy) turn integer
// results into the default float; hypot and logaddexp take floating inputs
// only; arithmetic codes reject bool; bitwise codes take integers and bool
// (shifts integers only); logical and comparison codes give bool.
#include <cstring>

#include "dispatch/values.h"
#include "ops/op_impls.h"
#include "ops/op_util.h"
#include "ops/pointwise/arith.h"
#include "ops/pointwise/driver.h"
#include "tessera/opcodes.h"
#include "tessera/sdk/primitives.hpp"
#include "util/error.h"

namespace tsr::ops {

namespace {

// The domains are the SDK's (tessera/sdk/primitives.hpp), shared with the
// code sets plugin tables claim.
using Domain = tessera::sdk::binary_domain;
constexpr Domain binary_domain(int32_t code) noexcept {
  return tessera::sdk::binary_code_domain(code);
}

// The dtype `code` computes in for operands promoting to `promoted`; throws
// for dtypes outside its domain.
tsr_dtype binary_compute(const OpDef& op, int32_t code, tsr_dtype promoted) {
  const std::string& fn = op.schema.name;
  switch (binary_domain(code)) {
    case Domain::floating_fn:
      return is_integral(promoted, true) ? kDefaultFloat : promoted;
    case Domain::floating_only:
      if (is_integral(promoted, true))
        fail(TSR_INVALID_ARGUMENT,
             "op '{}': the inputs promote to {}, but {} is defined for floating-point tensors "
             "only; convert them with to(float32)",
             op.name, dtype_name(promoted), fn);
      return promoted;
    case Domain::numeric:
      if (promoted == TSR_BOOL)
        fail(TSR_INVALID_ARGUMENT,
             "op '{}': the inputs are bool, which {} does not support; convert them with "
             "to(int64) or to(float32)",
             op.name, fn);
      return promoted;
    case Domain::bitwise:
      if (!is_integral(promoted, true))
        fail(TSR_INVALID_ARGUMENT,
             "op '{}': the inputs promote to {}, but {} is defined for integer and bool tensors "
             "only",
             op.name, dtype_name(promoted), fn);
      return promoted;
    case Domain::shift:
      if (!is_integral(promoted, false))
        fail(TSR_INVALID_ARGUMENT,
             "op '{}': the inputs promote to {}, but {} is defined for integer tensors only",
             op.name, dtype_name(promoted), fn);
      return promoted;
    default:
      return promoted;
  }
}

bool bool_result(int32_t code) { return binary_domain(code) == Domain::predicate; }

// Runs _binary `code` on a, b (already given their kernel dtype `compute`).
void run_binary(OpCall& c, int32_t code, EwInput a, EwInput b, tsr_dtype compute,
                const tsr_scalar& p0 = scalar_int(0)) {
  TensorImpl* target = nullptr;
  const Mode mode = mode_of(c, &target);
  a.dtype = compute;
  b.dtype = compute;
  const EwInput in[2] = {a, b};
  const tsr_value extra[2] = {v_int(code), v_scalar(p0)};
  EwKernel k;
  k.kernel_op = OpId::_binary;
  k.code = code;
  k.result = bool_result(code) ? TSR_BOOL : compute;
  k.extra = extra;
  k.nextra = 2;
  run_pointwise(c, mode, target, in, 2, k);
}

void run_promoted(OpCall& c, int32_t code, const EwInput& a, const EwInput& b) {
  const EwInput in[2] = {a, b};
  const tsr_dtype compute = binary_compute(*c.op, code, result_type(in, 2));
  if (code == TSR_BINARY_POW && !b.tensor && is_integral(compute, true) &&
      (b.scalar.kind == TSR_INT64 && b.scalar.v.i < 0))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': Integers to negative integer powers are not allowed (exponent {}); use a "
         "floating-point base or exponent",
         c.op->name, b.scalar.v.i);
  run_binary(c, code, a, b, compute);
}

}  // namespace

void binary_primitive(OpCall& c) {
  const int64_t code = c.int_arg(2);
  if (code < 0 || code >= TSR_BINARY_CODE_COUNT)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'op' = {} is not a _binary function code; use a tsr_binary_op value "
         "from tessera/opcodes.h (0 to {})",
         c.op->name, code, TSR_BINARY_CODE_COUNT - 1);
  const EwInput in[2] = {input_of(c, 0), input_of(c, 1)};
  const int32_t k = static_cast<int32_t>(code);
  run_binary(c, k, in[0], in[1], binary_compute(*c.op, k, result_type(in, 2)), c.scalar(3));
}

void binary_op(OpCall& c) { run_promoted(c, c.op->code, input_of(c, 0), input_of(c, 1)); }

// float_power: pow computed in float64 (complex128 for complex operands).
void float_power_op(OpCall& c) {
  const EwInput a = input_of(c, 0), b = input_of(c, 1);
  const bool complex = is_complex(a.dtype) || is_complex(b.dtype);
  const tsr_dtype compute = complex ? TSR_COMPLEX128 : TSR_FLOAT64;
  TensorImpl* target = nullptr;
  if (mode_of(c, &target) == Mode::kInPlace && target->dtype != compute)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': the base given to float_power_ has dtype {} but the operation's result "
         "requires dtype {}; convert self with to({}) first",
         c.op->name, dtype_name(target->dtype), dtype_name(compute), dtype_name(compute));
  run_binary(c, TSR_BINARY_POW, a, b, compute);
}

// div with rounding_mode None (true division), 'trunc' or 'floor'.
void div_mode_op(OpCall& c) {
  const EwInput a = input_of(c, 0), b = input_of(c, 1);
  if (c.is_none(2)) {
    arith_op(c, OpId::div_Tensor, a, b, nullptr);
    return;
  }
  const char* mode = c.args[2].u.str;
  int32_t code;
  if (std::strcmp(mode, "trunc") == 0)
    code = TSR_BINARY_DIV_TRUNC;
  else if (std::strcmp(mode, "floor") == 0)
    code = TSR_BINARY_DIV_FLOOR;
  else
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
         "'{}'",
         c.op->name, mode);
  run_promoted(c, code, a, b);
}

void true_divide_op(OpCall& c) {
  arith_op(c, OpId::div_Tensor, input_of(c, 0), input_of(c, 1), nullptr);
}

// rsub(self, other, alpha) = other - alpha * self.
void rsub_op(OpCall& c) {
  arith_op(c, OpId::sub_Tensor, input_of(c, 1), input_of(c, 0), &c.scalar(2));
}

}  // namespace tsr::ops
