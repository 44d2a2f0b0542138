// Factory ops: tensors made from sizes and numbers. empty/zeros/ones/full and
// their *_like forms fill through fill_; eye writes its diagonal through a
// strided view; arange, linspace and logspace fill through the `_iota_`
// primitive (defs/factory.def). Options follow PyTorch's schemas (dtype,
// layout, device, pin_memory; ops/factory/factory_util.h). Every result is a
// fresh tensor at version 0: fills inside a factory do not bump it.
// Random ops live in ops/factory/random.cpp.
#include <algorithm>
#include <cmath>
#include <limits>

#include "dispatch/kernel_call.h"
#include "dispatch/op_api.h"
#include "dispatch/values.h"
#include "ops/factory/factory_util.h"
#include "ops/op_impls.h"
#include "ops/op_util.h"
#include "runtime/runtime.h"
#include "util/checked_math.h"
#include "util/error.h"

namespace tsr::ops {

using factory::op_name;
using factory::Options;

namespace {

// Runs the `_iota_` kernel on `t` (no version bump, no-op on meta and empty).
void iota_raw(TensorImpl* t, const tsr_scalar& start, const tsr_scalar& step, const tsr_scalar* end,
              const OpDef& caller) {
  DeviceRecord* dev = t->device();
  if (dev->is_meta || t->numel == 0) return;
  tsr_dtype dt = t->dtype;
  const BoundKernel& k = find_kernel(caller, OpId::_iota_, dev, &dt, 1);
  tsr_tensor_desc d = t->desc();
  tsr_value args[4];
  args[0].tag = TSR_VALUE_TENSOR;
  args[0].len = 0;
  args[0].u.desc = &d;
  args[1] = v_scalar(start);
  args[2] = v_scalar(step);
  args[3] = end ? v_scalar(*end) : v_none();
  tsr_tensor_desc out = d;
  invoke_kernel(caller, k, dev, args, 4, &out, 1);
}

bool is_integral_scalar(const tsr_scalar& s) { return s.kind == TSR_BOOL || s.kind == TSR_INT64; }

// Refuses dtypes `_iota_` cannot fill (PyTorch's "not implemented for 'Bool'").
void check_range_dtype(const OpCall& c, tsr_dtype dtype) {
  if (dtype == TSR_BOOL || is_complex(dtype))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'dtype' = {} is not supported: {} fills integer and floating "
         "dtypes; pass one of those",
         op_name(c), dtype_name(dtype), c.op->schema.name);
}

void check_real(const OpCall& c, const tsr_scalar& s, const char* arg) {
  if (s.kind == TSR_COMPLEX128)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument '{}' is complex; {} takes real bounds (complex ranges are not "
         "supported)",
         op_name(c), arg, c.op->schema.name);
}

// A bound or step of an integer arange as the int64 the fill starts from or
// adds: truncated toward zero, refused when it does not fit (PyTorch's
// "value cannot be converted to type int64_t without overflow").
int64_t range_int(const OpCall& c, const tsr_scalar& s, const char* arg) {
  if (s.kind != TSR_FLOAT64) return s.v.i;
  // [-2^63, 2^63): every double in it truncates to an int64.
  if (!(s.v.f >= -0x1p63 && s.v.f < 0x1p63))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument '{}' = {} cannot be converted to int64 without overflow; an "
         "integer dtype needs a {} in [-2^63, 2^63)",
         op_name(c), arg, s.v.f, arg);
  return static_cast<int64_t>(std::trunc(s.v.f));
}

