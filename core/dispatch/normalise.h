// Normalising a call's arguments against its op's schema: an application's
// boxed values (tsr_op_call) are type-checked, their handles decoded and
// missing arguments given their defaults, so that op implementations read a
// frame in schema order (Note [Normalised frame], dispatch/op_call.h).
#pragma once

#include <cstddef>

#include "dispatch/op_call.h"

namespace tsr {

// Normalises `nargs` boxed application arguments into `call` (type checks,
// handle decoding, defaults). Throws INVALID_ARGUMENT naming the argument.
void normalise_args(OpCall& call, const tsr_value* args, size_t nargs);
// Fills defaults of arguments [nargs, schema size) of an internally built frame.
void fill_defaults(OpCall& call);

}  // namespace tsr
