// tessera/sdk/elements.hpp - simple, exact element access for reference
// kernels: any element of any strided host-addressable tensor loaded as a
// double (floating dtypes) or an int64 (integers and bool), stored back with
// one rounding (floats) or a two's-complement wrap (integers), and a row-major
// walk over every index of a shape.
//
// plus/times/minus compute in V with integers wrapping like the dtype.
//
//   sdk::for_each_index(out.ndim, out.sizes, [&](const int64_t* i) {
//     sdk::store(out, sdk::offset(out, i), sdk::load<double>(self, sdk::offset(self, i)) * 2);
//   });
//
// One element at a time: right for a first kernel, a test oracle, or a rare
// path; a hot kernel uses strided.hpp's runs and typed loops instead. Offsets
// are in elements from desc.data (strides may be 0 or negative). Complex
// dtypes are not covered (load_int/load_double throw INTERNAL on them).
#ifndef TESSERA_SDK_ELEMENTS_HPP_
#define TESSERA_SDK_ELEMENTS_HPP_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "tessera/sdk/dtype_traits.hpp"
#include "tessera/sdk/half.hpp"
#include "tessera/sdk/status.hpp"
#include "tessera/types.h"

namespace tessera::sdk {

// The element offset of `index` (one entry per dim) in `t`.
inline int64_t offset(const tsr_tensor_desc& t, const int64_t* index) noexcept {
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

// Calls f(index) once per line of `t` along `dim`, in row-major order of the
// other dims: `index` (mutable, one entry per dim) is the line's first
// element, index[dim] == 0; f walks the line by setting index[dim]. A 0-d
// tensor is one line (dim ignored), a tensor with a 0-size dim has none.
template <class F>
void for_each_line(const tsr_tensor_desc& t, int dim, F&& f) {
  int64_t sizes[TSR_MAX_DIMS];
  for (int d = 0; d < t.ndim; ++d) sizes[d] = d == dim ? 1 : t.sizes[d];
  for_each_index(t.ndim, sizes, [&](const int64_t* start) {
    int64_t index[TSR_MAX_DIMS];
    for (int d = 0; d < t.ndim; ++d) index[d] = start[d];
    f(static_cast<int64_t*>(index));
  });
}

inline char* element_address(const tsr_tensor_desc& t, int64_t off) noexcept {
  return static_cast<char*>(t.data) + off * static_cast<int64_t>(element_size(t.dtype));
}

namespace detail {
template <class T>
T read_as(const char* p) noexcept {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class T>
void write_as(char* p, T v) noexcept {
  std::memcpy(p, &v, sizeof v);
}
}  // namespace detail

// Element `off` of an integer or bool tensor (uint8 stays non-negative).
inline int64_t load_int(const tsr_tensor_desc& t, int64_t off) {
  const char* p = element_address(t, off);
  switch (t.dtype) {
    case TSR_BOOL:
      return detail::read_as<uint8_t>(p) != 0;
    case TSR_UINT8:
      return detail::read_as<uint8_t>(p);
    case TSR_INT8:
      return detail::read_as<int8_t>(p);
    case TSR_INT16:
      return detail::read_as<int16_t>(p);
    case TSR_INT32:
      return detail::read_as<int32_t>(p);
    case TSR_INT64:
      return detail::read_as<int64_t>(p);
    default:
      throw_status(TSR_INTERNAL, "load_int on a %s tensor (a plugin bug)", dtype_name(t.dtype));
  }
}

// Element `off` of any real tensor as a double (exact except int64 past 2^53).
inline double load_double(const tsr_tensor_desc& t, int64_t off) {
  const char* p = element_address(t, off);
  switch (t.dtype) {
    case TSR_FLOAT16:
      return static_cast<float>(detail::read_as<half>(p));
    case TSR_BFLOAT16:
      return static_cast<float>(detail::read_as<bfloat16>(p));
    case TSR_FLOAT32:
      return detail::read_as<float>(p);
    case TSR_FLOAT64:
      return detail::read_as<double>(p);
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
      return detail::write_as(p, half(v));
    case TSR_BFLOAT16:
      return detail::write_as(p, bfloat16(v));
    case TSR_FLOAT32:
      return detail::write_as(p, static_cast<float>(v));
    case TSR_FLOAT64:
      return detail::write_as(p, v);
    case TSR_BOOL:
      return detail::write_as<uint8_t>(p, v != 0.0);
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
      return detail::write_as(p, static_cast<uint8_t>(i));
    case TSR_INT8:
      return detail::write_as(p, static_cast<int8_t>(i));
    case TSR_INT16:
      return detail::write_as(p, static_cast<int16_t>(i));
    case TSR_INT32:
      return detail::write_as(p, static_cast<int32_t>(i));
    default:
      return detail::write_as(p, i);
  }
}

// An int64 as a double rounded to odd (truncate, then set the last bit when
// inexact), so that rounding it again to float32/float16/bfloat16 gives the
// correctly rounded value of the integer, not a double rounding.
inline double int_to_double_round_odd(int64_t v) noexcept {
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
      return detail::write_as<uint8_t>(p, v != 0);
    case TSR_UINT8:
      return detail::write_as(p, static_cast<uint8_t>(v));
    case TSR_INT8:
      return detail::write_as(p, static_cast<int8_t>(v));
    case TSR_INT16:
      return detail::write_as(p, static_cast<int16_t>(v));
    case TSR_INT32:
      return detail::write_as(p, static_cast<int32_t>(v));
    case TSR_INT64:
      return detail::write_as(p, v);
    case TSR_FLOAT64:
      return detail::write_as(p, static_cast<double>(v));
    default:
      return store_double(t, off, int_to_double_round_odd(v));
  }
}

// Copies one element bit for bit (NaN payloads, -0.0) between tensors of one dtype.
inline void move_element(const tsr_tensor_desc& dst, int64_t dst_off, const tsr_tensor_desc& src,
                         int64_t src_off) noexcept {
  std::memcpy(element_address(dst, dst_off), element_address(src, src_off),
              element_size(dst.dtype));
}

// load/store picked by the number type V a kernel computes in (double or int64_t).
template <class V>
V load(const tsr_tensor_desc& t, int64_t off) {
  if constexpr (std::is_same_v<V, double>) {
    return load_double(t, off);
  } else {
    static_assert(std::is_same_v<V, int64_t>, "load<V>: V is double or int64_t");
    return load_int(t, off);
  }
}
inline void store(const tsr_tensor_desc& t, int64_t off, double v) { store_double(t, off, v); }
inline void store(const tsr_tensor_desc& t, int64_t off, int64_t v) { store_int(t, off, v); }

// Arithmetic in V: integers wrap modulo 2^64 (unsigned, so never undefined);
// storing then wraps to the dtype's width.
inline double plus(double a, double b) noexcept { return a + b; }
inline int64_t plus(int64_t a, int64_t b) noexcept {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
inline double times(double a, double b) noexcept { return a * b; }
inline int64_t times(int64_t a, int64_t b) noexcept {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
inline int64_t minus(int64_t a, int64_t b) noexcept {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
inline bool is_nan(double x) noexcept { return std::isnan(x); }
inline bool is_nan(int64_t) noexcept { return false; }

// Runs f(V{}) with V = double for floating dtypes, int64_t for the others.
template <class F>
void with_number_type(int32_t dtype, F&& f) {
  if (is_floating_dtype(dtype)) {
    f(double{});
  } else {
    f(int64_t{});
  }
}

}  // namespace tessera::sdk

#endif  // TESSERA_SDK_ELEMENTS_HPP_
