// conv_pack.comp - the two matrices of a float32 convolution computed as a
// matmul (Note [Convolution through matmul], conv/convolution.cpp), row-major,
// rows k4 texels (K4 = 4 * k4 floats) long:
//  - MODE 0, im2col: row n * S + s (image n, output position s of S), column
//    c * taps + tap = the input element that output position meets through
//    that tap of channel c (0 in the zero padding); column K (when the
//    convolution has a bias) is 1;
//  - MODE 1, the weights: row o, column c * taps + tap = weight[o][c][tap];
//    column K is bias[o].
// Columns past those are 0, so the matmul over K4 adds nothing for them.
// One invocation per output texel (four columns): indices are found with
// RowDivision (common.glsl), not divisions, and the texel is written with
// store_texel. Spatial dims are padded in front to three, as convolution.comp.
// Layout must match conv/convolution.cpp's PackParams.
#version 460
#include "common.glsl"

layout(constant_id = 1) const int MODE = 0;

struct Params {
  int64_t texels;  // rows * k4
  int k4;          // texels per row
  int k;           // C * taps
  int has_bias;
  int pad_;
  RowDivision per_row;      // texel -> row (by k4)
  RowDivision per_image;    // row -> n (by S)
  RowDivision per_plane;    // position -> z (by OH * OW)
  RowDivision per_line;     // rest -> y (by OW)
  RowDivision per_channel;  // column -> c (by taps)
  RowDivision per_kplane;   // tap -> kz (by KH * KW)
  RowDivision per_kline;    // rest -> ky (by KW)
  int s, out_plane, out_w, taps, kplane, kw;
  int in_size[3];
  int stride[3];
  int padding[3];
  int dilation[3];
  uint64_t dst;  // the matrix's address
  uint64_t bias;
  int64_t bias_stride;
  Operand src;  // input (n, c, z, y, x) or weight (o, c, kz, ky, kx) strides
};
layout(set = 0, binding = 0, std430) uniform ParamsBlock { Params params; } pc;
#define p pc.params

layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer F32 { float v; };

void main() {
  const uint64_t e = global_index();
  if (e >= uint64_t(p.texels)) return;
  const int t = int(e);
  const int row = row_of(p.per_row, t);
  const int col0 = (t - row * p.k4) * 4;
  int n = 0, z0 = 0, y0 = 0, x0 = 0;
  if (MODE == 0) {
    n = row_of(p.per_image, row);
    const int s = row - n * p.s;
    const int z = row_of(p.per_plane, s);
    const int rest = s - z * p.out_plane;
    const int y = row_of(p.per_line, rest);
    const int x = rest - y * p.out_w;
    z0 = z * p.stride[0] - p.padding[0];
    y0 = y * p.stride[1] - p.padding[1];
    x0 = x * p.stride[2] - p.padding[2];
  }
  uvec4 bits;
  for (int j = 0; j < 4; ++j) {
    const int col = col0 + j;
    float v = 0.0;
    if (col < p.k) {
      const int c = row_of(p.per_channel, col);
      int tap = col - c * p.taps;
      const int kz = row_of(p.per_kplane, tap);
      tap -= kz * p.kplane;
      const int ky = row_of(p.per_kline, tap);
      const int kx = tap - ky * p.kw;
      if (MODE == 0) {
        const int z = z0 + kz * p.dilation[0], y = y0 + ky * p.dilation[1],
                  x = x0 + kx * p.dilation[2];
        if (uint(z) < uint(p.in_size[0]) && uint(y) < uint(p.in_size[1]) &&
            uint(x) < uint(p.in_size[2])) {
          const int64_t off = int64_t(n) * p.src.strides[0] + int64_t(c) * p.src.strides[1] +
                              int64_t(z) * p.src.strides[2] + int64_t(y) * p.src.strides[3] +
                              int64_t(x) * p.src.strides[4];
          v = F32(p.src.address + uint64_t(off * 4L)).v;
        }
      } else {
        const int64_t off = int64_t(row) * p.src.strides[0] + int64_t(c) * p.src.strides[1] +
                            int64_t(kz) * p.src.strides[2] + int64_t(ky) * p.src.strides[3] +
                            int64_t(kx) * p.src.strides[4];
        v = F32(p.src.address + uint64_t(off * 4L)).v;
      }
    } else if (col == p.k && p.has_bias != 0) {
      v = MODE == 0 ? 1.0 : F32(p.bias + uint64_t(int64_t(row) * p.bias_stride * 4L)).v;
    }
    bits[j] = floatBitsToUint(v);
  }
  store_texel(p.dst + (uint64_t(row) * uint64_t(p.k4) + uint64_t(col0 / 4)) * 16UL, bits);
}
