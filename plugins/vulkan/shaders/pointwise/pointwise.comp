// pointwise.comp - _unary, _binary (function codes of tessera/opcodes.h) and
// where.self over any strides (0 for broadcast), ndim <= 8.
//
// Floating values are computed in double: the cheap exact functions give the
// same result as a float computation once rounded to the output dtype (round
// with decimals is the exception and runs in float for 16/32-bit dtypes, as
// PyTorch does); transcendental functions use the double-precision
// implementations of pointwise_math.glsl (GLSL has them for float only),
// accurate to a few ulps of double. Integers compute in int64 and wrap when stored; bool is
// 0/1. Layout of Params: pointwise/unary_binary.cpp's struct Params.
#version 460
#include "common.glsl"
#include "pointwise_math.glsl"

const int KIND_UNARY = 0, KIND_BINARY = 1, KIND_WHERE = 2;

struct Params {
  int64_t numel;
  int ndim;
  int op;
  int noperands;  // out + inputs
  int kind;
  int64_t sizes[8];
  Operand t[4];  // t[0] the output, then self, other (binary) / self, other, condition (where)
  Scalars sc;    // p0..p2
};

layout(set = 0, binding = 0, std430) uniform ParamsBlock { Params params; } pc;

// Specialization constants (Kernels::Spec), -1 meaning "read the
// parameters": the kind, the op code, and FLOAT32 when the output and the
// value inputs are all float32. lavapipe runs both sides of every run-time
// branch under lane masks, so the generic variant evaluates every function
// of the op switch, and every element size of a load, for each element
// (relu over 16M floats: 25 s); a specialized one compiles only its own
// (0.13 GB/s, 20-25x). The host takes a specialized variant by use (Note
// [Specializing by use], kernels.hpp): each costs a compile.
layout(constant_id = 1) const int SPEC_KIND = -1;
layout(constant_id = 2) const int SPEC_OP = -1;
layout(constant_id = 3) const int SPEC_DTYPE = -1;

// Operand `t`'s element `off` elements from its first, as `dtype`.
uint64_t load_operand(Operand t, int dtype, int64_t off) {
  const int size = element_size(dtype);
  return load_bits(t.address + uint64_t(off * int64_t(size)), size);
}

void main() {
  Params p = pc.params;
  const uint64_t threads = invocations();
  const uint64_t first = global_index();
  const int kind = SPEC_KIND >= 0 ? SPEC_KIND : p.kind;
  const int op = SPEC_OP >= 0 ? SPEC_OP : p.op;
  const bool spec_dtype = SPEC_DTYPE >= 0;
  const int out_dtype = spec_dtype ? SPEC_DTYPE : p.t[0].dtype;
  const int out_size = element_size(out_dtype);
  // the value inputs share a dtype (the core promotes them)
  const int a_dtype = spec_dtype ? SPEC_DTYPE : p.t[1].dtype;
  const bool small = p.numel <= 0xffffffffL;
  for (uint64_t e = first; e < uint64_t(p.numel); e += threads) {
    int64_t off[4] = {0L, 0L, 0L, 0L};
    // Unravel e over sizes (the host coalesced the dims, so a contiguous
    // operand set has ndim 1): one division per dimension but the outermost,
    // in 32 bits when the element count allows (64-bit division is a
    // library call on most devices, lavapipe included).
    int64_t rest = int64_t(e);
    if (small) {
      uint r = uint(e);
      for (int d = p.ndim - 1; d > 0; --d) {
        const uint s = uint(p.sizes[d]);
        const uint q = r / s;
        const int64_t idx = int64_t(r - q * s);
        r = q;
        for (int k = 0; k < p.noperands; ++k) off[k] += idx * p.t[k].strides[d];
      }
      rest = int64_t(r);
    } else {
      for (int d = p.ndim - 1; d > 0; --d) {
        const int64_t s = p.sizes[d];
        const int64_t q = rest / s;
        const int64_t idx = rest - q * s;
        rest = q;
        for (int k = 0; k < p.noperands; ++k) off[k] += idx * p.t[k].strides[d];
      }
    }
    if (p.ndim > 0)
      for (int k = 0; k < p.noperands; ++k) off[k] += rest * p.t[k].strides[0];
    const uint64_t out_addr = p.t[0].address + uint64_t(off[0] * out_size);
    uint64_t result;
    if (kind == KIND_WHERE) {
      const bool c = load_operand(p.t[3], p.t[3].dtype, off[3]) != 0UL;
      result = c ? load_operand(p.t[1], a_dtype, off[1]) : load_operand(p.t[2], a_dtype, off[2]);
    } else if (kind == KIND_UNARY) {
      const uint64_t a = load_operand(p.t[1], a_dtype, off[1]);
      if (is_float(a_dtype)) {
        const double x = to_double(a, a_dtype);
        if (is_unary_test(op))
          result = unary_float_test(op, x) ? 1UL : 0UL;
        else
          result = from_double(unary_float(op, x, a_dtype, p.sc), out_dtype);
      } else {
        result = from_int(unary_int(op, to_int(a, a_dtype), a_dtype, p.sc), out_dtype);
      }
    } else {
      const uint64_t a = load_operand(p.t[1], a_dtype, off[1]);
      const uint64_t b = load_operand(p.t[2], a_dtype, off[2]);
      if (is_float(a_dtype)) {
        const double x = to_double(a, a_dtype), y = to_double(b, a_dtype);
        if (is_binary_test(op))
          result = binary_test_float(op, x, y) ? 1UL : 0UL;
        else
          result = from_double(binary_float(op, x, y, a_dtype), out_dtype);
      } else {
        const int64_t x = to_int(a, a_dtype), y = to_int(b, a_dtype);
        if (is_binary_test(op))
          result = binary_test_int(op, x, y) ? 1UL : 0UL;
        else
          result = from_int(binary_int(op, x, y, a_dtype), out_dtype);
      }
    }
    store_bits(out_addr, out_size, result);
  }
}
