// grad_ops.cpp - registry-op helpers for the autograd machinery.
#include "autograd/grad_ops.h"

#include <string>

#include "autograd/grad_mode.h"
#include "dispatch/call.h"
#include "ops/op_util.h"
#include "runtime/device.h"
#include "tensor/geometry.h"
#include "util/error.h"

namespace tsr::autograd {

TensorRef zeros_of(Runtime* runtime, const TensorMeta& meta) {
  return call_op(runtime, OpId::zeros,
                 {v_ints(meta.sizes, meta.ndim), v_dtype(meta.dtype), v_none(),
                  v_device(meta.device->device)});
}

TensorRef ones_like(TensorImpl* t) { return call_op(t->runtime, OpId::ones_like, {v_tensor(t)}); }

TensorRef add(TensorImpl* a, TensorImpl* b) {
  return call_op(a->runtime, OpId::add_Tensor, {v_tensor(a), v_tensor(b)});
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
      g = call_op(grad->runtime, OpId::sum_dim_IntList,
                  {v_tensor(g.get()), v_ints(dims, n), v_bool(true)});
    }
    g = call_op(grad->runtime, OpId::view, {v_tensor(g.get()), v_ints(meta.sizes, meta.ndim)});
  }
  // A gradient computed on another device (the input was moved with to())
  // goes back to the input's device, cast on the way.
  const bool moved = meta.device != nullptr && g->device() != meta.device;
  if (g->dtype != meta.dtype || moved) {
    g = call_op(
        grad->runtime, OpId::_to_copy,
        {v_tensor(g.get()), v_dtype(meta.dtype), moved ? v_device(meta.device->device) : v_none()});
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
  return call_op(t->runtime, OpId::clone, {v_tensor(t)});
}

}  // namespace tsr::autograd
