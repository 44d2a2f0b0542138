#include "dispatch/kernel_call.h"

#include <vector>

#include "dispatch/values.h"
#include "runtime/runtime.h"
#include "runtime/stream.h"
#include "tensor/dtype.h"
#include "tensor/geometry.h"
#include "tensor/grad_mode.h"
#include "util/error.h"

namespace tsr {

const BoundKernel* try_find_kernel(OpId op, DeviceRecord* device, const tsr_dtype* dtypes,
                                   int32_t n, int32_t code) {
  // A fused kernel is skipped on the meta device and while autograd needs the
  // decomposition (tensor/grad_mode.h).
  if (device->is_meta || autograd::force_decomposition()) return nullptr;
  const KernelList* list = device->runtime->kernels(static_cast<uint32_t>(op), device->device.type);
  if (list)
    for (const BoundKernel& k : list->kernels)
      if (k.accepts(dtypes, n, code)) return &k;
  return nullptr;
}

const BoundKernel& find_kernel(const OpDef& op, OpId kernel_op, DeviceRecord* device,
                               const tsr_dtype* dtypes, int32_t n, int32_t code) {
  const KernelList* list =
      device->runtime->kernels(static_cast<uint32_t>(kernel_op), device->device.type);
  if (list)
    for (const BoundKernel& k : list->kernels)
      if (k.accepts(dtypes, n, code)) return k;
  const OpDef& kop = kernel_op == op.id ? op : Registry::get().op(kernel_op);
  std::string via = kop.id == op.id ? std::string() : fmt::format(" (through '{}')", kop.name);
  if (code >= 0) via += fmt::format(" with function code {}", code);
  std::string plugin =
      device->plugin ? fmt::format("plugin {} {}", device->plugin->name, device->plugin->version)
                     : std::string("core");
  fail(TSR_UNIMPLEMENTED, "op '{}'{} has no kernel for device {} and dtype {} ({}); {}", op.name,
       via, device->label, n > 0 ? dtype_name(dtypes[0]) : "n/a", plugin,
       list ? "the device has kernels for other dtypes of this op: convert the inputs with to()"
            : "the plugin does not implement this op: run it on another device (to(\"cpu\"))");
}

namespace {
struct ScratchContext {
  DeviceRecord* device;
  std::vector<Block*> blocks;
};

tsr_status* scratch_alloc(void* ctx, size_t nbytes, tsr_plugin_buffer* out) noexcept {
  auto* sc = static_cast<ScratchContext*>(ctx);
  if (out == nullptr)
    return tsr_status_create(TSR_INVALID_ARGUMENT, "scratch: argument 'out_buffer' is NULL");
  try {
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
}  // namespace

namespace {

bool desc_contiguous(const tsr_tensor_desc& d) {
  int64_t expected = 1;
  for (int32_t i = d.ndim - 1; i >= 0; --i) {
    if (d.sizes[i] == 0) return true;  // empty: any strides
    if (d.sizes[i] != 1 && d.strides[i] != expected) return false;
    expected *= d.sizes[i];
  }
  return true;
}

// TSR_KERNEL_CONTIGUOUS_INPUTS: copies every non-contiguous tensor argument
// into a row-major scratch block (through the device's copy_ kernel) and
// points the argument at it. `args` is rewritten into `local`/`descs`.
const tsr_value* contiguous_args(const OpDef& op, DeviceRecord* device, const tsr_value* args,
                                 int32_t nargs, ScratchContext& scratch,
                                 std::vector<tsr_value>& local,
                                 std::vector<tsr_tensor_desc>& descs) {
  local.assign(args, args + nargs);
  descs.reserve(static_cast<size_t>(nargs));
  for (int32_t i = 0; i < nargs; ++i) {
    if (local[i].tag != TSR_VALUE_TENSOR || local[i].u.desc == nullptr) continue;
    const tsr_tensor_desc& src = *local[i].u.desc;
    if (desc_contiguous(src)) continue;
    tsr_tensor_desc dst = src;
    contiguous_strides(src.ndim, src.sizes, dst.strides);
    int64_t numel = 1;
    for (int32_t d = 0; d < src.ndim; ++d) numel *= src.sizes[d];
    Block* b = device->allocator->allocate(
        static_cast<size_t>(numel) * dtype_size(static_cast<tsr_dtype>(src.dtype)),
        current_stream(device));
    scratch.blocks.push_back(b);
    dst.buffer = b->buffer.handle;
    dst.byte_offset = 0;
    dst.data = b->buffer.data;
    tsr_dtype dts[2] = {static_cast<tsr_dtype>(dst.dtype), static_cast<tsr_dtype>(src.dtype)};
    const BoundKernel& copy = find_kernel(op, OpId::copy_, device, dts, 2);
    if (copy.flags & TSR_KERNEL_CONTIGUOUS_INPUTS)
      fail(TSR_FAILED_PRECONDITION,
           "op '{}' on {}: plugin {}'s copy_ kernel sets TSR_KERNEL_CONTIGUOUS_INPUTS, so the "
           "host cannot make other kernels' inputs contiguous; copy_ must accept any strides",
           op.name, device->label, copy.plugin->name);
    tsr_value cargs[3];
    cargs[0] = tsr_value{};
    cargs[0].tag = TSR_VALUE_TENSOR;
    cargs[0].u.desc = &dst;
    cargs[1] = tsr_value{};
    cargs[1].tag = TSR_VALUE_TENSOR;
    cargs[1].u.desc = &src;
    cargs[2] = v_bool(false);
    tsr_tensor_desc out = dst;
    invoke_kernel(op, copy, device, cargs, 3, &out, 1);
    descs.push_back(dst);
    local[i].u.desc = &descs.back();  // reserve() keeps addresses stable
  }
  return local.data();
}

}  // namespace

namespace {

// Builds the call frame on the device's current stream (inputs made contiguous
// when the kernel asks), runs `entry(context, call)`, frees scratch, and turns
// a failure into an Error naming op, device and plugin. `phase` says which
// entry ran, for the message ("" for fn).
template <typename Entry>
void run_entry(const OpDef& op, const BoundKernel& kernel, DeviceRecord* device,
               const tsr_value* args, int32_t nargs, tsr_tensor_desc* outs, int32_t nouts,
               const char* phase, Entry&& entry) {
  Stream* stream = current_stream(device);
  stream->check_sticky();
  ScratchContext scratch{device, {}};
  std::vector<tsr_value> local_args;
  std::vector<tsr_tensor_desc> local_descs;
  if (kernel.flags & TSR_KERNEL_CONTIGUOUS_INPUTS) {
    try {
      args = contiguous_args(op, device, args, nargs, scratch, local_args, local_descs);
    } catch (...) {
      for (Block* b : scratch.blocks) device->allocator->free(b);
      throw;
    }
  }
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
  call.scratch = scratch_alloc;
  call.scratch_context = &scratch;
  tsr_status* st;
  try {
    st = entry(kernel.plugin->context, &call);
  } catch (...) {
    st = tsr_status_create(TSR_INTERNAL,
                           "the kernel threw a C++ exception (kernels must return "
                           "statuses)");
  }
  for (Block* b : scratch.blocks) device->allocator->free(b);
  if (st) {
    tsr_status_code code = tsr_status_code_of(st);
    std::string msg = fmt::format("op '{}' on {} (plugin {}{}): {}", op.name, device->label,
                                  kernel.plugin->name, phase, tsr_status_message(st));
    tsr_status_free(st);
    throw Error(code, msg);
  }
}

}  // namespace

void invoke_kernel(const OpDef& op, const BoundKernel& kernel, DeviceRecord* device,
                   const tsr_value* args, int32_t nargs, tsr_tensor_desc* outs, int32_t nouts) {
  run_entry(op, kernel, device, args, nargs, outs, nouts, "",
            [&](tsr_plugin_context* context, const tsr_kernel_call* call) {
              return kernel.fn(context, call);
            });
}

void invoke_kernel_sizes(const OpDef& op, const BoundKernel& kernel, DeviceRecord* device,
                         const tsr_value* args, int32_t nargs, tsr_tensor_desc* outs, int32_t nouts,
                         int32_t* out_ndims, int64_t* out_sizes) {
  run_entry(op, kernel, device, args, nargs, outs, nouts, ", size phase",
            [&](tsr_plugin_context* context, const tsr_kernel_call* call) {
              return kernel.size_fn(context, call, out_ndims, out_sizes);
            });
}

}  // namespace tsr
