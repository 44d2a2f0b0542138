// TensorImpl: what a tsr_tensor handle is - a typed, strided view of a Storage.
//
// Invariants (kept by make_tensor in tensor_impl.cpp and by the view ops):
//  - storage and version are non-null and referenced once by this object;
//  - 0 <= ndim <= TSR_MAX_DIMS, sizes >= 0, numel = prod(sizes);
//  - every addressed element offset + sum(i_d * strides[d]) lies inside the
//    storage (checked where views are made: as_strided, from_blob);
//  - `contiguous` caches row-major contiguity of (sizes, strides).
// Element (i...) lives at byte (offset + sum i_d * strides[d]) * dtype_size.
//
// Note [Generational handles]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A tsr_tensor* is the TensorImpl address with a
// 16-bit generation in the top bits (x86-64/aarch64 user addresses fit in 48
// bits). TensorImpl memory comes from an ObjectPool and is never returned to the
// system, so decoding a released handle reads a dead object whose generation no
// longer matches: the ABI reports "released" instead of crashing. A slot is
// reused at most 65,535 times: the release that would wrap its generation back
// to 0 retires it (dead forever, never recycled), so a stale handle can never
// equal a live one, and a double release can never drop another tensor's
// reference. Retiring costs one TensorImpl (~240 bytes) per 65,536 tensors made
// in that slot.
#pragma once

#include <atomic>
#include <cstdint>

#include "tensor/dtype.h"
#include "tensor/storage.h"
#include "tessera/tessera.h"

namespace tsr {

class Runtime;
namespace autograd {
struct AutogradMeta;
}

// Note [Autograd state behind a hook]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A tensor owns its autograd state (TensorImpl::autograd), but the tensor
// layer sits below autograd/ and cannot name AutogradMeta's destructor. The
// autograd layer installs its deleter here the first time it gives a tensor
// autograd state (autograd::meta_of), so it is set before any release needs
// it: `autograd` is non-null only on tensors meta_of has seen.
using AutogradMetaDeleter = void (*)(autograd::AutogradMeta* meta) noexcept;
void set_autograd_meta_deleter(AutogradMetaDeleter deleter) noexcept;

struct TensorImpl {
  static constexpr uint32_t kAlive = 0x54534e52u;  // "TSNR"
  static constexpr uint32_t kDead = 0xdeadbeefu;

  uint32_t magic = kAlive;
  uint16_t generation = 0;
  std::atomic<int32_t> refs{1};
  Runtime* runtime = nullptr;
  Storage* storage = nullptr;
  VersionCounter* version = nullptr;
  tsr_dtype dtype = TSR_FLOAT32;
  int32_t ndim = 0;
  int64_t sizes[TSR_MAX_DIMS] = {};
  int64_t strides[TSR_MAX_DIMS] = {};
  int64_t offset = 0;  // elements
  int64_t numel = 1;
  bool contiguous = true;
  // Made by a view op (shares another tensor's storage and version counter).
  bool is_view = false;
  // Views: the tensor at the root of the view chain (not itself a view),
  // one reference owned; null otherwise. Autograd needs it to record an
  // in-place write into a view as a change of the base (CopySlices).
  TensorImpl* view_base = nullptr;
  // Owned; null until the tensor takes part in autograd (autograd/meta.h).
  autograd::AutogradMeta* autograd = nullptr;
  // The tensor requires grad (a leaf the user marked, or an op's result
  // recorded in a graph). Set only by the autograd layer, and only on tensors
  // with autograd state; kept here, not in AutogradMeta, so that ops below
  // autograd can take another path for such tensors.
  bool requires_grad = false;
  // Made in inference mode (or a view of such a tensor): no version counter
  // (bump_version does nothing and the ABI refuses to report one), and
  // autograd refuses it later (tessera.h, tsr_inference_mode_set).
  bool is_inference = false;

  DeviceRecord* device() const { return storage->device; }
  size_t itemsize() const { return dtype_size(dtype); }
  void retain() noexcept { refs.fetch_add(1, std::memory_order_relaxed); }
  // A new reference, unless the count already reached zero (the tensor is
  // being destroyed): for a holder that points at a tensor without owning
  // it (a leaf's AccumulateGrad, autograd/node.h). Only tensors with autograd
  // state can have such holders.
  bool try_retain() noexcept {
    int32_t n = refs.load(std::memory_order_relaxed);
    while (n != 0) {
      if (refs.compare_exchange_weak(n, n + 1, std::memory_order_acq_rel,
                                     std::memory_order_relaxed))
        return true;
    }
    return false;
  }
  void release() noexcept;
  // Recomputes numel and `contiguous` after sizes/strides changed.
  void refresh() noexcept;
  tsr_tensor_desc desc() const;
  void bump_version() noexcept {
    if (!is_inference) version->bump();
  }
};

// Creates a tensor adopting one reference of `storage` and of `version` (null: a
// fresh counter). Sizes/strides are copied. Returned with one reference.
TensorImpl* make_tensor(Runtime* runtime, Storage* storage, VersionCounter* version,
                        tsr_dtype dtype, int32_t ndim, const int64_t* sizes, const int64_t* strides,
                        int64_t offset);

// Inference mode of the calling thread: tensors with fresh storage made while
// it is on are inference tensors. The autograd layer switches it
// (tensor/grad_mode.h) together with grad mode.
bool inference_mode() noexcept;
bool set_inference_mode_flag(bool on) noexcept;  // returns the previous value

// Handle encoding (Note [Generational handles]).
tsr_tensor* to_handle(TensorImpl* impl);
// Decodes `handle`; throws INVALID_ARGUMENT naming `arg` when null, foreign or
// released.
TensorImpl* from_handle(const tsr_tensor* handle, const char* arg);

// Small RAII owner used inside the core.
class TensorRef {
 public:
  TensorRef() = default;
  explicit TensorRef(TensorImpl* adopt) : p_(adopt) {}
  TensorRef(const TensorRef& o) : p_(o.p_) {
    if (p_) p_->retain();
  }
  TensorRef(TensorRef&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
  TensorRef& operator=(TensorRef o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }
  ~TensorRef() {
    if (p_) p_->release();
  }
  static TensorRef borrow(TensorImpl* p) {
    p->retain();
    return TensorRef(p);
  }
  TensorImpl* get() const { return p_; }
  TensorImpl* operator->() const { return p_; }
  TensorImpl& operator*() const { return *p_; }
  TensorImpl* take() {
    TensorImpl* p = p_;
    p_ = nullptr;
    return p;
  }
  explicit operator bool() const { return p_ != nullptr; }

 private:
  TensorImpl* p_ = nullptr;
};

}  // namespace tsr
