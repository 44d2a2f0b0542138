#include "ops/factory/factory_util.h"

#include <cmath>
#include <limits>

#include "util/checked_math.h"
#include "util/error.h"

namespace tsr::ops::factory {

Options options(OpCall& c, int first, tsr_dtype default_dtype, DeviceRecord* default_device) {
  const int dtype_i = first, layout_i = first + 1, device_i = first + 2, pin_i = first + 3;
  Options o;
  o.dtype = c.is_none(dtype_i) ? default_dtype : static_cast<tsr_dtype>(c.int_arg(dtype_i));
  if (!c.is_none(layout_i))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'layout' must be None (strided): Tessera tensors are strided only",
         op_name(c));
  if (!c.is_none(device_i)) {
    o.device = c.runtime->device(c.args[device_i].u.device, "device");
  } else if (default_device != nullptr) {
    o.device = default_device;
  } else {
    o.device = c.runtime->device(tsr_device{TSR_DEVICE_CPU, 0}, "device");
  }
  if (!c.is_none(pin_i) && c.bool_arg(pin_i))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'pin_memory' = True is not supported: Tessera has no pinned host "
         "tensors yet (plugins pin their own staging memory); pass False or None",
         op_name(c));
  return o;
}

Shape size_arg(const OpCall& c, int i, tsr_dtype dtype) {
  const tsr_value& v = c.args[i];
  Shape s;
  if (v.len < 0 || v.len > TSR_MAX_DIMS)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument '{}' has {} entries; tensors have 0 to {} (TSR_MAX_DIMS) dims",
         op_name(c), c.arg_name(i), v.len, TSR_MAX_DIMS);
  s.ndim = v.len;
  for (int32_t d = 0; d < v.len; ++d) s.sizes[d] = v.u.ints[d];
  for (int32_t d = 0; d < s.ndim; ++d)
    if (s.sizes[d] < 0)
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': argument '{}': Trying to create tensor with negative dimension {}: {}; "
           "sizes must be >= 0",
           op_name(c), c.arg_name(i), s.sizes[d], shape_str(s.ndim, s.sizes));
  try {
    check_sizes(s.ndim, s.sizes, dtype_size(dtype), c.arg_name(i));
  } catch (const Error& e) {
    fail(e.code(), "op '{}': {}", op_name(c), e.message());
  }
  return s;
}

void check_length(const OpCall& c, int64_t n, tsr_dtype dtype, const char* arg) {
  checked_mul(n, static_cast<int64_t>(dtype_size(dtype)), [&] {
    return fmt::format(
        "op '{}': argument '{}' = {}: {} elements of {} ({} bytes each) take more bytes than "
        "int64 holds; pass a smaller {}",
        op_name(c), arg, n, n, dtype_name(dtype), dtype_size(dtype), arg);
  });
}

TensorRef new_like(OpCall& c, const TensorImpl& self, const Options& o, int format_arg) {
  auto format = c.is_none(format_arg) ? TSR_PRESERVE_FORMAT
                                      : static_cast<tsr_memory_format>(c.int_arg(format_arg));
  int64_t strides[TSR_MAX_DIMS];
  switch (format) {
    case TSR_CONTIGUOUS_FORMAT:
      contiguous_strides(self.ndim, self.sizes, strides);
      break;
    case TSR_CHANNELS_LAST:
    case TSR_CHANNELS_LAST_3D: {
      int32_t want = format == TSR_CHANNELS_LAST ? 4 : 5;
      if (self.ndim != want)
        fail(TSR_INVALID_ARGUMENT,
             "op '{}': argument 'memory_format': required rank {} tensor to use {} format, got a "
             "{}-D tensor",
             op_name(c), want, want == 4 ? "channels_last" : "channels_last_3d", self.ndim);
      channels_last_strides(self.ndim, self.sizes, strides);
      break;
    }
    default:
      preserve_strides(self, strides);
  }
  return new_tensor(c.runtime, o.device, o.dtype, self.ndim, self.sizes, strides);
}

namespace {

[[noreturn]] void overflow(const OpCall& c, const char* arg, tsr_dtype dtype) {
  fail(TSR_INVALID_ARGUMENT,
       "op '{}': argument '{}': value cannot be converted to type {} without overflow; pass a "
       "value within the dtype's range or another dtype",
       op_name(c), arg, dtype_name(dtype));
}

}  // namespace

void check_fill_value(const OpCall& c, const tsr_scalar& value, tsr_dtype dtype, const char* arg) {
  if (value.kind == TSR_COMPLEX128) {
    if (!is_complex(dtype) && value.v.c.im != 0) overflow(c, arg, dtype);
    return;
  }
  if (dtype == TSR_BOOL || is_complex(dtype) || dtype == TSR_FLOAT64) return;
  const bool is_float_value = value.kind == TSR_FLOAT64;
  const double x = is_float_value ? value.v.f : static_cast<double>(value.v.i);
  if (is_floating(dtype)) {  // finite values beyond the largest finite one overflow
    double max = std::numeric_limits<float>::max();
    if (dtype == TSR_FLOAT16) max = 65504.0;
    if (dtype == TSR_BFLOAT16) max = 3.3895313892515355e38;
    if (std::isfinite(x) && std::fabs(x) > max) overflow(c, arg, dtype);
    return;
  }
  if (is_float_value && !std::isfinite(x)) overflow(c, arg, dtype);
  double lo = 0, hi = 0;
  switch (dtype) {
    case TSR_UINT8:  // integers wrap as two's complement down to -255 (PyTorch)
      lo = is_float_value ? 0 : -255, hi = 255;
      break;
    case TSR_INT8:
      lo = -128, hi = 127;
      break;
    case TSR_INT16:
      lo = -32768, hi = 32767;
      break;
    case TSR_INT32:
      lo = -2147483648.0, hi = 2147483647.0;
      break;
    default:  // int64: every integer Scalar fits; floats must be below 2^63
      if (is_float_value && (x >= 9223372036854775808.0 || x < -9223372036854775808.0))
        overflow(c, arg, dtype);
      return;
  }
  if (x < lo || x > hi) overflow(c, arg, dtype);
}

tsr_dtype inferred_dtype(const tsr_scalar& value) {
  switch (value.kind) {
    case TSR_BOOL:
      return TSR_BOOL;
    case TSR_INT64:
      return TSR_INT64;
    case TSR_COMPLEX128:
      return kDefaultComplex;
    default:
      return kDefaultFloat;
  }
}

double scalar_to_double(const tsr_scalar& s) {
  switch (s.kind) {
    case TSR_BOOL:
    case TSR_INT64:
      return static_cast<double>(s.v.i);
    case TSR_FLOAT64:
      return s.v.f;
    default:
      return s.v.c.re;
  }
}

}  // namespace tsr::ops::factory
