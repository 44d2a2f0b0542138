// See Note [Two-phase calls] in two_phase.h.
#include "ops/indexing/two_phase.h"

#include <vector>

#include "dispatch/kernel_call.h"
#include "ops/op_util.h"
#include "runtime/caching_allocator.h"
#include "runtime/runtime.h"
#include "runtime/stream.h"
#include "util/error.h"

namespace tsr {

namespace {

// Scratch memory for the size_fn, freed when the phase ends (the same service
// invoke_kernel gives fn).
struct SizeScratch {
  DeviceRecord* device;
  std::vector<Block*> blocks;
  ~SizeScratch() {
    for (Block* b : blocks) device->allocator->free(b);
  }
};

tsr_status* size_scratch_alloc(void* ctx, size_t nbytes, tsr_plugin_buffer* out) noexcept {
  auto* sc = static_cast<SizeScratch*>(ctx);
  if (out == nullptr)
    return tsr_status_create(TSR_INVALID_ARGUMENT, "scratch: argument 'out_buffer' is NULL");
  try {
    sc->blocks.reserve(sc->blocks.size() + 1);
    Block* b = sc->device->allocator->allocate(nbytes, current_stream(sc->device));
    sc->blocks.push_back(b);
    *out = b->buffer;
    return nullptr;
  } catch (const Error& e) {
    return tsr_status_create(e.code(), e.what());
  } catch (...) {
    return tsr_status_create(TSR_RESOURCE_EXHAUSTED, "scratch: out of host memory");
  }
}

// Phase 1: the output shapes.
void query_sizes(const OpDef& op, const BoundKernel& kernel, DeviceRecord* device,
                 const tsr_value* args, int32_t nargs, tsr_tensor_desc* outs, int32_t nouts,
                 int32_t* ndims, int64_t* sizes) {
  Stream* stream = current_stream(device);
  stream->check_sticky();
  SizeScratch scratch{device, {}};
  tsr_kernel_call call;
  call.struct_size = sizeof call;
  call.op_name = op.name.c_str();
  call.device = device->plugin_index;
  call.nargs = nargs;
  call.nouts = nouts;
  call.reserved_ = 0;
  call.args = args;
  call.outs = outs;
  call.stream = stream->plugin_stream;
  call.kernel_data = kernel.kernel_data;
  call.scratch = size_scratch_alloc;
  call.scratch_context = &scratch;
  tsr_status* st;
  try {
    st = kernel.size_fn(kernel.plugin->context, &call, ndims, sizes);
  } catch (...) {
    st = tsr_status_create(TSR_INTERNAL,
                           "the kernel's size_fn threw a C++ exception (size functions must "
                           "return statuses)");
  }
  if (st) {
    tsr_status_code code = tsr_status_code_of(st);
    std::string msg = fmt::format("op '{}' on {} (plugin {}, size phase): {}", op.name,
                                  device->label, kernel.plugin->name, tsr_status_message(st));
    tsr_status_free(st);
    throw Error(code, msg);
  }
}

}  // namespace

void run_two_phase(const OpDef& op, OpId kernel_op, DeviceRecord* device, const tsr_dtype* dtypes,
                   int32_t n_dtypes, const tsr_value* args, int32_t nargs,
                   const tsr_dtype* out_dtypes, int32_t nouts, TensorRef* results) {
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
  query_sizes(op, kernel, device, args, nargs, outs, nouts, ndims, sizes);

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
    check_sizes(ndims[i], s, dtype_size(out_dtypes[i]), "size_fn result");
    results[i] = new_tensor(device->runtime, device, out_dtypes[i], ndims[i], s);
    outs[i] = results[i]->desc();
  }
  invoke_kernel(op, kernel, device, args, nargs, outs, nouts);
}

}  // namespace tsr
