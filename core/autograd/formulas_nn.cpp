// formulas_nn.cpp - derivatives of fused nn composites, so training keeps
// their fused forward kernels instead of differentiating the decomposition.
// Written with registry ops like every formula (any device, higher order).
#include <algorithm>
#include <vector>

#include <optional>

#include "autograd/engine.h"
#include "autograd/formulas.h"
#include "autograd/grad_ops.h"
#include "autograd/meta.h"
#include "dispatch/normalise.h"
#include "dispatch/op_api.h"
#include "dispatch/values.h"
#include "ops/shorthands.h"
#include "tensor/grad_mode.h"

namespace tsr::autograd {
namespace {

using namespace op;
using op::add;  // not autograd::add (grad_ops.h)

R sum_dims(const R& x, const std::vector<int64_t>& dims, bool keepdim) {
  return op::call(OpId::sum_dim_IntList, x, dims, keepdim);
}

// native_layer_norm(input, normalized_shape, weight?, bias?, eps) ->
// (out, mean, rstd), mean and rstd keepdim-shaped over the normalized dims.
// With x^ = (x - mean) rstd, gx = g w (or g), N the normalized numel:
//   dx = rstd (gx - mean_N(gx) - x^ mean_N(gx x^)),
//   dw = sum over the leading dims of g x^,  db = sum over them of g.
// mean and rstd are statistics: gradients sent to them are ignored, as in
// PyTorch's native_layer_norm_backward, which is what runs without
// create_graph (core/ops/nn/norm_backward.cpp: one fused kernel on the CPU).
void native_layer_norm_f(BackwardContext& c) {
  R x = c.input(0);
  const int32_t ndim = x->ndim;
  const int32_t axis = ndim - static_cast<int32_t>(c.ints(1).size());
  std::vector<int64_t> inner, outer;
  double n = 1;
  for (int32_t d = 0; d < ndim; ++d) {
    if (d >= axis) {
      inner.push_back(d);
      n *= static_cast<double>(x->sizes[d]);
    } else {
      outer.push_back(d);
    }
  }
  R g = TensorRef::borrow(c.grad(0));
  if (!grad_enabled()) {
    // One fused op from the saved statistics (a plugin's one-pass kernel
    // where the device has one). Under create_graph the composed form below
    // runs instead: its mean and rstd are functions of x, so second
    // derivatives see them move.
    const int32_t mask[3] = {c.needs(0) ? 1 : 0, c.needs(2) ? 1 : 0, c.needs(3) ? 1 : 0};
    tsr_value mask_value{};
    mask_value.tag = TSR_VALUE_BOOL_LIST;
    mask_value.len = 3;
    mask_value.u.bools = mask;
    R weight = c.is_none(2) ? R() : c.input(2);
    R bias = c.is_none(3) ? R() : c.input(3);
    OpResults r = op::call_all(x->runtime, OpId::native_layer_norm_backward, g, x, c.arg(1),
                               c.result(1), c.result(2), weight, bias, mask_value);
    for (int i = 0; i < 3; ++i)
      if (r.r[i]) c.set(i == 0 ? 0 : i + 1, std::move(r.r[i]));
    return;
  }
  R mean, rstd;
  {
    // create_graph: mean and rstd as functions of x, so that the second
    // derivative sees them depend on it (the saved ones are statistics).
    mean = sum_dims(x, inner, true);
    mean = mul(mean, 1.0 / n);
    R centred = sub(x, mean);
    R var = mul(sum_dims(square(centred), inner, true), 1.0 / n);
    rstd = op::call(OpId::rsqrt, add(var, c.float_arg(4)));
  }
  R xhat = mul(sub(x, mean), rstd);
  if (c.needs(0)) {
    R gx = c.is_none(2) ? g : mul(g, c.input(2));
    if (inner.empty()) {
      c.set(0, zeros_like(x));  // nothing normalized: the output is constant in x
    } else {
      R a = mul(sum_dims(gx, inner, true), 1.0 / n);
      R b = mul(sum_dims(mul(gx, xhat), inner, true), 1.0 / n);
      c.set(0, mul(sub(sub(gx, a), mul(xhat, b)), rstd));
    }
  }
  auto over_outer = [&](const R& v) { return outer.empty() ? v : sum_dims(v, outer, false); };
  if (c.needs(2)) c.set(2, over_outer(mul(g, xhat)));
  if (c.needs(3)) c.set(3, over_outer(g));
}

// A fused backward op's results: without create_graph the op itself (a
// plugin's kernel where the device has one); under create_graph its
// decomposition runs with its own ops recording, so higher orders
// differentiate it. The op is not recorded as a composite: a gradient that
// does not depend on some input (grad_bias on x, a pool's grad_input on
// self) would come back without history while that input requires grad,
// which recording reports as a cut graph.
template <class... A>
OpResults backward_op(Runtime* rt, OpId id, const A&... args) {
  if (!grad_enabled()) return op::call_all(rt, id, args...);
  OpCall frame;
  op::detail::begin(frame, rt, id, static_cast<int32_t>(sizeof...(A)));
  int i = 0;
  (op::detail::put(frame, i++, args), ...);
  fill_defaults(frame);
  ForceDecompositionGuard decompose(true);
  frame.op->fn(frame);
  return op::detail::take_results(frame);
}

// ---- pooling ------------------------------------------------------------------
// Each calls PyTorch's backward op (core/ops/conv/pooling_backward.cpp):
// grad_output scattered back into the input's windows.

// max_pool2d_with_indices(self, kernel_size, stride, padding, dilation,
// ceil_mode) -> (out, indices). max_pool2d has no formula: recorded, it
// decomposes into this op (core/ops/conv/pooling.cpp), whose fused kernel
// gives the indices in the same pass, as PyTorch's max_pool2d records
// max_pool2d_with_indices.
void max_pool2d_with_indices_f(BackwardContext& c) {
  R self = c.input(0);
  R g = TensorRef::borrow(c.grad(0));
  R indices = c.result(1);  // held: the call's arguments only point at it
  c.set(0, std::move(backward_op(self->runtime, OpId::max_pool2d_with_indices_backward, g, self,
                                 c.arg(1), c.arg(2), c.arg(3), c.arg(4), c.arg(5), indices)
                         .r[0]));
}

// avg_pool2d(self, kernel_size, stride, padding, ceil_mode,
// count_include_pad, divisor_override).
void avg_pool2d_f(BackwardContext& c) {
  R self = c.input(0);
  R g = TensorRef::borrow(c.grad(0));
  c.set(0, std::move(backward_op(self->runtime, OpId::avg_pool2d_backward, g, self, c.arg(1),
                                 c.arg(2), c.arg(3), c.arg(4), c.arg(5), c.arg(6))
                         .r[0]));
}

// _adaptive_avg_pool2d(self, output_size).
void adaptive_avg_pool2d_f(BackwardContext& c) {
  R self = c.input(0);
  R g = TensorRef::borrow(c.grad(0));
  c.set(0,
        std::move(backward_op(self->runtime, OpId::_adaptive_avg_pool2d_backward, g, self).r[0]));
}

// adaptive_max_pool2d(self, output_size) -> (out, indices).
void adaptive_max_pool2d_f(BackwardContext& c) {
  R self = c.input(0);
  R g = TensorRef::borrow(c.grad(0));
  R indices = c.result(1);
  c.set(0,
        std::move(
            backward_op(self->runtime, OpId::adaptive_max_pool2d_backward, g, self, indices).r[0]));
}

// ---- convolution ------------------------------------------------------------

// convolution(input, weight, bias?, stride, padding, dilation, transposed,
// output_padding, groups): one call of convolution_backward (PyTorch's
// schema; the math is in core/ops/conv/convolution_backward.cpp). Without
// create_graph a device's fused kernel runs it (oneDNN's backward data and
// weights on the CPU); under create_graph its decomposition records, so
// higher derivatives differentiate it (backward_op).
void convolution_f(BackwardContext& c) {
  R x = c.input(0);
  R w = c.input(1);
  R g = TensorRef::borrow(c.grad());
  const int32_t mask[3] = {c.needs(0) ? 1 : 0, c.needs(1) ? 1 : 0, c.needs(2) ? 1 : 0};
  tsr_value mask_value{};
  mask_value.tag = TSR_VALUE_BOOL_LIST;
  mask_value.len = 3;
  mask_value.u.bools = mask;
  const int64_t channels = g->sizes[1];
  OpResults r = backward_op(x->runtime, OpId::convolution_backward, g, x, w,
                            c.needs(2) ? std::optional<Shape>(op::ints({channels})) : std::nullopt,
                            c.arg(3), c.arg(4), c.arg(5), c.arg(6), c.arg(7), c.arg(8), mask_value);
  for (int i = 0; i < 3; ++i)
    if (r.r[i]) c.set(i, std::move(r.r[i]));
}

// Fused composites whose backward re-runs their decomposition: the fused
// kernel serves the forward, and backward differentiates the decomposition
// at the saved inputs (through the engine, on detached copies; on the inputs
// themselves under create_graph, so higher orders stay connected). This is
// what training did before, plus one recomputed forward: worth it where that
// forward is cheap beside the model (cross_entropy, group_norm) or where
// keeping the decomposition's intermediates would cost more memory than
// recomputing them (scaled_dot_product_attention_forward under create_graph).
void recompute_f(BackwardContext& c) {
  const OpDef& op = c.op();
  const bool create_graph = grad_enabled();
  OpCall frame;
  frame.runtime = c.runtime();
  frame.op = &op;
  frame.nargs = static_cast<int32_t>(op.schema.args.size());
  std::vector<TensorRef> keep;
  std::vector<TensorImpl*> inputs;
  std::vector<int32_t> input_arg;
  for (int32_t i = 0; i < frame.nargs; ++i) {
    tsr_value v = c.arg(i);
    if (v.tag == TSR_VALUE_TENSOR_LIST)
      fail(TSR_INTERNAL, "autograd: {} recomputes its forward but has a tensor list argument",
           op.name);
    if (v.tag == TSR_VALUE_TENSOR) {
      TensorRef x = c.input(i);
      if (c.needs(i)) {
        if (!create_graph) {
          x = detached(x.get());
          set_requires_grad(*x, true);
        }
        inputs.push_back(x.get());
        input_arg.push_back(i);
      }
      v = v_tensor(x.get());
      keep.push_back(std::move(x));
    }
    frame.args[i] = v;
  }
  {
    GradModeGuard on(true);
    ForceDecompositionGuard decompose(true);
    op.fn(frame);
  }
  std::vector<TensorImpl*> outs, grads;
  for (int32_t k = 0; k < frame.nresults; ++k) {
    TensorImpl* r = frame.results[k].get();
    if (r == nullptr || !requires_grad(*r)) continue;
    outs.push_back(r);
    grads.push_back(c.grad(k));
  }
  if (outs.empty() || inputs.empty()) return;
  // Under create_graph the gradients carry history through the recomputed
  // graph, whose saved tensors must outlive this call.
  std::vector<TensorRef> g = grad(outs, grads, inputs, /*retain_graph=*/create_graph, create_graph,
                                  /*allow_unused=*/true);
  for (size_t j = 0; j < g.size(); ++j)
    if (g[j]) c.set(input_arg[j], std::move(g[j]));
}

// scaled_dot_product_attention_forward(q, k, v, attn_mask?, is_causal, scale?,
// enable_gqa) -> (out, logsumexp): scaled_dot_product_attention decomposes
// into it under autograd when it has no dropout (with dropout it decomposes
// into its composed form, whose dropout keeps the mask it drew). Without
// create_graph one call of scaled_dot_product_attention_backward from the
// saved out and logsumexp (Note [Attention backward from the saved logsumexp]
// in core/ops/nn/attention.cpp; a tiled kernel on the CPU). Under
// create_graph, or when a floating attn_mask requires grad (PyTorch 2.15
// differentiates it too: its gradient is dS, which the fused op does not
// return), the decomposition is recomputed and differentiated, so higher
// orders see every dependence.
void sdpa_forward_f(BackwardContext& c) {
  const bool mask_grad = !c.is_none(3) && c.needs(3);
  if (grad_enabled() || mask_grad) {
    recompute_f(c);
    return;
  }
  R q = c.input(0);
  R mask = c.is_none(3) ? R() : c.input(3);
  R g = TensorRef::borrow(c.grad(0));
  OpResults r =
      op::call_all(q->runtime, OpId::scaled_dot_product_attention_backward, g, q, c.input(1),
                   c.input(2), c.result(0), c.result(1), mask, c.arg(4), c.arg(5), c.arg(6));
  for (int i = 0; i < 3; ++i)
    if (c.needs(i) && r.r[i]) c.set(i, std::move(r.r[i]));
}

// cross_entropy_loss(self, target, weight?, reduction, ignore_index,
// label_smoothing): the gradient w.r.t. self is one call of
// cross_entropy_loss_backward (Note [cross_entropy_loss backward] in
// core/ops/nn/loss.cpp; one pass per row on the CPU). Under create_graph, and
// when a probability target or the weight wants a gradient too, the forward's
// decomposition is differentiated instead (recompute_f), which gives every
// input its gradient and stays differentiable for higher orders.
void cross_entropy_f(BackwardContext& c) {
  if (grad_enabled() || c.needs(1) || c.needs(2)) {
    recompute_f(c);
    return;
  }
  if (!c.needs(0)) return;
  R x = c.input(0);
  R target = c.input(1);
  R weight = c.is_none(2) ? R() : c.input(2);
  R g = TensorRef::borrow(c.grad(0));
  c.set(0, op::call(x->runtime, OpId::cross_entropy_loss_backward, g, x, target, weight, c.arg(3),
                    c.arg(4), c.arg(5)));
}

}  // namespace

void add_nn_formulas(FormulaTable& f) {
  constexpr uint32_t kAllTensors = 0xFFFFFFFFu;
  f.add(OpId::convolution, convolution_f, arg_bit(0) | arg_bit(1));
  f.add(OpId::cross_entropy_loss, cross_entropy_f, kAllTensors);
  f.add(OpId::native_group_norm, recompute_f, kAllTensors);
  f.add(OpId::scaled_dot_product_attention_forward, sdpa_forward_f, kAllTensors,
        arg_bit(0) | arg_bit(1));
  f.add(OpId::native_layer_norm, native_layer_norm_f, arg_bit(0) | arg_bit(2) | arg_bit(3),
        arg_bit(1) | arg_bit(2));
  f.add(OpId::max_pool2d_with_indices, max_pool2d_with_indices_f, arg_bit(0), arg_bit(1));
  f.add(OpId::avg_pool2d, avg_pool2d_f, arg_bit(0));
  f.add(OpId::_adaptive_avg_pool2d, adaptive_avg_pool2d_f, arg_bit(0));
  f.add(OpId::adaptive_max_pool2d, adaptive_max_pool2d_f, arg_bit(0), arg_bit(1));
}

}  // namespace tsr::autograd
