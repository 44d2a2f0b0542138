// tessera/sdk/kernel_args.hpp - validating a tsr_kernel_call and reading its
// arguments: the one argument reader every plugin uses.
//
//   void my_add(const tsr_kernel_call* raw) {
//     const tsr_kernel_call& call = sdk::check_call(raw, 3, 1);  // nargs, nouts
//     const tsr_tensor_desc& self = sdk::tensor_arg(call, 0, "self");
//     const tsr_tensor_desc& other = sdk::tensor_arg(call, 1, "other");
//     const tsr_scalar& alpha = sdk::scalar_arg(call, 2, "alpha");
//     tsr_tensor_desc& out = sdk::out_arg(call, 0);
//     sdk::check_same_sizes(call, self, "self", out, "out");
//     ...
//   }
//
// Every reader checks the call against the schema - argument count, tags,
// descriptors (non-NULL, a known dtype, 0..TSR_MAX_DIMS dims, non-negative
// sizes, and memory whenever there are elements) - and throws
// sdk::status_error(TSR_INVALID_ARGUMENT) naming the op, the argument and the
// value, so a bad call from the host never crashes the plugin. Run kernels
// under sdk::trampoline (kernel_entry.hpp), which turns the throw into a status.
//
// The checks run on every call, including 1-element ones, so the passing path
// is inline and branch-light; composing a message happens out of line, in the
// cold detail::fail_* functions (noinline, so they stay out of the hot code).
//
// Memory: by default a non-empty tensor must have a `data` address (the CPU,
// CUDA, HIP, any host-addressable device). A device whose kernels see buffers,
// not addresses (Vulkan), reads tensors with tensor_arg<memory::buffer>, which
// requires `buffer` instead.
//
// Returned references and spans borrow from the call (valid during the call).
#ifndef TESSERA_SDK_KERNEL_ARGS_HPP_
#define TESSERA_SDK_KERNEL_ARGS_HPP_

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <type_traits>

#include "tessera/plugin.h"
#include "tessera/sdk/dtype_traits.hpp"
#include "tessera/sdk/status.hpp"

