// tessera/sdk/dtype_traits.hpp - the mapping between tsr_dtype values and C++
// element types.
//
//   TSR_BOOL bool          TSR_FLOAT16  tessera::sdk::half
//   TSR_UINT8 uint8_t      TSR_BFLOAT16 tessera::sdk::bfloat16
//   TSR_INT8 int8_t        TSR_FLOAT32  float
//   TSR_INT16 int16_t      TSR_FLOAT64  double
//   TSR_INT32 int32_t      TSR_COMPLEX64  std::complex<float>
//   TSR_INT64 int64_t      TSR_COMPLEX128 std::complex<double>
//
// `dtype_of<T>` and `type_of_t<D>` convert at compile time (the traits -
// is_floating_v, is_integral_v, wrap_t ... - are types and constants, so
// device code uses them too); element_size() and dtype_name() at run time.
// dispatch_dtype(dtype, f) calls f(dtype_tag<T>{}) for
// the C++ type T of a run-time dtype and returns what f returns; every branch
// must return the same type. Passing a value outside the enum is a programming
// error: validate first with is_valid_dtype(); dispatch_dtype then throws
// std::invalid_argument (callers at the ABI catch it, see status.hpp).
#ifndef TESSERA_SDK_DTYPE_TRAITS_HPP_
#define TESSERA_SDK_DTYPE_TRAITS_HPP_

#include <complex>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "tessera/sdk/half.hpp"
#include "tessera/types.h"

namespace tessera::sdk {

template <tsr_dtype D>
struct dtype_type;
template <>
struct dtype_type<TSR_BOOL> {
  using type = bool;
};
template <>
struct dtype_type<TSR_UINT8> {
  using type = uint8_t;
};
template <>
struct dtype_type<TSR_INT8> {
  using type = int8_t;
};
template <>
struct dtype_type<TSR_INT16> {
  using type = int16_t;
};
template <>
struct dtype_type<TSR_INT32> {
  using type = int32_t;
};
template <>
struct dtype_type<TSR_INT64> {
  using type = int64_t;
};
template <>
struct dtype_type<TSR_FLOAT16> {
  using type = half;
};
template <>
struct dtype_type<TSR_BFLOAT16> {
  using type = bfloat16;
};
template <>
struct dtype_type<TSR_FLOAT32> {
  using type = float;
};
template <>
struct dtype_type<TSR_FLOAT64> {
  using type = double;
};
template <>
struct dtype_type<TSR_COMPLEX64> {
  using type = std::complex<float>;
};
template <>
struct dtype_type<TSR_COMPLEX128> {
  using type = std::complex<double>;
};

// The C++ element type of dtype D.
template <tsr_dtype D>
using type_of_t = typename dtype_type<D>::type;

// The dtype of C++ element type T (a compile error for other types).
template <class T>
inline constexpr tsr_dtype dtype_of = [] {
  if constexpr (std::is_same_v<T, bool>)
    return TSR_BOOL;
  else if constexpr (std::is_same_v<T, uint8_t>)
    return TSR_UINT8;
  else if constexpr (std::is_same_v<T, int8_t>)
    return TSR_INT8;
  else if constexpr (std::is_same_v<T, int16_t>)
    return TSR_INT16;
  else if constexpr (std::is_same_v<T, int32_t>)
    return TSR_INT32;
  else if constexpr (std::is_same_v<T, int64_t>)
    return TSR_INT64;
  else if constexpr (std::is_same_v<T, half>)
    return TSR_FLOAT16;
  else if constexpr (std::is_same_v<T, bfloat16>)
    return TSR_BFLOAT16;
  else if constexpr (std::is_same_v<T, float>)
    return TSR_FLOAT32;
  else if constexpr (std::is_same_v<T, double>)
    return TSR_FLOAT64;
  else if constexpr (std::is_same_v<T, std::complex<float>>)
    return TSR_COMPLEX64;
  else if constexpr (std::is_same_v<T, std::complex<double>>)
    return TSR_COMPLEX128;
  else
    static_assert(sizeof(T) == 0, "not a Tessera element type");
}();

// A value standing for a type, passed to dispatch_dtype's callable.
template <class T>
struct dtype_tag {
  using type = T;
};

template <class T>
inline constexpr bool is_complex_v =
    std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>;
template <class T>
inline constexpr bool is_reduced_float_v = std::is_same_v<T, half> || std::is_same_v<T, bfloat16>;
// float16, bfloat16, float32, float64 (not complex).
template <class T>
inline constexpr bool is_floating_v = is_reduced_float_v<T> || std::is_floating_point_v<T>;
// Integer types other than bool.
template <class T>
inline constexpr bool is_integral_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;
// The unsigned type integer arithmetic on T wraps in (modulo 2^bits, with no
// signed overflow): uint32_t up to 32 bits, else uint64_t.
template <class T>
using wrap_t = std::conditional_t<(sizeof(T) <= 4), uint32_t, uint64_t>;

constexpr bool is_valid_dtype(int32_t dtype) noexcept {
  return dtype >= 0 && dtype < TSR_DTYPE_COUNT;
}

// Bytes per element; 0 for values outside the enum.
constexpr size_t element_size(int32_t dtype) noexcept {
  constexpr size_t sizes[TSR_DTYPE_COUNT] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8, 8, 16};
  return is_valid_dtype(dtype) ? sizes[dtype] : 0;
}

