// tessera/ops/arithmetic.hpp - add, sub, mul, div and neg as free functions,
// their out= forms, and the arithmetic operators (`a + b`, `2.0 * a`), with
// PyTorch's broadcasting and type promotion.
//
// The functional forms are Tensor's members (`add(a, b)` is `a.add(b)`,
// tensor_methods.hpp); in-place forms are members only (`a.add_(b)`, `a += b`).
#pragma once

#include "tessera/boxed_call.hpp"
#include "tessera/dtype.hpp"
#include "tessera/runtime.hpp"
#include "tessera/scalar.hpp"
#include "tessera/tensor.hpp"
#include "tessera/tessera.h"

namespace tessera {
namespace detail {

// The dtype PyTorch gives `tensor op scalar` (a scalar does not raise a
// tensor's dtype within its category: float32 + 2.5 stays float32, int32 + 2
// stays int32, int32 + 2.5 becomes the default float).
inline Dtype result_dtype(Dtype tensor, const Scalar& scalar) noexcept {
  if (scalar.is_complex()) {
    if (is_complex(tensor)) return tensor;
    return tensor == kFloat64 ? kComplex128 : kComplex64;
  }
  if (scalar.is_floating_point()) {
    return is_floating_point(tensor) || is_complex(tensor) ? tensor : kDefaultFloat;
  }
  if (scalar.is_integral()) return tensor == kBool ? kInt64 : tensor;
  return tensor;
}

// A 0-d tensor holding `scalar` as `dtype` on `device` (for scalar-first ops).
inline Tensor scalar_tensor_like(const Scalar& scalar, Dtype dtype, Device device) {
  tsr_tensor* out = nullptr;
  check(tsr_tensor_empty(default_runtime(), 0, nullptr, to_c(dtype), device.raw(), &out));
  Tensor result = Tensor::adopt(out);
  const tsr_value args[2] = {value(result), value(scalar)};
  call_in_place(op<"fill_.Scalar">(), args, 2);
  return result;
}

}  // namespace detail

inline Tensor add(const Tensor& self, const Tensor& other) { return self.add(other); }
// self + alpha * other
inline Tensor add(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  return self.add(other, alpha);
}
inline Tensor add(const Tensor& self, const Scalar& other) { return self.add(other); }
inline Tensor sub(const Tensor& self, const Tensor& other) { return self.sub(other); }
// self - alpha * other
inline Tensor sub(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  return self.sub(other, alpha);
}
inline Tensor sub(const Tensor& self, const Scalar& other) { return self.sub(other); }
inline Tensor mul(const Tensor& self, const Tensor& other) { return self.mul(other); }
inline Tensor mul(const Tensor& self, const Scalar& other) { return self.mul(other); }
// True division: integer inputs give the default float dtype.
inline Tensor div(const Tensor& self, const Tensor& other) { return self.div(other); }
inline Tensor div(const Tensor& self, const Scalar& other) { return self.div(other); }
inline Tensor neg(const Tensor& self) { return self.neg(); }

// out= forms: write into `out` (resized by the core when its shape differs,
// as PyTorch does for an empty out) and return it.
inline Tensor& add_out(Tensor& out, const Tensor& self, const Tensor& other) {
  // add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out): alpha
  // precedes out positionally, so it is passed explicitly.
  const tsr_value args[4] = {detail::value(self), detail::value(other), detail::value(Scalar(1)),
                             detail::value(out)};
  detail::call_in_place(detail::op<"add.out">(), args, 4);
  return out;
}
inline Tensor& sub_out(Tensor& out, const Tensor& self, const Tensor& other) {
  const tsr_value args[4] = {detail::value(self), detail::value(other), detail::value(Scalar(1)),
                             detail::value(out)};
  detail::call_in_place(detail::op<"sub.out">(), args, 4);
  return out;
}
inline Tensor& mul_out(Tensor& out, const Tensor& self, const Tensor& other) {
  const tsr_value args[3] = {detail::value(self), detail::value(other), detail::value(out)};
  detail::call_in_place(detail::op<"mul.out">(), args, 3);
  return out;
}
inline Tensor& div_out(Tensor& out, const Tensor& self, const Tensor& other) {
  const tsr_value args[3] = {detail::value(self), detail::value(other), detail::value(out)};
  detail::call_in_place(detail::op<"div.out">(), args, 3);
  return out;
}

inline Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
inline Tensor operator+(const Tensor& a, const Scalar& b) { return add(a, b); }
inline Tensor operator-(const Tensor& a, const Scalar& b) { return sub(a, b); }
inline Tensor operator*(const Tensor& a, const Scalar& b) { return mul(a, b); }
inline Tensor operator/(const Tensor& a, const Scalar& b) { return div(a, b); }
inline Tensor operator+(const Scalar& a, const Tensor& b) { return add(b, a); }
inline Tensor operator*(const Scalar& a, const Tensor& b) { return mul(b, a); }
// Scalar-first subtraction and division have no registry op yet (PyTorch's
// rsub): the scalar becomes a 0-d tensor of the result dtype and broadcasts.
inline Tensor operator-(const Scalar& a, const Tensor& b) {
  return sub(detail::scalar_tensor_like(a, detail::result_dtype(b.dtype(), a), b.device()), b);
}
inline Tensor operator/(const Scalar& a, const Tensor& b) {
  return div(detail::scalar_tensor_like(a, detail::result_dtype(b.dtype(), a), b.device()), b);
}

}  // namespace tessera
