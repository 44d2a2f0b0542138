// isa.hpp - whether the CPU plugin's AVX2+FMA loops (avx2_lines.hpp) may run.
//
// Decided at init: on when the processor reports both AVX2 and FMA. The
// plugin option "isa" overrides it per load: "baseline" turns the AVX2 bodies
// off (to compare the two paths, or to rule them out when chasing a result),
// "avx2" turns them on and is refused on a processor without them, "auto"
// restores the detected choice. Non-x86 builds always run the baseline bodies.
#ifndef TESSERA_PLUGINS_CPU_ISA_HPP_
#define TESSERA_PLUGINS_CPU_ISA_HPP_

#include "context.hpp"

// 1 when this build has the avx2:: bodies (x86-64), else 0.
#if defined(__x86_64__)
#define TESSERA_CPU_HAVE_AVX2 1
#else
#define TESSERA_CPU_HAVE_AVX2 0
#endif

namespace tessera::cpu {

// True when this processor has AVX2 and FMA (false on non-x86 builds).
inline bool cpu_has_avx2_fma() noexcept {
#if TESSERA_CPU_HAVE_AVX2
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
#else
  return false;
#endif
}

// True when kernels may call the avx2:: bodies for this plugin load.
inline bool use_avx2(const tsr_plugin_context& context) noexcept {
  return context.avx2.load(std::memory_order_relaxed);
}

}  // namespace tessera::cpu

#endif  // TESSERA_PLUGINS_CPU_ISA_HPP_
