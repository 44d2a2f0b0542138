#include "ops/linalg/linalg_util.h"

#include "ops/out_variant.h"

#include "ops/op_impls.h"
#include "runtime/runtime.h"
#include "util/error.h"

namespace tsr::ops::linalg_detail {

void finish_out(OpCall& c, TensorImpl* result, TensorImpl* out) {
  c.set_result(write_out(*c.op, out, result, /*exact_dtype=*/true));
}

void finish_in_place(OpCall& c, TensorImpl* result, TensorImpl* self) {
  const OpDef& op = *c.op;
  if (!same_shape(*self, shape_of(*result)))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': output with shape {} doesn't match the broadcast shape {}; use the "
         "functional form",
         op.name, shape_str(self->ndim, self->sizes), shape_str(result->ndim, result->sizes));
  assert_no_internal_overlap(*self, op.name.c_str(), "self");
  copy_raw(self, result);
  self->bump_version();
  c.set_result(TensorRef::borrow(self));
}

IntParams int_params(const OpCall& c, int i, int32_t n) {
  const tsr_value& v = c.args[i];
  IntParams p;
  p.n = n;
  if (v.tag != TSR_VALUE_INT_LIST || (v.len != 1 && v.len != n)) {
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': expected {} to be a single integer value or a list of {} values to match the "
         "number of spatial dimensions, but got {}={}",
         c.op->name, c.arg_name(i), n, c.arg_name(i),
         v.tag == TSR_VALUE_INT_LIST ? shape_str(v.len, v.u.ints) : std::string("None"));
  }
  for (int32_t d = 0; d < n; ++d) p.v[d] = v.u.ints[v.len == 1 ? 0 : d];
  return p;
}

bool scalar_is(const tsr_scalar& s, int64_t value) {
  switch (s.kind) {
    case TSR_BOOL:
    case TSR_INT64:
      return s.v.i == value;
    case TSR_FLOAT64:
      return s.v.f == static_cast<double>(value);
    case TSR_COMPLEX128:
      return s.v.c.re == static_cast<double>(value) && s.v.c.im == 0.0;
    default:
      return false;
  }
}

}  // namespace tsr::ops::linalg_detail
