// Builders of tagged values (tsr_value) for frames assembled by hand: kernel
// argument lists (dispatch/kernel_call.h), frames an op fills itself, and
// value arrays handed to op::call_values. Op calls with C++ values use
// dispatch/op_api.h instead, which converts against the schema.
#pragma once

#include <cstdint>

#include "tensor/tensor_impl.h"
#include "tessera/tessera.h"

namespace tsr {

inline tsr_value v_tensor(TensorImpl* t) {
  tsr_value v{};
  v.tag = TSR_VALUE_TENSOR;
  v.u.tensor = reinterpret_cast<tsr_tensor*>(t);
  return v;
}
inline tsr_value v_none() { return tsr_value{}; }
inline tsr_value v_int(int64_t i) {
  tsr_value v{};
  v.tag = TSR_VALUE_INT;
  v.u.i = i;
  return v;
}
inline tsr_value v_bool(bool b) {
  tsr_value v{};
  v.tag = TSR_VALUE_BOOL;
  v.u.b = b;
  return v;
}
inline tsr_value v_ints(const int64_t* p, int32_t n) {
  tsr_value v{};
  v.tag = TSR_VALUE_INT_LIST;
  v.len = n;
  v.u.ints = p;
  return v;
}
inline tsr_value v_scalar(tsr_scalar s) {
  tsr_value v{};
  v.tag = TSR_VALUE_SCALAR;
  v.u.scalar = s;
  return v;
}
inline tsr_value v_dtype(tsr_dtype d) {
  tsr_value v{};
  v.tag = TSR_VALUE_DTYPE;
  v.u.i = d;
  return v;
}
// A Tensor[] value over internal tensors (entries may be null for Tensor?[]).
inline tsr_value v_tensors(TensorImpl* const* ts, int32_t n) {
  tsr_value v{};
  v.tag = TSR_VALUE_TENSOR_LIST;
  v.len = n;
  v.u.tensors = reinterpret_cast<tsr_tensor* const*>(ts);
  return v;
}
inline tsr_value v_float(double f) {
  tsr_value v{};
  v.tag = TSR_VALUE_FLOAT;
  v.u.f = f;
  return v;
}
inline tsr_value v_str(const char* s) {
  tsr_value v{};
  v.tag = TSR_VALUE_STRING;
  v.u.str = s;
  return v;
}
inline tsr_value v_generator(tsr_generator* g) {
  tsr_value v{};
  if (g) {
    v.tag = TSR_VALUE_GENERATOR;
    v.u.generator = g;
  }
  return v;
}
inline tsr_value v_device(tsr_device d) {
  tsr_value v{};
  v.tag = TSR_VALUE_DEVICE;
  v.u.device = d;
  return v;
}

}  // namespace tsr
