// elementwise.hpp - running an elementwise loop over N strided operands.
//
// The operands' descriptors are simplified into one sdk::strided_layout (size-1
// dims dropped, mergeable dims merged); `run(ptrs, count)` then processes runs
// along the innermost dim (its per-operand byte strides are
// layout.inner_stride(k)). A contiguous tensor, or a broadcast scalar next to
// one, is a single run, so run() can pick a vectorised loop by looking at the
// inner strides. Large work is split between threads by element range
// (parallel.hpp); run() must not throw.
#ifndef TESSERA_PLUGINS_CPU_ELEMENTWISE_HPP_
#define TESSERA_PLUGINS_CPU_ELEMENTWISE_HPP_

#include <cstdint>

#include "parallel.hpp"
#include "tessera/sdk/strided.hpp"

namespace tessera::cpu {

// The address of element (0, ..., 0) of `desc`, as the char* the walkers use.
inline char* base_address(const tsr_tensor_desc& desc) noexcept {
  return static_cast<char*>(desc.data);
}

template <size_t N, class Run>
void for_each_element_run(const tsr_plugin_context& context, const sdk::strided_layout<N>& layout,
                          char* const (&base)[N], Run&& run) {
  const int64_t n = layout.numel();
  if (n == 0) return;
  if (n < kParallelMinElements) {
    sdk::for_each_run(layout, base, 0, n, run);
    return;
  }
  parallel_ranges(thread_count(context), n, 1, [&](int64_t begin, int64_t end) {
    sdk::for_each_run(layout, base, begin, end, run);
  });
}

}  // namespace tessera::cpu

#endif  // TESSERA_PLUGINS_CPU_ELEMENTWISE_HPP_