// arange's three forms, with PyTorch's rules. The checks (finite bounds and
// step, step nonzero, step's sign agreeing with end - start) and the length
// ceil((end - start) / step) are computed in double from the values given,
// before any cast: arange(0, -8.000001, -4.0, dtype=int64) has 3 elements and
// step -0.5 is valid for an integer dtype. The one exception is int64 with
// integer start, end and step, whose length is computed exactly in integers
// (double cannot hold every int64). An integer dtype then fills
// trunc(start) + i * trunc(step) in int64 and wraps to the dtype (so a step in
// (-1, 1) repeats trunc(start)); a floating dtype fills start + i * step in
// double.
void arange_impl(OpCall& c, const tsr_scalar& start, const tsr_scalar& end, const tsr_scalar& step,
                 int options_first) {
  check_real(c, start, "start");
  check_real(c, end, "end");
  check_real(c, step, "step");
  const bool integral =
      is_integral_scalar(start) && is_integral_scalar(end) && is_integral_scalar(step);
  const Options o = factory::options(c, options_first, integral ? TSR_INT64 : kDefaultFloat);
  check_range_dtype(c, o.dtype);
  const double ds = factory::scalar_to_double(start), de = factory::scalar_to_double(end);
  const double dstep = factory::scalar_to_double(step);
  if (!std::isfinite(dstep))
    fail(TSR_INVALID_ARGUMENT, "op '{}': step must be finite but got {}; pass a finite step",
         op_name(c), dstep);
  if (dstep == 0)
    fail(TSR_INVALID_ARGUMENT, "op '{}': step must be nonzero (argument 'step' = {})", op_name(c),
         dstep);
  if (!std::isfinite(ds) || !std::isfinite(de))
    fail(TSR_INVALID_ARGUMENT, "op '{}': unsupported range: {} -> {}; pass finite bounds",
         op_name(c), ds, de);
  if (!((dstep > 0 && de >= ds) || (dstep < 0 && de <= ds)))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': upper bound and lower bound inconsistent with step sign (start {}, end {}, "
         "step {})",
         op_name(c), ds, de, dstep);
  double size_d;
  if (o.dtype == TSR_INT64 && integral) {
    const int64_t xs = start.v.i, xe = end.v.i, xstep = step.v.i;
    const __int128 sgn = xstep > 0 ? 1 : -1;
    const __int128 num = static_cast<__int128>(xe) - xs + xstep - sgn;
    size_d = static_cast<double>(num / xstep);
  } else {
    size_d = std::ceil((de - ds) / dstep);
  }
  tsr_scalar acc_start, acc_step;
  if (is_integral(o.dtype, false)) {
    acc_start = scalar_int(range_int(c, start, "start"));
    acc_step = scalar_int(range_int(c, step, "step"));
  } else {
    acc_start = scalar_float(ds);
    acc_step = scalar_float(dstep);
  }
  if (!(size_d >= 0 && size_d < 0x1p63))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': invalid size, possible overflow? ({} -> {} by {} gives {} elements)", op_name(c),
         ds, de, dstep, size_d);
  const auto n = static_cast<int64_t>(size_d);
  int64_t bytes = 0;
  if (__builtin_mul_overflow(n, static_cast<int64_t>(dtype_size(o.dtype)), &bytes))
    fail(TSR_INVALID_ARGUMENT, "op '{}': invalid size, possible overflow? ({} elements)",
         op_name(c), n);
  TensorRef out = new_tensor(c.runtime, o.device, o.dtype, 1, &n);
  iota_raw(out.get(), acc_start, acc_step, nullptr, *c.op);
  c.set_result(std::move(out));
}

// linspace into `out` (1-d, `steps` elements): PyTorch's symmetric form.
// Integer outputs take integer-truncated bounds and a double step.
void linspace_into(TensorImpl* out, const tsr_scalar& start, const tsr_scalar& end, int64_t steps,
                   const OpDef& caller) {
  if (steps == 0) return;
  const bool int_out = is_integral(out->dtype, false);
  const double ds = factory::scalar_to_double(start), de = factory::scalar_to_double(end);
  auto bound = [&](double v) {
    return int_out ? scalar_int(static_cast<int64_t>(std::trunc(v))) : scalar_float(v);
  };
  if (steps == 1) {
    fill_raw(out, bound(ds));
    return;
  }
  const tsr_scalar s = bound(ds), e = bound(de);
  const double step = (factory::scalar_to_double(e) - factory::scalar_to_double(s)) /
                      static_cast<double>(steps - 1);
  const tsr_scalar st = scalar_float(step);
  iota_raw(out, s, st, &e, caller);
}

void check_steps(const OpCall& c, int64_t steps) {
  if (steps < 0)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': number of steps must be non-negative (argument 'steps' = {})", op_name(c),
         steps);
}

void check_integer_bounds(const OpCall& c, const tsr_scalar& s, const char* arg, tsr_dtype dtype) {
  if (!is_integral(dtype, false)) return;
  const double v = factory::scalar_to_double(s);
  if (!std::isfinite(v) || std::fabs(v) >= 9.2e18)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument '{}' = {} cannot be converted to {}; pass a finite value in range",
         op_name(c), arg, v, dtype_name(dtype));
}

