// texel_select.comp - the float32 tests and where.self over contiguous
// operands, sixteen elements per invocation (Note [Texel fast paths],
// device.hpp): four float32 texels hold the sixteen values a bool texel
// holds.
//  - MODE 0, a test (_binary's comparisons and logical codes) from float32
//    to bool: out[i] = test(a[i], b[i]) as 0 or 1, computed with
//    pointwise_math.glsl's binary_test_float (in double, as pointwise.comp,
//    so results do not depend on the path);
//  - MODE 1, where.self on float32: out[i] = c[i] != 0 ? a[i] : b[i], the
//    bits as they are (as pointwise.comp).
// a and b may each be a scalar (a one-element tensor broadcast: stride 0),
// read once through its address (SCALARS: 1 a, 2 b); the other operands are
// contiguous and start on a 16-byte boundary. Inputs are read through
// 32-bit unsigned texel views; the output is written with store_texel. The
// host runs everything else through pointwise.comp.
// Layout must match pointwise/unary_binary.cpp's TexelSelectParams.
#version 460
#include "common.glsl"
#include "pointwise_math.glsl"

layout(constant_id = 1) const int MODE = 0;
layout(constant_id = 2) const int OP = 0;  // MODE 0: the _binary test code
layout(constant_id = 3) const int SCALARS = 0;

layout(set = 0, binding = 1, rgba32ui) uniform readonly uimageBuffer A;
layout(set = 0, binding = 2, rgba32ui) uniform readonly uimageBuffer B;
layout(set = 0, binding = 3, rgba32ui) uniform readonly uimageBuffer C;

layout(push_constant, std430) uniform Params {
  int n16;  // invocations: elements / 16
  int a_texel;
  int b_texel;
  int c_texel;
  uint64_t out_address;  // the output's first element (16-byte aligned)
  uint64_t a_address;    // a scalar a's element
  uint64_t b_address;
} p;

layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer U32 { uint v; };

// Texel q (0..3) of the sixteen elements of invocation i.
uvec4 a_texel(int i, int q, uint sa) {
  return (SCALARS & 1) != 0 ? uvec4(sa) : imageLoad(A, p.a_texel + 4 * i + q);
}
uvec4 b_texel(int i, int q, uint sb) {
  return (SCALARS & 2) != 0 ? uvec4(sb) : imageLoad(B, p.b_texel + 4 * i + q);
}

// Four tests as four bool bytes (little-endian) of one uint.
uint tests(uvec4 x, uvec4 y) {
  uint r = 0u;
  for (int k = 0; k < 4; ++k)
    if (binary_test_float(OP, to_double(uint64_t(x[k]), FLOAT32), to_double(uint64_t(y[k]), FLOAT32)))
      r |= 1u << (8 * k);
  return r;
}

// Four selections by the four bool bytes of `c`.
uvec4 select4(uint c, uvec4 x, uvec4 y) {
  return uvec4(((c & 0xffu) != 0u) ? x.x : y.x, ((c & 0xff00u) != 0u) ? x.y : y.y,
               ((c & 0xff0000u) != 0u) ? x.z : y.z, ((c & 0xff000000u) != 0u) ? x.w : y.w);
}

void main() {
  const uint64_t e = global_index();
  if (e >= uint64_t(p.n16)) return;
  const int i = int(e);
  const uint sa = (SCALARS & 1) != 0 ? U32(p.a_address).v : 0u;
  const uint sb = (SCALARS & 2) != 0 ? U32(p.b_address).v : 0u;
  if (MODE == 0) {
    const uvec4 r = uvec4(tests(a_texel(i, 0, sa), b_texel(i, 0, sb)),
                          tests(a_texel(i, 1, sa), b_texel(i, 1, sb)),
                          tests(a_texel(i, 2, sa), b_texel(i, 2, sb)),
                          tests(a_texel(i, 3, sa), b_texel(i, 3, sb)));
    store_texel(p.out_address + uint64_t(i) * 16UL, r);
  } else {
    const uvec4 c = imageLoad(C, p.c_texel + i);
    const uint64_t dst = p.out_address + uint64_t(i) * 64UL;
    store_texel(dst, select4(c.x, a_texel(i, 0, sa), b_texel(i, 0, sb)));
    store_texel(dst + 16UL, select4(c.y, a_texel(i, 1, sa), b_texel(i, 1, sb)));
    store_texel(dst + 32UL, select4(c.z, a_texel(i, 2, sa), b_texel(i, 2, sb)));
    store_texel(dst + 48UL, select4(c.w, a_texel(i, 3, sa), b_texel(i, 3, sb)));
  }
}
