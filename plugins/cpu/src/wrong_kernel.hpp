// wrong_kernel.hpp - how the CPU plugin's kernel table wraps its kernels:
// sdk::trampoline (the SDK's noexcept entry, kernel_entry.hpp) around the
// kernel followed by the conformance suite's wrong-kernel test switch.
//
// TEST ONLY: with $TESSERA_CPU_TEST_WRONG_KERNEL set (context.hpp), the named
// kernel's first floating result element is made wrong after it ran, so the
// suite can show it catches one (docs/conformance.md). Unset - always, outside
// tests - it costs one well-predicted test of an empty string per call.
#ifndef TESSERA_PLUGINS_CPU_WRONG_KERNEL_HPP_
#define TESSERA_PLUGINS_CPU_WRONG_KERNEL_HPP_

#include "kernels.hpp"
#include "tessera/sdk/kernel_entry.hpp"

namespace tessera::cpu {

using kernel_impl = void (*)(const tsr_plugin_context&, const tsr_kernel_call*);

// Shifts the first element of the first floating result by 1e-2 relative plus
// 1e-3, or makes it NaN.
void make_wrong(const tsr_kernel_call* call, bool nan) noexcept;

// Runs K, then applies the wrong-kernel switch when it names this op.
template <kernel_impl K>
void with_wrong_kernel_switch(const tsr_plugin_context& context, const tsr_kernel_call* call) {
  K(context, call);
  if (!context.wrong_kernel.empty() && call->op_name != nullptr &&
      context.wrong_kernel == call->op_name) [[unlikely]]
    make_wrong(call, context.wrong_nan);
}

// The table's tsr_kernel_fn for CPU kernel K.
template <kernel_impl K>
inline constexpr tsr_kernel_fn cpu_kernel = sdk::trampoline<with_wrong_kernel_switch<K>>;

}  // namespace tessera::cpu

#endif  // TESSERA_PLUGINS_CPU_WRONG_KERNEL_HPP_
