// TensorImpl: refresh, desc, release and make_tensor (tensor_impl.h); the
// slot retirement of Note [Generational handles].
#include "tensor/tensor_impl.h"

#include <cstring>
#include <mutex>
#include <new>
#include <vector>

#include "runtime/device.h"
#include "util/object_pool.h"

namespace tsr {

// A TensorImpl slot whose handle generation wrapped is never reused (Note
// [Generational handles]); its memory stays a dead TensorImpl, held here so
// that leak checkers see it kept, not lost. Once per 65,536 reuses of a slot;
// must not throw: if the list cannot grow, the memory is simply kept.
namespace {
void retire_slot(TensorImpl* t) noexcept {
  // Never destroyed: tensors outlive static teardown.
  static auto* mu = new std::mutex();
  static auto* retired = new std::vector<TensorImpl*>();
  std::lock_guard<std::mutex> lock(*mu);
  try {
    retired->push_back(t);
  } catch (...) {
  }
}
}  // namespace

void TensorImpl::refresh() noexcept {
  int64_t n = 1;
  bool contig = true;
  int64_t expected = 1;
  for (int32_t d = ndim - 1; d >= 0; --d) {
    n *= sizes[d];
    if (sizes[d] != 1) {
      if (strides[d] != expected) contig = false;
      expected *= sizes[d];
    }
  }
  numel = n;
  contiguous = contig || n == 0;
}

tsr_tensor_desc TensorImpl::desc() const {
  tsr_tensor_desc d;
  d.dtype = dtype;
  d.ndim = ndim;
  // Entries past ndim are zero in a TensorImpl (make_tensor value-initialises
  // them), so whole-array copies are exact and branch-free.
  std::memcpy(d.sizes, sizes, sizeof sizes);
  std::memcpy(d.strides, strides, sizeof strides);
  d.buffer = storage->buffer.handle;
  d.byte_offset = offset * static_cast<int64_t>(dtype_size(dtype));
  d.data =
      storage->buffer.data ? static_cast<char*>(storage->buffer.data) + d.byte_offset : nullptr;
  d.device = storage->device->device;
  return d;
}

namespace {
std::atomic<AutogradMetaDeleter> g_autograd_meta_deleter{nullptr};
}  // namespace

void set_autograd_meta_deleter(AutogradMetaDeleter deleter) noexcept {
  g_autograd_meta_deleter.store(deleter, std::memory_order_release);
}

void TensorImpl::release() noexcept {
  // The last owner skips the atomic decrement: nobody else can reach the
  // tensor - except through try_retain, which only tensors with autograd
  // state are exposed to, so those always count down.
  const bool last = autograd == nullptr ? refs.load(std::memory_order_acquire) == 1 ||
                                              refs.fetch_sub(1, std::memory_order_acq_rel) == 1
                                        : refs.fetch_sub(1, std::memory_order_acq_rel) == 1;
  if (!last) return;
  if (autograd != nullptr) {
    // May release other tensors (grad, graph); Note [Autograd state behind a hook].
    g_autograd_meta_deleter.load(std::memory_order_acquire)(autograd);
    autograd = nullptr;
  }
  TensorImpl* base = view_base;
  view_base = nullptr;
  Storage* s = storage;
  VersionCounter* v = version;
  magic = kDead;
  storage = nullptr;
  version = nullptr;
  // A slot whose generation would wrap is retired, never reused: no handle
  // value is ever given out twice (Note [Generational handles]).
  if (++generation != 0)
    ObjectPool<TensorImpl>::recycle(this);  // memory stays a TensorImpl: see tensor_impl.h
  else
    retire_slot(this);
  if (v) v->release();
  s->release();
  if (base) base->release();
}

TensorImpl* make_tensor(Runtime* runtime, Storage* storage, VersionCounter* version,
                        tsr_dtype dtype, int32_t ndim, const int64_t* sizes, const int64_t* strides,
                        int64_t offset) {
  void* mem = ObjectPool<TensorImpl>::acquire();
  TensorImpl* t = static_cast<TensorImpl*>(mem);
  // Pool objects keep their generation across reuse (Note [Generational handles]);
  // a fresh allocation starts from an indeterminate value, which is fine: only
  // equality with the handle's tag matters.
  uint16_t generation = t->magic == TensorImpl::kDead ? t->generation : 0;
  new (mem) TensorImpl();
  t->generation = generation;
  t->runtime = runtime;
  t->storage = storage;
  t->version = version ? version : VersionCounter::create();
  t->dtype = dtype;
  t->ndim = ndim;
  for (int32_t i = 0; i < ndim; ++i) {
    t->sizes[i] = sizes[i];
    t->strides[i] = strides[i];
  }
  t->offset = offset;
  t->is_inference = version == nullptr && inference_mode();
  t->refresh();
  return t;
}

}  // namespace tsr
