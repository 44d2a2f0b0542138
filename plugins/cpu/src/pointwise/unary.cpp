// unary.cpp - the _unary kernel: validates the call, then hands it to the
// floating (unary_float.cpp) or integer/bool (unary_integer.cpp) code paths.
//
// Contract (tessera/opcodes.h): self and out have one dtype, except for the
// predicate codes (LOGICAL_NOT, IS*, SIGNBIT) whose out is bool; self arrives
// in out's shape (broadcast dims have stride 0); out may alias self exactly.
#include "pointwise_kernels.hpp"
#include "tessera/opcodes.h"
#include "tessera/sdk/dtype_traits.hpp"
#include "tessera/sdk/kernel_args.hpp"
#include "tessera/sdk/status.hpp"

namespace tessera::cpu {

namespace {

bool predicate_code(int64_t code) noexcept {
  switch (code) {
    case TSR_UNARY_LOGICAL_NOT:
    case TSR_UNARY_ISNAN:
    case TSR_UNARY_ISINF:
    case TSR_UNARY_ISPOSINF:
    case TSR_UNARY_ISNEGINF:
    case TSR_UNARY_ISFINITE:
    case TSR_UNARY_SIGNBIT:
      return true;
    default:
      return false;
  }
}

}  // namespace

void unary_kernel(const tsr_plugin_context& context, const tsr_kernel_call* raw_call) {
  const tsr_kernel_call& call = sdk::check_call(raw_call, 5, 1);
  const tsr_tensor_desc& self = sdk::tensor_arg(call, 0, "self");
  const int64_t code = sdk::int_arg(call, 1, "op");
  const tsr_scalar params[3] = {sdk::scalar_arg(call, 2, "p0"), sdk::scalar_arg(call, 3, "p1"),
                                sdk::scalar_arg(call, 4, "p2")};
  const tsr_tensor_desc& out = sdk::out_arg(call, 0);
  sdk::check_same_sizes(call, self, "self", out, "out");
  if (code < 0 || code >= TSR_UNARY_CODE_COUNT) {
    sdk::throw_status(TSR_INVALID_ARGUMENT,
                      "%s: argument 'op' = %lld is not a tsr_unary_op code (0 to %d)",
                      sdk::op_name(call), static_cast<long long>(code), TSR_UNARY_CODE_COUNT - 1);
  }
  sdk::check_dtype(call, out, "out", predicate_code(code) ? TSR_BOOL : self.dtype);
  const int c = static_cast<int>(code);
  if (sdk::is_floating_dtype(self.dtype)) {
    pointwise::unary_floating(context, call, c, out, self, params);
  } else if (sdk::is_complex_dtype(self.dtype)) {
    sdk::throw_unsupported_dtype(call, "self", self.dtype, kPluginName);
  } else {
    pointwise::unary_integer(context, call, c, out, self, params);
  }
}

}  // namespace tessera::cpu
