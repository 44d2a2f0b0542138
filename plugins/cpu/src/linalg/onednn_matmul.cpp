// onednn_matmul.cpp - the oneDNN matmul primitive cache (oneDNN 2.6 API).
#include "onednn_matmul.hpp"

#include <compare>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include <dnnl.hpp>

namespace tessera::cpu {
namespace {

struct matmul_key {
  int64_t batch, n, k, m;
  int64_t a_strides[3], b_strides[3], c_strides[3];
  int threads;
  auto operator<=>(const matmul_key&) const = default;
};

dnnl::memory::desc describe(const f32_matrix& x) {
  using dims = dnnl::memory::dims;
  if (x.batch == 1) {
    return dnnl::memory::desc(dims{x.rows, x.cols}, dnnl::memory::data_type::f32,
                              dims{x.row_stride, x.col_stride});
  }
  return dnnl::memory::desc(dims{x.batch, x.rows, x.cols}, dnnl::memory::data_type::f32,
                            dims{x.batch_stride, x.row_stride, x.col_stride});
}

}  // namespace

// A cached primitive and the scratchpad it needs per execution.
//
// Note [oneDNN scratchpad]
// ~~~~~~~~~~~~~~~~~~~~~~~~
// oneDNN's default ("library") scratchpad is one buffer shared by every
// primitive of the process (Debian builds oneDNN without
// DNNL_ENABLE_CONCURRENT_EXEC), so one primitive executed from two threads
// at once corrupts its results when its kernel uses a scratchpad - as the
// AVX-512 brgemm matmul kernels do (the conformance suite's concurrency case
// failed on a 16-core Xeon, never on the AVX2 development machine). The
// primitives are created with a user scratchpad and each execution brings
// its own, from a per-thread buffer.
struct cached_matmul {
  dnnl::matmul primitive;
  dnnl::memory::desc scratchpad;
};

struct onednn_matmul::impl {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  mutable std::mutex mutex;
  // nullopt: oneDNN refused this configuration.
  std::map<matmul_key, std::optional<cached_matmul>> cache;
};

onednn_matmul::onednn_matmul() : impl_(std::make_unique<impl>()) {}
onednn_matmul::~onednn_matmul() = default;

size_t onednn_matmul::cache_size() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->cache.size();
}

bool onednn_matmul::run(const f32_matrix& a, const f32_matrix& b, const f32_matrix& c,
                        int threads) {
  const matmul_key key{a.batch,
                       a.rows,
                       a.cols,
                       b.cols,
                       {a.batch_stride, a.row_stride, a.col_stride},
                       {b.batch_stride, b.row_stride, b.col_stride},
                       {c.batch_stride, c.row_stride, c.col_stride},
                       threads};
  const dnnl::memory::desc a_desc = describe(a);
  const dnnl::memory::desc b_desc = describe(b);
  const dnnl::memory::desc c_desc = describe(c);

  std::optional<cached_matmul> primitive;
  bool known = false;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    auto found = impl_->cache.find(key);
    if (found != impl_->cache.end()) {
      known = true;
      primitive = found->second;
    }
  }
  if (!known) {
    // Created outside the lock: primitive creation can take milliseconds
    // (JIT); two threads racing on one key both create it, one insert wins.
    std::optional<cached_matmul> created;
    try {
      const dnnl::matmul::desc desc(a_desc, b_desc, c_desc);
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      const dnnl::matmul::primitive_desc pd(desc, attr, impl_->engine);
      created = cached_matmul{dnnl::matmul(pd), pd.scratchpad_desc()};
    } catch (const dnnl::error& e) {
      if (e.status != dnnl_unimplemented && e.status != dnnl_invalid_arguments) throw;
    }
    std::lock_guard<std::mutex> lock(impl_->mutex);
    if (impl_->cache.size() >= kMaxEntries) impl_->cache.clear();
    primitive = impl_->cache.emplace(key, created).first->second;
  }
  if (!primitive) return false;

  dnnl::stream stream(impl_->engine);
  dnnl::memory a_mem(a_desc, impl_->engine, a.data);
  dnnl::memory b_mem(b_desc, impl_->engine, b.data);
  dnnl::memory c_mem(c_desc, impl_->engine, c.data);
  // This thread's scratchpad (Note [oneDNN scratchpad]), grown as needed.
  thread_local std::vector<unsigned char> scratch;
  const size_t scratch_bytes = primitive->scratchpad.get_size();
  if (scratch.size() < scratch_bytes) scratch.resize(scratch_bytes);
  dnnl::memory scratch_mem(primitive->scratchpad, impl_->engine,
                           scratch_bytes ? scratch.data() : nullptr);
  primitive->primitive.execute(stream, {{DNNL_ARG_SRC, a_mem},
                                        {DNNL_ARG_WEIGHTS, b_mem},
                                        {DNNL_ARG_DST, c_mem},
                                        {DNNL_ARG_SCRATCHPAD, scratch_mem}});
  stream.wait();
  return true;
}

}  // namespace tessera::cpu
