// tessera/ops.hpp - operators through the boxed call (tsr_op_call).
//
// Note [Op handle cache]
// ~~~~~~~~~~~~~~~~~~~~~~
// Each operator is looked up by name once per process: `detail::op<"add.Tensor">()`
// holds its `const tsr_op*` in a function-local static of a function template
// instantiated per name, initialised (thread-safely) on first use from the
// default runtime, whose handles stay valid for the runtime's lifetime (that
// is, until process exit). A failed lookup throws and is retried on the next
// call. The hot path (`a + b`, `add_out`) therefore does no string work, no
// map lookup and no heap allocation of its own: a guard check, a small stack
// array of tsr_value, one tsr_op_call. The only allocations are the core's
// (the result tensor).
//
// Results: a functional op returns a new reference that the Tensor adopts; an
// in-place or out= op is called with nouts = 0 so no extra reference is made
// and released, and the C++ call returns the target.
#pragma once

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "tessera/error.hpp"
#include "tessera/runtime.hpp"
#include "tessera/scalar.hpp"
#include "tessera/tensor.hpp"
#include "tessera/tessera.h"

namespace tessera {
namespace detail {

// A string literal usable as a template argument: the cache key of op<>().
template <size_t N>
struct OpName {
  constexpr OpName(const char (&text)[N]) { std::copy_n(text, N, value); }  // NOLINT
  char value[N];
};

[[gnu::cold, gnu::noinline]] inline const tsr_op* find_op(const char* name) {
  const tsr_op* op = nullptr;
  check(tsr_op_find(default_runtime(), name, &op));
  return op;
}

// See Note [Op handle cache].
template <OpName Name>
const tsr_op* op() {
  static const tsr_op* const handle = find_op(Name.value);
  return handle;
}

inline tsr_value value(const Tensor& tensor) noexcept {
  tsr_value v{};
  v.tag = TSR_VALUE_TENSOR;
  v.u.tensor = tensor.get();
  return v;
}
inline tsr_value value(const Scalar& scalar) noexcept {
  tsr_value v{};
  v.tag = TSR_VALUE_SCALAR;
  v.u.scalar = scalar.raw();
  return v;
}
inline tsr_value value(bool flag) noexcept {
  tsr_value v{};
  v.tag = TSR_VALUE_BOOL;
  v.u.b = flag ? 1 : 0;
  return v;
}
inline tsr_value value(IntList ints) noexcept {
  tsr_value v{};
  v.tag = TSR_VALUE_INT_LIST;
  v.len = static_cast<int32_t>(ints.size());
  v.u.ints = ints.data();
  return v;
}
inline tsr_value value(std::optional<Dtype> dtype) noexcept {
  tsr_value v{};
  if (dtype) {
    v.tag = TSR_VALUE_DTYPE;
    v.u.i = static_cast<int64_t>(*dtype);
  }
  return v;
}
inline tsr_value value(MemoryFormat format) noexcept {
  tsr_value v{};
  v.tag = TSR_VALUE_MEMORY_FORMAT;
  v.u.i = static_cast<int64_t>(format);
  return v;
}
inline tsr_value none() noexcept { return tsr_value{}; }
inline tsr_value value(int64_t i) noexcept {
  tsr_value v{};
  v.tag = TSR_VALUE_INT;
  v.u.i = i;
  return v;
}
inline tsr_value value(int i) noexcept { return value(static_cast<int64_t>(i)); }
inline tsr_value value(double f) noexcept {
  tsr_value v{};
  v.tag = TSR_VALUE_FLOAT;
  v.u.f = f;
  return v;
}
inline tsr_value value(const char* text) noexcept {
  tsr_value v{};
  v.tag = TSR_VALUE_STRING;
  v.u.str = text;
  return v;
}
inline tsr_value value(Device device) noexcept {
  tsr_value v{};
  v.tag = TSR_VALUE_DEVICE;
  v.u.device = device.raw();
  return v;
}
// A Tensor[] / Tensor?[] argument: `handles` must outlive the call.
inline tsr_value value(const std::vector<tsr_tensor*>& handles) noexcept {
  tsr_value v{};
  v.tag = TSR_VALUE_TENSOR_LIST;
  v.len = static_cast<int32_t>(handles.size());
  v.u.tensors = handles.data();
  return v;
}
inline tsr_value value(std::nullopt_t) noexcept { return tsr_value{}; }

[[noreturn, gnu::cold, gnu::noinline]] inline void throw_not_a_tensor(const tsr_op* op,
                                                                      const tsr_value& result) {
  throw_error(TSR_INTERNAL, std::string("op '") + tsr_op_name(op) + "' returned a value of tag " +
                                std::to_string(result.tag) +
                                " where a tensor was expected; please report this");
}

// Calls `op` and adopts its first result, which must be a tensor.
inline Tensor call(const tsr_op* op, const tsr_value* args, size_t nargs) {
  tsr_value result{};
  check(tsr_op_call(op, args, nargs, &result, 1));
  if (result.tag != TSR_VALUE_TENSOR || result.u.tensor == nullptr) [[unlikely]] {
    throw_not_a_tensor(op, result);
  }
  return Tensor::adopt(result.u.tensor);
}

// Calls an in-place or out= op, dropping its result (the target).
inline void call_in_place(const tsr_op* op, const tsr_value* args, size_t nargs) {
  check(tsr_op_call(op, args, nargs, nullptr, 0));
}

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

// ---------------------------------------------------------------------------
// Elementwise arithmetic (broadcasting and type promotion as in PyTorch)
// ---------------------------------------------------------------------------

inline Tensor add(const Tensor& self, const Tensor& other) {
  const tsr_value args[2] = {detail::value(self), detail::value(other)};
  return detail::call(detail::op<"add.Tensor">(), args, 2);
}
// self + alpha * other
inline Tensor add(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  const tsr_value args[3] = {detail::value(self), detail::value(other), detail::value(alpha)};
  return detail::call(detail::op<"add.Tensor">(), args, 3);
}
inline Tensor add(const Tensor& self, const Scalar& other) {
  const tsr_value args[2] = {detail::value(self), detail::value(other)};
  return detail::call(detail::op<"add.Scalar">(), args, 2);
}
inline Tensor sub(const Tensor& self, const Tensor& other) {
  const tsr_value args[2] = {detail::value(self), detail::value(other)};
  return detail::call(detail::op<"sub.Tensor">(), args, 2);
}
// self - alpha * other
inline Tensor sub(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  const tsr_value args[3] = {detail::value(self), detail::value(other), detail::value(alpha)};
  return detail::call(detail::op<"sub.Tensor">(), args, 3);
}
inline Tensor sub(const Tensor& self, const Scalar& other) {
  const tsr_value args[2] = {detail::value(self), detail::value(other)};
  return detail::call(detail::op<"sub.Scalar">(), args, 2);
}
inline Tensor mul(const Tensor& self, const Tensor& other) {
  const tsr_value args[2] = {detail::value(self), detail::value(other)};
  return detail::call(detail::op<"mul.Tensor">(), args, 2);
}
inline Tensor mul(const Tensor& self, const Scalar& other) {
  const tsr_value args[2] = {detail::value(self), detail::value(other)};
  return detail::call(detail::op<"mul.Scalar">(), args, 2);
}
// True division: integer inputs give the default float dtype.
inline Tensor div(const Tensor& self, const Tensor& other) {
  const tsr_value args[2] = {detail::value(self), detail::value(other)};
  return detail::call(detail::op<"div.Tensor">(), args, 2);
}
inline Tensor div(const Tensor& self, const Scalar& other) {
  const tsr_value args[2] = {detail::value(self), detail::value(other)};
  return detail::call(detail::op<"div.Scalar">(), args, 2);
}
// There is no neg op in the registry yet: -x is x * -1.
inline Tensor neg(const Tensor& self) {
  const tsr_value args[1] = {detail::value(self)};
  return detail::call(detail::op<"neg">(), args, 1);
}

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

// ---------------------------------------------------------------------------
// Linear algebra and reductions
// ---------------------------------------------------------------------------

// PyTorch's matmul: 1-d, 2-d and batched operands (decomposes to mm / bmm).
inline Tensor matmul(const Tensor& self, const Tensor& other) {
  const tsr_value args[2] = {detail::value(self), detail::value(other)};
  return detail::call(detail::op<"matmul">(), args, 2);
}
// (n, k) x (k, m)
inline Tensor mm(const Tensor& self, const Tensor& mat2) {
  const tsr_value args[2] = {detail::value(self), detail::value(mat2)};
  return detail::call(detail::op<"mm">(), args, 2);
}
// (b, n, k) x (b, k, m)
inline Tensor bmm(const Tensor& self, const Tensor& mat2) {
  const tsr_value args[2] = {detail::value(self), detail::value(mat2)};
  return detail::call(detail::op<"bmm">(), args, 2);
}

// Sum of every element (0-d); integer and bool inputs sum to int64.
inline Tensor sum(const Tensor& self, std::optional<Dtype> dtype = std::nullopt) {
  const tsr_value args[2] = {detail::value(self), detail::value(dtype)};
  return detail::call(detail::op<"sum">(), args, dtype ? 2 : 1);
}
// Sum over `dims` (negative count from the end).
inline Tensor sum(const Tensor& self, IntList dims, bool keepdim = false,
                  std::optional<Dtype> dtype = std::nullopt) {
  const tsr_value args[4] = {detail::value(self), detail::value(dims), detail::value(keepdim),
                             detail::value(dtype)};
  return detail::call(detail::op<"sum.dim_IntList">(), args, 4);
}
// Floating and complex inputs only (or give a floating `dtype`).
inline Tensor mean(const Tensor& self, std::optional<Dtype> dtype = std::nullopt) {
  const tsr_value args[2] = {detail::value(self), detail::value(dtype)};
  return detail::call(detail::op<"mean">(), args, dtype ? 2 : 1);
}
inline Tensor mean(const Tensor& self, IntList dims, bool keepdim = false,
                   std::optional<Dtype> dtype = std::nullopt) {
  const tsr_value args[4] = {detail::value(self), detail::value(dims), detail::value(keepdim),
                             detail::value(dtype)};
  return detail::call(detail::op<"mean.dim">(), args, 4);
}

inline Tensor clone(const Tensor& self, MemoryFormat format = MemoryFormat::Preserve) {
  const tsr_value args[2] = {detail::value(self), detail::value(format)};
  return detail::call(detail::op<"clone">(), args, format == MemoryFormat::Preserve ? 1 : 2);
}

// ---------------------------------------------------------------------------
// Tensor members declared in tensor.hpp
// ---------------------------------------------------------------------------

inline Tensor Tensor::add(const Tensor& other) const { return tessera::add(*this, other); }
inline Tensor Tensor::add(const Tensor& other, const Scalar& alpha) const {
  return tessera::add(*this, other, alpha);
}
inline Tensor Tensor::add(const Scalar& other) const { return tessera::add(*this, other); }
inline Tensor Tensor::sub(const Tensor& other) const { return tessera::sub(*this, other); }
inline Tensor Tensor::sub(const Tensor& other, const Scalar& alpha) const {
  return tessera::sub(*this, other, alpha);
}
inline Tensor Tensor::sub(const Scalar& other) const { return tessera::sub(*this, other); }
inline Tensor Tensor::mul(const Tensor& other) const { return tessera::mul(*this, other); }
inline Tensor Tensor::mul(const Scalar& other) const { return tessera::mul(*this, other); }
inline Tensor Tensor::div(const Tensor& other) const { return tessera::div(*this, other); }
inline Tensor Tensor::div(const Scalar& other) const { return tessera::div(*this, other); }
inline Tensor Tensor::neg() const { return tessera::neg(*this); }

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

inline Tensor Tensor::matmul(const Tensor& other) const { return tessera::matmul(*this, other); }
inline Tensor Tensor::mm(const Tensor& mat2) const { return tessera::mm(*this, mat2); }
inline Tensor Tensor::bmm(const Tensor& mat2) const { return tessera::bmm(*this, mat2); }

inline Tensor Tensor::sum(std::optional<Dtype> dtype) const { return tessera::sum(*this, dtype); }
inline Tensor Tensor::sum(IntList dims, bool keepdim, std::optional<Dtype> dtype) const {
  return tessera::sum(*this, dims, keepdim, dtype);
}
inline Tensor Tensor::mean(std::optional<Dtype> dtype) const { return tessera::mean(*this, dtype); }
inline Tensor Tensor::mean(IntList dims, bool keepdim, std::optional<Dtype> dtype) const {
  return tessera::mean(*this, dims, keepdim, dtype);
}

inline Tensor Tensor::t() const {
  const tsr_value args[1] = {detail::value(*this)};
  return detail::call(detail::op<"t">(), args, 1);
}
inline Tensor Tensor::contiguous(MemoryFormat format) const {
  if (is_contiguous(format)) return *this;
  return tessera::clone(*this, format);
}
inline Tensor Tensor::clone(MemoryFormat format) const { return tessera::clone(*this, format); }

// ---- any registry op by name -------------------------------------------------
// For ops without a typed wrapper, and for tests: `call_op("exp", {value(t)})`.
// The op is looked up on every call (a map lookup): wrap hot ops with op<>().
// Returns every result of the op (an in-place op returns its target).
inline std::vector<Tensor> call_op_all(const char* name, std::initializer_list<tsr_value> args) {
  const tsr_op* handle = detail::find_op(name);
  tsr_value results[4] = {};
  check(tsr_op_call(handle, args.begin(), args.size(), results, 4));
  std::vector<Tensor> out;
  for (const tsr_value& r : results)
    if (r.tag == TSR_VALUE_TENSOR && r.u.tensor != nullptr)
      out.push_back(Tensor::adopt(r.u.tensor));
  return out;
}
// The first result of call_op_all.
inline Tensor call_op(const char* name, std::initializer_list<tsr_value> args) {
  std::vector<Tensor> r = call_op_all(name, args);
  if (r.empty())
    detail::throw_error(TSR_INTERNAL, std::string("op '") + name + "' returned no tensor");
  return std::move(r.front());
}

}  // namespace tessera
