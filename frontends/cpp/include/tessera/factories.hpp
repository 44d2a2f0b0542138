// tessera/factories.hpp - creating tensors.
//
// All factories create in the default runtime. Dtypes follow PyTorch:
// empty/zeros/ones default to float32; tensor(), full() and arange() infer
// from their values (integers give int64, floating values float32, bool
// stays bool) unless the options name a dtype.
#pragma once

#include <cmath>
#include <complex>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "tessera/dims.hpp"
#include "tessera/dtype.hpp"
#include "tessera/error.hpp"
#include "tessera/runtime.hpp"
#include "tessera/scalar.hpp"
#include "tessera/tensor.hpp"
#include "tessera/tensor_options.hpp"

namespace tessera {

// Uninitialised, contiguous.
inline Tensor empty(IntList sizes, const TensorOptions& options = {}) {
  tsr_tensor* out = nullptr;
  check(tsr_tensor_empty(default_runtime(), sizes.ndim(), sizes.data(), to_c(options.dtype()),
                         options.device().raw(), &out));
  return Tensor::adopt(out);
}

// Uninitialised, with explicit (non-negative) element strides.
inline Tensor empty_strided(IntList sizes, IntList strides, const TensorOptions& options = {}) {
  if (sizes.size() != strides.size()) [[unlikely]] {
    detail::throw_error(TSR_INVALID_ARGUMENT,
                        "empty_strided: sizes has " + std::to_string(sizes.size()) +
                            " entries but strides has " + std::to_string(strides.size()));
  }
  tsr_tensor* out = nullptr;
  check(tsr_tensor_empty_strided(default_runtime(), sizes.ndim(), sizes.data(), strides.data(),
                                 to_c(options.dtype()), options.device().raw(), &out));
  return Tensor::adopt(out);
}

inline Tensor zeros(IntList sizes, const TensorOptions& options = {}) {
  tsr_tensor* out = nullptr;
  check(tsr_tensor_zeros(default_runtime(), sizes.ndim(), sizes.data(), to_c(options.dtype()),
                         options.device().raw(), &out));
  return Tensor::adopt(out);
}

inline Tensor ones(IntList sizes, const TensorOptions& options = {}) {
  Tensor result = empty(sizes, options);
  result.fill_(1);
  return result;
}

namespace detail {
// PyTorch's dtype for a fill value when none is given.
inline Dtype inferred_dtype(const Scalar& value) noexcept {
  if (value.is_bool()) return kBool;
  if (value.is_integral()) return kInt64;
  if (value.is_complex()) return kComplex64;
  return kDefaultFloat;
}
}  // namespace detail

// Filled with `value`; the dtype is inferred from it unless given.
inline Tensor full(IntList sizes, const Scalar& value, const TensorOptions& options = {}) {
  Tensor result = empty(sizes, options.dtype(options.dtype_or(detail::inferred_dtype(value))));
  result.fill_(value);
  return result;
}

// A 0-d tensor holding `value`.
inline Tensor scalar_tensor(const Scalar& value, const TensorOptions& options = {}) {
  return full({}, value, options);
}

inline Tensor empty_like(const Tensor& other) { return empty(other.sizes(), other.options()); }
inline Tensor zeros_like(const Tensor& other) { return zeros(other.sizes(), other.options()); }
inline Tensor ones_like(const Tensor& other) { return ones(other.sizes(), other.options()); }
inline Tensor full_like(const Tensor& other, const Scalar& value) {
  return full(other.sizes(), value, other.options());
}

namespace detail {

// Host element type holding a value of `dtype` exactly, for the dtypes a
// C++ literal can produce.
template <class T>
Tensor from_host_values(std::span<const T> values, IntList shape, Dtype host_dtype, Device device) {
  int64_t numel = 1;
  for (int64_t size : shape) numel *= size;
  if (numel != static_cast<int64_t>(values.size())) [[unlikely]] {
    throw_error(TSR_INVALID_ARGUMENT, "tensor(): " + std::to_string(values.size()) +
                                          " values cannot fill shape " + Dims(shape).str() +
                                          " of " + std::to_string(numel) +
                                          " elements; give one value per element");
  }
  tsr_tensor* out = nullptr;
  check(tsr_tensor_from_host(default_runtime(), values.data(), values.size() * sizeof(T),
                             shape.ndim(), shape.data(), to_c(host_dtype), device.raw(), &out));
  return Tensor::adopt(out);
}

// Converts `values` on the host to the layout of the inferred dtype of T,
// creates the tensor and, when the options name another dtype, converts it.
template <class T>
Tensor make_tensor(std::span<const T> values, IntList shape, const TensorOptions& options) {
  constexpr Dtype inferred = inferred_dtype_v<T>;
  using Host = std::conditional_t<
      inferred == kBool, uint8_t,
      std::conditional_t<inferred == kInt64, int64_t,
                         std::conditional_t<inferred == kComplex64, std::complex<float>, float>>>;
  const bool convert = options.has_dtype() && options.dtype() != inferred;
  if constexpr (std::is_same_v<T, double> || std::is_same_v<T, std::complex<double>>) {
    if (convert) {
      // From T's exact layout, so float64 data asked for as float64 does not
      // round through float32. (Integers are exact in the int64 host copy.)
      return from_host_values<T>(values, shape, dtype_of_v<T>, options.device())
          .to(options.dtype());
    }
  }
  std::vector<Host> host(values.size());
  for (size_t i = 0; i < values.size(); ++i) host[i] = static_cast<Host>(values[i]);
  Tensor result = from_host_values<Host>(host, shape, inferred, options.device());
  if (convert) result = result.to(options.dtype());
  return result;
}

}  // namespace detail

// A 1-d tensor of the values; `tensor({1, 2, 3})` is int64, `tensor({1.0, 2.5})`
// is float32, as torch.tensor infers.
template <class T>
Tensor tensor(std::initializer_list<T> values, const TensorOptions& options = {}) {
  const int64_t size = static_cast<int64_t>(values.size());
  return detail::make_tensor<T>(std::span<const T>(values.begin(), values.size()), IntList(size),
                                options);
}
// The values laid out row-major in `shape`.
template <class T>
Tensor tensor(const std::vector<T>& values, IntList shape, const TensorOptions& options = {}) {
  return detail::make_tensor<T>(std::span<const T>(values.data(), values.size()), shape, options);
}
template <class T>
Tensor tensor(const std::vector<T>& values, const TensorOptions& options = {}) {
  const int64_t size = static_cast<int64_t>(values.size());
  return detail::make_tensor<T>(std::span<const T>(values.data(), values.size()), IntList(size),
                                options);
}
template <class T>
Tensor tensor(std::initializer_list<T> values, IntList shape, const TensorOptions& options = {}) {
  return detail::make_tensor<T>(std::span<const T>(values.begin(), values.size()), shape, options);
}

namespace detail {

// Writes `count` values `make(i)` into a host buffer laid out as `dtype` and
// creates the tensor from it, so the result is a plain fresh tensor (no
// conversion op, version 0). Dtypes without a C++ layout here (float16,
// bfloat16, complex) are made as float64 and converted by the core.
template <class Make>
Tensor from_host_generated(int64_t count, Dtype dtype, Device device, Make make) {
  const auto n = static_cast<size_t>(count);
  auto fill = [&]<class T>(T) {
    std::vector<T> values(n);
    for (size_t i = 0; i < n; ++i) values[i] = static_cast<T>(make(static_cast<int64_t>(i)));
    return from_host_values<T>(values, IntList(count), dtype, device);
  };
  switch (dtype) {
    case kUInt8:
      return fill(uint8_t{});
    case kInt8:
      return fill(int8_t{});
    case kInt16:
      return fill(int16_t{});
    case kInt32:
      return fill(int32_t{});
    case kInt64:
      return fill(int64_t{});
    case kFloat32:
      return fill(float{});
    case kFloat64:
      return fill(double{});
    default: {
      std::vector<double> values(n);
      for (size_t i = 0; i < n; ++i) values[i] = static_cast<double>(make(static_cast<int64_t>(i)));
      return from_host_values<double>(values, IntList(count), kFloat64, device).to(dtype);
    }
  }
}

}  // namespace detail

// [start, end) by `step`, as torch.arange: int64 when all three are integers,
// else float32, unless the options name a dtype.
//
// The values are computed on the host and copied with tsr_tensor_from_host.
// This is an honest simple form until the operator library adds an arange
// factory op (then the device fills it and observers see the call).
inline Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step = 1,
                     const TensorOptions& options = {}) {
  const bool integral = (start.is_integral() || start.is_bool()) &&
                        (end.is_integral() || end.is_bool()) &&
                        (step.is_integral() || step.is_bool());
  const Dtype dtype = options.dtype_or(integral ? kInt64 : kDefaultFloat);
  if (integral) {
    const int64_t a = start.to<int64_t>(), b = end.to<int64_t>(), s = step.to<int64_t>();
    if (s == 0 || (s > 0 && b < a) || (s < 0 && b > a)) [[unlikely]] {
      detail::throw_error(TSR_INVALID_ARGUMENT,
                          "arange: step " + std::to_string(s) + " cannot go from " +
                              std::to_string(a) + " to " + std::to_string(b) +
                              "; use a non-zero step whose sign matches end - start");
    }
    const int64_t count = s > 0 ? (b - a + s - 1) / s : (a - b - s - 1) / -s;
    return detail::from_host_generated(count, dtype, options.device(),
                                       [&](int64_t i) { return a + i * s; });
  }
  const double a = start.to<double>(), b = end.to<double>(), s = step.to<double>();
  if (!(s != 0) || (s > 0 && b < a) || (s < 0 && b > a) || !std::isfinite(a) || !std::isfinite(b))
      [[unlikely]] {
    detail::throw_error(
        TSR_INVALID_ARGUMENT,
        "arange: step " + std::to_string(s) + " cannot go from " + std::to_string(a) + " to " +
            std::to_string(b) +
            "; use finite bounds and a non-zero step whose sign matches end - start");
  }
  const auto count = static_cast<int64_t>(std::ceil((b - a) / s));
  return detail::from_host_generated(count, dtype, options.device(),
                                     [&](int64_t i) { return a + static_cast<double>(i) * s; });
}
inline Tensor arange(const Scalar& end, const TensorOptions& options = {}) {
  return arange(Scalar(0), end, Scalar(1), options);
}

