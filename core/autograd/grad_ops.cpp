// grad_ops.cpp - registry-op helpers for the autograd machinery.
#include "autograd/grad_ops.h"

#include <optional>
#include <string>

#include "dispatch/op_api.h"
#include "ops/op_util.h"
#include "runtime/device.h"
#include "tensor/geometry.h"
#include "tensor/grad_mode.h"
#include "util/error.h"

namespace tsr::autograd {

TensorRef zeros_of(Runtime* runtime, const TensorMeta& meta) {
  return op::call(runtime, OpId::zeros, op::ints(meta.sizes, meta.ndim), meta.dtype, op::none,
                  meta.device->device);
}

TensorRef reduce_to(TensorImpl* grad, const TensorMeta& meta, const char* node_name) {
  TensorRef g = TensorRef::borrow(grad);
  bool same = grad->ndim == meta.ndim;
  for (int32_t d = 0; same && d < meta.ndim; ++d) same = grad->sizes[d] == meta.sizes[d];
  if (!same) {
    // grad's shape must be meta's broadcast: extra leading dims, or size-1
    // dims of meta grown.
    const int32_t lead = grad->ndim - meta.ndim;
    bool ok = lead >= 0;
    int64_t dims[TSR_MAX_DIMS];
    int32_t n = 0;
    for (int32_t d = 0; ok && d < grad->ndim; ++d) {
      if (d < lead) {
        dims[n++] = d;
      } else if (meta.sizes[d - lead] == 1 && grad->sizes[d] != 1) {
        dims[n++] = d;
      } else if (meta.sizes[d - lead] != grad->sizes[d]) {
        ok = false;
      }
    }
    if (!ok)
      fail(TSR_INTERNAL,
           "autograd: {} returned a gradient of shape {} for an input of shape {}, which it "
           "cannot broadcast from",
           node_name, shape_str(grad->ndim, grad->sizes), shape_str(meta.ndim, meta.sizes));
    if (n > 0) {
      g = op::call(grad->runtime, OpId::sum_dim_IntList, g, op::ints(dims, n), true);
    }
    g = op::call(grad->runtime, OpId::view, g, op::ints(meta.sizes, meta.ndim));
  }
  // A gradient computed on another device (the input was moved with to())
  // goes back to the input's device, cast on the way.
  const bool moved = meta.device != nullptr && g->device() != meta.device;
  if (g->dtype != meta.dtype || moved) {
    g = op::call(grad->runtime, OpId::_to_copy, g, meta.dtype,
                 moved ? std::optional<tsr_device>(meta.device->device) : std::nullopt);
  }
  return g;
}

TensorRef detached(TensorImpl* t) {
  // What the detach op does, without a trip through the dispatcher: the
  // engine's own bookkeeping is not an op the application called, so
  // observers do not see it (nor does it cost a dispatch per saved output).
  return make_alias(t, t->ndim, t->sizes, t->strides, t->offset);
}

TensorRef clone_detached(TensorImpl* t) {
  GradModeGuard no_grad(false);
  return op::call(t->runtime, OpId::clone, t);
}

}  // namespace tsr::autograd
