// texel_copy.comp - copy_ between contiguous tensors of one dtype and fill_
// of a contiguous tensor, 16 bytes per invocation through storage texel
// buffers (Note [Texel fast paths], device.hpp): the source is read as
// texels, the output written through its device address (store_texel,
// common.glsl: half the stores of an imageStore on lavapipe). Bits are
// moved, never converted, so any dtype qualifies; the host runs the tail
// bytes (and every other case) through elementwise.comp.
// Layout must match kernels_elementwise.cpp's TexelCopyParams.
#version 460
#include "common.glsl"

layout(set = 0, binding = 1, rgba32ui) uniform readonly uimageBuffer Src;

layout(push_constant, std430) uniform Params {
  int64_t n4;     // 16-byte texels to write
  int src_texel;  // the source's first texel in its block's view
  int fill;       // 1: store `pattern` (the fill value repeated) instead of copying
  uint64_t out_address;  // the output's first byte (16-byte aligned)
  uvec4 pattern;
} p;

void main() {
  // One texel per invocation, no loop (as texel_arith.comp).
  const uint64_t e = global_index();
  if (e < uint64_t(p.n4)) {
    const int i = int(e);
    store_texel(p.out_address + uint64_t(i) * 16,
                p.fill != 0 ? p.pattern : imageLoad(Src, p.src_texel + i));
  }
}
