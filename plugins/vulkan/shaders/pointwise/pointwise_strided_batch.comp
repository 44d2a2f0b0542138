// pointwise_strided_batch.comp - a batch of small pointwise ops (fill, copy,
// add/sub/mul/div of any dtypes and strides) in one dispatch of one
// workgroup: Note [Small-op batches] (kernels.hpp). The ops run in order,
// each over the whole workgroup with pointwise_strided.glsl's body, and a
// workgroup barrier after each makes its writes visible to the next, so the
// batch keeps the stream's program order.
//
// The host writes the batch into the stream's parameter ring: a count, then
// `count` Params blocks (pointwise/copy_fill_arith.cpp's struct Params), bound as
// one uniform block; the op and the dtypes are read from each block.
#version 460
// Writes of one op are read by other invocations in the next: the buffer
// references are coherent (common.glsl).
#define BUFFER_COHERENCE coherent
#include "common.glsl"
#define ELEMENTWISE_PARAMS
#include "pointwise_strided.glsl"
#undef ELEMENTWISE_PARAMS

// The most ops a batch holds (the host sizes it by maxUniformBufferRange).
layout(constant_id = 1) const int MAX_OPS = 32;
layout(set = 0, binding = 0, std430) uniform BatchBlock {
  int count;
  int pad_;
  Params ops[MAX_OPS];
} batch;

int current = 0;  // the op being run: the same in every invocation
#define p batch.ops[current]
#define ELEM_OP p.op
#define ELEM_DTYPES -1
#include "pointwise_strided.glsl"

void main() {
  for (int k = 0; k < batch.count; ++k) {
    if (k > 0) {
      memoryBarrierBuffer();
      barrier();
    }
    current = k;
    pointwise_strided_run(uint64_t(gl_LocalInvocationID.x), WORKGROUP);
  }
}
