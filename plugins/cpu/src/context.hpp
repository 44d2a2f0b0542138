// context.hpp - the CPU plugin's per-load state (tsr_plugin_context).
//
// One context is created by init and destroyed by shutdown; it outlives every
// stream, event, buffer and kernel call of the plugin (Note [Plugin lifetime] in
// plugin.h). Everything in it is either immutable after init or synchronised
// itself (the thread count is atomic, the matmul cache has its own mutex), so
// the host may call entries from any thread.
#ifndef TESSERA_PLUGINS_CPU_CONTEXT_HPP_
#define TESSERA_PLUGINS_CPU_CONTEXT_HPP_

#include <atomic>
#include <memory>
#include <string>

#include "device_info.hpp"
#include "linalg/onednn_matmul.hpp"
#include "tessera/plugin.h"

// Defined in the global namespace: plugin.h declares it as an opaque C struct.
struct tsr_plugin_context {
  // Borrowed from the host; valid until shutdown returns.
  const tsr_host_api* host = nullptr;
  // Facts about cpu:0, gathered once at init.
  tessera::cpu::device_info device;
  // Threads for the plugin's parallel loops and oneDNN: the "threads" option,
  // or OpenMP's default when the option was never set. Always >= 1.
  std::atomic<int> threads{1};
  // The widest loop bodies kernels may run, an isa_level (isa.hpp): detected
  // at init, overridden by the "isa" option. Never above detected_isa().
  std::atomic<int> isa{0};
  // Owned. float32 matmul through oneDNN, with its primitive cache.
  std::unique_ptr<tessera::cpu::onednn_matmul> matmul;
  // TEST ONLY: the kernel (op name as in tsr_kernel_call.op_name, e.g.
  // "add.Tensor") whose first floating result element is made wrong, from
  // $TESSERA_CPU_TEST_WRONG_KERNEL at init; empty (always, outside tests)
  // = none. It lets the conformance suite prove it catches a wrong kernel
  // (docs/conformance.md). Read-only after init.
  std::string wrong_kernel;
  // TEST ONLY: the value was "<op>:nan": that element becomes NaN instead.
  bool wrong_nan = false;
};

namespace tessera::cpu {

// The plugin name used in log lines and messages.
inline constexpr const char* kPluginName = "cpu";

}  // namespace tessera::cpu

#endif  // TESSERA_PLUGINS_CPU_CONTEXT_HPP_
