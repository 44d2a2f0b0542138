// See Note [Two-phase calls] in two_phase.h.
#include "ops/indexing/two_phase.h"

#include <string>
#include <vector>

#include "dispatch/kernel_call.h"
#include "ops/op_util.h"
#include "runtime/caching_allocator.h"
#include "runtime/runtime.h"
#include "runtime/stream.h"
#include "util/error.h"

namespace tsr {
namespace {

std::string sizes_text(int32_t ndim, const int64_t* sizes) {
  std::string text = "[";
  for (int32_t d = 0; d < ndim; ++d) text += (d ? ", " : "") + std::to_string(sizes[d]);
  return text + "]";
}

// Refuses a size report that breaks the op's shape rule (a plugin bug).
void check_rule(const OpDef& op, const BoundKernel& kernel, const TwoPhaseShapeRule& rule,
                int32_t i, int32_t ndim, const int64_t* sizes) {
  const int32_t want_ndim = i < TSR_MAX_DIMS ? rule.expected_ndim[i] : -1;
  bool ok = want_ndim < 0 || ndim == want_ndim;
  std::string want;
  for (int32_t d = 0; d < (want_ndim < 0 ? 0 : want_ndim); ++d) {
    const int64_t fixed = rule.fixed[i * TSR_MAX_DIMS + d];
    const int64_t bound = rule.max_size[i * TSR_MAX_DIMS + d];
    want += d ? ", " : "";
    if (fixed >= 0) {
      want += std::to_string(fixed);
      ok = ok && sizes[d] == fixed;
    } else if (bound >= 0) {
      want += "n <= " + std::to_string(bound);
      ok = ok && sizes[d] <= bound;
    } else {
      want += "any";
    }
  }
  if (!ok)
    fail(TSR_INTERNAL,
         "op '{}': the size function of plugin {} reported sizes {} for output {}; the op's "
         "result must be [{}] (a plugin bug: fix its size_fn)",
         op.name, kernel.plugin->name, sizes_text(ndim, sizes), i, want);
}

}  // namespace

void run_two_phase(const OpDef& op, OpId kernel_op, DeviceRecord* device, const tsr_dtype* dtypes,
                   int32_t n_dtypes, const tsr_value* args, int32_t nargs,
                   const tsr_dtype* out_dtypes, int32_t nouts, TensorRef* results,
                   const TwoPhaseShapeRule* rule) {
  if (device->is_meta)
    fail(TSR_UNIMPLEMENTED,
         "op '{}': the shape of its result depends on the values of its input, which meta "
         "tensors do not have; run it on a device with data",
         op.name);
  const BoundKernel& kernel = find_kernel(op, kernel_op, device, dtypes, n_dtypes);
  if (!(kernel.flags & TSR_KERNEL_TWO_PHASE) || kernel.size_fn == nullptr)
    fail(TSR_INTERNAL,
         "op '{}': the kernel of plugin {} for device {} is not registered with "
         "TSR_KERNEL_TWO_PHASE and a size_fn, but its output shape depends on the data "
         "(plugin.h, Note [Two-phase kernels]); the plugin must be fixed",
         op.name, kernel.plugin->name, device->label);
  if (nouts > OpCall::kMaxResults)
    fail(TSR_INTERNAL, "op '{}': {} outputs requested of a two-phase kernel; at most {}", op.name,
         nouts, OpCall::kMaxResults);

  tsr_tensor_desc outs[OpCall::kMaxResults] = {};
  for (int32_t i = 0; i < nouts; ++i) {
    outs[i].dtype = out_dtypes[i];
    outs[i].device = device->device;
  }
  int32_t ndims[OpCall::kMaxResults] = {};
  int64_t sizes[OpCall::kMaxResults * TSR_MAX_DIMS] = {};
  for (int32_t i = 0; i < nouts; ++i) ndims[i] = -1;
  invoke_kernel_sizes(op, kernel, device, args, nargs, outs, nouts, ndims, sizes);

  for (int32_t i = 0; i < nouts; ++i) {
    const int64_t* s = sizes + static_cast<size_t>(i) * TSR_MAX_DIMS;
    if (ndims[i] < 0 || ndims[i] > TSR_MAX_DIMS)
      fail(TSR_INTERNAL,
           "op '{}': the size function of plugin {} reported {} dims for output {}; 0..{} "
           "are allowed (a plugin bug)",
           op.name, kernel.plugin->name, ndims[i], i, TSR_MAX_DIMS);
    for (int32_t d = 0; d < ndims[i]; ++d)
      if (s[d] < 0)
        fail(TSR_INTERNAL,
             "op '{}': the size function of plugin {} reported size {} in dim {} of output {} "
             "(a plugin bug)",
             op.name, kernel.plugin->name, s[d], d, i);
    if (rule != nullptr) check_rule(op, kernel, *rule, i, ndims[i], s);
    check_sizes(ndims[i], s, dtype_size(out_dtypes[i]), "size_fn result");
    results[i] = new_tensor(device->runtime, device, out_dtypes[i], ndims[i], s);
    outs[i] = results[i]->desc();
  }
  invoke_kernel(op, kernel, device, args, nargs, outs, nouts);
}

}  // namespace tsr
