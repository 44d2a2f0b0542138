// acme.hpp - what the ACME plugin's source files share.
//
//  - the plugin context (one per init) and the C entry every kernel goes
//    through (entry<K>: catches everything, so no exception crosses the ABI);
//  - the kernels, as plain C++ functions that throw on error;
//  - accessors for a kernel call's arguments that check their tags;
//  - naive element access: any element of any strided tensor loaded as a
//    double (floating dtypes) or an int64 (integers and bool), and stored back
//    with one rounding (floats) or two's-complement wrap (integers).
//
// Everything here is deliberately simple: one element at a time, computed in
// double or int64. A real device replaces the loops, not the contract.
#ifndef ACME_HPP_
#define ACME_HPP_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "tessera/plugin.h"
#include "tessera/sdk/dtype_traits.hpp"
#include "tessera/sdk/half.hpp"
#include "tessera/sdk/status.hpp"

// One per successful init; the host hands it back to every entry.
struct tsr_plugin_context {
  const tsr_host_api* host;
};

namespace acme {

using tessera::sdk::dtype_name;
using tessera::sdk::element_size;
using tessera::sdk::throw_status;

// ---------------------------------------------------------------------------
// Kernels. Each reads its arguments from `call`, writes call.outs, and throws
// (throw_status) to fail; entry<K> turns that into a status.
// ---------------------------------------------------------------------------
using kernel_fn = void (*)(const tsr_kernel_call& call);

template <kernel_fn K>
tsr_status* entry(tsr_plugin_context* context, const tsr_kernel_call* call) noexcept {
  return tessera::sdk::guard(context->host, [&] { K(*call); });
}

// kernels_elementwise.cpp
void copy_kernel(const tsr_kernel_call& call);
void fill_kernel(const tsr_kernel_call& call);
void add_kernel(const tsr_kernel_call& call);
void sub_kernel(const tsr_kernel_call& call);
void mul_kernel(const tsr_kernel_call& call);
void div_kernel(const tsr_kernel_call& call);
void unary_kernel(const tsr_kernel_call& call);
void binary_kernel(const tsr_kernel_call& call);
void where_kernel(const tsr_kernel_call& call);
// kernels_reduce.cpp
void reduce_kernel(const tsr_kernel_call& call);
void arg_reduce_kernel(const tsr_kernel_call& call);
void scan_kernel(const tsr_kernel_call& call);
// kernels_linalg.cpp
void mm_kernel(const tsr_kernel_call& call);
void bmm_kernel(const tsr_kernel_call& call);
// kernels_index.cpp
void iota_kernel(const tsr_kernel_call& call);
void gather_kernel(const tsr_kernel_call& call);
void scatter_kernel(const tsr_kernel_call& call);
void nonzero_count(const tsr_kernel_call& call, int32_t* out_ndims, int64_t* out_sizes);
void nonzero_kernel(const tsr_kernel_call& call);
void sort_kernel(const tsr_kernel_call& call);
void searchsorted_kernel(const tsr_kernel_call& call);

// ---------------------------------------------------------------------------
// Arguments (schema order, defaults filled by the host).
// ---------------------------------------------------------------------------
inline const tsr_value& arg(const tsr_kernel_call& call, int i, const char* name, int32_t tag) {
  if (i >= call.nargs || call.args[i].tag != tag) {
    throw_status(TSR_INVALID_ARGUMENT, "%s: argument %d ('%s') is missing or has tag %d, not %d",
                 call.op_name, i, name, i < call.nargs ? call.args[i].tag : -1, tag);
  }
  return call.args[i];
}
inline const tsr_tensor_desc& tensor_arg(const tsr_kernel_call& call, int i, const char* name) {
  return *arg(call, i, name, TSR_VALUE_TENSOR).u.desc;
}
inline int64_t int_arg(const tsr_kernel_call& call, int i, const char* name) {
  return arg(call, i, name, TSR_VALUE_INT).u.i;
}
inline bool bool_arg(const tsr_kernel_call& call, int i, const char* name) {
  return arg(call, i, name, TSR_VALUE_BOOL).u.b != 0;
}
inline const tsr_scalar& scalar_arg(const tsr_kernel_call& call, int i, const char* name) {
  return arg(call, i, name, TSR_VALUE_SCALAR).u.scalar;
}
inline bool is_none(const tsr_kernel_call& call, int i) {
  return i >= call.nargs || call.args[i].tag == TSR_VALUE_NONE;
}
inline const tsr_tensor_desc& out_arg(const tsr_kernel_call& call, int i) {
  if (i >= call.nouts)
    throw_status(TSR_INVALID_ARGUMENT, "%s: output %d is missing", call.op_name, i);
  return call.outs[i];
}

// A scalar as a double (complex: the real part) or as an int64 (floats
// truncate toward zero).
inline double scalar_double(const tsr_scalar& s) {
  if (s.kind == TSR_FLOAT64) return s.v.f;
  if (s.kind == TSR_COMPLEX128) return s.v.c.re;
  return static_cast<double>(s.v.i);
}
inline bool scalar_is_integral(const tsr_scalar& s) {
  return s.kind == TSR_BOOL || s.kind == TSR_INT64;
}

// ---------------------------------------------------------------------------
// Checks, with messages that name the op, the argument, the value and the fix.
// ---------------------------------------------------------------------------
inline bool is_floating(int32_t dtype) { return tessera::sdk::is_floating_dtype(dtype); }

[[noreturn]] inline void unsupported_dtype(const tsr_kernel_call& call, const char* name,
                                           int32_t dtype) {
  throw_status(TSR_UNIMPLEMENTED,
               "%s: argument '%s' has dtype %s, which this acme kernel does not "
               "implement; move the tensor to cpu or convert it first",
               call.op_name, name, dtype_name(dtype));
}
inline void check_dtype(const tsr_kernel_call& call, const tsr_tensor_desc& t, const char* name,
                        int32_t dtype) {
  if (t.dtype != dtype) {
    throw_status(TSR_INVALID_ARGUMENT, "%s: argument '%s' has dtype %s but %s was expected",
                 call.op_name, name, dtype_name(t.dtype), dtype_name(dtype));
  }
}
inline void check_same_sizes(const tsr_kernel_call& call, const tsr_tensor_desc& a,
                             const char* a_name, const tsr_tensor_desc& b, const char* b_name) {
  bool same = a.ndim == b.ndim;
  for (int d = 0; same && d < a.ndim; ++d) same = a.sizes[d] == b.sizes[d];
  if (!same) {
    throw_status(TSR_INVALID_ARGUMENT,
                 "%s: '%s' (%d dims) and '%s' (%d dims) must have the same sizes; the host "
                 "broadcasts inputs to the output's shape before the call",
                 call.op_name, a_name, a.ndim, b_name, b.ndim);
  }
}
inline int check_dim(const tsr_kernel_call& call, int64_t dim, const tsr_tensor_desc& t) {
  if (dim < 0 || dim >= t.ndim) {
    throw_status(TSR_INVALID_ARGUMENT,
                 "%s: dim %lld is not a dim of a %d-d tensor; the host passes dims resolved "
                 "into [0, ndim)",
                 call.op_name, static_cast<long long>(dim), t.ndim);
  }
  return static_cast<int>(dim);
}

// ---------------------------------------------------------------------------
// Indexing. An index has one entry per dim; offsets are in elements from
// desc.data (strides may be 0 for broadcast dims, or negative).
// ---------------------------------------------------------------------------
inline int64_t numel(const tsr_tensor_desc& t) {
  int64_t n = 1;
  for (int d = 0; d < t.ndim; ++d) n *= t.sizes[d];
  return n;
}
inline int64_t offset(const tsr_tensor_desc& t, const int64_t* index) {
  int64_t off = 0;
  for (int d = 0; d < t.ndim; ++d) off += index[d] * t.strides[d];
  return off;
}

// Calls f(index) for every index of a shape, in row-major order (once for 0
// dims, never when a size is 0).
template <class F>
void for_each_index(int ndim, const int64_t* sizes, F&& f) {
  for (int d = 0; d < ndim; ++d) {
    if (sizes[d] == 0) return;
  }
  int64_t index[TSR_MAX_DIMS] = {};
  for (;;) {
    f(static_cast<const int64_t*>(index));
    int d = ndim - 1;
    while (d >= 0 && ++index[d] == sizes[d]) index[d--] = 0;
    if (d < 0) return;
  }
}

// ---------------------------------------------------------------------------
// Elements. Floating dtypes compute in double, integers and bool in int64.
// ---------------------------------------------------------------------------
inline char* element_address(const tsr_tensor_desc& t, int64_t off) {
  return static_cast<char*>(t.data) + off * static_cast<int64_t>(element_size(t.dtype));
}

template <class T>
T read_as(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class T>
void write_as(char* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

// Element `off` of an integer or bool tensor (uint8 stays non-negative).
inline int64_t load_int(const tsr_tensor_desc& t, int64_t off) {
  const char* p = element_address(t, off);
  switch (t.dtype) {
    case TSR_BOOL:
      return read_as<uint8_t>(p) != 0;
    case TSR_UINT8:
      return read_as<uint8_t>(p);
    case TSR_INT8:
      return read_as<int8_t>(p);
    case TSR_INT16:
      return read_as<int16_t>(p);
    case TSR_INT32:
      return read_as<int32_t>(p);
    case TSR_INT64:
      return read_as<int64_t>(p);
    default:
      throw_status(TSR_INTERNAL, "acme: load_int on a %s tensor (a plugin bug)",
                   dtype_name(t.dtype));
  }
}

// Element `off` of any real tensor as a double (exact except int64 past 2^53).
inline double load_double(const tsr_tensor_desc& t, int64_t off) {
  const char* p = element_address(t, off);
  switch (t.dtype) {
    case TSR_FLOAT16:
      return static_cast<float>(read_as<tessera::sdk::half>(p));
    case TSR_BFLOAT16:
      return static_cast<float>(read_as<tessera::sdk::bfloat16>(p));
    case TSR_FLOAT32:
      return read_as<float>(p);
    case TSR_FLOAT64:
      return read_as<double>(p);
    default:
      return static_cast<double>(load_int(t, off));
  }
}

// Stores a double: floats round once (to nearest even); integers truncate
// toward zero and saturate, NaN becomes 0 (copy_'s rule); bool is v != 0.
inline void store_double(const tsr_tensor_desc& t, int64_t off, double v) {
  char* p = element_address(t, off);
  switch (t.dtype) {
    case TSR_FLOAT16:
      return write_as(p, tessera::sdk::half(v));
    case TSR_BFLOAT16:
      return write_as(p, tessera::sdk::bfloat16(v));
    case TSR_FLOAT32:
      return write_as(p, static_cast<float>(v));
    case TSR_FLOAT64:
      return write_as(p, v);
    case TSR_BOOL:
      return write_as<uint8_t>(p, v != 0.0);
    default:
      break;
  }
  const int bits = static_cast<int>(element_size(t.dtype)) * 8;
  const bool is_unsigned = t.dtype == TSR_UINT8;
  const double lo = is_unsigned ? 0.0 : -std::ldexp(1.0, bits - 1);  // exact powers of two
  const double hi = std::ldexp(1.0, is_unsigned ? bits : bits - 1);  // one past the largest
  int64_t i;
  if (std::isnan(v)) {
    i = 0;
  } else if (v <= lo) {
    i = static_cast<int64_t>(lo);
  } else if (v >= hi) {
    i = bits == 64 ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(hi) - 1;
  } else {
    i = static_cast<int64_t>(v);  // truncates toward zero
  }
  switch (t.dtype) {
    case TSR_UINT8:
      return write_as(p, static_cast<uint8_t>(i));
    case TSR_INT8:
      return write_as(p, static_cast<int8_t>(i));
    case TSR_INT16:
      return write_as(p, static_cast<int16_t>(i));
    case TSR_INT32:
      return write_as(p, static_cast<int32_t>(i));
    default:
      return write_as(p, i);
  }
}

// An int64 as a double rounded to odd (truncate, then set the last bit when
// inexact), so that rounding it again to float32/float16/bfloat16 gives the
// correctly rounded value of the integer, not a double rounding.
inline double int_to_double_round_odd(int64_t v) {
  const uint64_t magnitude = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  double a = static_cast<double>(magnitude);  // to nearest; at most 2^63
  if (static_cast<uint64_t>(a) > magnitude) a = std::nextafter(a, 0.0);
  if (static_cast<uint64_t>(a) != magnitude) {
    uint64_t bits;
    std::memcpy(&bits, &a, sizeof bits);
    bits |= 1;
    std::memcpy(&a, &bits, sizeof a);
  }
  return v < 0 ? -a : a;
}

// Stores an int64: integers wrap modulo 2^bits (two's complement); floats
// round once; bool is v != 0.
inline void store_int(const tsr_tensor_desc& t, int64_t off, int64_t v) {
  char* p = element_address(t, off);
  switch (t.dtype) {
    case TSR_BOOL:
      return write_as<uint8_t>(p, v != 0);
    case TSR_UINT8:
      return write_as(p, static_cast<uint8_t>(v));
    case TSR_INT8:
      return write_as(p, static_cast<int8_t>(v));
    case TSR_INT16:
      return write_as(p, static_cast<int16_t>(v));
    case TSR_INT32:
      return write_as(p, static_cast<int32_t>(v));
    case TSR_INT64:
      return write_as(p, v);
    case TSR_FLOAT64:
      return write_as(p, static_cast<double>(v));
    default:
      return store_double(t, off, int_to_double_round_odd(v));
  }
}

// Copies one element bit for bit (NaN payloads, -0.0) between tensors of one dtype.
inline void move_element(const tsr_tensor_desc& dst, int64_t dst_off, const tsr_tensor_desc& src,
                         int64_t src_off) {
  std::memcpy(element_address(dst, dst_off), element_address(src, src_off),
              element_size(dst.dtype));
}

// The same, picked by the number type V a kernel computes in (double or int64_t).
template <class V>
V load(const tsr_tensor_desc& t, int64_t off) {
  if constexpr (std::is_same_v<V, double>) {
    return load_double(t, off);
  } else {
    return load_int(t, off);
  }
}
inline void store(const tsr_tensor_desc& t, int64_t off, double v) { store_double(t, off, v); }
inline void store(const tsr_tensor_desc& t, int64_t off, int64_t v) { store_int(t, off, v); }

inline bool is_nan(double x) { return std::isnan(x); }
inline bool is_nan(int64_t) { return false; }

// Arithmetic in V: integers wrap modulo 2^64 (unsigned, so never undefined);
// storing then wraps to the dtype's width.
inline double plus(double a, double b) { return a + b; }
inline int64_t plus(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
inline double times(double a, double b) { return a * b; }
inline int64_t times(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
inline int64_t minus(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}

// Runs f(V{}) with V = double for floating dtypes, int64_t for the others.
template <class F>
void with_number_type(int32_t dtype, F&& f) {
  if (is_floating(dtype)) {
    f(double{});
  } else {
    f(int64_t{});
  }
}

}  // namespace acme

#endif  // ACME_HPP_