namespace tessera::sdk {

// The op name for messages ("kernel" when the host gave none).
inline const char* op_name(const tsr_kernel_call& call) noexcept {
  return call.op_name ? call.op_name : "kernel";
}

// How a plugin's kernels reach tensor memory: through `data` (an address) or
// through `buffer` (the plugin's allocation handle; `data` is NULL).
enum class memory { data, buffer };

namespace detail {

inline const char* tag_name(int32_t tag) noexcept {
  static constexpr const char* names[] = {
      "None",    "Tensor", "int",      "float", "bool",       "Scalar", "int[]",
      "float[]", "bool[]", "Tensor[]", "str",   "ScalarType", "Device", "MemoryFormat"};
  return tag >= 0 && tag < static_cast<int32_t>(std::size(names)) ? names[tag] : "unknown";
}

inline std::string shape_text(const tsr_tensor_desc& desc) {
  std::string text;
  for (int d = 0; d < desc.ndim; ++d) text += (d ? ", " : "") + std::to_string(desc.sizes[d]);
  return text;
}

// Cold failure paths: each throws a status_error describing the problem.
[[noreturn, gnu::cold, gnu::noinline]] inline void fail_call(const tsr_kernel_call* call, int nargs,
                                                             int nouts) {
  if (call == nullptr) throw_status(TSR_INVALID_ARGUMENT, "kernel called with a NULL call");
  constexpr size_t needed = offsetof(tsr_kernel_call, stream) + sizeof(call->stream);
  if (call->struct_size < needed) {
    throw_status(TSR_INVALID_ARGUMENT,
                 "%s: tsr_kernel_call.struct_size is %zu, smaller than the ABI 1.0 layout "
                 "(%zu bytes)",
                 op_name(*call), call->struct_size, needed);
  }
  if (call->nargs != nargs || call->nouts != nouts) {
    throw_status(TSR_INVALID_ARGUMENT,
                 "%s: called with %d arguments and %d outputs; the schema has %d and %d",
                 op_name(*call), static_cast<int>(call->nargs), static_cast<int>(call->nouts),
                 nargs, nouts);
  }
  throw_status(TSR_INVALID_ARGUMENT, "%s: the %s array is NULL", op_name(*call),
               call->args == nullptr ? "args" : "outs");
}

[[noreturn, gnu::cold, gnu::noinline]] inline void fail_tag(const tsr_kernel_call& call, int index,
                                                            int32_t tag, const char* name) {
  if (index >= call.nargs) {
    throw_status(TSR_INVALID_ARGUMENT,
                 "%s: argument %d ('%s') is missing: the call has %d arguments; the host must "
                 "pass every schema argument",
                 op_name(call), index, name, static_cast<int>(call.nargs));
  }
  throw_status(TSR_INVALID_ARGUMENT,
               "%s: argument %d ('%s') is a %s value but the schema needs %s; the host "
               "must box arguments in schema order",
               op_name(call), index, name, tag_name(call.args[index].tag), tag_name(tag));
}

[[noreturn, gnu::cold, gnu::noinline]] inline void fail_desc(const tsr_kernel_call& call,
                                                             const tsr_tensor_desc* desc,
                                                             const char* name, memory where) {
  if (desc == nullptr) {
    throw_status(TSR_INVALID_ARGUMENT, "%s: tensor '%s' has a NULL descriptor", op_name(call),
                 name);
  }
  if (!is_valid_dtype(desc->dtype)) {
    throw_status(TSR_INVALID_ARGUMENT, "%s: tensor '%s' has dtype %d, not a tsr_dtype",
                 op_name(call), name, static_cast<int>(desc->dtype));
  }
  if (desc->ndim < 0 || desc->ndim > TSR_MAX_DIMS) {
    throw_status(TSR_INVALID_ARGUMENT, "%s: tensor '%s' has ndim %d; it must be 0..%d",
                 op_name(call), name, static_cast<int>(desc->ndim), TSR_MAX_DIMS);
  }
  for (int d = 0; d < desc->ndim; ++d) {
    if (desc->sizes[d] < 0) {
      throw_status(TSR_INVALID_ARGUMENT, "%s: tensor '%s' has size %lld in dim %d", op_name(call),
                   name, static_cast<long long>(desc->sizes[d]), d);
    }
  }
  if (where == memory::buffer) {
    throw_status(TSR_INVALID_ARGUMENT,
                 "%s: tensor '%s' has elements but a NULL buffer; this device's tensors "
                 "must carry their allocation in tsr_tensor_desc.buffer",
                 op_name(call), name);
  }
  throw_status(TSR_INVALID_ARGUMENT,
               "%s: tensor '%s' has elements but a NULL data pointer; this device's tensors "
               "must carry their address in tsr_tensor_desc.data",
               op_name(call), name);
}

[[noreturn, gnu::cold, gnu::noinline]] inline void fail_out(const tsr_kernel_call& call,
                                                            int index) {
  throw_status(TSR_INVALID_ARGUMENT, "%s: output %d is missing: the call has %d outputs",
               op_name(call), index, static_cast<int>(call.nouts));
}

[[noreturn, gnu::cold, gnu::noinline]] inline void fail_scalar(const tsr_kernel_call& call,
                                                               const tsr_scalar& scalar,
                                                               const char* name) {
  throw_status(TSR_INVALID_ARGUMENT,
               "%s: Scalar '%s' has kind %d; it must be bool, int64, float64 or complex128",
               op_name(call), name, static_cast<int>(scalar.kind));
}

[[noreturn, gnu::cold, gnu::noinline]] inline void fail_list(const tsr_kernel_call& call,
                                                             const tsr_value& value,
                                                             const char* name) {
  throw_status(TSR_INVALID_ARGUMENT, "%s: list '%s' has length %d and %s", op_name(call), name,
               static_cast<int>(value.len), value.u.ints ? "data" : "NULL data");
}

[[noreturn, gnu::cold, gnu::noinline]] inline void fail_dtype_value(const tsr_kernel_call& call,
                                                                    const tsr_value& value,
                                                                    const char* name) {
  throw_status(TSR_INVALID_ARGUMENT, "%s: '%s' is %lld, not a tsr_dtype", op_name(call), name,
               static_cast<long long>(value.u.i));
}

[[noreturn, gnu::cold, gnu::noinline]] inline void fail_sizes(const tsr_kernel_call& call,
                                                              const tsr_tensor_desc& desc,
                                                              const char* name,
                                                              const tsr_tensor_desc& expected,
                                                              const char* expected_name) {
  throw_status(TSR_INVALID_ARGUMENT,
               "%s: tensor '%s' has shape (%s) but '%s' has shape (%s); the host must "
               "broadcast inputs to the output shape",
               op_name(call), name, shape_text(desc).c_str(), expected_name,
               shape_text(expected).c_str());
}

[[noreturn, gnu::cold, gnu::noinline]] inline void fail_dtype(const tsr_kernel_call& call,
                                                              const tsr_tensor_desc& desc,
                                                              const char* name, int32_t dtype) {
  throw_status(TSR_INVALID_ARGUMENT,
               "%s: tensor '%s' has dtype %s but %s is expected; the host must cast "
               "inputs to the computation dtype",
               op_name(call), name, dtype_name(desc.dtype), dtype_name(dtype));
}

[[noreturn, gnu::cold, gnu::noinline]] inline void fail_dim(const tsr_kernel_call& call,
                                                            int64_t dim, const char* name,
                                                            const tsr_tensor_desc& desc) {
  throw_status(TSR_INVALID_ARGUMENT,
               "%s: dim %lld is not a dim of '%s' (%d-d); the host passes dims resolved "
               "into [0, ndim)",
               op_name(call), static_cast<long long>(dim), name, static_cast<int>(desc.ndim));
}

template <memory Where>
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
  if constexpr (Where == memory::buffer) {
    return empty || desc->buffer != nullptr;
  } else {
    return empty || desc->data != nullptr;
  }
}

inline const tsr_value& value_at(const tsr_kernel_call& call, int index, int32_t tag,
                                 const char* name) {
  // index < nargs holds after check_call for the schema's arguments; the
  // bound check only costs a compare and keeps a wrong index from reading
  // past the array.
  if (index >= call.nargs || call.args[index].tag != tag) fail_tag(call, index, tag, name);
  return call.args[index];
}

}  // namespace detail

