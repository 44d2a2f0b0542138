// Small wrappers over registry ops for writing derivative formulas
// (formulas_*.cpp): each takes and returns TensorRef and runs the op through
// call_op, so it records under create_graph and runs on the tensors' device.
#pragma once

#include <initializer_list>

#include "autograd/formulas.h"
#include "registry/registry.h"
#include "util/error.h"

namespace tsr::autograd::fx {

using R = TensorRef;

inline tsr_value t(const R& x) { return v_tensor(x.get()); }
inline tsr_value t(TensorImpl* x) { return v_tensor(x); }
inline tsr_value s(double v) { return v_scalar(scalar_float(v)); }

// Runs op `id`; the first argument is a tensor (its runtime runs the op).
inline R op(OpId id, std::initializer_list<tsr_value> args) {
  if (args.size() == 0 || args.begin()->tag != TSR_VALUE_TENSOR || !args.begin()->u.tensor)
    fail(TSR_INTERNAL,
         "autograd: fx::op needs a tensor first argument (use call_op with a "
         "runtime for ops that start with a Scalar)");
  return call_op(reinterpret_cast<TensorImpl*>(args.begin()->u.tensor)->runtime, id, args);
}

inline R borrow(TensorImpl* x) { return TensorRef::borrow(x); }
inline R mul(const R& a, const R& b) { return op(OpId::mul_Tensor, {t(a), t(b)}); }
inline R mul(const R& a, double k) { return op(OpId::mul_Scalar, {t(a), s(k)}); }
inline R div(const R& a, const R& b) { return op(OpId::div_Tensor, {t(a), t(b)}); }
inline R add(const R& a, const R& b) { return op(OpId::add_Tensor, {t(a), t(b)}); }
inline R add(const R& a, double k) { return op(OpId::add_Scalar, {t(a), s(k)}); }
inline R sub(const R& a, const R& b) { return op(OpId::sub_Tensor, {t(a), t(b)}); }
inline R neg(const R& a) { return op(OpId::neg, {t(a)}); }
inline R rsub(double k, const R& a) { return add(neg(a), k); }  // k - a
inline R square(const R& a) { return mul(a, a); }
inline R zeros_like(const R& a) { return op(OpId::zeros_like, {t(a)}); }
inline R where(const R& cond, const R& a, const R& b) {
  return op(OpId::where_self, {t(cond), t(a), t(b)});
}
inline R gt(const R& a, double k) { return op(OpId::gt_Scalar, {t(a), s(k)}); }
inline R lt(const R& a, double k) { return op(OpId::lt_Scalar, {t(a), s(k)}); }
inline R ge(const R& a, double k) { return op(OpId::ge_Scalar, {t(a), s(k)}); }
inline R le(const R& a, double k) { return op(OpId::le_Scalar, {t(a), s(k)}); }
inline R unary(OpId id, const R& a) { return op(id, {t(a)}); }

// A Scalar argument as a double (complex scalars are refused).
inline double scalar_value(const tsr_scalar& v) {
  switch (v.kind) {
    case TSR_BOOL:
    case TSR_INT64:
      return static_cast<double>(v.v.i);
    case TSR_COMPLEX128:
      fail(TSR_UNIMPLEMENTED, "autograd: complex scalar arguments are not differentiable yet");
    default:
      return v.v.f;
  }
}

}  // namespace tsr::autograd::fx
