// texel_binary.comp - _binary from float32 to float32 (pow, atan2, maximum,
// minimum, fmax, fmin, remainder, fmod, copysign, hypot, xlogy, logaddexp,
// ...) over rows of whole texels, four elements per invocation (Note [Texel
// fast paths], device.hpp): texel loads, the op in double on each component
// with pointwise_math.glsl's functions (as pointwise.comp, so results do
// not depend on the path), store_texel. Always specialized on the op, which
// the host takes by use (Note [Specializing by use], kernels.hpp).
//
// The iteration is rows x cols4 texels (one row for a 1-D iteration), as
// texel_arith.comp; each input's rows are *_row4 texels apart (0: one row
// broadcast to every row). Inputs are read through 32-bit unsigned views,
// so every bit arrives. Layout must match pointwise/unary_binary.cpp's
// TexelBinaryParams.
#version 460
#include "common.glsl"
#include "pointwise_math.glsl"

layout(constant_id = 1) const int OP = 0;

layout(set = 0, binding = 1, rgba32ui) uniform readonly uimageBuffer A;
layout(set = 0, binding = 2, rgba32ui) uniform readonly uimageBuffer B;

layout(push_constant, std430) uniform Params {
  int64_t n4;            // texels to compute: rows x cols4
  int a_texel;           // each input's first texel in its block's view
  int b_texel;
  uint64_t out_address;  // the output's first element (16-byte aligned)
  uint64_t out_row;      // bytes between output rows
  int a_row4;            // texels between input rows (0: broadcast)
  int b_row4;
  int cols4;             // texels per row
  int pad_;
  RowDivision rows;  // texel index -> row (common.glsl)
} p;

void main() {
  // One texel per invocation, no loop (as texel_arith.comp).
  const uint64_t e = global_index();
  if (e < uint64_t(p.n4)) {
    const int i = int(e);
    const int row = row_of(p.rows, i), c = i - row * p.cols4;
    const uvec4 x = imageLoad(A, p.a_texel + row * p.a_row4 + c);
    const uvec4 y = imageLoad(B, p.b_texel + row * p.b_row4 + c);
    uvec4 r;
    for (int k = 0; k < 4; ++k)
      r[k] = uint(from_double(binary_float(OP, to_double(uint64_t(x[k]), FLOAT32),
                                           to_double(uint64_t(y[k]), FLOAT32), FLOAT32),
                              FLOAT32));
    store_texel(p.out_address + uint64_t(row) * p.out_row + uint64_t(c) * 16, r);
  }
}
