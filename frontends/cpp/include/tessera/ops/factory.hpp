// tessera/ops/factory.hpp - typed wrappers of the factory op family (core/registry/defs).
//
// eye, linspace, logspace and empty in a memory format, as torch's. zeros,
// ones, full, full_like, arange and empty live in factories.hpp; random
// factories in ops/random.hpp. Options: an unset dtype is the op's default
// (float32 here), an unset device cpu:0.
#pragma once

#include <cstdint>

#include "tessera/boxed_call.hpp"
#include "tessera/dims.hpp"
#include "tessera/factories.hpp"
#include "tessera/scalar.hpp"
#include "tessera/tensor.hpp"
#include "tessera/tensor_options.hpp"

namespace tessera {

// The n x n identity matrix.
inline Tensor eye(int64_t n, const TensorOptions& options = {}) {
  tsr_value args[5] = {detail::value(n)};
  detail::put_options(args + 1, options);
  return detail::call(detail::op<"eye">(), args, 5);
}
// n x m with ones on the main diagonal.
inline Tensor eye(int64_t n, int64_t m, const TensorOptions& options = {}) {
  tsr_value args[6] = {detail::value(n), detail::value(m)};
  detail::put_options(args + 2, options);
  return detail::call(detail::op<"eye.m">(), args, 6);
}

// `steps` evenly spaced values from start to end, both included (exact at
// both ends; integer dtypes truncate).
inline Tensor linspace(const Scalar& start, const Scalar& end, int64_t steps,
                       const TensorOptions& options = {}) {
  tsr_value args[7] = {detail::value(start), detail::value(end), detail::value(steps)};
  detail::put_options(args + 3, options);
  return detail::call(detail::op<"linspace">(), args, 7);
}

// base ** linspace(start, end, steps).
inline Tensor logspace(const Scalar& start, const Scalar& end, int64_t steps, double base = 10.0,
                       const TensorOptions& options = {}) {
  tsr_value args[8] = {detail::value(start), detail::value(end), detail::value(steps),
                       detail::value(base)};
  detail::put_options(args + 4, options);
  return detail::call(detail::op<"logspace">(), args, 8);
}

// Uninitialised in `format` (Contiguous, ChannelsLast for 4-d, ChannelsLast3d for 5-d).
inline Tensor empty(IntList sizes, MemoryFormat format, const TensorOptions& options = {}) {
  tsr_value args[6] = {detail::value(sizes)};
  detail::put_options(args + 1, options);
  args[5] = detail::value(format);
  return detail::call(detail::op<"empty.memory_format">(), args, 6);
}

}  // namespace tessera