void eye_impl(OpCall& c, int64_t n, int64_t m, int options_first) {
  if (n < 0)
    fail(TSR_INVALID_ARGUMENT, "op '{}': n must be greater or equal to 0, got {}", op_name(c), n);
  if (m < 0)
    fail(TSR_INVALID_ARGUMENT, "op '{}': m must be greater or equal to 0, got {}", op_name(c), m);
  const Options o = factory::options(c, options_first, kDefaultFloat);
  const int64_t sizes[2] = {n, m};
  int64_t bytes = 0, numel = 0;
  if (!mul_ok(n, m, &numel) || !mul_ok(numel, static_cast<int64_t>(dtype_size(o.dtype)), &bytes))
    fail(TSR_INVALID_ARGUMENT, "op '{}': an {}x{} matrix overflows int64 bytes; use smaller sizes",
         op_name(c), n, m);
  TensorRef out = new_tensor(c.runtime, o.device, o.dtype, 2, sizes);
  fill_raw(out.get(), scalar_int(0));
  const int64_t diag = std::min(n, m);
  if (diag > 0) {
    const int64_t stride = m + 1;
    TensorRef d = make_alias(out.get(), 1, &diag, &stride, out->offset);
    fill_raw(d.get(), scalar_int(1));
  }
  c.set_result(std::move(out));
}

// zeros / ones / full: a contiguous tensor of `size` filled with `value`.
void filled(OpCall& c, int size_arg, const tsr_scalar& value, const Options& o) {
  factory::check_fill_value(c, value, o.dtype, "fill_value");
  const Shape shape = factory::size_arg(c, size_arg, o.dtype);
  TensorRef out = new_tensor(c.runtime, o.device, o.dtype, shape);
  fill_raw(out.get(), value);
  c.set_result(std::move(out));
}

}  // namespace

void iota_(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  const tsr_scalar& start = c.scalar(1);
  const tsr_scalar& step = c.scalar(2);
  const tsr_scalar* end = c.is_none(3) ? nullptr : &c.scalar(3);
  check_real(c, start, "start");
  check_real(c, step, "step");
  if (end) check_real(c, *end, "end");
  check_range_dtype(c, self->dtype);
  assert_no_internal_overlap(*self, op_name(c));
  iota_raw(self, start, step, end, *c.op);
  self->bump_version();
  c.set_result(TensorRef::borrow(self));
}

void empty_memory_format(OpCall& c) {
  const Options o = factory::options(c, 1, kDefaultFloat);
  const Shape shape = factory::size_arg(c, 0, o.dtype);
  int64_t strides[TSR_MAX_DIMS];
  const auto format =
      c.is_none(5) ? TSR_CONTIGUOUS_FORMAT : static_cast<tsr_memory_format>(c.int_arg(5));
  switch (format) {
    case TSR_CONTIGUOUS_FORMAT:
      contiguous_strides(shape.ndim, shape.sizes, strides);
      break;
    case TSR_CHANNELS_LAST:
    case TSR_CHANNELS_LAST_3D: {
      const int32_t want = format == TSR_CHANNELS_LAST ? 4 : 5;
      if (shape.ndim != want)
        fail(TSR_INVALID_ARGUMENT,
             "op '{}': argument 'memory_format': required rank {} tensor to use {} format, got "
             "size {}",
             op_name(c), want, want == 4 ? "channels_last" : "channels_last_3d",
             shape_str(shape.ndim, shape.sizes));
      channels_last_strides(shape.ndim, shape.sizes, strides);
      break;
    }
    default:
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': argument 'memory_format': unsupported memory format Preserve (empty has no "
           "input to preserve); pass contiguous_format or channels_last",
           op_name(c));
  }
  c.set_result(new_tensor(c.runtime, o.device, o.dtype, shape.ndim, shape.sizes, strides));
}

void empty_strided(OpCall& c) {
  const Options o = factory::options(c, 2, kDefaultFloat);
  const Shape shape = factory::size_arg(c, 0, o.dtype);
  const tsr_value& stride = c.args[1];
  if (stride.len != shape.ndim)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': dimensionality of sizes ({}) must match dimensionality of strides ({})",
         op_name(c), shape.ndim, stride.len);
  for (int32_t d = 0; d < shape.ndim; ++d)
    if (stride.u.ints[d] < 0)
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': argument 'stride' = {} has a negative stride at dim {}; strides must be >= 0",
           op_name(c), shape_str(stride.len, stride.u.ints), d);
  int64_t span = 0;  // largest element offset, checked for overflow
  for (int32_t d = 0; d < shape.ndim; ++d) {
    int64_t term = 0;
    if (shape.sizes[d] > 0 &&
        (!mul_ok(shape.sizes[d] - 1, stride.u.ints[d], &term) || !add_ok(span, term, &span)))
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': Storage size calculation overflowed with sizes={} and strides={}", op_name(c),
           shape_str(shape.ndim, shape.sizes), shape_str(stride.len, stride.u.ints));
  }
  int64_t bytes = 0;
  if (!add_ok(span, 1, &span) || !mul_ok(span, static_cast<int64_t>(dtype_size(o.dtype)), &bytes))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': Storage size calculation overflowed with sizes={} and strides={}", op_name(c),
         shape_str(shape.ndim, shape.sizes), shape_str(stride.len, stride.u.ints));
  c.set_result(new_tensor(c.runtime, o.device, o.dtype, shape.ndim, shape.sizes, stride.u.ints));
}

