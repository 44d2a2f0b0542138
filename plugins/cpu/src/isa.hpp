// isa.hpp - which of the CPU plugin's per-ISA loop bodies may run.
//
// The plugin is built for the x86-64 baseline (SSE2) so that it loads on any
// x86-64 processor. Its hottest contiguous loops have further bodies compiled
// per function with __attribute__((target(...))): AVX2+FMA (avx2_lines.hpp)
// and AVX-512 F/BW/DQ/VL (avx512_lines.hpp). Nothing is compiled for an
// extension globally, so no such instruction runs unless a kernel chose the
// body at run time through the level below.
//
// The level is decided at init - the widest the processor reports - and the
// plugin option "isa" overrides it per load: "baseline" turns every extended
// body off (to compare the paths, or to rule them out when chasing a result),
// "avx2" caps kernels at the AVX2 bodies, "avx512" selects the AVX-512 bodies
// (each is refused on a processor without the extension), "auto" restores the
// detected level. A kernel that has no body at the chosen level runs the
// widest one below it. Non-x86 builds always run the baseline bodies.
#ifndef TESSERA_PLUGINS_CPU_ISA_HPP_
#define TESSERA_PLUGINS_CPU_ISA_HPP_

#include "context.hpp"

// 1 when this build has the avx2:: and avx512:: bodies (x86-64), else 0.
#if defined(__x86_64__)
#define TESSERA_CPU_HAVE_AVX2 1
#define TESSERA_CPU_HAVE_AVX512 1
#else
#define TESSERA_CPU_HAVE_AVX2 0
#define TESSERA_CPU_HAVE_AVX512 0
#endif

namespace tessera::cpu {

// The loop bodies a kernel may choose, narrowest first (tsr_plugin_context::isa).
enum class isa_level : int { baseline = 0, avx2 = 1, avx512 = 2 };

// True when this processor has AVX2 and FMA (false on non-x86 builds).
inline bool cpu_has_avx2_fma() noexcept {
#if TESSERA_CPU_HAVE_AVX2
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
#else
  return false;
#endif
}

// True when this processor (and the OS, which must save the ZMM state - GCC's
// check reads XCR0) has AVX-512 F, BW, DQ and VL, plus AVX2 and FMA, which the
// AVX-512 bodies also use. False on non-x86 builds.
inline bool cpu_has_avx512() noexcept {
#if TESSERA_CPU_HAVE_AVX512
  static const bool has = cpu_has_avx2_fma() && __builtin_cpu_supports("avx512f") &&
                          __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  return has;
#else
  return false;
#endif
}

// The widest level this processor runs.
inline isa_level detected_isa() noexcept {
  if (cpu_has_avx512()) return isa_level::avx512;
  if (cpu_has_avx2_fma()) return isa_level::avx2;
  return isa_level::baseline;
}

inline isa_level chosen_isa(const tsr_plugin_context& context) noexcept {
  return static_cast<isa_level>(context.isa.load(std::memory_order_relaxed));
}

// True when kernels may call the avx2:: bodies for this plugin load.
inline bool use_avx2(const tsr_plugin_context& context) noexcept {
  return chosen_isa(context) >= isa_level::avx2;
}

// True when kernels may call the avx512:: bodies for this plugin load.
inline bool use_avx512(const tsr_plugin_context& context) noexcept {
  return chosen_isa(context) >= isa_level::avx512;
}

// Whether a kernel writing `bytes` of output should store it with
// non-temporal (streaming) stores: only an output larger than the last-level
// cache, which could not stay cached for the next op anyway; streaming it
// saves the read-for-ownership of every output line (a quarter of an add's
// memory traffic, a third of softmax's). Only the AVX-512 bodies stream.
inline bool stream_output(const tsr_plugin_context& context, int64_t bytes) noexcept {
  return bytes >= context.device.streaming_store_min_bytes;
}

}  // namespace tessera::cpu

#endif  // TESSERA_PLUGINS_CPU_ISA_HPP_
