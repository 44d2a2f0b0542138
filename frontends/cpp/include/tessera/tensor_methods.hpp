// tessera/tensor_methods.hpp - the definitions of the Tensor members that go
// through the boxed call (declared in tensor_body.hpp): arithmetic and its
// in-place forms, fill_, matmul/mm/bmm, sum/mean, t, contiguous and clone.
// Include tessera/tensor.hpp, which includes this.
//
// Each member makes its boxed call itself (see Note [Op handle cache] in
// boxed_call.hpp); the free functions of ops/*.hpp (`tessera::add(a, b)`)
// forward to these. A functional member returns the new tensor the op made;
// an in-place member is called with nouts = 0 and returns *this.
#pragma once

#include <optional>

#include "tessera/boxed_call.hpp"
#include "tessera/dims.hpp"
#include "tessera/dtype.hpp"
#include "tessera/scalar.hpp"
#include "tessera/tensor_body.hpp"
#include "tessera/tessera.h"

namespace tessera {

// ---------------------------------------------------------------------------
// Arithmetic (broadcasting and type promotion as in PyTorch)
// ---------------------------------------------------------------------------

inline Tensor Tensor::add(const Tensor& other) const {
  const tsr_value args[2] = {detail::value(*this), detail::value(other)};
  return detail::call(detail::op<"add.Tensor">(), args, 2);
}
// *this + alpha * other
inline Tensor Tensor::add(const Tensor& other, const Scalar& alpha) const {
  const tsr_value args[3] = {detail::value(*this), detail::value(other), detail::value(alpha)};
  return detail::call(detail::op<"add.Tensor">(), args, 3);
}
inline Tensor Tensor::add(const Scalar& other) const {
  const tsr_value args[2] = {detail::value(*this), detail::value(other)};
  return detail::call(detail::op<"add.Scalar">(), args, 2);
}
inline Tensor Tensor::sub(const Tensor& other) const {
  const tsr_value args[2] = {detail::value(*this), detail::value(other)};
  return detail::call(detail::op<"sub.Tensor">(), args, 2);
}
// *this - alpha * other
inline Tensor Tensor::sub(const Tensor& other, const Scalar& alpha) const {
  const tsr_value args[3] = {detail::value(*this), detail::value(other), detail::value(alpha)};
  return detail::call(detail::op<"sub.Tensor">(), args, 3);
}
inline Tensor Tensor::sub(const Scalar& other) const {
  const tsr_value args[2] = {detail::value(*this), detail::value(other)};
  return detail::call(detail::op<"sub.Scalar">(), args, 2);
}
inline Tensor Tensor::mul(const Tensor& other) const {
  const tsr_value args[2] = {detail::value(*this), detail::value(other)};
  return detail::call(detail::op<"mul.Tensor">(), args, 2);
}
inline Tensor Tensor::mul(const Scalar& other) const {
  const tsr_value args[2] = {detail::value(*this), detail::value(other)};
  return detail::call(detail::op<"mul.Scalar">(), args, 2);
}
// True division: integer inputs give the default float dtype.
inline Tensor Tensor::div(const Tensor& other) const {
  const tsr_value args[2] = {detail::value(*this), detail::value(other)};
  return detail::call(detail::op<"div.Tensor">(), args, 2);
}
inline Tensor Tensor::div(const Scalar& other) const {
  const tsr_value args[2] = {detail::value(*this), detail::value(other)};
  return detail::call(detail::op<"div.Scalar">(), args, 2);
}
inline Tensor Tensor::neg() const {
  const tsr_value args[1] = {detail::value(*this)};
  return detail::call(detail::op<"neg">(), args, 1);
}

// In place: each bumps the version counter and returns *this.
inline Tensor& Tensor::add_(const Tensor& other) {
  const tsr_value args[2] = {detail::value(*this), detail::value(other)};
  detail::call_in_place(detail::op<"add_.Tensor">(), args, 2);
  return *this;
}
inline Tensor& Tensor::add_(const Tensor& other, const Scalar& alpha) {
  const tsr_value args[3] = {detail::value(*this), detail::value(other), detail::value(alpha)};
  detail::call_in_place(detail::op<"add_.Tensor">(), args, 3);
  return *this;
}
inline Tensor& Tensor::add_(const Scalar& other) {
  const tsr_value args[2] = {detail::value(*this), detail::value(other)};
  detail::call_in_place(detail::op<"add_.Scalar">(), args, 2);
  return *this;
}
inline Tensor& Tensor::sub_(const Tensor& other) {
  const tsr_value args[2] = {detail::value(*this), detail::value(other)};
  detail::call_in_place(detail::op<"sub_.Tensor">(), args, 2);
  return *this;
}
inline Tensor& Tensor::sub_(const Tensor& other, const Scalar& alpha) {
  const tsr_value args[3] = {detail::value(*this), detail::value(other), detail::value(alpha)};
  detail::call_in_place(detail::op<"sub_.Tensor">(), args, 3);
  return *this;
}
inline Tensor& Tensor::sub_(const Scalar& other) {
  const tsr_value args[2] = {detail::value(*this), detail::value(other)};
  detail::call_in_place(detail::op<"sub_.Scalar">(), args, 2);
  return *this;
}
inline Tensor& Tensor::mul_(const Tensor& other) {
  const tsr_value args[2] = {detail::value(*this), detail::value(other)};
  detail::call_in_place(detail::op<"mul_.Tensor">(), args, 2);
  return *this;
}
inline Tensor& Tensor::mul_(const Scalar& other) {
  const tsr_value args[2] = {detail::value(*this), detail::value(other)};
  detail::call_in_place(detail::op<"mul_.Scalar">(), args, 2);
  return *this;
}
inline Tensor& Tensor::div_(const Tensor& other) {
  const tsr_value args[2] = {detail::value(*this), detail::value(other)};
  detail::call_in_place(detail::op<"div_.Tensor">(), args, 2);
  return *this;
}
inline Tensor& Tensor::div_(const Scalar& other) {
  const tsr_value args[2] = {detail::value(*this), detail::value(other)};
  detail::call_in_place(detail::op<"div_.Scalar">(), args, 2);
  return *this;
}
inline Tensor& Tensor::fill_(const Scalar& value) {
  const tsr_value args[2] = {detail::value(*this), detail::value(value)};
  detail::call_in_place(detail::op<"fill_.Scalar">(), args, 2);
  return *this;
}

// ---------------------------------------------------------------------------
// Linear algebra and reductions
// ---------------------------------------------------------------------------

// PyTorch's matmul: 1-d, 2-d and batched operands (decomposes to mm / bmm).
inline Tensor Tensor::matmul(const Tensor& other) const {
  const tsr_value args[2] = {detail::value(*this), detail::value(other)};
  return detail::call(detail::op<"matmul">(), args, 2);
}
// (n, k) x (k, m)
inline Tensor Tensor::mm(const Tensor& mat2) const {
  const tsr_value args[2] = {detail::value(*this), detail::value(mat2)};
  return detail::call(detail::op<"mm">(), args, 2);
}
// (b, n, k) x (b, k, m)
inline Tensor Tensor::bmm(const Tensor& mat2) const {
  const tsr_value args[2] = {detail::value(*this), detail::value(mat2)};
  return detail::call(detail::op<"bmm">(), args, 2);
}

// Sum of every element (0-d); integer and bool inputs sum to int64.
inline Tensor Tensor::sum(std::optional<Dtype> dtype) const {
  const tsr_value args[2] = {detail::value(*this), detail::value(dtype)};
  return detail::call(detail::op<"sum">(), args, dtype ? 2 : 1);
}
// Sum over `dims` (negative count from the end).
inline Tensor Tensor::sum(IntList dims, bool keepdim, std::optional<Dtype> dtype) const {
  const tsr_value args[4] = {detail::value(*this), detail::value(dims), detail::value(keepdim),
                             detail::value(dtype)};
  return detail::call(detail::op<"sum.dim_IntList">(), args, 4);
}
// Floating and complex inputs only (or give a floating `dtype`).
inline Tensor Tensor::mean(std::optional<Dtype> dtype) const {
  const tsr_value args[2] = {detail::value(*this), detail::value(dtype)};
  return detail::call(detail::op<"mean">(), args, dtype ? 2 : 1);
}
inline Tensor Tensor::mean(IntList dims, bool keepdim, std::optional<Dtype> dtype) const {
  const tsr_value args[4] = {detail::value(*this), detail::value(dims), detail::value(keepdim),
                             detail::value(dtype)};
  return detail::call(detail::op<"mean.dim">(), args, 4);
}

// ---------------------------------------------------------------------------
// Views and copies through the boxed call
// ---------------------------------------------------------------------------

inline Tensor Tensor::t() const {
  const tsr_value args[1] = {detail::value(*this)};
  return detail::call(detail::op<"t">(), args, 1);
}
inline Tensor Tensor::contiguous(MemoryFormat format) const {
  if (is_contiguous(format)) return *this;
  return clone(format);
}
inline Tensor Tensor::clone(MemoryFormat format) const {
  const tsr_value args[2] = {detail::value(*this), detail::value(format)};
  return detail::call(detail::op<"clone">(), args, format == MemoryFormat::Preserve ? 1 : 2);
}

}  // namespace tessera
