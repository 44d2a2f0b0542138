// tessera/sdk/kernel_entry.hpp - kernel table entries (tsr_kernel_entry,
// plugin.h): the dtype masks most entries use, the entry builders, and the
// noexcept trampolines that put a C++ kernel behind the C ABI.
//
//   void add_kernel(const tsr_kernel_call& call);   // throws on error
//   constexpr tsr_kernel_entry kEntries[] = {
//       make_entry(schema::kAdd, {kRealDtypes, kRealDtypes}, trampoline<add_kernel>),
//       make_entry(schema::kUnary, {kFloatingDtypes}, trampoline<unary_kernel>,
//                  kUnaryFloatingCodes),
//   };
//
// `masks` are the per-tensor-argument dtype masks in schema order (0: any
// dtype); `codes` the function codes a family entry implements (opcodes.h,
// primitives.hpp). Everything is constexpr, so a table can be a constant.
// unary_entries / binary_entries give the usual three-entry split of _unary
// and _binary by input dtype group; join_entries concatenates constant parts.
//
// trampoline<K> is the tsr_kernel_fn of kernel K. K is a plain C++ function
// in one of these forms (Context is the plugin's tsr_plugin_context):
//   void K(const tsr_kernel_call& call);
//   void K(const tsr_kernel_call* call);               // validates it itself
//   void K(Context& context, const tsr_kernel_call& call);
//   void K(Context& context, const tsr_kernel_call* call);
//   void K(Context* context, const tsr_kernel_call* call);  // never NULL
// (Context may be const.) The trampoline rejects a NULL context (and, for the
// reference forms, a NULL call), runs K under sdk::guard - so every exception
// becomes a host status and none crosses the ABI - and returns NULL on
// success. It reaches the host through `context->host`, so a plugin's
// tsr_plugin_context must have a `const tsr_host_api* host` member; with a
// NULL context it uses the host tsr_plugin_query saw (plugin_table.hpp).
// size_trampoline<S> does the same for a two-phase kernel's size_fn:
//   void S([Context&,] const tsr_kernel_call& call, int32_t* out_ndims, int64_t* out_sizes);
#ifndef TESSERA_SDK_KERNEL_ENTRY_HPP_
#define TESSERA_SDK_KERNEL_ENTRY_HPP_

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <type_traits>

#include "tessera/plugin.h"
#include "tessera/sdk/plugin_table.hpp"
#include "tessera/sdk/primitives.hpp"
#include "tessera/sdk/status.hpp"

