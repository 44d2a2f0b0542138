// Declarations of the registry's op implementations (one OpFn each), generated
// from the op definition files (defs/*.def). They are referenced only by the op
// table (op_table.cpp); ops call each other through the internal op API
// (dispatch/op_api.h).
#pragma once

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

}  // namespace tsr::ops
