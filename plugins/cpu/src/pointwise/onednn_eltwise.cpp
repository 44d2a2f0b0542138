// onednn_eltwise.cpp - see onednn_eltwise.hpp (oneDNN 2.6 API).
#include "onednn_eltwise.hpp"

#include <map>
#include <mutex>
#include <optional>
#include <utility>

#include <dnnl.hpp>

#include "../parallel.hpp"
#include "tessera/opcodes.h"

namespace tessera::cpu::pointwise {
namespace {

struct algorithm {
  dnnl::algorithm alg;
  float alpha = 0.f, beta = 0.f;
};

std::optional<algorithm> algorithm_of(int code, float p0, float p1, float p2) noexcept {
  switch (code) {
    case TSR_UNARY_EXP:
      return algorithm{dnnl::algorithm::eltwise_exp};
    case TSR_UNARY_LOG:
      return algorithm{dnnl::algorithm::eltwise_log};
    case TSR_UNARY_TANH:
      return algorithm{dnnl::algorithm::eltwise_tanh};
    case TSR_UNARY_SIGMOID:
      return algorithm{dnnl::algorithm::eltwise_logistic};
    case TSR_UNARY_GELU:
      return algorithm{dnnl::algorithm::eltwise_gelu_erf};
    case TSR_UNARY_GELU_TANH:
      return algorithm{dnnl::algorithm::eltwise_gelu_tanh};
    case TSR_UNARY_SILU:
      return algorithm{dnnl::algorithm::eltwise_swish, 1.f};
    case TSR_UNARY_ELU:  // oneDNN's elu has no scale / input_scale
      if (p1 != 1.f || p2 != 1.f) return std::nullopt;
      return algorithm{dnnl::algorithm::eltwise_elu, p0};
    default:
      return std::nullopt;
  }
}

// oneDNN 2.6's exp maps NaN to +inf: chunks holding a NaN take the fallback.
bool nan_unsafe(int code) noexcept { return code == TSR_UNARY_EXP; }

bool has_nan(const float* p, int64_t n) noexcept {
  bool nan = false;
#pragma omp simd reduction(|| : nan)
  for (int64_t i = 0; i < n; ++i) nan = nan || (p[i] != p[i]);
  return nan;
}

struct key {
  int alg;
  float alpha, beta;
  auto operator<=>(const key&) const = default;
};

class eltwise_cache {
 public:
  // The kChunk-element primitive for `a`; nullopt when oneDNN refuses it.
  std::optional<dnnl::eltwise_forward> get(const algorithm& a) {
    const key k{static_cast<int>(a.alg), a.alpha, a.beta};
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto found = cache_.find(k);
      if (found != cache_.end()) return found->second;
    }
    std::optional<dnnl::eltwise_forward> created;
    try {
      const dnnl::eltwise_forward::desc desc(dnnl::prop_kind::forward_inference, a.alg, md_,
                                             a.alpha, a.beta);
      created = dnnl::eltwise_forward(dnnl::eltwise_forward::primitive_desc(desc, engine_));
    } catch (const dnnl::error&) {
    }
    std::lock_guard<std::mutex> lock(mutex_);
    return cache_.emplace(k, created).first->second;
  }
  const dnnl::engine& engine() const { return engine_; }
  const dnnl::memory::desc& md() const { return md_; }

 private:
  dnnl::engine engine_{dnnl::engine::kind::cpu, 0};
  dnnl::memory::desc md_{{kChunk}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::a};
  std::mutex mutex_;
  std::map<key, std::optional<dnnl::eltwise_forward>> cache_;
};

// Never destroyed: kernels may run during process exit.
eltwise_cache& cache() {
  static eltwise_cache* instance = new eltwise_cache();
  return *instance;
}

}  // namespace

int64_t onednn_eltwise(int code, float p0, float p1, float p2, const float* src, float* dst,
                       int64_t n, int threads, chunk_fallback fallback,
                       void* fallback_context) noexcept {
  const int64_t chunks = n / kChunk;
  if (chunks == 0) return 0;
  try {
    const std::optional<algorithm> a = algorithm_of(code, p0, p1, p2);
    if (!a) return 0;
    eltwise_cache& c = cache();
    const std::optional<dnnl::eltwise_forward> primitive = c.get(*a);
    if (!primitive) return 0;
    // Each thread runs the primitive on its own chunks, sequentially inside
    // oneDNN (it sees the enclosing OpenMP region), with its own stream. oneDNN
    // runs a chunk completely or not at all (it fails before computing).
    parallel_ranges(threads, chunks, kChunk, [&](int64_t begin, int64_t end) {
      int64_t k = begin;
      try {
        dnnl::stream stream(c.engine());
        dnnl::memory in(c.md(), c.engine(), const_cast<float*>(src) + begin * kChunk);
        dnnl::memory out(c.md(), c.engine(), dst + begin * kChunk);
        const bool check_nan = nan_unsafe(code);
        for (; k < end; ++k) {
          if (check_nan && has_nan(src + k * kChunk, kChunk)) {
            fallback(fallback_context, k * kChunk, kChunk);
            continue;
          }
          in.set_data_handle(const_cast<float*>(src) + k * kChunk);
          out.set_data_handle(dst + k * kChunk);
          primitive->execute(stream, {{DNNL_ARG_SRC, in}, {DNNL_ARG_DST, out}});
          stream.wait();
        }
      } catch (...) {
        fallback(fallback_context, k * kChunk, (end - k) * kChunk);
      }
    });
    return chunks * kChunk;
  } catch (...) {
    return 0;
  }
}

}  // namespace tessera::cpu::pointwise
