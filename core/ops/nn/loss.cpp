// nn losses, as decompositions into registry ops.
//
// reduction is PyTorch's enum (0 none, 1 mean, 2 sum). The class-index losses
// (nll_loss*, cross_entropy_loss) follow PyTorch's definitions:
//   loss_i = -w[t_i] * input[i, t_i]   (0 where t_i == ignore_index)
//   mean   = sum_i loss_i / sum_i w[t_i] over non-ignored i (NaN when all are
//            ignored: 0 / 0)
// cross_entropy_loss is log_softmax + nll; with label_smoothing ls it adds
// ls / C * smooth_i, smooth_i = -sum_c w_c log p_ic (0 for ignored rows), and
// scales the nll part by 1 - ls; its mean divides the smoothing part by the
// same weight sum as the nll part. Class-probability targets (target shaped
// like self, floating) give -sum_c w_c t_ic log p_ic with smoothed targets
// t (1 - ls) + ls / C, and mean divides by the number of samples.
//
// Targets are range-checked on the host before any gather (PyTorch's "Target 5
// is out of bounds." with the op and argument named); the fused CPU kernel of
// cross_entropy_loss checks them itself.
#include "dispatch/op_api.h"
#include "dispatch/values.h"
#include "ops/nn/nn_ops.h"
#include "ops/op_impls.h"

namespace tsr::ops {

namespace {

// Checks of the nll family (shapes, dtypes, weight); returns the class dim.
int32_t check_nll_args(const OpDef& op, const TensorImpl& input, const TensorImpl& target,
                       const TensorImpl* weight) {
  if (input.ndim == 0)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'self' is 0-d; expected (C) or (N, C, d1, ...) log-probabilities",
         op.name);
  nn::check_floating(op, input, "self");
  if (target.dtype != TSR_INT64)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'target': expected scalar type Long but found {}; class-index "
         "targets are int64 (convert with to(int64))",
         op.name, dtype_name(target.dtype));
  check_same_device(op, input, target, "self", "target");
  const int32_t cdim = input.ndim >= 2 ? 1 : 0;
  if (input.ndim == 1) {
    if (target.ndim != 0)
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': argument 'target' of shape {}: an unbatched input of shape {} takes a 0-d "
           "target",
           op.name, nn::shape_text(target), nn::shape_text(input));
  } else {
    if (target.ndim != input.ndim - 1 || target.sizes[0] != input.sizes[0]) {
      if (target.ndim >= 1 && target.sizes[0] != input.sizes[0])
        fail(TSR_INVALID_ARGUMENT,
             "op '{}': argument 'target': Expected input batch_size ({}) to match target "
             "batch_size ({}).",
             op.name, input.sizes[0], target.sizes[0]);
    }
    bool ok = target.ndim == input.ndim - 1;
    for (int32_t d = 0; ok && d < target.ndim; ++d)
      ok = target.sizes[d] == input.sizes[d < 1 ? d : d + 1];
    if (!ok) {
      std::vector<int64_t> expected = {input.sizes[0]};
      for (int32_t d = 2; d < input.ndim; ++d) expected.push_back(input.sizes[d]);
      fail(TSR_INVALID_ARGUMENT, "op '{}': argument 'target': Expected target size {}, got {}",
           op.name, nn::shape_text(expected), nn::shape_text(target));
    }
  }
  const int64_t classes = input.sizes[cdim];
  if (weight) {
    check_same_device(op, input, *weight, "self", "weight");
    if (weight->numel != classes || weight->ndim != 1)
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': argument 'weight': weight tensor should be defined either for all {} "
           "classes or no classes but got weight tensor of shape: {}",
           op.name, classes, nn::shape_text(*weight));
  }
  return cdim;
}

