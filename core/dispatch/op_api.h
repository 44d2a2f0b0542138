// The internal op API: how the core calls one op from another (op
// implementations, decompositions, derivative formulas, the C ABI's
// conveniences). One typed call by OpId:
//
//   TensorRef y = op::call(OpId::sum_dim_IntList, x, dims, /*keepdim=*/true);
//   OpResults r = op::call_all(rt, OpId::max_dim, x, int64_t{1});
//
// Each C++ argument is converted into the frame against the op's schema at
// its position, so the schema decides what a value means:
//   TensorImpl*, TensorRef        -> Tensor (a null pointer is None: Tensor?)
//   bool                          -> bool (or a bool Scalar)
//   any other integer or enum     -> int; Scalar (an int Scalar); float; int[1]
//   double, float                 -> float; Scalar (a float Scalar)
//   tsr_scalar                    -> Scalar
//   tsr_dtype                     -> ScalarType
//   tsr_device                    -> Device
//   tsr_memory_format             -> MemoryFormat
//   tsr_generator*                -> Generator (null is None)
//   const char*                   -> str
//   Shape, std::span<const int64_t>, std::vector<int64_t>, op::ints({...}) -> int[]
//   std::span<TensorImpl* const>, std::vector<TensorImpl*> -> Tensor[]
//   op::none                      -> None (an optional argument)
//   std::optional<T>              -> None when empty, else as T
//   tsr_value                     -> as is (a value read from another frame)
// Missing trailing arguments take their schema defaults. A value the schema
// cannot take, or too many values, is an INTERNAL error naming the op and the
// argument: internal calls are the core's own code, so a mismatch is a bug.
//
// Every call runs through run_op (observer, inference check, autograd
// recording) like an application's call. Results are new references; `call`
// returns the first (an empty TensorRef for ops without results), `call_all`
// every one. Without a Runtime* the op runs in the runtime of the first
// tensor argument (a compile error when there is none). Errors of the called
// op propagate as tsr::Error.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include "dispatch/op_call.h"
#include "registry/op_ids.h"
#include "tensor/geometry.h"