// Whether `desc` passes tensor_arg's checks (for entries other than kernels,
// which report their own message).
template <memory Where = memory::data>
inline bool is_valid_desc(const tsr_tensor_desc* desc) noexcept {
  return detail::desc_ok<Where>(desc);
}

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
template <memory Where = memory::data>
inline const tsr_tensor_desc& tensor_arg(const tsr_kernel_call& call, int index, const char* name) {
  const tsr_value& value = detail::value_at(call, index, TSR_VALUE_TENSOR, name);
  if (!detail::desc_ok<Where>(value.u.desc)) detail::fail_desc(call, value.u.desc, name, Where);
  return *value.u.desc;
}

// Whether argument `index` is None (or absent: trailing defaults).
inline bool is_none(const tsr_kernel_call& call, int index) noexcept {
  return index >= call.nargs || call.args[index].tag == TSR_VALUE_NONE;
}

// A `Tensor?` argument: NULL for None, else validated like tensor_arg.
template <memory Where = memory::data>
inline const tsr_tensor_desc* optional_tensor_arg(const tsr_kernel_call& call, int index,
                                                  const char* name) {
  if (is_none(call, index)) return nullptr;
  return &tensor_arg<Where>(call, index, name);
}

// Output `index`, validated like a tensor argument.
template <memory Where = memory::data>
inline tsr_tensor_desc& out_arg(const tsr_kernel_call& call, int index) {
  if (index >= call.nouts) detail::fail_out(call, index);
  tsr_tensor_desc* desc = &call.outs[index];
  if (!detail::desc_ok<Where>(desc)) detail::fail_desc(call, desc, "out", Where);
  return *desc;
}

