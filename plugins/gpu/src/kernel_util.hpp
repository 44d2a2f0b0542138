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
#include "tessera/sdk/sdk.hpp"

namespace tessera::gpu {

// Reading a kernel call's arguments: the SDK's readers (tessera/sdk/
// kernel_args.hpp; GPU memory is addressable, so tensors carry `data`).
using sdk::bool_arg;
using sdk::float_arg;
using sdk::int_arg;
using sdk::int_list_arg;
using sdk::optional_scalar_arg;
using sdk::optional_tensor_arg;
using sdk::out_arg;
using sdk::scalar_arg;
using sdk::scalar_double;
using sdk::scalar_int;
using sdk::tensor_arg;

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
// stream order after the kernel returns); NULL for 0 bytes. Throws on failure.
inline void* scratch(const tsr_kernel_call& call, size_t nbytes) {
  if (nbytes == 0) return nullptr;
  const tsr_plugin_buffer b = sdk::scratch_buffer(call, nbytes, "temporaries");
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
