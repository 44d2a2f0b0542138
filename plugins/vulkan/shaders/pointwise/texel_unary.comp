// texel_unary.comp - _unary from float32 to float32 over contiguous rows,
// four elements per invocation through storage texel buffers (Note [Texel
// fast paths], device.hpp): a texel load, the op in double on each
// component with pointwise_math.glsl's functions (as pointwise.comp, so
// results do not depend on the path), store_texel. Always specialized on
// the op, which the host takes by use (Note [Specializing by use],
// kernels.hpp): until then pointwise.comp runs the op.
//
// The iteration is rows x cols4 texels (one row for a 1-D iteration), as
// texel_arith.comp; the input's rows are a_row4 texels apart. The input is
// read through a 32-bit unsigned view, so every bit (NaN payloads) arrives.
// Layout must match pointwise/unary_binary.cpp's TexelUnaryParams.
#version 460
#include "common.glsl"
#include "pointwise_math.glsl"

layout(constant_id = 1) const int OP = 0;

layout(set = 0, binding = 1, rgba32ui) uniform readonly uimageBuffer A;

layout(push_constant, std430) uniform Params {
  int64_t n4;            // texels to compute: rows x cols4
  int a_texel;           // the input's first texel in its block's view
  int cols4;             // texels per row
  uint64_t out_address;  // the output's first element (16-byte aligned)
  uint64_t out_row;      // bytes between output rows
  int a_row4;            // texels between input rows
  int pad_;
  RowDivision rows;  // texel index -> row (common.glsl)
  Scalars sc;        // the op's p0..p2
} p;

void main() {
  // One texel per invocation, no loop (as texel_arith.comp).
  const uint64_t e = global_index();
  if (e < uint64_t(p.n4)) {
    const int i = int(e);
    const int row = row_of(p.rows, i), c = i - row * p.cols4;
    const uvec4 x = imageLoad(A, p.a_texel + row * p.a_row4 + c);
    uvec4 r;
    for (int k = 0; k < 4; ++k)
      r[k] = uint(from_double(unary_float(OP, to_double(uint64_t(x[k]), FLOAT32), FLOAT32, p.sc),
                              FLOAT32));
    store_texel(p.out_address + uint64_t(row) * p.out_row + uint64_t(c) * 16, r);
  }
}
