// pointwise_strided.comp - the Vulkan plugin's generic strided pointwise kernel:
// one op per dispatch (pointwise_strided.glsl has the body and says what it
// does; pointwise_strided_batch.comp runs batches of small ops with the same body).
//
// The parameter block (Params) is written by the host into the stream's
// parameter buffer just before the dispatch and bound as a uniform block.
#version 460
#include "common.glsl"
#define ELEMENTWISE_PARAMS
#include "pointwise_strided.glsl"
#undef ELEMENTWISE_PARAMS

layout(set = 0, binding = 0, std430) uniform ParamsBlock { Params params; } pc;

// The op is a specialization constant (Kernels::Spec; the host sets it from
// the value it writes into Params), and so are the operand dtypes when the
// host fixes them (SPEC_DTYPES >= 0: all float32, the common case), so a
// variant keeps only its own path: lavapipe runs both sides of a branch on
// a run-time value under a lane mask (a 40M-element strided float32 add took
// ~10 s generic, ~2 s specialised). Other dtype mixes share one variant per
// op that reads the dtypes from Params, which keeps the number of pipelines
// (and of shader compilations in a fresh process) small.
layout(constant_id = 1) const int OP = 0;
layout(constant_id = 2) const int SPEC_DTYPES = -1;  // dtypes of t[0..2], 8 bits each, or -1

#define p pc.params
#define ELEM_OP OP
#define ELEM_DTYPES SPEC_DTYPES
#include "pointwise_strided.glsl"

void main() { pointwise_strided_run(global_index(), invocations()); }