namespace detail {
inline void run_blob_deleter(void* data, void* context) {
  // Owned by the storage; runs once.
  std::unique_ptr<std::function<void(void*)>> deleter(
      static_cast<std::function<void(void*)>*>(context));
  (*deleter)(data);
}

inline Tensor wrap_blob(void* data, IntList sizes, const int64_t* strides,
                        std::function<void(void*)> deleter, const TensorOptions& options) {
  tsr_blob_deleter trampoline = nullptr;
  void* context = nullptr;
  if (deleter) {
    context = new std::function<void(void*)>(std::move(deleter));
    trampoline = &run_blob_deleter;
  }
  tsr_tensor* out = nullptr;
  // On failure the core runs the deleter at once, so `context` never leaks.
  check(tsr_tensor_from_blob(default_runtime(), data, sizes.ndim(), sizes.data(), strides,
                             to_c(options.dtype()), options.device().raw(), trampoline, context,
                             &out));
  return Tensor::adopt(out);
}
}  // namespace detail

// Wraps memory the caller owns, without copying; it must outlive the tensor
// and all its views (or pass a deleter, run when the storage dies; it must
// not throw). Row-major unless strides are given.
inline Tensor from_blob(void* data, IntList sizes, const TensorOptions& options = {}) {
  return detail::wrap_blob(data, sizes, nullptr, nullptr, options);
}
inline Tensor from_blob(void* data, IntList sizes, IntList strides,
                        const TensorOptions& options = {}) {
  if (sizes.size() != strides.size()) [[unlikely]] {
    detail::throw_error(TSR_INVALID_ARGUMENT, "from_blob: sizes and strides differ in length");
  }
  return detail::wrap_blob(data, sizes, strides.data(), nullptr, options);
}
inline Tensor from_blob(void* data, IntList sizes, std::function<void(void*)> deleter,
                        const TensorOptions& options = {}) {
  return detail::wrap_blob(data, sizes, nullptr, std::move(deleter), options);
}
inline Tensor from_blob(void* data, IntList sizes, IntList strides,
                        std::function<void(void*)> deleter, const TensorOptions& options = {}) {
  if (sizes.size() != strides.size()) [[unlikely]] {
    detail::throw_error(TSR_INVALID_ARGUMENT, "from_blob: sizes and strides differ in length");
  }
  return detail::wrap_blob(data, sizes, strides.data(), std::move(deleter), options);
}

}  // namespace tessera