// "float32", "complex64", ...; "invalid" outside the enum. Static storage.
constexpr const char* dtype_name(int32_t dtype) noexcept {
  constexpr const char* names[TSR_DTYPE_COUNT] = {"bool",    "uint8",   "int8",      "int16",
                                                  "int32",   "int64",   "float16",   "bfloat16",
                                                  "float32", "float64", "complex64", "complex128"};
  return is_valid_dtype(dtype) ? names[dtype] : "invalid";
}

constexpr bool is_floating_dtype(int32_t dtype) noexcept {
  return dtype == TSR_FLOAT16 || dtype == TSR_BFLOAT16 || dtype == TSR_FLOAT32 ||
         dtype == TSR_FLOAT64;
}
constexpr bool is_complex_dtype(int32_t dtype) noexcept {
  return dtype == TSR_COMPLEX64 || dtype == TSR_COMPLEX128;
}

// Calls f(dtype_tag<T>{}) with T the element type of `dtype` and returns its
// result. Throws std::invalid_argument for a value outside the enum.
template <class F>
decltype(auto) dispatch_dtype(int32_t dtype, F&& f) {
  switch (dtype) {
    case TSR_BOOL:
      return f(dtype_tag<bool>{});
    case TSR_UINT8:
      return f(dtype_tag<uint8_t>{});
    case TSR_INT8:
      return f(dtype_tag<int8_t>{});
    case TSR_INT16:
      return f(dtype_tag<int16_t>{});
    case TSR_INT32:
      return f(dtype_tag<int32_t>{});
    case TSR_INT64:
      return f(dtype_tag<int64_t>{});
    case TSR_FLOAT16:
      return f(dtype_tag<half>{});
    case TSR_BFLOAT16:
      return f(dtype_tag<bfloat16>{});
    case TSR_FLOAT32:
      return f(dtype_tag<float>{});
    case TSR_FLOAT64:
      return f(dtype_tag<double>{});
    case TSR_COMPLEX64:
      return f(dtype_tag<std::complex<float>>{});
    case TSR_COMPLEX128:
      return f(dtype_tag<std::complex<double>>{});
    default:
      throw std::invalid_argument("dispatch_dtype: " + std::to_string(dtype) +
                                  " is not a tsr_dtype");
  }
}

}  // namespace tessera::sdk

#endif  // TESSERA_SDK_DTYPE_TRAITS_HPP_
