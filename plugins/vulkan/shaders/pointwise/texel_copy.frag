// texel_copy.frag - texel_copy.glsl's texel as the color of the output's
// texel: the draw covers an image of `width` texels per row over the output
// from texel `first` on (Note [Raster stores], raster.hpp). Bits only, so
// the rendering threads' flush of subnormals does not touch them.
#version 460
#define TESSERA_RASTER 1
#include "common.glsl"
#include "texel_copy.glsl"

layout(location = 0) out uvec4 result;

void main() {
  const ivec2 q = ivec2(gl_FragCoord.xy);
  int row, c;
  result = copy_texel(p.first + q.y * p.width + q.x, row, c);
}
