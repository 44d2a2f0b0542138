// elementwise.comp - the Vulkan plugin's generic strided elementwise kernel.
//
// One shader for fill, copy (any dtype pair) and the arithmetic primitives,
// over tensors of any dtype, ndim <= 8 and any strides (0 for broadcast):
// invocation i handles elements i, i + N, i + 2N, ... of the output in
// row-major order (N = invocations dispatched), unravels the element's index
// over `sizes` and reaches each operand at address + sum(index_d *
// stride_d) * element size through buffer references (no descriptors, no
// maxStorageBufferRange bound). Values are computed in double for float64
// outputs, in float for the other floating dtypes (as PyTorch computes
// float16/bfloat16) and in int64 for integers and bool, then stored with
// one rounding (floats, round to nearest even) or two's complement wrap.
//
// The parameter block (Params) is written by the host into the stream's
// parameter buffer just before the dispatch; its device address is the only
// push constant. Layout must match kernels_elementwise.cpp's struct Params.
#version 460
#include "common.glsl"

// op codes (kernels.cpp: enum ElementwiseOp)
const int OP_FILL = 0, OP_COPY = 1, OP_ADD = 2, OP_SUB = 3, OP_MUL = 4, OP_DIV = 5;

layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Params {
  int64_t numel;
  int ndim;
  int op;
  int noperands;  // out + inputs
  int pad_;
  int64_t sizes[8];
  Operand t[4];  // t[0] the output, t[1..] the inputs
  double f[2];   // scalars: alpha (floating), ...
  int64_t i[2];  // scalars: alpha (integer), fill bits, ...
};

layout(push_constant) uniform Push { Params params; } pc;


void main() {
  Params p = pc.params;
  const uint64_t threads = invocations();
  const uint64_t first = global_index();
  const int out_dtype = p.t[0].dtype;
  const int out_size = element_size(out_dtype);
  for (uint64_t e = first; e < uint64_t(p.numel); e += threads) {
    int64_t off[4] = {0L, 0L, 0L, 0L};
    int64_t rest = int64_t(e);
    for (int d = p.ndim - 1; d >= 0; --d) {
      const int64_t s = p.sizes[d];
      const int64_t idx = rest % s;
      rest /= s;
      for (int k = 0; k < p.noperands; ++k) off[k] += idx * p.t[k].strides[d];
    }
    const uint64_t out_addr = p.t[0].address + uint64_t(off[0] * out_size);
    if (p.op == OP_FILL) {
      store_bits(out_addr, out_size, uint64_t(p.i[1]));
      continue;
    }
    const int a_dtype = p.t[1].dtype;
    const uint64_t a = load_bits(p.t[1].address + uint64_t(off[1] * element_size(a_dtype)),
                                 element_size(a_dtype));
    uint64_t result;
    if (p.op == OP_COPY) {
      if (is_float(out_dtype) || is_float(a_dtype)) {
        // float -> float16/bfloat16/float32 rounds through float; every
        // other pair (to integers and bool too) goes through double.
        if (!is_float(out_dtype) || out_dtype == FLOAT64 || a_dtype == FLOAT64 ||
            !is_float(a_dtype))
          result = from_double(to_double(a, a_dtype), out_dtype);
        else
          result = from_float(float(to_double(a, a_dtype)), out_dtype);
      } else {
        result = from_int(to_int(a, a_dtype), out_dtype);
      }
    } else {
      const int b_dtype = p.t[2].dtype;
      const uint64_t b = load_bits(p.t[2].address + uint64_t(off[2] * element_size(b_dtype)),
                                   element_size(b_dtype));
      if (out_dtype == FLOAT64) {
        const double x = to_double(a, a_dtype), y = to_double(b, b_dtype), alpha = p.f[0];
        double r = 0.0LF;
        if (p.op == OP_ADD) r = x + alpha * y;
        else if (p.op == OP_SUB) r = x - alpha * y;
        else if (p.op == OP_MUL) r = x * y;
        else r = x / y;
        result = from_double(r, out_dtype);
      } else if (is_float(out_dtype)) {
        const float x = float(to_double(a, a_dtype)), y = float(to_double(b, b_dtype));
        const float alpha = float(p.f[0]);
        float r = 0.0;
        if (p.op == OP_ADD) r = x + alpha * y;
        else if (p.op == OP_SUB) r = x - alpha * y;
        else if (p.op == OP_MUL) r = x * y;
        else r = x / y;
        result = from_float(r, out_dtype);
      } else {
        const int64_t x = to_int(a, a_dtype), y = to_int(b, b_dtype), alpha = p.i[0];
        int64_t r = 0L;
        if (p.op == OP_ADD) r = x + alpha * y;
        else if (p.op == OP_SUB) r = x - alpha * y;
        else r = x * y;
        if (out_dtype == BOOL) {
          // bool arithmetic is logical: add = or, mul = and
          r = p.op == OP_MUL ? ((x != 0L && y != 0L) ? 1L : 0L) : ((x != 0L || y != 0L) ? 1L : 0L);
        }
        result = from_int(r, out_dtype);
      }
    }
    store_bits(out_addr, out_size, result);
  }
}