// Every target that is not ignore_index lies in [0, classes).
void check_targets(const OpDef& op, TensorImpl* target, int64_t classes, int64_t ignore_index) {
  if (target->device()->is_meta || target->numel == 0) return;
  std::vector<int64_t> host(static_cast<size_t>(target->numel));
  read_to_host(target, host.data());
  for (int64_t t : host)
    if (t != ignore_index && (t < 0 || t >= classes))
      fail(TSR_OUT_OF_RANGE,
           "op '{}': argument 'target': Target {} is out of bounds. Class indices must lie in "
           "[0, {}) (or equal ignore_index {})",
           op.name, t, classes, ignore_index);
}

// The class-index loss of already-checked arguments: per-element loss (0 for
// ignored targets), reduced. `input` holds log-probabilities.
struct NllParts {
  TensorRef loss;           // per element, 0 where ignored
  TensorRef valid;          // bool, target != ignore_index
  TensorRef weight_sum;     // 0-d: sum of w[t] over valid targets (1 per target without weight)
  TensorRef target_weight;  // w[t] (0 where ignored)
};
NllParts nll_parts(Runtime* rt, const TensorRef& input, const TensorRef& target, TensorImpl* weight,
                   int64_t ignore_index, int32_t cdim) {
  NllParts p;
  p.valid = op::ne(target, ignore_index);
  TensorRef zero_index = nn::full(rt, *target, TSR_INT64, {}, 0.0);
  TensorRef safe = op::where(p.valid, target, zero_index);
  TensorRef picked = op::squeeze(op::gather(input, cdim, op::unsqueeze(safe, cdim)), cdim);
  const tsr_dtype dt = input->dtype;
  TensorRef zero = nn::full(rt, *input, dt, {}, 0.0);
  if (weight) {
    TensorRef w = op::index_select(nn::to_dtype(TensorRef::borrow(weight), dt), 0,
                                   op::reshape(safe, {safe->numel}));
    p.target_weight = op::where(p.valid, op::reshape(w, nn::sizes_of(*target)), zero);
  } else {
    p.target_weight = cast(p.valid.get(), dt);
  }
  p.loss = op::where(p.valid, op::mul(op::mul(picked, p.target_weight), -1.0), zero);
  p.weight_sum = op::sum(p.target_weight);
  return p;
}

TensorRef reduce_nll(const NllParts& p, nn::Reduction r) {
  if (r == nn::kNone) return p.loss;
  TensorRef total = op::sum(p.loss);
  return r == nn::kSum ? total : op::div(total, p.weight_sum);
}

void nll_common(OpCall& c) {
  const OpDef& op = *c.op;
  TensorImpl* input = c.tensor(0);
  TensorImpl* target = c.tensor(1);
  TensorImpl* weight = c.opt_tensor(2);
  const nn::Reduction r = nn::check_reduction(op, c.int_arg(3));
  const int64_t ignore_index = c.int_arg(4);
  const int32_t cdim = check_nll_args(op, *input, *target, weight);
  check_targets(op, target, input->sizes[cdim], ignore_index);
  NllParts p = nll_parts(c.runtime, TensorRef::borrow(input), TensorRef::borrow(target), weight,
                         ignore_index, cdim);
  c.set_result(reduce_nll(p, r));
}

// The promoted floating dtype of a pointwise loss's (self, target).
tsr_dtype loss_dtype(const OpDef& op, const TensorImpl& self, const TensorImpl& target) {
  check_same_device(op, self, target, "self", "target");
  const tsr_dtype d = promote_types(self.dtype, target.dtype);
  if (!is_floating(d))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': arguments 'self' ({}) and 'target' ({}) promote to {}, but the loss is only "
         "implemented for floating dtypes; convert them with to()",
         op.name, dtype_name(self.dtype), dtype_name(target.dtype), dtype_name(d));
  return d;
}

}  // namespace

void nll_loss_nd(OpCall& c) { nll_common(c); }

void nll_loss(OpCall& c) {
  TensorImpl* input = c.tensor(0);
  if (input->ndim < 1 || input->ndim > 2)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'self' of shape {}: input tensor should be 1D or 2D (use nll_loss_nd "
         "or nll_loss2d for spatial inputs)",
         c.op->name, nn::shape_text(*input));
  nll_common(c);
}

