// texel_copy.comp - texel_copy.glsl's texels stored through the output's
// device address (store_texel, common.glsl: half the stores of an
// imageStore on lavapipe).
#version 460
#include "common.glsl"
#include "texel_copy.glsl"

void main() {
  // One texel per invocation, no loop (as texel_arith.comp), from `first` on.
  const uint64_t e = uint64_t(p.first) + global_index();
  if (e < uint64_t(p.n4)) {
    int row, c;
    const uvec4 bits = copy_texel(int(e), row, c);
    store_texel(p.out_address + uint64_t(row) * p.out_row + uint64_t(c) * 16, bits);
  }
}