namespace tessera::sdk {

// ---- dtype masks ----

inline constexpr uint64_t dtype_bit(int dtype) noexcept { return TSR_DTYPE_BIT(dtype); }

// Every dtype, and subsets.
inline constexpr uint64_t kAllDtypes = TSR_DTYPE_MASK_ALL;
inline constexpr uint64_t kBoolDtype = TSR_DTYPE_BIT(TSR_BOOL);
inline constexpr uint64_t kInt64Dtype = TSR_DTYPE_BIT(TSR_INT64);
inline constexpr uint64_t kComplexDtypes =
    TSR_DTYPE_BIT(TSR_COMPLEX64) | TSR_DTYPE_BIT(TSR_COMPLEX128);
// The ten real dtypes (every dtype but the complex ones).
inline constexpr uint64_t kRealDtypes = kAllDtypes & ~kComplexDtypes;
// Every dtype but bool (complex included).
inline constexpr uint64_t kNotBoolDtypes = kAllDtypes & ~kBoolDtype;
// The real dtypes but bool.
inline constexpr uint64_t kNumericDtypes = kRealDtypes & ~kBoolDtype;
inline constexpr uint64_t kFloatingDtypes = TSR_DTYPE_BIT(TSR_FLOAT16) |
                                            TSR_DTYPE_BIT(TSR_BFLOAT16) |
                                            TSR_DTYPE_BIT(TSR_FLOAT32) | TSR_DTYPE_BIT(TSR_FLOAT64);
inline constexpr uint64_t kFloatingOrComplexDtypes = kFloatingDtypes | kComplexDtypes;
// The integer dtypes (not bool).
inline constexpr uint64_t kIntegralDtypes = TSR_DTYPE_BIT(TSR_UINT8) | TSR_DTYPE_BIT(TSR_INT8) |
                                            TSR_DTYPE_BIT(TSR_INT16) | TSR_DTYPE_BIT(TSR_INT32) |
                                            TSR_DTYPE_BIT(TSR_INT64);
inline constexpr uint64_t kIntegralAndBoolDtypes = kIntegralDtypes | kBoolDtype;

// ---- entries ----

// A table entry: schema, per-tensor-argument dtype masks, the function, and
// for function-code families the codes it implements.
constexpr tsr_kernel_entry make_entry(const char* schema, std::initializer_list<uint64_t> masks,
                                      tsr_kernel_fn fn, code_set codes = {}, uint32_t flags = 0,
                                      tsr_kernel_size_fn size_fn = nullptr) noexcept {
  tsr_kernel_entry e{};
  e.struct_size = sizeof(tsr_kernel_entry);
  e.schema = schema;
  size_t k = 0;
  for (uint64_t m : masks) {
    if (k < TSR_KERNEL_MAX_TENSOR_ARGS) e.dtype_masks[k++] = m;
  }
  e.fn = fn;
  e.flags = flags;  // 0: the kernel honours any strides
  e.size_fn = size_fn;
  e.kernel_data = nullptr;
  e.op_codes[0] = codes.words[0];
  e.op_codes[1] = codes.words[1];
  return e;
}

// The same with the codes as a list.
constexpr tsr_kernel_entry make_entry(const char* schema, std::initializer_list<uint64_t> masks,
                                      tsr_kernel_fn fn, std::initializer_list<int> codes,
                                      uint32_t flags = 0,
                                      tsr_kernel_size_fn size_fn = nullptr) noexcept {
  return make_entry(schema, masks, fn, codes_of(codes), flags, size_fn);
}

// Adds the function codes `codes` to an entry.
constexpr tsr_kernel_entry with_codes(tsr_kernel_entry e, code_set codes) noexcept {
  e.op_codes[0] |= codes.words[0];
  e.op_codes[1] |= codes.words[1];
  return e;
}
constexpr tsr_kernel_entry with_codes(tsr_kernel_entry e,
                                      std::initializer_list<int> codes) noexcept {
  return with_codes(e, codes_of(codes));
}
// Sets the dtype mask of tensor argument i.
constexpr tsr_kernel_entry with_mask(tsr_kernel_entry e, int i, uint64_t mask) noexcept {
  if (i >= 0 && i < TSR_KERNEL_MAX_TENSOR_ARGS) e.dtype_masks[i] = mask;
  return e;
}
// Sets flags (TSR_KERNEL_CONTIGUOUS_INPUTS, TSR_KERNEL_TWO_PHASE) and size_fn.
constexpr tsr_kernel_entry with_flags(tsr_kernel_entry e, uint32_t flags,
                                      tsr_kernel_size_fn size_fn = nullptr) noexcept {
  e.flags = flags;
  e.size_fn = size_fn;
  return e;
}

// ---- the _unary / _binary split ----

// The three _unary entries of a kernel that takes every code its input dtype
// receives (primitives.hpp's code domains): floating inputs with
// kUnaryFloatingCodes, integers with kUnaryIntegerCodes, integers and bool
// with kUnaryIntegerAndBoolCodes, in that order. `flags` go on each entry.
constexpr std::array<tsr_kernel_entry, 3> unary_entries(tsr_kernel_fn fn,
                                                        uint32_t flags = 0) noexcept {
  return {
      make_entry(schema::kUnary, {kFloatingDtypes}, fn, kUnaryFloatingCodes, flags),
      make_entry(schema::kUnary, {kIntegralDtypes}, fn, kUnaryIntegerCodes, flags),
      make_entry(schema::kUnary, {kIntegralAndBoolDtypes}, fn, kUnaryIntegerAndBoolCodes, flags)};
}

// The same three for _binary (both operands of one dtype group).
constexpr std::array<tsr_kernel_entry, 3> binary_entries(tsr_kernel_fn fn,
                                                         uint32_t flags = 0) noexcept {
  return {make_entry(schema::kBinary, {kFloatingDtypes, kFloatingDtypes}, fn, kBinaryFloatingCodes,
                     flags),
          make_entry(schema::kBinary, {kIntegralDtypes, kIntegralDtypes}, fn, kBinaryIntegerCodes,
                     flags),
          make_entry(schema::kBinary, {kIntegralAndBoolDtypes, kIntegralAndBoolDtypes}, fn,
                     kBinaryIntegerAndBoolCodes, flags)};
}

// The entries of `parts` one after the other, for a table that is a
// constant:
//   constexpr auto kTable = sdk::join_entries(std::array{make_entry(...), ...},
//                                             sdk::unary_entries(trampoline<unary>));
template <size_t... N>
constexpr std::array<tsr_kernel_entry, (N + ...)> join_entries(
    const std::array<tsr_kernel_entry, N>&... parts) noexcept {
  std::array<tsr_kernel_entry, (N + ...)> out{};
  size_t k = 0;
  ((std::copy(parts.begin(), parts.end(), out.begin() + k), k += N), ...);
  return out;
}

// ---- trampolines ----

namespace detail {

template <class Context>
const tsr_host_api* host_of(Context* context) noexcept {
  return context != nullptr ? context->host : query_host();
}

[[noreturn, gnu::cold, gnu::noinline]] inline void fail_null_context(const tsr_kernel_call* call,
                                                                     const char* what) {
  throw_status(TSR_INVALID_ARGUMENT, "%s: %s called with a NULL plugin context",
               call != nullptr && call->op_name != nullptr ? call->op_name : "kernel", what);
}

[[noreturn, gnu::cold, gnu::noinline]] inline void fail_null_call() {
  throw_status(TSR_INVALID_ARGUMENT, "kernel called with a NULL call");
}

// Calls K in whichever form it takes (see the top of the file), with `more`
// (the size_fn's out pointers) after the call.
template <auto K, class Context, class... More>
void invoke(Context& context, const tsr_kernel_call* call, More... more) {
  using F = decltype(K);
  if constexpr (std::is_invocable_v<F, Context&, const tsr_kernel_call*, More...>) {
    K(context, call, more...);
  } else if constexpr (std::is_invocable_v<F, Context*, const tsr_kernel_call*, More...>) {
    K(&context, call, more...);
  } else if constexpr (std::is_invocable_v<F, const tsr_kernel_call*, More...>) {
    K(call, more...);
  } else {
    if (call == nullptr) fail_null_call();
    if constexpr (std::is_invocable_v<F, Context&, const tsr_kernel_call&, More...>) {
      K(context, *call, more...);
    } else {
      static_assert(
          std::is_invocable_v<F, const tsr_kernel_call&, More...>,
          "a kernel takes ([Context&,] const tsr_kernel_call& or *): see kernel_entry.hpp");
      K(*call, more...);
    }
  }
}

}  // namespace detail

// The tsr_kernel_fn of kernel K (see the top of the file). Never throws.
template <auto K, class Context = tsr_plugin_context>
tsr_status* trampoline(Context* context, const tsr_kernel_call* call) noexcept {
  return guard(detail::host_of(context), [&] {
    if (context == nullptr) detail::fail_null_context(call, "kernel");
    detail::invoke<K>(*context, call);
  });
}

// The tsr_kernel_size_fn of a two-phase kernel's size function S. Never throws.
template <auto S, class Context = tsr_plugin_context>
tsr_status* size_trampoline(Context* context, const tsr_kernel_call* call, int32_t* out_ndims,
                            int64_t* out_sizes) noexcept {
  return guard(detail::host_of(context), [&] {
    if (context == nullptr) detail::fail_null_context(call, "size_fn");
    detail::invoke<S>(*context, call, out_ndims, out_sizes);
  });
}

}  // namespace tessera::sdk

#endif  // TESSERA_SDK_KERNEL_ENTRY_HPP_