void nll_loss2d(OpCall& c) {
  TensorImpl* input = c.tensor(0);
  TensorImpl* target = c.tensor(1);
  if (input->ndim != 4)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'self': only batches of spatial inputs supported (4D tensors), but "
         "got input of dimension: {}",
         c.op->name, input->ndim);
  if (target->ndim != 3)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'target': only batches of spatial targets supported (3D tensors) but "
         "got targets of dimension: {}",
         c.op->name, target->ndim);
  nll_common(c);
}

void cross_entropy_loss(OpCall& c) {
  Runtime* rt = c.runtime;
  const OpDef& op = *c.op;
  TensorImpl* self = c.tensor(0);
  TensorImpl* target = c.tensor(1);
  TensorImpl* weight = c.opt_tensor(2);
  const nn::Reduction r = nn::check_reduction(op, c.int_arg(3));
  const int64_t ignore_index = c.int_arg(4);
  const double ls = c.float_arg(5);
  if (!(ls >= 0.0 && ls <= 1.0))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'label_smoothing': label_smoothing must be between 0.0 and 1.0. "
         "Got: {}",
         op.name, ls);
  if (self->ndim == 0)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'self' is 0-d; expected (C) or (N, C, d1, ...) logits", op.name);
  nn::check_floating(op, *self, "self");
  const int32_t cdim = self->ndim >= 2 ? 1 : 0;
  const int64_t classes = self->sizes[cdim];
  TensorRef in = TensorRef::borrow(self);

  // Class probabilities: a target shaped like self.
  if (same_shape(*target, shape_of(*self)) && self->ndim >= 1 &&
      !is_integral(target->dtype, true)) {
    nn::check_floating(op, *target, "target");
    check_same_device(op, *self, *target, "self", "target");
    if (weight && (weight->ndim != 1 || weight->numel != classes))
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': argument 'weight': weight tensor should be defined either for all {} "
           "classes or no classes but got weight tensor of shape: {}",
           op.name, classes, nn::shape_text(*weight));
    TensorRef lp = op::log_softmax(in, cdim);
    TensorRef t = TensorRef::borrow(target);
    if (ls > 0.0) t = op::add(op::mul(t, 1.0 - ls), ls / static_cast<double>(classes));
    TensorRef prod = op::mul(lp, t);
    if (weight) {
      std::vector<int64_t> wshape(static_cast<size_t>(self->ndim), 1);
      wshape[static_cast<size_t>(cdim)] = classes;
      prod = op::mul(prod, op::reshape(TensorRef::borrow(weight), wshape));
    }
    TensorRef loss = op::mul(op::sum(prod, {cdim}, false), -1.0);
    if (r == nn::kMean) {
      const double samples = static_cast<double>(classes > 0 ? self->numel / classes : 0);
      c.set_result(op::div(op::sum(loss), samples));
    } else {
      c.set_result(nn::reduce_loss(loss, r));
    }
    return;
  }

  check_nll_args(op, *self, *target, weight);
  DeviceRecord* dev = self->device();
  const tsr_dtype dts[3] = {self->dtype, target->dtype, weight ? weight->dtype : self->dtype};
  if (const BoundKernel* k = try_find_kernel(OpId::cross_entropy_loss, dev, dts, 3)) {
    TensorRef x = contiguous_of(self);
    TensorRef t = contiguous_of(target);
    TensorRef w = weight ? contiguous_of(weight) : TensorRef();
    TensorRef out = r == nn::kNone ? new_tensor(rt, dev, self->dtype, shape_of(*target))
                                   : new_tensor(rt, dev, self->dtype, 0, nullptr);
    nn::run_fused(op, *k, dev,
                  {v_tensor(x.get()), v_tensor(t.get()), w ? v_tensor(w.get()) : v_none(),
                   c.args[3], c.args[4], c.args[5]},
                  {out.get()});
    c.set_result(out);
    return;
  }
  check_targets(op, target, classes, ignore_index);
  TensorRef lp = op::log_softmax(in, cdim);
  NllParts p = nll_parts(rt, lp, TensorRef::borrow(target), weight, ignore_index, cdim);
  TensorRef nll = reduce_nll(p, r);
  if (ls == 0.0) {
    c.set_result(nll);
    return;
  }
  TensorRef wlp = lp;
  if (weight) {
    std::vector<int64_t> wshape(static_cast<size_t>(self->ndim), 1);
    wshape[static_cast<size_t>(cdim)] = classes;
    wlp = op::mul(lp, op::reshape(nn::to_dtype(TensorRef::borrow(weight), lp->dtype), wshape));
  }
  TensorRef zero = nn::full(rt, *self, lp->dtype, {}, 0.0);
  TensorRef smooth = op::where(p.valid, op::mul(op::sum(wlp, {cdim}, false), -1.0), zero);
  if (r == nn::kMean) {
    smooth = op::div(op::sum(smooth), p.weight_sum);
  } else if (r == nn::kSum) {
    smooth = op::sum(smooth);
  }
  c.set_result(op::add(op::mul(nll, 1.0 - ls), op::mul(smooth, ls / static_cast<double>(classes))));
}

