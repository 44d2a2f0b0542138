// Declarations of the registry's op implementations (one OpFn each), generated
// from the op definition files (registry/defs/*.def), with the two shared by
// many ops: out_variant (every TSR_OUT op, ops/out_variant.h) and
// run_custom_op (every custom op). They are referenced only by the function
// table the ops layer installs (ops/op_functions.cpp); ops call each other
// through the internal op API (dispatch/op_api.h).
#pragma once

#include "dispatch/op_call.h"
#include "registry/registry.h"

namespace tsr::ops {

#define TSR_PRIMITIVE(id, fn, schema) void fn(OpCall& c);
#define TSR_ROUTED(id, fn, kernel_op, code, schema) void fn(OpCall& c);
#define TSR_COMPOSITE(id, fn, schema) void fn(OpCall& c);
#define TSR_FUSABLE(id, fn, schema) void fn(OpCall& c);
#define TSR_OUT(id, functional, schema)
#define TSR_VIEW(id, fn, schema) void fn(OpCall& c);
#include "registry/defs/all.inc"
#undef TSR_PRIMITIVE
#undef TSR_ROUTED
#undef TSR_COMPOSITE
#undef TSR_FUSABLE
#undef TSR_VIEW
#undef TSR_OUT

void out_variant(OpCall& c);

}  // namespace tsr::ops

namespace tsr {

// The OpFn of every custom op (runtime/custom_op.h): runs its shape rule and
// the first kernel that takes the call (ops/custom_op.cpp).
void run_custom_op(OpCall& c);

}  // namespace tsr
