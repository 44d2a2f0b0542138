// kernel_args.hpp - validating a tsr_kernel_call and reading its arguments.
//
// Every kernel starts by checking the call against its schema: argument count,
// tags, descriptors (non-NULL, a known dtype, 0..TSR_MAX_DIMS dims, non-negative
// sizes, a data pointer whenever there are elements). A violation throws
// sdk::status_error(TSR_INVALID_ARGUMENT) naming the op, the argument and the
// value, so a bad call from the host never crashes the plugin.
//
// The checks run on every call, including 1-element ones, so the passing path
// is inline and branch-light; composing the message happens out of line, in
// cold functions (kernel_args.cpp).
//
// Returned references and spans borrow from the call (valid during the call).
#ifndef TESSERA_PLUGINS_CPU_KERNEL_ARGS_HPP_
#define TESSERA_PLUGINS_CPU_KERNEL_ARGS_HPP_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "tessera/plugin.h"

namespace tessera::cpu {

// The op name for messages ("kernel" when the host gave none).
inline const char* op_name(const tsr_kernel_call& call) noexcept {
  return call.op_name ? call.op_name : "kernel";
}

namespace detail {

// Out-of-line failure paths: each throws a status_error describing the problem.
[[noreturn, gnu::cold]] void fail_call(const tsr_kernel_call* call, int nargs, int nouts);
[[noreturn, gnu::cold]] void fail_tag(const tsr_kernel_call& call, int index, int32_t tag,
                                      const char* name);
[[noreturn, gnu::cold]] void fail_desc(const tsr_kernel_call& call, const tsr_tensor_desc* desc,
                                       const char* name);
[[noreturn, gnu::cold]] void fail_scalar(const tsr_kernel_call& call, const tsr_scalar& scalar,
                                         const char* name);
[[noreturn, gnu::cold]] void fail_sizes(const tsr_kernel_call& call, const tsr_tensor_desc& desc,
                                        const char* name, const tsr_tensor_desc& expected,
                                        const char* expected_name);
[[noreturn, gnu::cold]] void fail_dtype(const tsr_kernel_call& call, const tsr_tensor_desc& desc,
                                        const char* name, int32_t dtype);

inline bool desc_ok(const tsr_tensor_desc* desc) noexcept {
  if (desc == nullptr || static_cast<uint32_t>(desc->dtype) >= TSR_DTYPE_COUNT ||
      static_cast<uint32_t>(desc->ndim) > TSR_MAX_DIMS) {
    return false;
  }
  bool empty = false;
  for (int d = 0; d < desc->ndim; ++d) {
    if (desc->sizes[d] <= 0) {
      if (desc->sizes[d] < 0) return false;
      empty = true;
    }
  }
  return empty || desc->data != nullptr;
}

}  // namespace detail

// Throws INVALID_ARGUMENT unless `call` is non-NULL, its struct_size covers the
// fields kernels read, and it has exactly `nargs` args and `nouts` outputs with
// non-NULL arrays.
inline const tsr_kernel_call& check_call(const tsr_kernel_call* call, int nargs, int nouts) {
  constexpr size_t needed = offsetof(tsr_kernel_call, stream) + sizeof(tsr_plugin_stream*);
  if (call == nullptr || call->struct_size < needed || call->nargs != nargs ||
      call->nouts != nouts || (nargs > 0 && call->args == nullptr) ||
      (nouts > 0 && call->outs == nullptr)) {
    detail::fail_call(call, nargs, nouts);
  }
  return *call;
}

// The tensor argument `index` (schema name `name`), validated.
inline const tsr_tensor_desc& tensor_arg(const tsr_kernel_call& call, int index, const char* name) {
  const tsr_value& value = call.args[index];
  if (value.tag != TSR_VALUE_TENSOR) detail::fail_tag(call, index, TSR_VALUE_TENSOR, name);
  if (!detail::desc_ok(value.u.desc)) detail::fail_desc(call, value.u.desc, name);
  return *value.u.desc;
}

// Output `index`, validated like a tensor argument.
inline tsr_tensor_desc& out_arg(const tsr_kernel_call& call, int index) {
  tsr_tensor_desc* desc = &call.outs[index];
  if (!detail::desc_ok(desc)) detail::fail_desc(call, desc, "out");
  return *desc;
}

// A Scalar argument.
inline const tsr_scalar& scalar_arg(const tsr_kernel_call& call, int index, const char* name) {
  const tsr_value& value = call.args[index];
  if (value.tag != TSR_VALUE_SCALAR) detail::fail_tag(call, index, TSR_VALUE_SCALAR, name);
  const tsr_scalar& scalar = value.u.scalar;
  if (scalar.kind != TSR_BOOL && scalar.kind != TSR_INT64 && scalar.kind != TSR_FLOAT64 &&
      scalar.kind != TSR_COMPLEX128) {
    detail::fail_scalar(call, scalar, name);
  }
  return scalar;
}

// A bool argument.
inline bool bool_arg(const tsr_kernel_call& call, int index, const char* name) {
  const tsr_value& value = call.args[index];
  if (value.tag != TSR_VALUE_BOOL) detail::fail_tag(call, index, TSR_VALUE_BOOL, name);
  return value.u.b != 0;
}

// An `int[]?` argument: nullopt for None.
std::optional<std::span<const int64_t>> optional_int_list_arg(const tsr_kernel_call& call,
                                                              int index, const char* name);

// A `ScalarType?` argument: nullopt for None, else a valid tsr_dtype.
std::optional<int32_t> optional_dtype_arg(const tsr_kernel_call& call, int index, const char* name);

// Throws INVALID_ARGUMENT unless `desc` has the sizes of `expected`.
inline void check_same_sizes(const tsr_kernel_call& call, const tsr_tensor_desc& desc,
                             const char* name, const tsr_tensor_desc& expected,
                             const char* expected_name) {
  bool same = desc.ndim == expected.ndim;
  for (int d = 0; same && d < desc.ndim; ++d) same = desc.sizes[d] == expected.sizes[d];
  if (!same) detail::fail_sizes(call, desc, name, expected, expected_name);
}

// Throws INVALID_ARGUMENT unless `desc` has dtype `dtype`.
inline void check_dtype(const tsr_kernel_call& call, const tsr_tensor_desc& desc, const char* name,
                        int32_t dtype) {
  if (desc.dtype != dtype) detail::fail_dtype(call, desc, name, dtype);
}

// Throws UNIMPLEMENTED: the op has no kernel for tensor `name` of `dtype`.
[[noreturn]] void throw_unsupported_dtype(const tsr_kernel_call& call, const char* name,
                                          int32_t dtype);

}  // namespace tessera::cpu

#endif  // TESSERA_PLUGINS_CPU_KERNEL_ARGS_HPP_
