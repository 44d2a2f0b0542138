// attention.hpp - what the two bodies of scaled_dot_product_attention share
// (attention.cpp: argument checks, the baseline body, the task split;
// attention_avx2.cpp: the AVX2+FMA body).
//
// A task is one (batch, query head, block of kSdpaQueryBlock query rows);
// tasks are numbered batch-major, then head, then query block.
#ifndef TESSERA_PLUGINS_CPU_NN_ATTENTION_HPP_
#define TESSERA_PLUGINS_CPU_NN_ATTENTION_HPP_

#include <cstdint>

namespace tessera::cpu {

inline constexpr int64_t kSdpaQueryBlock = 64;

// Validated arguments: q (B, Hq, L, E), k (B, Hkv, S, E), v (B, Hkv, S, Ev)
// and out (B, Hq, L, Ev) contiguous float32; mask null or (B, Hq, L, S) with
// any strides.
struct sdpa_params {
  const float* q = nullptr;
  const float* k = nullptr;
  const float* v = nullptr;
  float* out = nullptr;
  float* lse = nullptr;        // (B, Hq, L) logsumexp of each row's scores; null: not wanted
  const char* mask = nullptr;  // bool or float32 elements; null: none
  bool mask_is_bool = false;
  int64_t mask_strides[4] = {};
  int64_t batch = 0, hq = 0, hkv = 0, l = 0, s = 0, e = 0, ev = 0;
  bool causal = false;
  float scale = 1.0f;
};

inline int64_t sdpa_task_count(const sdpa_params& p) noexcept {
  return p.batch * p.hq * ((p.l + kSdpaQueryBlock - 1) / kSdpaQueryBlock);
}

// Runs tasks [begin, end) with AVX2+FMA: the caller has checked use_avx2()
// (isa.hpp). Throws std::bad_alloc when its scratch cannot be allocated; writes
// nothing else but out (and lse when set). Defined only where TESSERA_CPU_HAVE_AVX2.
void sdpa_tasks_avx2(const sdpa_params& p, int64_t begin, int64_t end);

}  // namespace tessera::cpu

#endif  // TESSERA_PLUGINS_CPU_NN_ATTENTION_HPP_
