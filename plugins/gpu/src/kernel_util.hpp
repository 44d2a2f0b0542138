// kernel_util.hpp - what the kernel families share on the host side: reading
// a kernel call's arguments, where the call runs (Exec), scratch memory,
// small synchronous read-backs, and table entries.
//
// Kernel functions are written as
//   tsr_status* my_kernel(tsr_plugin_context* ctx, const tsr_kernel_call* call) noexcept {
//     return run_kernel(ctx, call, [&](const Exec& exec) { ... });
//   }
// run_kernel validates the call, finds the device and stream, and turns any
// thrown status (sdk::throw_status) into the returned tsr_status.
#pragma once

#include <cstddef>
#include <cstdint>

#include "context.hpp"
#include "kernels.hpp"
#include "launch.hpp"
#include "tessera/sdk/kernel_entry.hpp"
#include "tessera/sdk/status.hpp"

namespace tessera::gpu {

inline const tsr_value& arg_at(const tsr_kernel_call& call, int i, int32_t tag, const char* what) {
  if (i >= call.nargs || call.args[i].tag != tag)
    sdk::throw_status(TSR_INVALID_ARGUMENT, "%s plugin %s: argument %d is not %s", flavour_name(),
                      call.op_name, i, what);
  return call.args[i];
}
inline const tsr_tensor_desc& tensor_arg(const tsr_kernel_call& call, int i) {
  const tsr_value& v = arg_at(call, i, TSR_VALUE_TENSOR, "a tensor");
  if (v.u.desc == nullptr)
    sdk::throw_status(TSR_INVALID_ARGUMENT, "%s plugin %s: argument %d is NULL", flavour_name(),
                      call.op_name, i);
  return *v.u.desc;
}
// A `Tensor?` argument: null when None.
inline const tsr_tensor_desc* optional_tensor_arg(const tsr_kernel_call& call, int i) {
  if (i >= call.nargs || call.args[i].tag == TSR_VALUE_NONE) return nullptr;
  return &tensor_arg(call, i);
}
inline tsr_scalar scalar_arg(const tsr_kernel_call& call, int i) {
  return arg_at(call, i, TSR_VALUE_SCALAR, "a Scalar").u.scalar;
}
inline int64_t int_arg(const tsr_kernel_call& call, int i) {
  return arg_at(call, i, TSR_VALUE_INT, "an int").u.i;
}
inline double float_arg(const tsr_kernel_call& call, int i) {
  return arg_at(call, i, TSR_VALUE_FLOAT, "a float").u.f;
}
inline bool bool_arg(const tsr_kernel_call& call, int i) {
  return arg_at(call, i, TSR_VALUE_BOOL, "a bool").u.b != 0;
}
inline double scalar_double(const tsr_scalar& s) {
  return s.kind == TSR_FLOAT64 || s.kind == TSR_COMPLEX128 ? s.v.f : static_cast<double>(s.v.i);
}
inline int64_t scalar_int(const tsr_scalar& s) {
  return s.kind == TSR_FLOAT64 || s.kind == TSR_COMPLEX128 ? static_cast<int64_t>(s.v.f) : s.v.i;
}
inline tsr_tensor_desc& out_arg(const tsr_kernel_call& call, int i = 0) {
  if (i >= call.nouts || call.outs == nullptr)
    sdk::throw_status(TSR_INVALID_ARGUMENT, "%s plugin %s: output %d is missing", flavour_name(),
                      call.op_name, i);
  return call.outs[i];
}

inline int64_t numel_of(const tsr_tensor_desc& d) {
  int64_t n = 1;
  for (int k = 0; k < d.ndim; ++k) n *= d.sizes[k];
  return n;
}
// The address of element (0, ..., 0): the descriptor's `data` (GPU memory is
// addressable by kernels; the core fills it as base + byte_offset).
inline char* data_of(const tsr_tensor_desc& d) { return static_cast<char*>(d.data); }

// Runs `body(exec)` for a kernel call on its device and stream; every thrown
// status becomes the returned tsr_status. Never throws.
template <class F>
tsr_status* run_kernel(tsr_plugin_context* context, const tsr_kernel_call* call,
                       F&& body) noexcept {
  const tsr_host_api* host = context != nullptr ? context->host : nullptr;
  if (host == nullptr) return nullptr;  // no way to report; the host never does this
  return sdk::guard(host, [&] {
    if (call == nullptr)
      sdk::throw_status(TSR_INVALID_ARGUMENT, "%s plugin: the kernel call is NULL", flavour_name());
    Device& d = device_at(*context, call->device, call->op_name);
    Exec exec;
    exec.device = d.index;
    exec.info = &d.info;
    exec.stream = stream_or_default(d, call->stream).native;
    body(exec);
  });
}

// Scratch device memory for the duration of the call (the core frees it in
// stream order after the kernel returns). Throws on failure.
inline void* scratch(const tsr_kernel_call& call, size_t nbytes) {
  if (nbytes == 0) return nullptr;
  if (call.scratch == nullptr)
    sdk::throw_status(TSR_INTERNAL, "%s plugin %s: the host gave no scratch allocator",
                      flavour_name(), call.op_name);
  tsr_plugin_buffer b{};
  if (tsr_status* status = call.scratch(call.scratch_context, nbytes, &b)) {
    // The host owns the status; report a fresh one with our own message.
    (void)status;
    sdk::throw_status(TSR_RESOURCE_EXHAUSTED, "%s plugin %s: no scratch memory for %zu bytes",
                      flavour_name(), call.op_name, nbytes);
  }
  return b.data != nullptr ? b.data : b.handle;
}

// Copies `nbytes` from device memory to the host and waits: for the few
// places a kernel must look at a result (error flags, two-phase sizes).
inline void read_back(const Exec& exec, void* host_dst, const void* device_src, size_t nbytes) {
  copy_async(exec.device, host_dst, device_src, nbytes, CopyKind::kDeviceToHost, exec.stream);
  stream_synchronize(exec.device, exec.stream);
}

using sdk::make_entry;

}  // namespace tessera::gpu