namespace tsr {

struct OpResults {
  TensorRef r[OpCall::kMaxResults];
  int32_t n = 0;
};

namespace op {

// None, for an optional argument.
struct None {};
inline constexpr None none{};

// An int list written in place: op::ints({0, 2}) (at most TSR_MAX_DIMS values;
// longer lists are passed as a span or vector).
Shape ints(std::initializer_list<int64_t> values);
// `n` ints from `p`, and `n` tensors from `p` (entries null for None in a
// Tensor?[]): borrowed, valid as long as `p`.
inline std::span<const int64_t> ints(const int64_t* p, int64_t n) {
  return {p, static_cast<size_t>(n)};
}
inline std::span<TensorImpl* const> tensors(TensorImpl* const* p, int64_t n) {
  return {p, static_cast<size_t>(n)};
}

namespace detail {

// Frame building (op_api.cpp). begin: the op and runtime, checks the count.
void begin(OpCall& c, Runtime* runtime, OpId id, int32_t nargs);
void put_tensor(OpCall& c, int i, TensorImpl* t);
void put_int(OpCall& c, int i, int64_t v);
void put_float(OpCall& c, int i, double v);
void put_bool(OpCall& c, int i, bool v);
void put_scalar(OpCall& c, int i, const tsr_scalar& v);
void put_dtype(OpCall& c, int i, tsr_dtype v);
void put_device(OpCall& c, int i, const tsr_device& v);
void put_memory_format(OpCall& c, int i, tsr_memory_format v);
void put_generator(OpCall& c, int i, tsr_generator* g);
void put_str(OpCall& c, int i, const char* s);
void put_ints(OpCall& c, int i, const int64_t* v, size_t n);
void put_tensors(OpCall& c, int i, TensorImpl* const* v, size_t n);
void put_none(OpCall& c, int i);
void put_value(OpCall& c, int i, const tsr_value& v);
// Fills defaults and runs the frame (run_op).
void finish(OpCall& c);
OpResults take_results(OpCall& c);
// The runtime of a call without one: that of `t`, the first tensor argument.
Runtime* runtime_of(TensorImpl* t, OpId id);

template <class T>
inline constexpr bool always_false = false;
template <class T>
inline constexpr bool is_optional_v = false;
template <class T>
inline constexpr bool is_optional_v<std::optional<T>> = true;

template <class T>
inline void put(OpCall& c, int i, const T& v) {
  using D = std::remove_cvref_t<T>;
  if constexpr (std::is_same_v<D, bool>) {
    put_bool(c, i, v);
  } else if constexpr (std::is_same_v<D, tsr_dtype>) {
    put_dtype(c, i, v);
  } else if constexpr (std::is_same_v<D, tsr_memory_format>) {
    put_memory_format(c, i, v);
  } else if constexpr (std::is_integral_v<D> || std::is_enum_v<D>) {
    put_int(c, i, static_cast<int64_t>(v));
  } else if constexpr (std::is_floating_point_v<D>) {
    put_float(c, i, static_cast<double>(v));
  } else if constexpr (std::is_same_v<D, TensorRef>) {
    put_tensor(c, i, v.get());
  } else if constexpr (std::is_same_v<D, TensorImpl*> || std::is_same_v<D, std::nullptr_t>) {
    put_tensor(c, i, v);
  } else if constexpr (std::is_same_v<D, tsr_scalar>) {
    put_scalar(c, i, v);
  } else if constexpr (std::is_same_v<D, tsr_device>) {
    put_device(c, i, v);
  } else if constexpr (std::is_same_v<D, tsr_generator*>) {
    put_generator(c, i, v);
  } else if constexpr (std::is_same_v<D, const char*> || std::is_same_v<D, char*>) {
    put_str(c, i, v);
  } else if constexpr (std::is_array_v<D> && std::is_same_v<std::remove_extent_t<D>, char>) {
    put_str(c, i, v);
  } else if constexpr (std::is_same_v<D, None>) {
    put_none(c, i);
  } else if constexpr (std::is_same_v<D, tsr_value>) {
    put_value(c, i, v);
  } else if constexpr (is_optional_v<D>) {
    if (v)
      put(c, i, *v);
    else
      put_none(c, i);
  } else if constexpr (std::is_same_v<D, Shape>) {
    put_ints(c, i, v.sizes, static_cast<size_t>(v.ndim));
  } else if constexpr (std::is_convertible_v<const D&, std::span<const int64_t>>) {
    std::span<const int64_t> s = v;
    put_ints(c, i, s.data(), s.size());
  } else if constexpr (std::is_convertible_v<const D&, std::span<TensorImpl* const>>) {
    std::span<TensorImpl* const> s = v;
    put_tensors(c, i, s.data(), s.size());
  } else {
    static_assert(always_false<D>, "op::call: no conversion of this C++ type to an op argument");
  }
}

template <class T>
inline TensorImpl* tensor_of(const T& v) {
  using D = std::remove_cvref_t<T>;
  if constexpr (std::is_same_v<D, TensorRef>)
    return v.get();
  else
    return v;
}

template <class T>
inline constexpr bool is_tensor_v = std::is_same_v<std::remove_cvref_t<T>, TensorRef> ||
                                    std::is_same_v<std::remove_cvref_t<T>, TensorImpl*>;

// The first tensor argument of a call without a runtime.
template <class A0, class... A>
inline TensorImpl* first_tensor(const A0& a0, const A&... rest) {
  if constexpr (is_tensor_v<A0>) {
    return tensor_of(a0);
  } else {
    static_assert(sizeof...(A) > 0,
                  "op::call without a Runtime* needs a tensor argument; pass the runtime");
    return first_tensor(rest...);
  }
}

template <class... A>
inline void run(OpCall& c, Runtime* runtime, OpId id, const A&... args) {
  begin(c, runtime, id, static_cast<int32_t>(sizeof...(A)));
  int i = 0;
  (put(c, i++, args), ...);
  finish(c);
}

}  // namespace detail

// Runs op `id` in `runtime`; returns its first result.
template <class... A>
TensorRef call(Runtime* runtime, OpId id, const A&... args) {
  OpCall c;
  detail::run(c, runtime, id, args...);
  return c.nresults > 0 ? std::move(c.results[0]) : TensorRef();
}
// Runs op `id` in the runtime of its first tensor argument.
template <class... A>
TensorRef call(OpId id, const A&... args) {
  return call(detail::runtime_of(detail::first_tensor(args...), id), id, args...);
}

// The same, returning every result.
template <class... A>
OpResults call_all(Runtime* runtime, OpId id, const A&... args) {
  OpCall c;
  detail::run(c, runtime, id, args...);
  return detail::take_results(c);
}
template <class... A>
OpResults call_all(OpId id, const A&... args) {
  return call_all(detail::runtime_of(detail::first_tensor(args...), id), id, args...);
}

// An op whose arguments were built at run time as values (forwarding a
// frame's arguments, a custom op's saved inputs): at most OpCall::kMaxArgs.
OpResults call_values(Runtime* runtime, OpId id, std::span<const tsr_value> args);

}  // namespace op
}  // namespace tsr
