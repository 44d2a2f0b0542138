// texel_arith.glsl - float32 add/sub/mul/div over contiguous operands, four
// elements per texel through storage texel buffers (Note [Texel fast
// paths], device.hpp): lavapipe gathers a texel load across the SIMD lanes
// where a buffer-reference load loops over them (measured: the 16M add ran
// at about half the speed with buffer-reference loads). Two shaders write
// the results: texel_arith.comp through the output's device address
// (store_texel, common.glsl), and texel_arith.frag as the color of a linear
// image over the output where the device renders (Note [Raster stores],
// raster.hpp: lavapipe stores a computed texel one lane at a time, a
// rendered one with vector stores).
//
// The iteration is rows x cols4 texels (16 bytes = 4 floats each; one row
// for a 1-D iteration): out[r][c] = a[r][c] op b[r][c], each operand's rows
// `*_row4` texels apart (0: a row broadcast to every row, as a bias). An
// operand flagged scalar (a broadcast one-element tensor) is read once
// through its device address instead. The host runs the tail (numel % 4
// elements of a 1-D iteration) and every other layout through
// pointwise_strided.comp, which computes the same float expressions, so results
// do not depend on the path. Inputs arrive as bits (32-bit unsigned views).
// Include after common.glsl. Layout must match pointwise/copy_fill_arith.cpp's
// TexelArithParams.

const int OP_ADD = 2, OP_SUB = 3, OP_MUL = 4, OP_DIV = 5;  // pointwise_strided.comp's codes
const int A_SCALAR = 1, B_SCALAR = 2;

// The op and which operands are scalars: specialization constants
// (Kernels::Spec), as the host also writes them into the push constants.
layout(constant_id = 1) const int OP = 2;
layout(constant_id = 2) const int SCALARS = 0;
// 1: alpha is 1 (add/sub; then b * alpha is b, bit for bit)
layout(constant_id = 3) const int ALPHA_ONE = 0;

layout(set = 0, binding = 1, rgba32ui) uniform readonly uimageBuffer A;
layout(set = 0, binding = 2, rgba32ui) uniform readonly uimageBuffer B;

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
  // The first texel this dispatch or draw computes; a draw's image is
  // `width` texels wide (Note [Raster stores]).
  int first;
  int width;
} p;

// Texel i (0 <= i < n4) of the iteration: its inputs' bits, and its row and
// texel column.
void arith_inputs(int i, out uvec4 x, out uvec4 y, out int row, out int c) {
  row = row_of(p.rows, i);
  c = i - row * p.cols4;
  x = (SCALARS & A_SCALAR) != 0 ? uvec4(B32(p.a_address).v)
                                : imageLoad(A, p.a_texel + row * p.a_row4 + c);
  y = (SCALARS & B_SCALAR) != 0 ? uvec4(B32(p.b_address).v)
                                : imageLoad(B, p.b_texel + row * p.b_row4 + c);
}

// The op in float, as pointwise_strided.comp computes it.
vec4 arith(vec4 x, vec4 y) {
  precise vec4 r;
  if (OP == OP_ADD) r = ALPHA_ONE != 0 ? x + y : x + p.alpha * y;
  else if (OP == OP_SUB) r = ALPHA_ONE != 0 ? x - y : x - p.alpha * y;
  else if (OP == OP_MUL) r = x * y;
  else r = x / y;
  return r;
}
