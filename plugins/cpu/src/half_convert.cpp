// half_convert.cpp - float16 <-> float32 in bulk, with F16C when available.
#include "half_convert.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define TESSERA_CPU_HAVE_X86 1
#endif

namespace tessera::cpu {
namespace {

#if TESSERA_CPU_HAVE_X86
bool cpu_has_f16c() noexcept {
  static const bool has = __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c");
  return has;
}

__attribute__((target("avx,f16c"))) void half_to_float_f16c(const sdk::half* in, float* out,
                                                            int64_t n) noexcept {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
  }
  for (; i < n; ++i) out[i] = static_cast<float>(in[i]);
}

__attribute__((target("avx,f16c"))) void float_to_half_f16c(const float* in, sdk::half* out,
                                                            int64_t n) noexcept {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), h);
  }
  for (; i < n; ++i) out[i] = sdk::half(in[i]);
}
#endif

}  // namespace

void half_to_float(const sdk::half* in, float* out, int64_t n) noexcept {
#if TESSERA_CPU_HAVE_X86
  if (cpu_has_f16c()) {
    half_to_float_f16c(in, out, n);
    return;
  }
#endif
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(in[i]);
}

void float_to_half(const float* in, sdk::half* out, int64_t n) noexcept {
#if TESSERA_CPU_HAVE_X86
  if (cpu_has_f16c()) {
    float_to_half_f16c(in, out, n);
    return;
  }
#endif
  for (int64_t i = 0; i < n; ++i) out[i] = sdk::half(in[i]);
}

}  // namespace tessera::cpu
