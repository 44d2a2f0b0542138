// tessera/nn/utils/clip_grad.hpp - gradient clipping, as
// torch.nn.utils.clip_grad_norm_ and clip_grad_value_ (PyTorch 1.13).
//
// Both change the gradients in place (the tensors p.grad() returns, so a
// gradient shared between handles sees it) and skip parameters without a
// gradient. They run tessera ops on the gradients' devices, so they work on
// any device; clip_grad_norm_ reads the norm back to the host only for
// error_if_nonfinite.
//
// clip_grad_norm_ computes, as PyTorch does, the norm of the per-gradient
// norms (the norm of all gradients concatenated), then multiplies every
// gradient by min(1, max_norm / (total + 1e-6)) - always, without a branch
// on the coefficient, so a device need not synchronize. The per-gradient
// norms are moved to the first gradient's device; the coefficient to each
// gradient's device.
#pragma once

#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "tessera/autograd.hpp"
#include "tessera/error.hpp"
#include "tessera/factories.hpp"
#include "tessera/ops/arithmetic.hpp"
#include "tessera/ops/pointwise.hpp"
#include "tessera/ops/reduction.hpp"
#include "tessera/ops/shape.hpp"
#include "tessera/tensor.hpp"

namespace tessera::nn::utils {

// Scales the gradients of `parameters` so that their total `norm_type`-norm
// (any p; infinity for the max-abs norm) is at most `max_norm`; returns the
// total norm before clipping, a 0-d tensor on the first gradient's device
// (a float32 zero on the host when no parameter has a gradient). With
// error_if_nonfinite, a NaN or infinite total norm throws and leaves the
// gradients untouched.
inline Tensor clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm,
                              double norm_type = 2.0, bool error_if_nonfinite = false) {
  autograd::NoGradGuard no_grad;
  std::vector<Tensor> grads;
  for (const Tensor& p : parameters) {
    if (!p.defined()) continue;
    if (Tensor g = p.grad(); g.defined()) grads.push_back(g);
  }
  if (grads.empty()) return scalar_tensor(0.0, dtype(kFloat32));
  const Device device = grads.front().device();
  std::vector<Tensor> norms;
  Tensor total;
  if (norm_type == std::numeric_limits<double>::infinity()) {
    for (const Tensor& g : grads) norms.push_back(max(abs(g.detach())).to(device));
    total = norms.size() == 1 ? norms.front() : max(stack(norms));
  } else {
    for (const Tensor& g : grads) norms.push_back(norm(g.detach(), norm_type).to(device));
    total = norm(stack(norms), norm_type);
  }
  if (error_if_nonfinite && !std::isfinite(total.item<double>())) {
    std::ostringstream order;
    order << norm_type;
    tessera::detail::throw_error(
        TSR_INVALID_ARGUMENT,
        "The total norm of order " + order.str() +
            " for gradients from `parameters` is non-finite, so it cannot be clipped. To "
            "disable this error and scale the gradients by the non-finite norm anyway, set "
            "`error_if_nonfinite=false`");
  }
  // max_norm / (total + 1e-6) as PyTorch evaluates it (reciprocal, then
  // multiply), so float32 norms round the same way.
  const Tensor coef = clamp(reciprocal(total + 1e-6) * max_norm, std::nullopt, 1.0);
  for (const Tensor& g : grads) g.detach().mul_(coef.to(g.device()));
  return total;
}
// One parameter.
inline Tensor clip_grad_norm_(const Tensor& parameter, double max_norm, double norm_type = 2.0,
                              bool error_if_nonfinite = false) {
  return clip_grad_norm_(std::vector<Tensor>{parameter}, max_norm, norm_type, error_if_nonfinite);
}

// Clamps every gradient of `parameters` to [-clip_value, clip_value].
inline void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value) {
  autograd::NoGradGuard no_grad;
  for (const Tensor& p : parameters) {
    if (!p.defined()) continue;
    if (Tensor g = p.grad(); g.defined()) {
      Tensor d = g.detach();
      clamp_(d, -clip_value, clip_value);
    }
  }
}
inline void clip_grad_value_(const Tensor& parameter, double clip_value) {
  clip_grad_value_(std::vector<Tensor>{parameter}, clip_value);
}

}  // namespace tessera::nn::utils