// A Scalar argument, with a valid kind.
inline const tsr_scalar& scalar_arg(const tsr_kernel_call& call, int index, const char* name) {
  const tsr_scalar& scalar = detail::value_at(call, index, TSR_VALUE_SCALAR, name).u.scalar;
  if (scalar.kind != TSR_BOOL && scalar.kind != TSR_INT64 && scalar.kind != TSR_FLOAT64 &&
      scalar.kind != TSR_COMPLEX128) {
    detail::fail_scalar(call, scalar, name);
  }
  return scalar;
}

// A `Scalar?` argument: NULL for None.
inline const tsr_scalar* optional_scalar_arg(const tsr_kernel_call& call, int index,
                                             const char* name) {
  if (is_none(call, index)) return nullptr;
  return &scalar_arg(call, index, name);
}

// An int argument.
inline int64_t int_arg(const tsr_kernel_call& call, int index, const char* name) {
  return detail::value_at(call, index, TSR_VALUE_INT, name).u.i;
}

// An `int?` argument: nullopt for None.
inline std::optional<int64_t> optional_int_arg(const tsr_kernel_call& call, int index,
                                               const char* name) {
  if (is_none(call, index)) return std::nullopt;
  return int_arg(call, index, name);
}

// A float argument (an int value converts: a whole-number default may come
// boxed as an int).
inline double float_arg(const tsr_kernel_call& call, int index, const char* name) {
  if (index < call.nargs && call.args[index].tag == TSR_VALUE_INT) {
    return static_cast<double>(call.args[index].u.i);
  }
  return detail::value_at(call, index, TSR_VALUE_FLOAT, name).u.f;
}

// A bool argument.
inline bool bool_arg(const tsr_kernel_call& call, int index, const char* name) {
  return detail::value_at(call, index, TSR_VALUE_BOOL, name).u.b != 0;
}

// A `str` argument (non-NULL; borrowed from the call).
inline const char* string_arg(const tsr_kernel_call& call, int index, const char* name) {
  const char* text = detail::value_at(call, index, TSR_VALUE_STRING, name).u.str;
  if (text == nullptr) detail::fail_tag(call, index, TSR_VALUE_STRING, name);
  return text;
}
// A `str?` argument: NULL for None.
inline const char* optional_string_arg(const tsr_kernel_call& call, int index, const char* name) {
  return is_none(call, index) ? nullptr : string_arg(call, index, name);
}

// A `bool?` argument: nullopt for None.
inline std::optional<bool> optional_bool_arg(const tsr_kernel_call& call, int index,
                                             const char* name) {
  if (is_none(call, index)) return std::nullopt;
  return bool_arg(call, index, name);
}

// An `int[]` argument.
inline std::span<const int64_t> int_list_arg(const tsr_kernel_call& call, int index,
                                             const char* name) {
  const tsr_value& value = detail::value_at(call, index, TSR_VALUE_INT_LIST, name);
  if (value.len < 0 || (value.len > 0 && value.u.ints == nullptr)) {
    detail::fail_list(call, value, name);
  }
  return std::span<const int64_t>(value.u.ints, static_cast<size_t>(value.len));
}

namespace detail {
[[noreturn, gnu::cold, gnu::noinline]] inline void fail_bool_list(const tsr_kernel_call& call,
                                                                  const tsr_value& value,
                                                                  const char* name, int len) {
  throw_status(TSR_INVALID_ARGUMENT,
               "%s: argument '%s' must be a list of %d bools (it has tag %s, length %d)",
               op_name(call), name, len, tag_name(value.tag), static_cast<int>(value.len));
}
}  // namespace detail

