// tessera/factories.hpp - creating tensors.
//
// All factories create in the default runtime. Dtypes follow PyTorch:
// empty/zeros/ones default to float32; tensor(), full() and arange() infer
// from their values (integers give int64, floating values float32, bool
// stays bool) unless the options name a dtype. zeros, ones, full and arange
// are the registry's factory ops (core/registry/defs/factory.def: the device fills
// them and op observers see the call); eye, linspace, logspace and the random
// factories are in ops/factory.hpp and ops/random.hpp.
#pragma once

#include <cmath>
#include <complex>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "tessera/boxed_call.hpp"
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

namespace detail {

// The trailing `ScalarType? dtype, Layout? layout, Device? device, bool?
// pin_memory` of a factory schema: unset options are None (the op's default).
inline void put_options(tsr_value* out, const TensorOptions& options) noexcept {
  out[0] = options.has_dtype() ? value(std::optional<Dtype>(options.dtype())) : none();
  out[1] = none();
  out[2] = options.has_device() ? value(options.device()) : none();
  out[3] = none();
}

// PyTorch's dtype for a fill value when none is given.
inline Dtype inferred_dtype(const Scalar& value) noexcept {
  if (value.is_bool()) return kBool;
  if (value.is_integral()) return kInt64;
  if (value.is_complex()) return kComplex64;
  return kDefaultFloat;
}

}  // namespace detail

inline Tensor zeros(IntList sizes, const TensorOptions& options = {}) {
  tsr_value args[5] = {detail::value(sizes)};
  detail::put_options(args + 1, options);
  return detail::call(detail::op<"zeros">(), args, 5);
}

inline Tensor ones(IntList sizes, const TensorOptions& options = {}) {
  tsr_value args[5] = {detail::value(sizes)};
  detail::put_options(args + 1, options);
  return detail::call(detail::op<"ones">(), args, 5);
}

// Filled with `value`; the dtype is inferred from it unless given (the core
// refuses a value the dtype cannot hold, as PyTorch does).
inline Tensor full(IntList sizes, const Scalar& value, const TensorOptions& options = {}) {
  tsr_value args[6] = {detail::value(sizes), detail::value(value)};
  detail::put_options(args + 2, options);
  return detail::call(detail::op<"full">(), args, 6);
}

// A 0-d tensor holding `value`.
inline Tensor scalar_tensor(const Scalar& value, const TensorOptions& options = {}) {
  return full({}, value, options);
}

inline Tensor empty_like(const Tensor& other) { return empty(other.sizes(), other.options()); }
inline Tensor zeros_like(const Tensor& other) { return zeros(other.sizes(), other.options()); }
inline Tensor ones_like(const Tensor& other) { return ones(other.sizes(), other.options()); }
// Shaped like `other` (its dim order kept), filled with `value`; dtype and
// device default to other's.
inline Tensor full_like(const Tensor& other, const Scalar& value,
                        const TensorOptions& options = {}) {
  tsr_value args[7] = {detail::value(other), detail::value(value)};
  detail::put_options(args + 2, options);
  args[6] = detail::none();
  return detail::call(detail::op<"full_like">(), args, 7);
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

// [start, end) by `step`, as torch.arange: int64 when all three are integers,
// else float32, unless the options name a dtype. The size is PyTorch's
// (ceil((end - start) / step); integer dtypes truncate the bounds first).
inline Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step = 1,
                     const TensorOptions& options = {}) {
  tsr_value args[7] = {detail::value(start), detail::value(end), detail::value(step)};
  detail::put_options(args + 3, options);
  return detail::call(detail::op<"arange.start_step">(), args, 7);
}
inline Tensor arange(const Scalar& end, const TensorOptions& options = {}) {
  tsr_value args[5] = {detail::value(end)};
  detail::put_options(args + 1, options);
  return detail::call(detail::op<"arange">(), args, 5);
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
