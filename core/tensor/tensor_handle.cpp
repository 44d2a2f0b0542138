// Handle encoding (Note [Generational handles] in tensor_impl.h): a
// TensorImpl address with its slot's generation in the top 16 bits.
#include <cstdint>

#include "tensor/tensor_impl.h"
#include "util/error.h"

namespace tsr {

namespace {
constexpr uintptr_t kAddressMask = (uintptr_t{1} << 48) - 1;
constexpr int kGenerationShift = 48;
}  // namespace

tsr_tensor* to_handle(TensorImpl* impl) {
  uintptr_t p = reinterpret_cast<uintptr_t>(impl);
  return reinterpret_cast<tsr_tensor*>(p | (uintptr_t{impl->generation} << kGenerationShift));
}

TensorImpl* from_handle(const tsr_tensor* handle, const char* arg) {
  if (handle == nullptr)
    fail(TSR_INVALID_ARGUMENT, "argument '{}' is NULL; pass a tensor handle", arg);
  uintptr_t h = reinterpret_cast<uintptr_t>(handle);
  TensorImpl* t = reinterpret_cast<TensorImpl*>(h & kAddressMask);
  uint16_t generation = static_cast<uint16_t>(h >> kGenerationShift);
  if ((h & (alignof(TensorImpl) - 1)) != 0 || t->magic != TensorImpl::kAlive ||
      t->generation != generation) {
    if (t->magic == TensorImpl::kDead || t->magic == TensorImpl::kAlive)
      fail(TSR_INVALID_ARGUMENT,
           "argument '{}' is a released tensor handle ({}); it was used after "
           "tsr_tensor_release dropped its last reference - keep a reference (tsr_tensor_retain) "
           "while you use it",
           arg, static_cast<const void*>(handle));
    fail(TSR_INVALID_ARGUMENT, "argument '{}' ({}) is not a tensor handle", arg,
         static_cast<const void*>(handle));
  }
  return t;
}

}  // namespace tsr