// A `bool[len]` argument (e.g. output_mask): its `len` entries, each 0 or not.
inline std::span<const int32_t> bool_list_arg(const tsr_kernel_call& call, int index,
                                              const char* name, int len) {
  if (index >= call.nargs) detail::fail_tag(call, index, TSR_VALUE_BOOL_LIST, name);
  const tsr_value& value = call.args[index];
  if (value.tag != TSR_VALUE_BOOL_LIST || value.len != len || value.u.bools == nullptr) {
    detail::fail_bool_list(call, value, name, len);
  }
  return std::span<const int32_t>(value.u.bools, static_cast<size_t>(len));
}

// An `int[]?` argument: nullopt for None.
inline std::optional<std::span<const int64_t>> optional_int_list_arg(const tsr_kernel_call& call,
                                                                     int index, const char* name) {
  if (is_none(call, index)) return std::nullopt;
  return int_list_arg(call, index, name);
}

// A `ScalarType?` argument: nullopt for None, else a valid tsr_dtype.
inline std::optional<int32_t> optional_dtype_arg(const tsr_kernel_call& call, int index,
                                                 const char* name) {
  if (is_none(call, index)) return std::nullopt;
  const tsr_value& value = detail::value_at(call, index, TSR_VALUE_DTYPE, name);
  if (value.u.i < 0 || value.u.i >= TSR_DTYPE_COUNT) detail::fail_dtype_value(call, value, name);
  return static_cast<int32_t>(value.u.i);
}

// A Scalar as a double (complex: the real part; bool and int64 converted).
inline double scalar_double(const tsr_scalar& s) noexcept {
  if (s.kind == TSR_FLOAT64) return s.v.f;
  if (s.kind == TSR_COMPLEX128) return s.v.c.re;
  return static_cast<double>(s.v.i);
}
// A Scalar as an int64 (floats truncate toward zero; complex: the real part).
inline int64_t scalar_int(const tsr_scalar& s) noexcept {
  if (s.kind == TSR_FLOAT64) return static_cast<int64_t>(s.v.f);
  if (s.kind == TSR_COMPLEX128) return static_cast<int64_t>(s.v.c.re);
  return s.v.i;
}
// Whether a Scalar holds a bool or an integer.
inline bool scalar_is_integral(const tsr_scalar& s) noexcept {
  return s.kind == TSR_BOOL || s.kind == TSR_INT64;
}
// Whether a Scalar is exactly one (true, 1, 1.0 or 1+0j): add and sub skip
// the multiplication by such an alpha.
inline bool scalar_is_one(const tsr_scalar& s) noexcept {
  switch (s.kind) {
    case TSR_BOOL:
    case TSR_INT64:
      return s.v.i == 1;
    case TSR_FLOAT64:
      return s.v.f == 1.0;
    default:
      return s.v.c.re == 1.0 && s.v.c.im == 0.0;
  }
}

// add / sub's `alpha` as C, the type the arithmetic on elements of type T
// happens in (float for half and bfloat16; T itself otherwise). Throws
// INVALID_ARGUMENT for what PyTorch rejects: an alpha that is not an integer
// for bool and integer tensors, a complex alpha for real ones. Integers wrap
// into C like the arithmetic; bool alpha is alpha != 0.
template <class T, class C>
C alpha_value(const tsr_kernel_call& call, const tsr_scalar& s) {
  const bool integral_kind = scalar_is_integral(s);
  if constexpr (std::is_integral_v<T>) {  // bool and integers
    if (!integral_kind) {
      throw_status(TSR_INVALID_ARGUMENT,
                   "%s: alpha must be an integer for %s tensors, got a %s Scalar", op_name(call),
                   dtype_name(dtype_of<T>), s.kind == TSR_FLOAT64 ? "float" : "complex");
    }
    if constexpr (std::is_same_v<T, bool>) {
      return s.v.i != 0;
    } else {
      return static_cast<C>(s.v.i);
    }
  } else if constexpr (is_complex_v<T>) {
    using R = typename C::value_type;
    switch (s.kind) {
      case TSR_BOOL:
      case TSR_INT64:
        return C(static_cast<R>(s.v.i), R(0));
      case TSR_FLOAT64:
        return C(static_cast<R>(s.v.f), R(0));
      default:
        return C(static_cast<R>(s.v.c.re), static_cast<R>(s.v.c.im));
    }
  } else {
    if (s.kind == TSR_COMPLEX128) {
      throw_status(TSR_INVALID_ARGUMENT,
                   "%s: alpha is complex but the tensors are %s; use complex tensors",
                   op_name(call), dtype_name(dtype_of<T>));
    }
    return integral_kind ? static_cast<C>(s.v.i) : static_cast<C>(s.v.f);
  }
}

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