// Note [cross_entropy_loss backward]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// PyTorch has no cross_entropy backward op: its cross_entropy is
// CompositeImplicit (log_softmax then nll_loss), so training saves the
// log-probabilities and runs nll_loss_backward then
// _log_softmax_backward_data. Tessera's cross_entropy_loss is one fused op
// that never materialises log-probabilities, so that pair would need them
// recomputed (one more pass and an N x C tensor) and would take the smoothing
// term through a third path. cross_entropy_loss_backward therefore takes the
// forward's own arguments and gives the gradient w.r.t. self directly: with
// p = softmax(self) along the class dim, s_i the gradient reaching sample i
// (grad_output; its scalar for sum; divided by sum_i w[t_i] for mean, by the
// sample count for probability targets), v_i = (t_i != ignore_index),
// W = sum_c w_c and ls the label smoothing,
//   class indices: grad_ic = s_i v_i ((1-ls) w[t_i] (p_ic - [c = t_i])
//                                     + ls/C (W p_ic - w_c))
//   probabilities: grad_ic = s_i (p_ic sum_c' w_c' q_ic' - w_c q_ic),
//                  q = target (1 - ls) + ls / C.
// One pass set per row on the CPU (max, exp, scale), the sample's two
// coefficients folded in. The gradient w.r.t. a probability target,
// -(1 - ls) s_i w_c log p_ic, is left to the formula (formulas_nn.cpp).
void cross_entropy_loss_backward(OpCall& c) {
  Runtime* rt = c.runtime;
  const OpDef& op = *c.op;
  TensorImpl* grad = c.tensor(0);
  TensorImpl* self = c.tensor(1);
  TensorImpl* target = c.tensor(2);
  TensorImpl* weight = c.opt_tensor(3);
  const nn::Reduction r = nn::check_reduction(op, c.int_arg(4));
  const int64_t ignore_index = c.int_arg(5);
  const double ls = c.float_arg(6);
  if (!(ls >= 0.0 && ls <= 1.0))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'label_smoothing': label_smoothing must be between 0.0 and 1.0. "
         "Got: {}",
         op.name, ls);
  if (self->ndim == 0)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'self' is 0-d; expected (C) or (N, C, d1, ...) logits", op.name);
  nn::check_floating(op, *self, "self");
  nn::check_floating(op, *grad, "grad_output");
  check_same_device(op, *self, *grad, "self", "grad_output");
  const int32_t cdim = self->ndim >= 2 ? 1 : 0;
  const int64_t classes = self->sizes[cdim];
  const bool probabilities =
      same_shape(*target, shape_of(*self)) && !is_integral(target->dtype, true);
  if (probabilities) {
    nn::check_floating(op, *target, "target");
    check_same_device(op, *self, *target, "self", "target");
    if (weight && (weight->ndim != 1 || weight->numel != classes))
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': argument 'weight': weight tensor should be defined either for all {} "
           "classes or no classes but got weight tensor of shape: {}",
           op.name, classes, nn::shape_text(*weight));
  } else {
    check_nll_args(op, *self, *target, weight);
  }
  // grad_output has the loss's shape: the target's (class indices) or the
  // target's without the class dim (probabilities) for none, else 0-d.
  std::vector<int64_t> per_sample = nn::sizes_of(probabilities ? *self : *target);
  if (probabilities) per_sample.erase(per_sample.begin() + cdim);
  const bool grad_ok =
      r == nn::kNone ? nn::sizes_of(*grad) == per_sample : grad->numel == 1 && grad->ndim == 0;
  if (!grad_ok)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'grad_output' of shape {} does not match the loss: expected {} for "
         "reduction {}",
         op.name, nn::shape_text(*grad),
         r == nn::kNone ? nn::shape_text(per_sample) : std::string("one element"),
         static_cast<int>(r));

  DeviceRecord* dev = self->device();
  if (!probabilities) {
    const tsr_dtype dts[4] = {grad->dtype, self->dtype, target->dtype,
                              weight ? weight->dtype : self->dtype};
    if (grad->dtype == self->dtype)
      if (const BoundKernel* k = try_find_kernel(op.id, dev, dts, 4)) {
        TensorRef g = contiguous_of(grad);
        TensorRef x = contiguous_of(self);
        TensorRef t = contiguous_of(target);
        TensorRef w = weight ? contiguous_of(weight) : TensorRef();
        TensorRef out = new_tensor(rt, dev, self->dtype, shape_of(*self));
        nn::run_fused(op, *k, dev,
                      {v_tensor(g.get()), v_tensor(x.get()), v_tensor(t.get()),
                       w ? v_tensor(w.get()) : v_none(), c.args[4], c.args[5], c.args[6]},
                      {out.get()});
        c.set_result(out);
        return;
      }
    check_targets(op, target, classes, ignore_index);
  }

  // The decomposition (any device), in the accumulation dtype.
  const tsr_dtype acc = nn::acc_dtype(self->dtype);
  TensorRef x = cast(self, acc);
  TensorRef p = op::softmax(x, cdim);
  TensorRef g = cast(grad, acc);
  std::vector<int64_t> wshape(static_cast<size_t>(self->ndim), 1);
  wshape[static_cast<size_t>(cdim)] = classes;
  TensorRef w = weight ? op::reshape(cast(weight, acc), wshape) : TensorRef();
  TensorRef result;
  if (probabilities) {
    TensorRef q = cast(target, acc);
    if (ls > 0.0) q = op::add(op::mul(q, 1.0 - ls), ls / static_cast<double>(classes));
    TensorRef s = g;
    if (r == nn::kMean) {
      const double samples = static_cast<double>(classes > 0 ? self->numel / classes : 0);
      s = op::div(g, samples);
    }
    if (r == nn::kNone) s = op::unsqueeze(s, cdim);
    TensorRef wq = w ? op::mul(q, w) : q;
    TensorRef total = op::sum(wq, {cdim}, true);
    result = op::mul(op::sub(op::mul(p, total), wq), s);
  } else {
    NllParts parts = nll_parts(rt, x, TensorRef::borrow(target), weight, ignore_index, cdim);
    TensorRef s = r == nn::kMean ? op::div(g, parts.weight_sum) : g;
    // Per sample: coef = s w[t] (0 where ignored), sv = s v.
    // where(), not a product with v: the mean of an all-ignored batch has
    // s = inf, and its gradient is 0, as PyTorch's.
    TensorRef zero = nn::full(rt, *x, acc, {}, 0.0);
    TensorRef coef = op::where(parts.valid, op::mul(s, parts.target_weight), zero);
    TensorRef sv = op::where(parts.valid, op::mul(s, cast(parts.valid.get(), acc)), zero);
    double weight_total = static_cast<double>(classes);
    TensorRef wt_sum;
    if (weight) wt_sum = op::sum(cast(weight, acc));
    TensorRef zero_index = nn::full(rt, *target, TSR_INT64, {}, 0.0);
    TensorRef safe =
        op::unsqueeze(op::where(parts.valid, TensorRef::borrow(target), zero_index), cdim);
    TensorRef coef_u = op::unsqueeze(coef, cdim);
    TensorRef sv_u = op::unsqueeze(sv, cdim);
    // a = (1 - ls) coef + ls / C W sv, multiplying p.
    TensorRef smooth_w = wt_sum ? op::mul(sv_u, wt_sum) : op::mul(sv_u, weight_total);
    TensorRef a =
        op::add(op::mul(coef_u, 1.0 - ls), op::mul(smooth_w, ls / static_cast<double>(classes)));
    result = op::mul(p, a);
    // - (1 - ls) coef at the target class.
    TensorRef zeros = nn::full(rt, *x, acc, nn::sizes_of(*x), 0.0);
    TensorRef picked =
        op::call(rt, OpId::scatter_src, zeros, cdim, safe, op::mul(coef_u, -(1.0 - ls)));
    result = op::add(result, picked);
    if (ls > 0.0) {
      TensorRef term = w ? op::mul(sv_u, w) : sv_u;
      result = op::sub(result, op::mul(term, ls / static_cast<double>(classes)));
    }
  }
  c.set_result(nn::to_dtype(result, self->dtype));
}

