// common.glsl - what every Vulkan plugin shader shares (#include "common.glsl").
//
//  - dtype codes (tsr_dtype values) and element sizes;
//  - Operand: a tensor as kernels see it (device address of its first
//    element, element strides, dtype), std430, as kernel_util.hpp's
//    OperandParams;
//  - typed access to any address through buffer references (store_texel:
//    16 bytes at once), and exact
//    conversions between every dtype's bits and double / int64 / float;
//  - the workgroup size (256 by default, declared here: a shader must not
//    declare its own) and the invocation numbering of the host's dispatch (2-D grids
//    past 65535 groups): global_index() and invocations().
// Requires (declared here): buffer references, int64 arithmetic, 8- and
// 16-bit storage.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_scalar_block_layout : require

// Every shader's workgroup: 256 invocations along x (kernels.hpp's
// Kernels::kWorkgroup; the host sizes its grids by it).
// A shader marked any_workgroup on the host (kernels.hpp) runs small
// dispatches with 8 or 64 invocations per workgroup instead (specialization
// constant 0); one that shares memory or synchronises its workgroup keeps 256.
// TESSERA_RASTER: defined by a fragment shader (Note [Raster stores],
// raster.hpp), which has no workgroup.
#ifndef TESSERA_RASTER
layout(local_size_x_id = 0) in;
const uint64_t WORKGROUP = uint64_t(gl_WorkGroupSize.x);
#endif

// dtype codes (tsr_dtype)
const int BOOL = 0, UINT8 = 1, INT8 = 2, INT16 = 3, INT32 = 4, INT64 = 5, FLOAT16 = 6,
          BFLOAT16 = 7, FLOAT32 = 8, FLOAT64 = 9;

// BUFFER_COHERENCE: defined as `coherent` by a shader whose invocations
// read what others of its workgroup wrote (pointwise_strided_batch.comp).
#ifndef BUFFER_COHERENCE
#define BUFFER_COHERENCE
#endif
layout(buffer_reference, std430, buffer_reference_align = 1) BUFFER_COHERENCE buffer B8 { uint8_t v; };
layout(buffer_reference, std430, buffer_reference_align = 2) BUFFER_COHERENCE buffer B16 { uint16_t v; };
layout(buffer_reference, std430, buffer_reference_align = 4) BUFFER_COHERENCE buffer B32 { uint v; };
layout(buffer_reference, std430, buffer_reference_align = 8) BUFFER_COHERENCE buffer B64 { uint64_t v; };

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

// Stores the 16 bytes `bits` at `a` (16-byte aligned) as two 64-bit
// components. lavapipe 22.3 writes each component of each SIMD lane with its
// own scalar store, in a loop over the lanes: an imageStore of a 16-byte
// texel runs four such loops, this two (the 16M float32 add of bench_vulkan:
// 2.6-3.3 -> 3.4-4.5 GB/s; stores were 60% of its time).
layout(buffer_reference, std430, buffer_reference_align = 16) writeonly buffer B128 { u64vec2 v; };
void store_texel(uint64_t a, uvec4 bits) {
  B128(a).v = u64vec2(pack64(bits.xy), pack64(bits.zw));
}

// floor(i / d) for 0 <= i < 2^31 without a division (lavapipe divides one
// SIMD lane at a time): multiplier = ceil(2^shift / d) with shift = 31 +
// ceil(log2 d) (Granlund and Montgomery), computed by the host
// (kernel_util.hpp's row_division). multiplier 0: every i is in row 0.
struct RowDivision {
  uint multiplier;
  uint shift;
};
int row_of(RowDivision d, int i) {
  return int((uint64_t(uint(i)) * uint64_t(d.multiplier)) >> d.shift);
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
  if (dtype == BOOL) return x == 0.0LF ? 0UL : 1UL;  // NaN is true (and != is ordered)
  return uint64_t(int64_t(x));
}
uint64_t from_int(int64_t x, int dtype) {
  if (dtype == BOOL) return x != 0L ? 1UL : 0UL;
  if (dtype == FLOAT64) return doubleBitsToUint64(double(x));
  if (is_float(dtype)) return from_float(float(x), dtype);
  return uint64_t(x);  // store_bits keeps the low bytes: two's complement wrap
}

struct Operand {
  uint64_t address;
  int64_t strides[8];  // elements
  int dtype;
  int pad_;
};

// Element address of operand `t` at element offset `off` (in elements).
uint64_t element_address(Operand t, int64_t off) {
  return t.address + uint64_t(off * int64_t(element_size(t.dtype)));
}

#ifndef TESSERA_RASTER
uint64_t global_index() {
  return (uint64_t(gl_WorkGroupID.y) * uint64_t(gl_NumWorkGroups.x) + uint64_t(gl_WorkGroupID.x)) *
             WORKGROUP +
         uint64_t(gl_LocalInvocationID.x);
}
uint64_t invocations() {
  return uint64_t(gl_NumWorkGroups.x) * uint64_t(gl_NumWorkGroups.y) * WORKGROUP;
}
#endif
