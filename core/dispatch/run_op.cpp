#include "dispatch/run_op.h"

#include "dispatch/op_call.h"
#include "registry/registry.h"
#include "runtime/runtime.h"
#include "tensor/grad_mode.h"
#include "util/error.h"

namespace tsr {

namespace {
// Written once while the library loads, before any call (Note [Recording hook]).
RecordingHook g_recording;
}  // namespace

void install_recording_hook(RecordingHook hook) noexcept { g_recording = hook; }

void run_op(OpCall& c) {
  if (const Runtime::Observer* o = c.runtime->observer()) {
    try {
      o->fn(c.runtime->op_handle(static_cast<uint32_t>(c.op->id)), o->context);
    } catch (...) {  // an observer must not throw; never let it break the call
    }
  }
  if (c.op->mutated >= 0 && c.args[c.op->mutated].tag == TSR_VALUE_TENSOR &&
      c.tensor(c.op->mutated)->is_inference && !inference_mode())
    fail(TSR_FAILED_PRECONDITION,
         "op '{}': Inplace update to inference tensor outside InferenceMode is not allowed; "
         "make a clone to get a normal tensor first",
         c.op->name);
  if (autograd::grad_enabled()) {
    if (g_recording.needs_recording == nullptr)
      fail(TSR_INTERNAL,
           "op '{}': the autograd layer has not installed its recording hook (Note "
           "[Recording hook]); libtessera was linked without autograd/record.cpp",
           c.op->name);
    if (g_recording.needs_recording(c)) {
      g_recording.record_and_run(c);
      return;
    }
  }
  c.op->fn(c);
}

}  // namespace tsr
