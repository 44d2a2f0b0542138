// texel_copy.comp - copy_ between contiguous tensors of one dtype and fill_
// of a contiguous tensor, 16 bytes per invocation through storage texel
// buffers (Note [Texel fast paths], device.hpp): the source is read as
// texels, the output written through its device address (store_texel,
// common.glsl: half the stores of an imageStore on lavapipe). Bits are
// moved, never converted, so any dtype qualifies; the host runs the tail
// bytes (and every other case) through elementwise.comp.
// The iteration is rows x cols4 texels (one row for a 1-D iteration), each
// operand's rows its own distance apart (the source's may be 0: a row
// broadcast to every row).
// Layout must match kernels_elementwise.cpp's TexelCopyParams.
#version 460
#include "common.glsl"

layout(set = 0, binding = 1, rgba32ui) uniform readonly uimageBuffer Src;

layout(push_constant, std430) uniform Params {
  int64_t n4;     // 16-byte texels to write: rows x cols4
  int src_texel;  // the source's first texel in its block's view
  int fill;       // 1: store `pattern` (the fill value repeated) instead of copying
  uint64_t out_address;  // the output's first byte (16-byte aligned)
  uint64_t out_row;      // bytes between output rows
  uvec4 pattern;
  int cols4;             // texels per row
  int src_row4;          // texels between source rows (0: broadcast)
  RowDivision rows;      // texel index -> row (common.glsl)
} p;

void main() {
  // One texel per invocation, no loop (as texel_arith.comp).
  const uint64_t e = global_index();
  if (e < uint64_t(p.n4)) {
    const int i = int(e);
    const int row = row_of(p.rows, i), c = i - row * p.cols4;
    store_texel(p.out_address + uint64_t(row) * p.out_row + uint64_t(c) * 16,
                p.fill != 0 ? p.pattern : imageLoad(Src, p.src_texel + row * p.src_row4 + c));
  }
}
