// Helpers shared by the factory and random ops: PyTorch's tensor-options
// arguments (dtype, layout, device, pin_memory, memory_format), size lists, and
// the checks PyTorch applies to fill values.
#pragma once

#include "ops/op_util.h"
#include "runtime/runtime.h"

namespace tsr::ops::factory {

// The resolved options of a factory call.
struct Options {
  tsr_dtype dtype;
  DeviceRecord* device;
};

// Reads the options (ScalarType? dtype, Layout? layout, Device? device, bool?
// pin_memory) at arguments first .. first + 3: dtype None gives
// `default_dtype`, device None `default_device` (null: cpu:0). Layout must be
// None (strided); pin_memory True is refused (the core has no pinned host
// tensors).
Options options(OpCall& c, int first, tsr_dtype default_dtype,
                DeviceRecord* default_device = nullptr);

// A `SymInt[] size` argument: every entry >= 0 and numel * itemsize within
// int64 (PyTorch's messages), and the strides too: a zero-size dim does not
// make the others' strides smaller (check_sizes).
Shape size_arg(const OpCall& c, int i, tsr_dtype dtype);

// A 1-d length argument `arg` (steps, n) of a factory whose result has `dtype`:
// n * itemsize must fit int64 (Note [Checked size arithmetic]). n >= 0 is
// checked by the caller, with PyTorch's message.
void check_length(const OpCall& c, int64_t n, tsr_dtype dtype, const char* arg);

// A new tensor shaped like `self` in the layout of MemoryFormat? argument
// `format_arg` (None: preserve self's dim order, as empty_like).
TensorRef new_like(OpCall& c, const TensorImpl& self, const Options& o, int format_arg);

// Throws PyTorch's "value cannot be converted to type T without overflow" when
// `value` does not fit `dtype` (complex into real; integers and finite floats
// out of range). Integral targets accept floats (truncated later).
void check_fill_value(const OpCall& c, const tsr_scalar& value, tsr_dtype dtype, const char* arg);

// The dtype PyTorch infers for a fill value: bool, int64, the default float
// or complex64.
tsr_dtype inferred_dtype(const tsr_scalar& value);

// A Scalar as a double (bool and int converted; complex: its real part).
double scalar_to_double(const tsr_scalar& s);

// "'op'" for messages.
inline const char* op_name(const OpCall& c) { return c.op->name.c_str(); }

}  // namespace tsr::ops::factory