void empty_like(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  const Options o = factory::options(c, 1, self->dtype, self->device());
  c.set_result(factory::new_like(c, *self, o, 5));
}

void zeros(OpCall& c) { filled(c, 0, scalar_int(0), factory::options(c, 1, kDefaultFloat)); }

void ones(OpCall& c) { filled(c, 0, scalar_int(1), factory::options(c, 1, kDefaultFloat)); }

void full(OpCall& c) {
  const tsr_scalar& value = c.scalar(1);
  filled(c, 0, value, factory::options(c, 2, factory::inferred_dtype(value)));
}

void full_like(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  const tsr_scalar& value = c.scalar(1);
  const Options o = factory::options(c, 2, self->dtype, self->device());
  factory::check_fill_value(c, value, o.dtype, "fill_value");
  TensorRef out = factory::new_like(c, *self, o, 6);
  fill_raw(out.get(), value);
  c.set_result(std::move(out));
}

void scalar_tensor_op(OpCall& c) {
  const tsr_scalar& value = c.scalar(0);
  const Options o = factory::options(c, 1, kDefaultFloat);
  factory::check_fill_value(c, value, o.dtype, "s");
  TensorRef out = new_tensor(c.runtime, o.device, o.dtype, 0, nullptr);
  fill_raw(out.get(), value);
  c.set_result(std::move(out));
}

void eye(OpCall& c) {
  const int64_t n = c.int_arg(0);
  eye_impl(c, n, n, 1);
}

void eye_m(OpCall& c) { eye_impl(c, c.int_arg(0), c.int_arg(1), 2); }

void arange(OpCall& c) { arange_impl(c, scalar_int(0), c.scalar(0), scalar_int(1), 1); }

void arange_start(OpCall& c) { arange_impl(c, c.scalar(0), c.scalar(1), scalar_int(1), 2); }

void arange_start_step(OpCall& c) { arange_impl(c, c.scalar(0), c.scalar(1), c.scalar(2), 3); }

void linspace(OpCall& c) {
  const tsr_scalar& start = c.scalar(0);
  const tsr_scalar& end = c.scalar(1);
  const int64_t steps = c.int_arg(2);
  check_steps(c, steps);
  check_real(c, start, "start");
  check_real(c, end, "end");
  const Options o = factory::options(c, 3, kDefaultFloat);
  check_range_dtype(c, o.dtype);
  check_integer_bounds(c, start, "start", o.dtype);
  check_integer_bounds(c, end, "end", o.dtype);
  factory::check_length(c, steps, o.dtype, "steps");
  TensorRef out = new_tensor(c.runtime, o.device, o.dtype, 1, &steps);
  linspace_into(out.get(), start, end, steps, *c.op);
  c.set_result(std::move(out));
}

void logspace(OpCall& c) {
  const tsr_scalar& start = c.scalar(0);
  const tsr_scalar& end = c.scalar(1);
  const int64_t steps = c.int_arg(2);
  const double base = c.float_arg(3);
  check_steps(c, steps);
  check_real(c, start, "start");
  check_real(c, end, "end");
  const Options o = factory::options(c, 4, kDefaultFloat);
  check_range_dtype(c, o.dtype);
  check_integer_bounds(c, start, "start", o.dtype);
  check_integer_bounds(c, end, "end", o.dtype);
  factory::check_length(c, steps, o.dtype, "steps");
  factory::check_length(c, steps, TSR_FLOAT64, "steps");  // the exponents
  TensorRef out = new_tensor(c.runtime, o.device, o.dtype, 1, &steps);
  if (!o.device->is_meta && steps > 0) {
    // base ** linspace(start, end) in float64, then rounded once to the dtype.
    constexpr OpId pow_scalar = OpId::pow_Scalar;
    TensorRef exponents = new_tensor(c.runtime, o.device, TSR_FLOAT64, 1, &steps);
    tsr_scalar s = start, e = end;
    if (is_integral(o.dtype, false)) {  // PyTorch truncates integer bounds first
      s = scalar_int(static_cast<int64_t>(std::trunc(factory::scalar_to_double(start))));
      e = scalar_int(static_cast<int64_t>(std::trunc(factory::scalar_to_double(end))));
    }
    linspace_into(exponents.get(), s, e, steps, *c.op);
    TensorRef powers = op::call(c.runtime, pow_scalar, static_cast<double>(base), exponents);
    copy_raw(out.get(), powers.get());
  }
  c.set_result(std::move(out));
}

}  // namespace tsr::ops
