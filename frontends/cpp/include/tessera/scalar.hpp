// tessera/scalar.hpp - a number argument, as PyTorch's Scalar.
//
// A Scalar is a bool, an integer (int64), a float (float64) or a complex
// (complex128) and converts implicitly from the matching C++ types, so
// `t + 2`, `t * 0.5` and `t.fill_(true)` read as they do in LibTorch. It
// wraps tsr_scalar and travels by value through the boxed call.
#pragma once

#include <complex>
#include <concepts>
#include <cstdint>
#include <ostream>

#include "tessera/dtype.hpp"
#include "tessera/tessera.h"

namespace tessera {

class Scalar {
 public:
  Scalar() noexcept : Scalar(int64_t{0}) {}
  Scalar(bool value) noexcept {  // NOLINT(google-explicit-constructor)
    scalar_.kind = TSR_BOOL;
    scalar_.v.i = value ? 1 : 0;
  }
  template <std::integral T>
  requires(!std::same_as<T, bool>) Scalar(T value)
  noexcept {  // NOLINT(google-explicit-constructor)
    scalar_.kind = TSR_INT64;
    scalar_.v.i = static_cast<int64_t>(value);
  }
  template <std::floating_point T>
  Scalar(T value) noexcept {  // NOLINT(google-explicit-constructor)
    scalar_.kind = TSR_FLOAT64;
    scalar_.v.f = static_cast<double>(value);
  }
  template <std::floating_point T>
  Scalar(std::complex<T> value) noexcept {  // NOLINT(google-explicit-constructor)
    scalar_.kind = TSR_COMPLEX128;
    scalar_.v.c.re = static_cast<double>(value.real());
    scalar_.v.c.im = static_cast<double>(value.imag());
  }
  explicit Scalar(const tsr_scalar& scalar) noexcept : scalar_(scalar) {}

  bool is_bool() const noexcept { return scalar_.kind == TSR_BOOL; }
  bool is_integral() const noexcept { return scalar_.kind == TSR_INT64; }
  bool is_floating_point() const noexcept { return scalar_.kind == TSR_FLOAT64; }
  bool is_complex() const noexcept { return scalar_.kind == TSR_COMPLEX128; }
  // kBool, kInt64, kFloat64 or kComplex128.
  Dtype kind() const noexcept { return static_cast<Dtype>(scalar_.kind); }
  const tsr_scalar& raw() const noexcept { return scalar_; }

  // The value converted to T with C++ conversion rules (complex to real
  // keeps the real part).
  template <class T>
  T to() const {
    if constexpr (detail::is_std_complex<T>::value) {
      using R = typename T::value_type;
      if (is_complex()) return T(static_cast<R>(scalar_.v.c.re), static_cast<R>(scalar_.v.c.im));
      return T(to<R>(), R{0});
    } else {
      switch (scalar_.kind) {
        case TSR_BOOL:
        case TSR_INT64:
          return static_cast<T>(scalar_.v.i);
        case TSR_FLOAT64:
          return static_cast<T>(scalar_.v.f);
        default:
          return static_cast<T>(scalar_.v.c.re);
      }
    }
  }

 private:
  tsr_scalar scalar_{};
};

inline std::ostream& operator<<(std::ostream& os, const Scalar& s) {
  if (s.is_bool()) return os << (s.to<bool>() ? "True" : "False");
  if (s.is_integral()) return os << s.to<int64_t>();
  if (s.is_floating_point()) return os << s.to<double>();
  const auto c = s.to<std::complex<double>>();
  return os << '(' << c.real() << (c.imag() < 0 ? "" : "+") << c.imag() << "j)";
}

}  // namespace tessera
