// tessera/tensor_options.hpp - dtype and device of a tensor to create.
//
// As LibTorch's TensorOptions: `tessera::dtype(kInt64).device(kCPU)`, or a
// bare Dtype / Device where options are expected. An unset dtype means "the
// factory decides": float32 for empty/zeros/ones, the inferred dtype for
// tensor(), full() and arange(). An unset device means cpu:0.
#pragma once

#include <optional>

#include "tessera/dtype.hpp"
#include "tessera/runtime.hpp"

namespace tessera {

class TensorOptions {
 public:
  TensorOptions() noexcept = default;
  TensorOptions(Dtype dtype) noexcept : dtype_(dtype) {}      // NOLINT(google-explicit-constructor)
  TensorOptions(Device device) noexcept : device_(device) {}  // NOLINT(google-explicit-constructor)
  TensorOptions(DeviceType type) noexcept : device_(type) {}  // NOLINT(google-explicit-constructor)

  TensorOptions dtype(Dtype dtype) const noexcept {
    TensorOptions copy = *this;
    copy.dtype_ = dtype;
    return copy;
  }
  TensorOptions device(Device device) const noexcept {
    TensorOptions copy = *this;
    copy.device_ = device;
    return copy;
  }

  bool has_dtype() const noexcept { return dtype_.has_value(); }
  bool has_device() const noexcept { return device_.has_value(); }
  // The dtype, or the default float dtype when unset.
  Dtype dtype() const noexcept { return dtype_.value_or(kDefaultFloat); }
  Dtype dtype_or(Dtype fallback) const noexcept { return dtype_.value_or(fallback); }
  // The device, or cpu:0 when unset.
  Device device() const noexcept { return device_.value_or(kCPU); }

 private:
  std::optional<Dtype> dtype_;
  std::optional<Device> device_;
};

inline TensorOptions dtype(Dtype dtype) noexcept { return TensorOptions(dtype); }
inline TensorOptions device(Device device) noexcept { return TensorOptions(device); }

}  // namespace tessera
