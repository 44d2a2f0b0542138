#include "dispatch/run_op.h"

#include "autograd/record.h"
#include "registry/registry.h"
#include "runtime/runtime.h"
#include "util/error.h"

namespace tsr {

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
  if (autograd::needs_recording(c)) {
    autograd::record_and_run(c);
    return;
  }
  c.op->fn(c);
}

}  // namespace tsr
