// tessera/boxed_call.hpp - the frontend's side of the boxed call
// (tsr_op_call): op handles looked up once, C++ values as tsr_value, and the
// call itself. Every typed op wrapper (tensor_methods.hpp, ops/*.hpp) is
// written with these; call_op.hpp calls any op by name.
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

#include "tessera/dims.hpp"
#include "tessera/dtype.hpp"
#include "tessera/error.hpp"
#include "tessera/runtime.hpp"
#include "tessera/scalar.hpp"
#include "tessera/tensor_body.hpp"
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

}  // namespace detail
}  // namespace tessera