// ---------------------------------------------------------------------------
// Pointwise losses
// ---------------------------------------------------------------------------

void mse_loss(OpCall& c) {
  const nn::Reduction r = nn::check_reduction(*c.op, c.int_arg(2));
  loss_dtype(*c.op, *c.tensor(0), *c.tensor(1));
  TensorRef d = op::sub(TensorRef::borrow(c.tensor(0)), TensorRef::borrow(c.tensor(1)));
  c.set_result(nn::reduce_loss(op::mul(d, d), r));
}

void l1_loss(OpCall& c) {
  const nn::Reduction r = nn::check_reduction(*c.op, c.int_arg(2));
  loss_dtype(*c.op, *c.tensor(0), *c.tensor(1));
  TensorRef d = op::sub(TensorRef::borrow(c.tensor(0)), TensorRef::borrow(c.tensor(1)));
  c.set_result(nn::reduce_loss(op::abs(d), r));
}

void huber_loss(OpCall& c) {
  const nn::Reduction r = nn::check_reduction(*c.op, c.int_arg(2));
  const double delta = c.float_arg(3);
  if (!(delta > 0.0))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'delta' = {}: huber_loss does not support non-positive values for "
         "delta.",
         c.op->name, delta);
  loss_dtype(*c.op, *c.tensor(0), *c.tensor(1));
  TensorRef d = op::sub(TensorRef::borrow(c.tensor(0)), TensorRef::borrow(c.tensor(1)));
  TensorRef ad = op::abs(d);
  TensorRef quadratic = op::mul(op::mul(d, d), 0.5);
  TensorRef linear = op::mul(op::add(ad, -0.5 * delta), delta);
  c.set_result(nn::reduce_loss(op::where(op::lt(ad, delta), quadratic, linear), r));
}

