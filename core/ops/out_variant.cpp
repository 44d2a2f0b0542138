// out_variant.cpp - write_out and the derived out= overloads (TSR_OUT).
#include "ops/out_variant.h"

#include <string>

#include "dispatch/op_api.h"
#include "dispatch/values.h"
#include "ops/op_util.h"
#include "runtime/device.h"
#include "util/error.h"

namespace tsr::ops {

TensorRef write_out(const OpDef& op, TensorImpl* out, TensorImpl* result, bool exact_dtype,
                    const char* out_name) {
  check_same_device(op, *result, *out, "self", out_name);
  if (exact_dtype && out->dtype != result->dtype)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': Expected out tensor to have dtype {}, but got {} instead (argument '{}'); "
         "pass a {} tensor or use the functional form",
         op.name, dtype_name(result->dtype), dtype_name(out->dtype), out_name,
         dtype_name(result->dtype));
  if (!can_cast(result->dtype, out->dtype))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': result type {} can't be cast to the desired output type {} (argument '{}'); "
         "pass a {} tensor",
         op.name, dtype_name(result->dtype), dtype_name(out->dtype), out_name,
         dtype_name(result->dtype));
  resize_output(out, shape_of(*result));
  assert_no_internal_overlap(*out, op.name.c_str(), out_name);
  copy_raw(out, result);
  out->bump_version();
  return TensorRef::borrow(out);
}

namespace {

// The positions of the out= schema's write arguments, in order.
std::vector<int32_t> out_positions(const Schema& s) {
  std::vector<int32_t> outs;
  for (size_t i = 0; i < s.args.size(); ++i) {
    if (s.args[i].is_write) outs.push_back(static_cast<int32_t>(i));
  }
  return outs;
}

}  // namespace

void out_variant(OpCall& c) {
  const OpDef& op = *c.op;
  const OpDef& f = Registry::get().op(op.functional);
  const std::vector<int32_t> outs = out_positions(op.schema);
  TensorImpl* first_out = c.tensor(outs[0]);
  tsr_value args[OpCall::kMaxArgs];
  const int32_t n = static_cast<int32_t>(op.functional_args.size());
  for (int32_t j = 0; j < n; ++j) {
    const int32_t where = op.functional_args[static_cast<size_t>(j)];
    if (where >= 0) {
      args[j] = c.args[where];
    } else if (where == kOutArgDtype) {
      args[j] = v_dtype(first_out->dtype);
    } else if (where == kOutArgDevice) {
      args[j] = v_device(first_out->device()->device);
    } else {
      args[j] = f.schema.args[static_cast<size_t>(j)].default_value;
    }
  }
  OpResults r = op::call_values(c.runtime, op.functional, {args, static_cast<size_t>(n)});
  for (size_t k = 0; k < outs.size(); ++k) {
    const std::string& name = op.schema.args[static_cast<size_t>(outs[k])].name;
    const bool index = f.schema.returns[k].name == "indices" || name == "indices";
    c.set_result(write_out(op, c.tensor(outs[k]), r.r[k].get(), index, name.c_str()));
  }
}

}  // namespace tsr::ops