namespace detail {
[[noreturn, gnu::cold, gnu::noinline]] inline void fail_contiguous(const tsr_kernel_call& call,
                                                                   const tsr_tensor_desc& desc,
                                                                   const char* name, int dim,
                                                                   int64_t expected) {
  throw_status(TSR_INVALID_ARGUMENT,
               "%s: argument '%s' must be contiguous (the host passes contiguous tensors to "
               "this kernel); dim %d has stride %lld, expected %lld",
               op_name(call), name, dim, static_cast<long long>(desc.strides[dim]),
               static_cast<long long>(expected));
}
}  // namespace detail

// Throws INVALID_ARGUMENT unless `desc` is row-major contiguous (dims of size 1
// may have any stride) - for entries flagged TSR_KERNEL_CONTIGUOUS_INPUTS.
inline void check_contiguous(const tsr_kernel_call& call, const tsr_tensor_desc& desc,
                             const char* name) {
  int64_t expected = 1;
  for (int d = desc.ndim - 1; d >= 0; --d) {
    if (desc.sizes[d] != 1 && desc.strides[d] != expected) {
      detail::fail_contiguous(call, desc, name, d, expected);
    }
    expected *= desc.sizes[d];
  }
}

// `dim` as an index into `desc`'s dims; throws INVALID_ARGUMENT unless
// 0 <= dim < ndim (the host resolves negative dims before the call).
inline int check_dim(const tsr_kernel_call& call, int64_t dim, const char* name,
                     const tsr_tensor_desc& desc) {
  if (dim < 0 || dim >= desc.ndim) detail::fail_dim(call, dim, name, desc);
  return static_cast<int>(dim);
}

// Throws UNIMPLEMENTED: plugin `plugin` has no kernel for tensor `name` of
// `dtype` (the entry's dtype mask should have excluded it).
[[noreturn, gnu::cold, gnu::noinline]] inline void throw_unsupported_dtype(
    const tsr_kernel_call& call, const char* name, int32_t dtype, const char* plugin) {
  throw_status(TSR_UNIMPLEMENTED,
               "%s: the %s plugin has no kernel for '%s' of dtype %s (its dtype mask "
               "excludes it)",
               op_name(call), plugin, name, dtype_name(dtype));
}

// `nbytes` of the host's scratch memory for the duration of the call (freed by
// the host in stream order after the kernel returns); `what` names it in the
// RESOURCE_EXHAUSTED message. Throws INTERNAL when the host gave no allocator.
inline tsr_plugin_buffer scratch_buffer(const tsr_kernel_call& call, size_t nbytes,
                                        const char* what) {
  if (call.scratch == nullptr) {
    throw_status(TSR_INTERNAL, "%s: the host gave no scratch allocator (needed for %s)",
                 op_name(call), what);
  }
  tsr_plugin_buffer buffer{};
  if (tsr_status* status = call.scratch(call.scratch_context, nbytes, &buffer)) {
    (void)status;  // owned by the host; report our own message
    throw_status(TSR_RESOURCE_EXHAUSTED, "%s: no scratch memory for %s (%zu bytes)", op_name(call),
                 what, nbytes);
  }
  return buffer;
}

}  // namespace tessera::sdk

#endif  // TESSERA_SDK_KERNEL_ARGS_HPP_