void smooth_l1_loss(OpCall& c) {
  const nn::Reduction r = nn::check_reduction(*c.op, c.int_arg(2));
  const double beta = c.float_arg(3);
  if (!(beta >= 0.0))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'beta' = {}: smooth_l1_loss does not support negative values for "
         "beta.",
         c.op->name, beta);
  loss_dtype(*c.op, *c.tensor(0), *c.tensor(1));
  TensorRef d = op::sub(TensorRef::borrow(c.tensor(0)), TensorRef::borrow(c.tensor(1)));
  TensorRef ad = op::abs(d);
  if (beta == 0.0) {
    c.set_result(nn::reduce_loss(ad, r));
    return;
  }
  TensorRef quadratic = op::div(op::mul(op::mul(d, d), 0.5), beta);
  TensorRef linear = op::add(ad, -0.5 * beta);
  c.set_result(nn::reduce_loss(op::where(op::lt(ad, beta), quadratic, linear), r));
}

void binary_cross_entropy(OpCall& c) {
  const OpDef& op = *c.op;
  TensorImpl* self = c.tensor(0);
  TensorImpl* weight = c.opt_tensor(2);
  const nn::Reduction r = nn::check_reduction(op, c.int_arg(3));
  loss_dtype(op, *self, *c.tensor(1));
  if (weight) check_same_device(op, *self, *weight, "self", "weight");
  TensorRef x = TensorRef::borrow(self);
  TensorRef t = TensorRef::borrow(c.tensor(1));
  if (!self->device()->is_meta && self->numel > 0) {
    TensorRef in_range = op::all(op::mul(op::ge(x, 0.0), op::le(x, 1.0)));
    bool ok = false;
    read_to_host(in_range.get(), &ok);
    if (!ok)
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': argument 'self': all elements of input should be between 0 and 1 (they are "
           "probabilities; apply sigmoid, or use binary_cross_entropy_with_logits)",
           op.name);
  }
  // -(t log x + (1 - t) op::log()), each log clamped at -100 as PyTorch does.
  TensorRef log_x = op::clamp_min(op::log(x), -100.0);
  TensorRef log_1mx = op::clamp_min(op::log(op::add(op::mul(x, -1.0), 1.0)), -100.0);
  TensorRef loss = op::add(op::mul(t, log_x), op::mul(op::add(op::mul(t, -1.0), 1.0), log_1mx));
  loss = op::mul(loss, -1.0);
  if (weight) loss = op::mul(loss, TensorRef::borrow(weight));
  c.set_result(nn::reduce_loss(loss, r));
}

