// texel_arith.comp - texel_arith.glsl's op, each texel stored through the
// output's device address (store_texel, common.glsl: half the stores of an
// imageStore on lavapipe).
#version 460
#include "common.glsl"
#include "texel_arith.glsl"

void main() {
  // One texel per invocation, no loop: the host dispatches n4 - first invocations
  // (a grid of up to 65535 x 65535 workgroups), and on lavapipe a loop costs
  // more than it saves (a grid-stride loop over 256 workgroups ran the 16M
  // add at ~0.6x the speed).
  const uint64_t e = uint64_t(p.first) + global_index();
  if (e < uint64_t(p.n4)) {
    uvec4 x, y;
    int row, c;
    arith_inputs(int(e), x, y, row, c);
    const vec4 r = arith(uintBitsToFloat(x), uintBitsToFloat(y));
    store_texel(p.out_address + uint64_t(row) * p.out_row + uint64_t(c) * 16, floatBitsToUint(r));
  }
}
