// texel_arith.frag - texel_arith.glsl's op as the color of the output's
// texel: the draw covers an image of `width` texels per row over the output
// from texel `first` on (Note [Raster stores], raster.hpp).
// Subnormals exactly as texel_arith.comp (raster.glsl).
#version 460
#define TESSERA_RASTER 1
#include "common.glsl"
#include "texel_arith.glsl"
#include "raster.glsl"

layout(location = 0) out uvec4 result;

// The op in double on exact operands, rounded as the float op rounds
// (add/sub round alpha * b first).
uint exact_arith(uint x, uint y) {
  const double a = exact_double(x), b = exact_double(y);
  if (OP == OP_MUL) return float32_bits(a * b);
  if (OP == OP_DIV) return float32_bits(a / b);
  const double t = exact_double(float32_bits(exact_double(floatBitsToUint(p.alpha)) * b));
  return float32_bits(OP == OP_ADD ? a + t : a - t);
}

void main() {
  const ivec2 q = ivec2(gl_FragCoord.xy);
  uvec4 x, y;
  int row, c;
  arith_inputs(p.first + q.y * p.width + q.x, x, y, row, c);
  uvec4 r = floatBitsToUint(arith(uintBitsToFloat(x), uintBitsToFloat(y)));
  for (int k = 0; k < 4; ++k) {
    if ((OP == OP_ADD || OP == OP_SUB) && ALPHA_ONE != 0) {
      const float a = times_2_100(x[k]), b = times_2_100(y[k]);
      precise const float s = OP == OP_ADD ? a + b : a - b;
      const uint exact = times_2_minus_100_bits(s);
      if (below_2_100(x[k]) && below_2_100(y[k])) r[k] = exact;
    } else {
      // a subnormal alpha reads as zero too
      const uint exact = exact_arith(x[k], y[k]);
      if (below_2_100(x[k]) || below_2_100(y[k]) || below_2_100(r[k]) ||
          ((OP == OP_ADD || OP == OP_SUB) && below_2_100(floatBitsToUint(p.alpha))))
        r[k] = exact;
    }
  }
  result = r;
}
