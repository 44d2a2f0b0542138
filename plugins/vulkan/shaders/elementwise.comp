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
// push constant. Layout must match kernels.cpp's struct KernelParams.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_16bit_storage : require

layout(local_size_x = 256) in;

// dtype codes (tsr_dtype)
const int BOOL = 0, UINT8 = 1, INT8 = 2, INT16 = 3, INT32 = 4, INT64 = 5, FLOAT16 = 6,
          BFLOAT16 = 7, FLOAT32 = 8, FLOAT64 = 9;
// op codes (kernels.cpp: enum ElementwiseOp)
const int OP_FILL = 0, OP_COPY = 1, OP_ADD = 2, OP_SUB = 3, OP_MUL = 4, OP_DIV = 5;

struct Operand {
  uint64_t address;
  int64_t strides[8];  // elements
  int dtype;
  int pad_;
};

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

layout(buffer_reference, std430, buffer_reference_align = 1) buffer B8 { uint8_t v; };
layout(buffer_reference, std430, buffer_reference_align = 2) buffer B16 { uint16_t v; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer B32 { uint v; };
layout(buffer_reference, std430, buffer_reference_align = 8) buffer B64 { uint64_t v; };

int element_size(int dtype) {
  if (dtype == BOOL || dtype == UINT8 || dtype == INT8) return 1;
  if (dtype == INT16 || dtype == FLOAT16 || dtype == BFLOAT16) return 2;
  if (dtype == INT32 || dtype == FLOAT32) return 4;
  return 8;
}
bool is_float(int dtype) { return dtype >= FLOAT16; }

uint64_t load_bits(uint64_t a, int size) {
  if (size == 1) return uint64_t(uint(B8(a).v));
  if (size == 2) return uint64_t(uint(B16(a).v));
  if (size == 4) return uint64_t(B32(a).v);
  return B64(a).v;
}
void store_bits(uint64_t a, int size, uint64_t bits) {
  if (size == 1) B8(a).v = uint8_t(uint(bits & 0xffUL));
  else if (size == 2) B16(a).v = uint16_t(uint(bits & 0xffffUL));
  else if (size == 4) B32(a).v = uint(bits & 0xffffffffUL);
  else B64(a).v = bits;
}

// Decoding: the value as double (floating dtypes, exact) or int64.
double to_double(uint64_t bits, int dtype) {
  if (dtype == FLOAT64) return uint64BitsToDouble(bits);
  if (dtype == FLOAT32) return double(uintBitsToFloat(uint(bits)));
  if (dtype == FLOAT16) return double(unpackHalf2x16(uint(bits)).x);
  if (dtype == BFLOAT16) return double(uintBitsToFloat(uint(bits) << 16));
  if (dtype == INT64) return double(int64_t(bits));
  if (dtype == INT32) return double(int(uint(bits)));
  if (dtype == INT16) return double(int((uint(bits) << 16)) >> 16);
  if (dtype == INT8) return double(int((uint(bits) << 24)) >> 24);
  return double(uint(bits));  // uint8, bool
}
int64_t to_int(uint64_t bits, int dtype) {
  if (dtype == INT64) return int64_t(bits);
  if (dtype == INT32) return int64_t(int(uint(bits)));
  if (dtype == INT16) return int64_t(int(uint(bits) << 16) >> 16);
  if (dtype == INT8) return int64_t(int(uint(bits) << 24) >> 24);
  if (dtype == UINT8) return int64_t(bits & 0xffUL);
  if (dtype == BOOL) return int64_t(bits != 0UL ? 1 : 0);
  // floating: truncation toward zero, as a C cast (and PyTorch) does
  return int64_t(to_double(bits, dtype));
}

uint bf16_bits(float x) {
  uint u = floatBitsToUint(x);
  if (isnan(x)) return 0x7fc0u;
  return (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;  // round to nearest even
}
uint64_t from_float(float x, int dtype) {
  if (dtype == FLOAT32) return uint64_t(floatBitsToUint(x));
  if (dtype == FLOAT16) return uint64_t(packHalf2x16(vec2(x, 0.0)) & 0xffffu);
  return uint64_t(bf16_bits(x));
}
uint64_t from_double(double x, int dtype) {
  if (dtype == FLOAT64) return doubleBitsToUint64(x);
  if (is_float(dtype)) return from_float(float(x), dtype);
  if (dtype == BOOL) return x != 0.0LF ? 1UL : 0UL;
  return uint64_t(int64_t(x));
}
uint64_t from_int(int64_t x, int dtype) {
  if (dtype == BOOL) return x != 0L ? 1UL : 0UL;
  if (dtype == FLOAT64) return doubleBitsToUint64(double(x));
  if (is_float(dtype)) return from_float(float(x), dtype);
  return uint64_t(x);  // store_bits keeps the low bytes: two's complement wrap
}

void main() {
  Params p = pc.params;
  const uint64_t threads = uint64_t(gl_NumWorkGroups.x) * uint64_t(gl_NumWorkGroups.y) * 256UL;
  uint64_t first = (uint64_t(gl_WorkGroupID.y) * uint64_t(gl_NumWorkGroups.x) +
                    uint64_t(gl_WorkGroupID.x)) * 256UL + uint64_t(gl_LocalInvocationID.x);
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
        if (out_dtype == FLOAT64 || a_dtype == FLOAT64 || !is_float(a_dtype))
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
