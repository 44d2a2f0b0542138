// texel_arith.comp - float32 add/sub/mul/div over contiguous operands, four
// elements per invocation through storage texel buffers (Note [Texel fast
// paths], device.hpp): lavapipe gathers a texel load across the SIMD lanes
// where a buffer-reference load loops over them (measured: the 16M add ran
// at about half the speed with buffer-reference loads). Stores are the
// other way round: the output is written through its device address
// (store_texel, common.glsl: half the stores of an imageStore on lavapipe).
//
// The iteration is rows x cols4 texels (16 bytes = 4 floats each; one row
// for a 1-D iteration): out[r][c] = a[r][c] op b[r][c], each operand's rows
// `*_row4` texels apart (0: a row broadcast to every row, as a bias). An
// operand flagged scalar (a broadcast one-element tensor) is read once
// through its device address instead. The host runs the tail (numel % 4
// elements of a 1-D iteration) and every other layout through
// elementwise.comp, which computes the same float expressions, so results
// do not depend on the path.
// Layout must match kernels_elementwise.cpp's TexelArithParams.
#version 460
#include "common.glsl"

const int OP_ADD = 2, OP_SUB = 3, OP_MUL = 4, OP_DIV = 5;  // elementwise.comp's codes
const int A_SCALAR = 1, B_SCALAR = 2;

// The op and which operands are scalars: specialization constants
// (Kernels::Spec), as the host also writes them into the push constants.
layout(constant_id = 1) const int OP = 2;
layout(constant_id = 2) const int SCALARS = 0;

layout(set = 0, binding = 1, rgba32f) uniform readonly imageBuffer A;
layout(set = 0, binding = 2, rgba32f) uniform readonly imageBuffer B;

layout(push_constant, std430) uniform Params {
  int64_t n4;     // texels to compute: rows x cols4
  int a_texel;    // first texel of each input in its block's view
  int b_texel;
  int op;
  float alpha;    // add/sub: out = a + alpha * b / a - alpha * b
  int scalars;    // A_SCALAR | B_SCALAR
  int cols4;      // texels per row
  uint64_t a_address;  // scalar operands' element addresses
  uint64_t b_address;
  uint64_t out_address;  // the output's first element (16-byte aligned)
  uint64_t out_row;      // bytes between output rows
  int a_row4;            // texels between input rows (0: broadcast)
  int b_row4;
  RowDivision rows;      // texel index -> row (common.glsl)
} p;

layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer F32 { float v; };

void main() {
  const int op = OP;
  const float alpha = p.alpha;
  const bool a_scalar = (SCALARS & A_SCALAR) != 0, b_scalar = (SCALARS & B_SCALAR) != 0;
  const vec4 sa = a_scalar ? vec4(F32(p.a_address).v) : vec4(0.0);
  const vec4 sb = b_scalar ? vec4(F32(p.b_address).v) : vec4(0.0);
  // One texel per invocation, no loop: the host dispatches n4 invocations
  // (a grid of up to 65535 x 65535 workgroups), and on lavapipe a loop costs
  // more than it saves (a grid-stride loop over 256 workgroups ran the 16M
  // add at ~0.6x the speed).
  const uint64_t e = global_index();
  if (e < uint64_t(p.n4)) {
    const int i = int(e);
    const int row = row_of(p.rows, i), c = i - row * p.cols4;
    const vec4 x = a_scalar ? sa : imageLoad(A, p.a_texel + row * p.a_row4 + c);
    const vec4 y = b_scalar ? sb : imageLoad(B, p.b_texel + row * p.b_row4 + c);
    precise vec4 r;
    if (op == OP_ADD) r = x + alpha * y;
    else if (op == OP_SUB) r = x - alpha * y;
    else if (op == OP_MUL) r = x * y;
    else r = x / y;
    store_texel(p.out_address + uint64_t(row) * p.out_row + uint64_t(c) * 16, floatBitsToUint(r));
  }
}
