// kernel_args.cpp - the cold half of argument validation: composing the
// messages of invalid calls, plus the rarely hot list/dtype readers.
#include "kernel_args.hpp"

#include <iterator>

#include "tessera/sdk/dtype_traits.hpp"
#include "tessera/sdk/status.hpp"

namespace tessera::cpu {
namespace {

const char* tag_name(int32_t tag) noexcept {
  static constexpr const char* names[] = {
      "None",    "Tensor", "int",      "float", "bool",       "Scalar", "int[]",
      "float[]", "bool[]", "Tensor[]", "str",   "ScalarType", "Device", "MemoryFormat"};
  return tag >= 0 && tag < static_cast<int32_t>(std::size(names)) ? names[tag] : "unknown";
}

}  // namespace

namespace detail {

void fail_call(const tsr_kernel_call* call, int nargs, int nouts) {
  if (call == nullptr) sdk::throw_status(TSR_INVALID_ARGUMENT, "kernel called with a NULL call");
  constexpr size_t needed = offsetof(tsr_kernel_call, stream) + sizeof(call->stream);
  if (call->struct_size < needed) {
    sdk::throw_status(TSR_INVALID_ARGUMENT,
                      "%s: tsr_kernel_call.struct_size is %zu, smaller than the ABI 1.0 layout "
                      "(%zu bytes)",
                      op_name(*call), call->struct_size, needed);
  }
  if (call->nargs != nargs || call->nouts != nouts) {
    sdk::throw_status(TSR_INVALID_ARGUMENT,
                      "%s: called with %d arguments and %d outputs; the schema has %d and %d",
                      op_name(*call), static_cast<int>(call->nargs), static_cast<int>(call->nouts),
                      nargs, nouts);
  }
  sdk::throw_status(TSR_INVALID_ARGUMENT, "%s: the %s array is NULL", op_name(*call),
                    call->args == nullptr ? "args" : "outs");
}

void fail_tag(const tsr_kernel_call& call, int index, int32_t tag, const char* name) {
  sdk::throw_status(TSR_INVALID_ARGUMENT,
                    "%s: argument %d ('%s') is a %s value but the schema needs %s; the host "
                    "must box arguments in schema order",
                    op_name(call), index, name, tag_name(call.args[index].tag), tag_name(tag));
}

void fail_desc(const tsr_kernel_call& call, const tsr_tensor_desc* desc, const char* name) {
  if (desc == nullptr) {
    sdk::throw_status(TSR_INVALID_ARGUMENT, "%s: tensor '%s' has a NULL descriptor", op_name(call),
                      name);
  }
  if (!sdk::is_valid_dtype(desc->dtype)) {
    sdk::throw_status(TSR_INVALID_ARGUMENT, "%s: tensor '%s' has dtype %d, not a tsr_dtype",
                      op_name(call), name, static_cast<int>(desc->dtype));
  }
  if (desc->ndim < 0 || desc->ndim > TSR_MAX_DIMS) {
    sdk::throw_status(TSR_INVALID_ARGUMENT, "%s: tensor '%s' has ndim %d; it must be 0..%d",
                      op_name(call), name, static_cast<int>(desc->ndim), TSR_MAX_DIMS);
  }
  for (int d = 0; d < desc->ndim; ++d) {
    if (desc->sizes[d] < 0) {
      sdk::throw_status(TSR_INVALID_ARGUMENT, "%s: tensor '%s' has size %lld in dim %d",
                        op_name(call), name, static_cast<long long>(desc->sizes[d]), d);
    }
  }
  sdk::throw_status(TSR_INVALID_ARGUMENT,
                    "%s: tensor '%s' has elements but a NULL data pointer; cpu tensors must "
                    "carry their address in tsr_tensor_desc.data",
                    op_name(call), name);
}

void fail_scalar(const tsr_kernel_call& call, const tsr_scalar& scalar, const char* name) {
  sdk::throw_status(TSR_INVALID_ARGUMENT,
                    "%s: Scalar '%s' has kind %d; it must be bool, int64, float64 or complex128",
                    op_name(call), name, static_cast<int>(scalar.kind));
}

void fail_sizes(const tsr_kernel_call& call, const tsr_tensor_desc& desc, const char* name,
                const tsr_tensor_desc& expected, const char* expected_name) {
  std::string shape, expected_shape;
  for (int d = 0; d < desc.ndim; ++d) shape += (d ? ", " : "") + std::to_string(desc.sizes[d]);
  for (int d = 0; d < expected.ndim; ++d) {
    expected_shape += (d ? ", " : "") + std::to_string(expected.sizes[d]);
  }
  sdk::throw_status(TSR_INVALID_ARGUMENT,
                    "%s: tensor '%s' has shape (%s) but '%s' has shape (%s); the host must "
                    "broadcast inputs to the output shape",
                    op_name(call), name, shape.c_str(), expected_name, expected_shape.c_str());
}

void fail_dtype(const tsr_kernel_call& call, const tsr_tensor_desc& desc, const char* name,
                int32_t dtype) {
  sdk::throw_status(TSR_INVALID_ARGUMENT,
                    "%s: tensor '%s' has dtype %s but %s is expected; the host must cast "
                    "inputs to the computation dtype",
                    op_name(call), name, sdk::dtype_name(desc.dtype), sdk::dtype_name(dtype));
}

}  // namespace detail

std::optional<std::span<const int64_t>> optional_int_list_arg(const tsr_kernel_call& call,
                                                              int index, const char* name) {
  const tsr_value& value = call.args[index];
  if (value.tag == TSR_VALUE_NONE) return std::nullopt;
  if (value.tag != TSR_VALUE_INT_LIST) detail::fail_tag(call, index, TSR_VALUE_INT_LIST, name);
  if (value.len < 0 || (value.len > 0 && value.u.ints == nullptr)) {
    sdk::throw_status(TSR_INVALID_ARGUMENT, "%s: int list '%s' has length %d and %s", op_name(call),
                      name, static_cast<int>(value.len), value.u.ints ? "data" : "NULL data");
  }
  return std::span<const int64_t>(value.u.ints, static_cast<size_t>(value.len));
}

std::optional<int32_t> optional_dtype_arg(const tsr_kernel_call& call, int index,
                                          const char* name) {
  const tsr_value& value = call.args[index];
  if (value.tag == TSR_VALUE_NONE) return std::nullopt;
  if (value.tag != TSR_VALUE_DTYPE) detail::fail_tag(call, index, TSR_VALUE_DTYPE, name);
  if (value.u.i < 0 || value.u.i >= TSR_DTYPE_COUNT) {
    sdk::throw_status(TSR_INVALID_ARGUMENT, "%s: '%s' is %lld, not a tsr_dtype", op_name(call),
                      name, static_cast<long long>(value.u.i));
  }
  return static_cast<int32_t>(value.u.i);
}

void throw_unsupported_dtype(const tsr_kernel_call& call, const char* name, int32_t dtype) {
  sdk::throw_status(TSR_UNIMPLEMENTED,
                    "%s: the cpu plugin has no kernel for '%s' of dtype %s (its dtype mask "
                    "excludes it)",
                    op_name(call), name, sdk::dtype_name(dtype));
}

}  // namespace tessera::cpu