void binary_cross_entropy_with_logits(OpCall& c) {
  const OpDef& op = *c.op;
  TensorImpl* self = c.tensor(0);
  TensorImpl* weight = c.opt_tensor(2);
  TensorImpl* pos_weight = c.opt_tensor(3);
  const nn::Reduction r = nn::check_reduction(op, c.int_arg(4));
  loss_dtype(op, *self, *c.tensor(1));
  if (weight) check_same_device(op, *self, *weight, "self", "weight");
  if (pos_weight) check_same_device(op, *self, *pos_weight, "self", "pos_weight");
  TensorRef x = TensorRef::borrow(self);
  TensorRef t = TensorRef::borrow(c.tensor(1));
  // (1 - t) x + lw (op::log1p() + max(-x, 0)), lw = 1 + (pos_weight - 1) t:
  // no exp of a large positive number, so no overflow.
  TensorRef softplus_neg =
      op::add(op::log1p(op::exp(op::mul(op::abs(x), -1.0))), op::clamp_min(op::mul(x, -1.0), 0.0));
  if (pos_weight) {
    TensorRef lw = op::add(op::mul(op::add(TensorRef::borrow(pos_weight), -1.0), t), 1.0);
    softplus_neg = op::mul(lw, softplus_neg);
  }
  TensorRef loss = op::add(op::mul(op::add(op::mul(t, -1.0), 1.0), x), softplus_neg);
  if (weight) loss = op::mul(loss, TensorRef::borrow(weight));
  c.set_result(nn::reduce_loss(loss, r));
}

void kl_div(OpCall& c) {
  Runtime* rt = c.runtime;
  const nn::Reduction r = nn::check_reduction(*c.op, c.int_arg(2));
  const bool log_target = c.bool_arg(3);
  const tsr_dtype dt = loss_dtype(*c.op, *c.tensor(0), *c.tensor(1));
  TensorRef x = TensorRef::borrow(c.tensor(0));
  TensorRef t = TensorRef::borrow(c.tensor(1));
  TensorRef loss;
  if (log_target) {
    loss = op::mul(op::exp(t), op::sub(t, x));
  } else {
    // xlogy(t, t) - t x, with 0 log 0 = 0
    TensorRef tlogt = op::mul(t, op::log(t));
    tlogt = op::where(op::eq(t, 0), nn::full(rt, *c.tensor(0), dt, {}, 0.0), tlogt);
    loss = op::sub(tlogt, op::mul(t, x));
  }
  c.set_result(nn::reduce_loss(loss, r));
}

}  // namespace tsr::ops
