// texel_copy.glsl - copy_ between contiguous tensors of one dtype and fill_
// of a contiguous tensor, 16 bytes per texel through storage texel buffers
// (Note [Texel fast paths], device.hpp). Bits are moved, never converted,
// so any dtype qualifies; the host runs the tail bytes (and every other
// case) through pointwise_strided.comp. Two shaders write the texels:
// texel_copy.comp through the output's device address, and texel_copy.frag
// as the color of a linear image over the output where the device renders
// (Note [Raster stores], raster.hpp; no arithmetic, so nothing to flush).
// The iteration is rows x cols4 texels (one row for a 1-D iteration), each
// operand's rows its own distance apart (the source's may be 0: a row
// broadcast to every row). Include after common.glsl. Layout must match
// pointwise/copy_fill_arith.cpp's TexelCopyParams.

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
  // The first texel this dispatch or draw writes; a draw's image is `width`
  // texels wide (Note [Raster stores]).
  int first;
  int width;
} p;

// Texel i (0 <= i < n4) of the iteration: its bits, and its row and texel
// column.
uvec4 copy_texel(int i, out int row, out int c) {
  row = row_of(p.rows, i);
  c = i - row * p.cols4;
  return p.fill != 0 ? p.pattern : imageLoad(Src, p.src_texel + row * p.src_row4 + c);
}
