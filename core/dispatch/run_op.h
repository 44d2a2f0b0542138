// run_op: the one place every op call passes through (application and
// internal calls alike): the observer, the inference-tensor check, autograd
// recording, then the op's implementation.
#pragma once

#include "dispatch/op_call.h"

namespace tsr {

// Runs the op of a normalised frame (the one place every call passes through).
void run_op(OpCall& call);

}  // namespace tsr
