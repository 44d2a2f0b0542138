// run_op: the one place every op call passes through (application and
// internal calls alike): the observer, the inference-tensor check, autograd
// recording, then the op's implementation.
#pragma once

#include "dispatch/op_call.h"

namespace tsr {

// Runs the op of a normalised frame (the one place every call passes through).
void run_op(OpCall& call);

// Note [Recording hook]
// ~~~~~~~~~~~~~~~~~~~~~
// run_op hands a call to autograd when grad mode is on and a tensor argument
// requires grad. The autograd layer sits above dispatch, so it installs its
// two entry points here when the library loads (autograd/record.cpp), as
// c10's autograd kernels are registered into its dispatcher: dispatch never
// names autograd, and a call made before the hook is installed fails INTERNAL
// instead of silently skipping the recording.
struct RecordingHook {
  bool (*needs_recording)(const OpCall& call) noexcept = nullptr;
  void (*record_and_run)(OpCall& call) = nullptr;
};
void install_recording_hook(RecordingHook hook) noexcept;

}  // namespace tsr
