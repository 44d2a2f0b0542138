// tessera/dtype.hpp - element types of the C++ frontend.
//
// `tessera::Dtype` is tsr_dtype as a scoped enum with LibTorch-style constants
// (kFloat32, kInt64, ...). `dtype_of_v<T>` maps a host type to the dtype with
// exactly its layout; `inferred_dtype_v<T>` applies PyTorch's inference for
// tensor literals: integers give int64, floating values the default float32,
// complex values complex64, bool stays bool.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <type_traits>

#include "tessera/error.hpp"
#include "tessera/tessera.h"

namespace tessera {

enum class Dtype : int32_t {
  Bool = TSR_BOOL,
  UInt8 = TSR_UINT8,
  Int8 = TSR_INT8,
  Int16 = TSR_INT16,
  Int32 = TSR_INT32,
  Int64 = TSR_INT64,
  Float16 = TSR_FLOAT16,
  BFloat16 = TSR_BFLOAT16,
  Float32 = TSR_FLOAT32,
  Float64 = TSR_FLOAT64,
  Complex64 = TSR_COMPLEX64,
  Complex128 = TSR_COMPLEX128,
};

inline constexpr Dtype kBool = Dtype::Bool;
inline constexpr Dtype kUInt8 = Dtype::UInt8;
inline constexpr Dtype kInt8 = Dtype::Int8;
inline constexpr Dtype kInt16 = Dtype::Int16;
inline constexpr Dtype kInt32 = Dtype::Int32;
inline constexpr Dtype kInt64 = Dtype::Int64;
inline constexpr Dtype kFloat16 = Dtype::Float16;
inline constexpr Dtype kBFloat16 = Dtype::BFloat16;
inline constexpr Dtype kFloat32 = Dtype::Float32;
inline constexpr Dtype kFloat64 = Dtype::Float64;
inline constexpr Dtype kComplex64 = Dtype::Complex64;
inline constexpr Dtype kComplex128 = Dtype::Complex128;
// LibTorch spellings.
inline constexpr Dtype kInt = kInt32;
inline constexpr Dtype kLong = kInt64;
inline constexpr Dtype kHalf = kFloat16;
inline constexpr Dtype kFloat = kFloat32;
inline constexpr Dtype kDouble = kFloat64;

// The default floating dtype (PyTorch's torch.get_default_dtype()).
inline constexpr Dtype kDefaultFloat = kFloat32;

constexpr tsr_dtype to_c(Dtype dtype) noexcept { return static_cast<tsr_dtype>(dtype); }
constexpr Dtype from_c(tsr_dtype dtype) noexcept { return static_cast<Dtype>(dtype); }

// "float32", "int64", ...; static storage.
inline const char* name(Dtype dtype) noexcept { return tsr_dtype_name(to_c(dtype)); }
inline std::size_t element_size(Dtype dtype) noexcept { return tsr_dtype_size(to_c(dtype)); }

constexpr bool is_complex(Dtype dtype) noexcept {
  return dtype == kComplex64 || dtype == kComplex128;
}
constexpr bool is_floating_point(Dtype dtype) noexcept {
  return dtype == kFloat16 || dtype == kBFloat16 || dtype == kFloat32 || dtype == kFloat64;
}
constexpr bool is_integral(Dtype dtype, bool include_bool = false) noexcept {
  return (include_bool && dtype == kBool) || dtype == kUInt8 || dtype == kInt8 || dtype == kInt16 ||
         dtype == kInt32 || dtype == kInt64;
}

// PyTorch's promote_types.
inline Dtype promote_types(Dtype a, Dtype b) {
  tsr_dtype out = TSR_FLOAT32;
  check(tsr_dtype_promote(to_c(a), to_c(b), &out));
  return from_c(out);
}

inline std::ostream& operator<<(std::ostream& os, Dtype dtype) { return os << name(dtype); }

namespace detail {

template <class T>
struct is_std_complex : std::false_type {};
template <class T>
struct is_std_complex<std::complex<T>> : std::true_type {};

template <class T>
constexpr bool always_false = false;

template <class T>
constexpr Dtype exact_dtype() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, bool>) {
    return kBool;
  } else if constexpr (std::is_integral_v<U> && std::is_unsigned_v<U> && sizeof(U) == 1) {
    return kUInt8;
  } else if constexpr (std::is_integral_v<U> && std::is_signed_v<U> && sizeof(U) == 1) {
    return kInt8;
  } else if constexpr (std::is_integral_v<U> && std::is_signed_v<U> && sizeof(U) == 2) {
    return kInt16;
  } else if constexpr (std::is_integral_v<U> && std::is_signed_v<U> && sizeof(U) == 4) {
    return kInt32;
  } else if constexpr (std::is_integral_v<U> && std::is_signed_v<U> && sizeof(U) == 8) {
    return kInt64;
  } else if constexpr (std::is_same_v<U, float>) {
    return kFloat32;
  } else if constexpr (std::is_same_v<U, double>) {
    return kFloat64;
  } else if constexpr (std::is_same_v<U, std::complex<float>>) {
    return kComplex64;
  } else if constexpr (std::is_same_v<U, std::complex<double>>) {
    return kComplex128;
  } else {
    static_assert(always_false<T>, "no tessera dtype has this host type's layout");
  }
}

template <class T>
constexpr Dtype inferred_dtype() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, bool>) {
    return kBool;
  } else if constexpr (std::is_integral_v<U>) {
    return kInt64;
  } else if constexpr (std::is_floating_point_v<U>) {
    return kDefaultFloat;
  } else if constexpr (is_std_complex<U>::value) {
    return kComplex64;
  } else {
    static_assert(always_false<T>,
                  "tensor literals take bool, integer, floating or complex values");
  }
}

}  // namespace detail

// The dtype whose elements have exactly T's layout (int32_t -> kInt32, ...).
template <class T>
inline constexpr Dtype dtype_of_v = detail::exact_dtype<T>();

// The dtype PyTorch infers for a literal of T (int -> kInt64, double -> kFloat32).
template <class T>
inline constexpr Dtype inferred_dtype_v = detail::inferred_dtype<T>();

}  // namespace tessera
