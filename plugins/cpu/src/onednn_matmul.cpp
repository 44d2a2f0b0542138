// onednn_matmul.cpp - the oneDNN matmul primitive cache (oneDNN 2.6 API).
#include "onednn_matmul.hpp"

#include <compare>
#include <map>
#include <mutex>
#include <optional>

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

struct onednn_matmul::impl {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  mutable std::mutex mutex;
  // nullopt: oneDNN refused this configuration.
  std::map<matmul_key, std::optional<dnnl::matmul>> cache;
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

  std::optional<dnnl::matmul> primitive;
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
    std::optional<dnnl::matmul> created;
    try {
      const dnnl::matmul::desc desc(a_desc, b_desc, c_desc);
      const dnnl::matmul::primitive_desc pd(desc, impl_->engine);
      created = dnnl::matmul(pd);
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
  primitive->execute(stream,
                     {{DNNL_ARG_SRC, a_mem}, {DNNL_ARG_WEIGHTS, b_mem}, {DNNL_ARG_DST, c_mem}});
  stream.wait();
  return true;
}

}  // namespace tessera::cpu
