// nn attention: scaled_dot_product_attention.
//
//   out = op::softmax() v      scale = 1 / sqrt(E) by default
//
// Shapes: query (..., Hq, L, E), key (..., Hkv, S, E), value (..., Hkv, S, Ev);
// without enable_gqa the batch dims (heads included) broadcast as in matmul;
// with it Hq must be a multiple of Hkv and each group of Hq / Hkv query heads
// attends to one key/value head (PyTorch's repeat_interleave of k and v).
// attn_mask broadcasts to (..., L, S): a bool mask keeps True (attend) entries
// and sets the others to -inf; a floating mask is added. is_causal keeps the
// lower triangle j <= i (top-left aligned, as PyTorch) and excludes attn_mask.
// dropout_p > 0 applies dropout to the attention weights (default generator).
//
// Fully masked rows: softmax over a row of -inf is 0 / 0, so the row's output
// is NaN. This is the definition (float64 softmax) and what PyTorch's math path
// (and torch 1.13's softmax) gives; the fused CPU kernel produces NaN too. A
// query with no keys at all (S = 0) gives zeros (an empty sum), as matmul does.
//
// Training (Note [Attention backward from the saved logsumexp]): without
// dropout and with key/value batch dims equal to query's, the decomposition
// recorded under autograd is one call of scaled_dot_product_attention_forward,
// which also returns each query row's logsumexp of the masked scores; its
// formula calls scaled_dot_product_attention_backward, which recomputes the
// attention weights P = exp(scores - logsumexp) from q and k and gives
//   D = rowsum(dO * O),  dS = P * (dO V^T - D),
//   dQ = scale dS K,  dK = scale dS^T Q,  dV = P^T dO
// (dK, dV summed over each group of query heads under enable_gqa). Both are
// fusable: the decompositions below run on every device; the CPU plugin
// tiles them so no L x S matrix is kept.
#include <cmath>
#include <cstddef>
#include <limits>
#include <utility>
#include <vector>

#include "dispatch/op_api.h"
#include "dispatch/values.h"
#include "ops/nn/nn_ops.h"
#include "ops/op_impls.h"
#include "tensor/grad_mode.h"

namespace tsr::ops {

namespace {

// The (L, S) lower-triangular bool mask j <= i.
TensorRef causal_mask(Runtime* rt, const TensorImpl& like, int64_t l, int64_t s) {
  const std::vector<int64_t> shape = {l, s};
  TensorRef mask = new_tensor(rt, like.device(), TSR_BOOL, 2, shape.data());
  if (!like.device()->is_meta && l * s > 0) {
    std::vector<uint8_t> host(static_cast<size_t>(l * s));
    for (int64_t i = 0; i < l; ++i)
      for (int64_t j = 0; j < s; ++j) host[static_cast<size_t>(i * s + j)] = j <= i ? 1 : 0;
    write_from_host(mask.get(), host.data());
  }
  return mask;
}

// k or v (..., Hkv, S, X) with each head repeated `groups` times consecutively:
// (..., Hkv * groups, S, X) (views; reshape copies).
TensorRef repeat_heads(TensorImpl* t, int64_t groups) {
  std::vector<int64_t> sizes = nn::sizes_of(*t);
  const size_t h = sizes.size() - 3;
  TensorRef u = op::unsqueeze(TensorRef::borrow(t), static_cast<int64_t>(h) + 1);
  std::vector<int64_t> expanded = sizes;
  expanded.insert(expanded.begin() + static_cast<std::ptrdiff_t>(h) + 1, groups);
  u = op::expand(u, expanded);
  sizes[h] *= groups;
  return op::reshape(u, sizes);
}

// A view of `t` (contiguous or any layout) with the batch dims in front of the
// last three merged: (B, H, X, Y). Copies when no view exists.
TensorRef as_4d(const TensorRef& t) {
  std::vector<int64_t> sizes = nn::sizes_of(*t);
  while (sizes.size() < 4) sizes.insert(sizes.begin(), 1);
  int64_t batch = 1;
  for (size_t d = 0; d + 3 < sizes.size(); ++d) batch *= sizes[d];
  std::vector<int64_t> shape = {batch, sizes[sizes.size() - 3], sizes[sizes.size() - 2],
                                sizes[sizes.size() - 1]};
  int64_t strides[TSR_MAX_DIMS];
  if (compute_view_strides(t->ndim, t->sizes, t->strides, 4, shape.data(), strides))
    return make_alias(t.get(), 4, shape.data(), strides, t->offset);
  return op::reshape(t, shape);
}

// What every attention op checks: q (..., Hq, L, E), k (..., Hkv, S, E),
// v (..., Hkv, S, Ev), same floating dtype and device; enable_gqa's head
// counts; a mask of bool or query's dtype broadcasting to the weights' shape.
struct AttentionShapes {
  int64_t l = 0, s = 0, e = 0, ev = 0;
  double scale = 1.0;
  bool repeat = false;  // gqa with Hq != Hkv: k and v heads are repeated
  std::vector<int64_t> scores_shape;
  bool batch_match = false;  // k and v have q's batch dims (heads up to gqa)
};

AttentionShapes check_attention(const OpDef& op, TensorImpl* q, TensorImpl* k, TensorImpl* v,
                                TensorImpl* mask, double dropout_p, bool is_causal,
                                const tsr_value& scale_arg, bool gqa) {
  const char* names[3] = {"query", "key", "value"};
  TensorImpl* qkv[3] = {q, k, v};
  for (int i = 0; i < 3; ++i) {
    if (qkv[i]->ndim < 2)
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': argument '{}' of shape {} needs at least 2 dims (..., sequence, embedding)",
           op.name, names[i], nn::shape_text(*qkv[i]));
    nn::check_floating(op, *qkv[i], names[i]);
    if (i > 0) check_same_device(op, *q, *qkv[i], "query", names[i]);
  }
  if (k->dtype != q->dtype || v->dtype != q->dtype)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': Expected query, key, and value to have the same dtype, but got query.dtype: "
         "{} key.dtype: {} and value.dtype: {} instead.",
         op.name, dtype_name(q->dtype), dtype_name(k->dtype), dtype_name(v->dtype));
  AttentionShapes a;
  a.e = q->sizes[q->ndim - 1];
  a.l = q->sizes[q->ndim - 2];
  a.s = k->sizes[k->ndim - 2];
  a.ev = v->sizes[v->ndim - 1];
  if (k->sizes[k->ndim - 1] != a.e)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'key' of shape {} has embedding size {} but query {} has {}; they "
         "must match",
         op.name, nn::shape_text(*k), k->sizes[k->ndim - 1], nn::shape_text(*q), a.e);
  if (v->sizes[v->ndim - 2] != a.s)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'value' of shape {} has sequence length {} but key {} has {}; they "
         "must match",
         op.name, nn::shape_text(*v), v->sizes[v->ndim - 2], nn::shape_text(*k), a.s);
  if (!(dropout_p >= 0.0 && dropout_p <= 1.0))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'dropout_p': dropout probability has to be between 0 and 1, but got "
         "{}",
         op.name, dropout_p);
  if (is_causal && mask)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'attn_mask': _scaled_dot_product_attention: Explicit attn_mask "
         "should not be set when is_causal=True",
         op.name);
  if (mask) {
    check_same_device(op, *q, *mask, "query", "attn_mask");
    if (mask->dtype != TSR_BOOL && mask->dtype != q->dtype)
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': argument 'attn_mask' has dtype {}: Expected attn_mask dtype to be bool or to "
           "match query dtype ({})",
           op.name, dtype_name(mask->dtype), dtype_name(q->dtype));
  }
  a.scale =
      scale_arg.tag == TSR_VALUE_NONE ? 1.0 / std::sqrt(static_cast<double>(a.e)) : scale_arg.u.f;
  // Grouped-query attention: each key/value head serves Hq / Hkv query heads.
  Shape kb, vb, qb;
  qb.ndim = q->ndim - 2;
  kb.ndim = k->ndim - 2;
  vb.ndim = v->ndim - 2;
  std::copy_n(q->sizes, qb.ndim, qb.sizes);
  std::copy_n(k->sizes, kb.ndim, kb.sizes);
  std::copy_n(v->sizes, vb.ndim, vb.sizes);
  if (gqa && q->ndim >= 3 && k->ndim >= 3 && v->ndim >= 3) {
    const int64_t hq = q->sizes[q->ndim - 3], hk = k->sizes[k->ndim - 3];
    const int64_t hv = v->sizes[v->ndim - 3];
    if (hk != hv || hk == 0 || hq % hk != 0)
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': enable_gqa=True needs the number of key/value heads ({} and {}) to be equal "
           "and to divide the number of query heads ({})",
           op.name, hk, hv, hq);
    if (hq != hk) {
      a.repeat = true;
      kb.sizes[kb.ndim - 1] = hq;
      vb.sizes[vb.ndim - 1] = hq;
    }
  }
  // Batch dims (everything but the last two) broadcast like matmul's.
  Shape batch = broadcast_shapes(qb.ndim, qb.sizes, kb.ndim, kb.sizes);
  batch = broadcast_shapes(batch.ndim, batch.sizes, vb.ndim, vb.sizes);
  a.scores_shape.assign(batch.sizes, batch.sizes + batch.ndim);
  a.scores_shape.push_back(a.l);
  a.scores_shape.push_back(a.s);
  if (mask) {
    bool ok = mask->ndim <= static_cast<int32_t>(a.scores_shape.size());
    for (int32_t i = 1; ok && i <= mask->ndim; ++i) {
      const int64_t m = mask->sizes[mask->ndim - i];
      ok = m == 1 || m == a.scores_shape[a.scores_shape.size() - static_cast<size_t>(i)];
    }
    if (!ok)
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': argument 'attn_mask' of shape {} does not broadcast to the attention "
           "weights' shape {}",
           op.name, nn::shape_text(*mask), nn::shape_text(a.scores_shape));
  }
  a.batch_match = k->ndim == q->ndim && v->ndim == q->ndim;
  for (int32_t d = 0; a.batch_match && d < q->ndim - 2; ++d) {
    const bool heads = d == q->ndim - 3;
    a.batch_match = k->sizes[d] == v->sizes[d] && (k->sizes[d] == q->sizes[d] || (heads && gqa));
  }
  return a;
}

// key and value with their heads repeated for gqa (views of the inputs
// otherwise).
std::pair<TensorRef, TensorRef> kv_for_queries(const AttentionShapes& a, TensorImpl* q,
                                               TensorImpl* k, TensorImpl* v) {
  if (!a.repeat) return {TensorRef::borrow(k), TensorRef::borrow(v)};
  const int64_t groups = q->sizes[q->ndim - 3] / k->sizes[k->ndim - 3];
  return {repeat_heads(k, groups), repeat_heads(v, groups)};
}

// scale q k^T with the mask applied: bool false and causal j > i give -inf,
// a floating mask is added.
TensorRef masked_scores(Runtime* rt, const AttentionShapes& a, TensorImpl* q, const TensorRef& key,
                        TensorImpl* mask, bool is_causal) {
  TensorRef scores = op::matmul(op::mul(TensorRef::borrow(q), a.scale), op::transpose(key, -2, -1));
  TensorRef neg_inf = nn::full(rt, *q, scores->dtype, {}, -std::numeric_limits<double>::infinity());
  if (is_causal) {
    scores = op::where(causal_mask(rt, *q, a.l, a.s), scores, neg_inf);
  } else if (mask && mask->dtype == TSR_BOOL) {
    scores = op::where(TensorRef::borrow(mask), scores, neg_inf);
  } else if (mask) {
    scores = op::add(scores, TensorRef::borrow(mask));
  }
  return scores;
}

// The fused kernels' mask argument: attn_mask expanded to (B, Hq, L, S)
// (broadcast dims stride 0), or None.
TensorRef mask_4d(TensorImpl* q, TensorImpl* mask, int64_t s) {
  if (mask == nullptr) return TensorRef();
  std::vector<int64_t> full_shape = nn::sizes_of(*q);
  full_shape.back() = s;
  return as_4d(op::expand(TensorRef::borrow(mask), full_shape));
}

std::vector<int64_t> with_last(const TensorImpl& t, int64_t last) {
  std::vector<int64_t> shape = nn::sizes_of(t);
  shape.back() = last;
  return shape;
}

// The fused kernels' (B, H, X) view of a (..., H, X) tensor.
TensorRef as_3d(const TensorRef& t) {
  std::vector<int64_t> sizes = nn::sizes_of(*t);
  sizes.push_back(1);
  TensorRef u = as_4d(op::reshape(t, sizes));
  const std::vector<int64_t> shape = {u->sizes[0], u->sizes[1], u->sizes[2]};
  return op::reshape(u, shape);
}

void require_batch_match(const OpDef& op, const AttentionShapes& a, const TensorImpl& q,
                         const TensorImpl& k, const TensorImpl& v) {
  if (!a.batch_match)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': arguments 'key' {} and 'value' {} must have the batch dims of 'query' {} "
         "(heads may differ with enable_gqa); scaled_dot_product_attention broadcasts them",
         op.name, nn::shape_text(k), nn::shape_text(v), nn::shape_text(q));
}

void check_like(const OpDef& op, const TensorImpl& q, const TensorImpl& t, const char* name,
                const std::vector<int64_t>& shape) {
  check_same_device(op, q, t, "query", name);
  if (t.dtype != q.dtype)
    fail(TSR_INVALID_ARGUMENT, "op '{}': argument '{}' has dtype {}; it must match query's ({})",
         op.name, name, dtype_name(t.dtype), dtype_name(q.dtype));
  bool ok = t.ndim == static_cast<int32_t>(shape.size());
  for (int32_t d = 0; ok && d < t.ndim; ++d) ok = t.sizes[d] == shape[static_cast<size_t>(d)];
  if (!ok)
    fail(TSR_INVALID_ARGUMENT, "op '{}': argument '{}' of shape {} must have shape {}", op.name,
         name, nn::shape_text(t), nn::shape_text(shape));
}

}  // namespace

void scaled_dot_product_attention(OpCall& c) {
  Runtime* rt = c.runtime;
  const OpDef& op = *c.op;
  TensorImpl* q = c.tensor(0);
  TensorImpl* k = c.tensor(1);
  TensorImpl* v = c.tensor(2);
  TensorImpl* mask = c.opt_tensor(3);
  const double dropout_p = c.float_arg(4);
  const bool is_causal = c.bool_arg(5);
  const bool gqa = c.bool_arg(7);
  const AttentionShapes a =
      check_attention(op, q, k, v, mask, dropout_p, is_causal, c.args[6], gqa);

  // The fused kernel: no dropout (it needs the generator), q/k/v batch dims
  // equal (heads included, after the gqa repeat check).
  DeviceRecord* dev = q->device();
  const tsr_dtype dts[4] = {q->dtype, k->dtype, v->dtype, mask ? mask->dtype : q->dtype};
  const BoundKernel* kernel = dropout_p == 0.0 && a.batch_match
                                  ? try_find_kernel(OpId::scaled_dot_product_attention, dev, dts, 4)
                                  : nullptr;
  if (kernel) {
    TensorRef q4 = as_4d(contiguous_of(q));
    TensorRef k4 = as_4d(contiguous_of(k));
    TensorRef v4 = as_4d(contiguous_of(v));
    TensorRef m4 = mask_4d(q, mask, a.s);
    const std::vector<int64_t> out4 = {q4->sizes[0], q4->sizes[1], a.l, a.ev};
    TensorRef out = new_tensor(rt, dev, q->dtype, 4, out4.data());
    nn::run_fused(op, *kernel, dev,
                  {v_tensor(q4.get()), v_tensor(k4.get()), v_tensor(v4.get()),
                   m4 ? v_tensor(m4.get()) : v_none(), v_float(0.0), v_bool(is_causal),
                   v_float(a.scale), v_bool(gqa)},
                  {out.get()});
    c.set_result(op::reshape(out, with_last(*q, a.ev)));
    return;
  }
  // Under autograd (the decomposition is what records): one op whose formula
  // runs the fused backward (Note [Attention backward from the saved
  // logsumexp]).
  const bool recording =
      autograd::grad_enabled() && (q->requires_grad || k->requires_grad || v->requires_grad ||
                                   (mask != nullptr && mask->requires_grad));
  if (dropout_p == 0.0 && a.batch_match && recording) {
    OpResults r = op::call_all(rt, OpId::scaled_dot_product_attention_forward, q, k, v, mask,
                               is_causal, a.scale, gqa);
    c.set_result(std::move(r.r[0]));
    return;
  }

  auto [key, value] = kv_for_queries(a, q, k, v);
  TensorRef attn = op::softmax(masked_scores(rt, a, q, key, mask, is_causal), -1);
  if (dropout_p > 0.0) attn = op::call(rt, OpId::dropout, attn, dropout_p, true);
  c.set_result(op::matmul(attn, value));
}

// Note [Attention backward from the saved logsumexp]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// The backward needs the attention weights P = softmax(scores). Keeping P
// (B x H x L x S) is what the composed form did and what flash attention
// avoids; recomputing it needs each row's normaliser. Two ways to have it:
// the backward recomputes the row maxima and sums (one more q k^T pass,
// a fifth of the backward's work), or the forward, which has them anyway,
// returns them. Tessera does the latter, as PyTorch's
// _scaled_dot_product_flash_attention_for_cpu does: a separate op
// (scaled_dot_product_attention_forward -> (out, logsumexp)), so that
// scaled_dot_product_attention keeps PyTorch's schema and its inference
// kernel writes no extra output. scaled_dot_product_attention decomposes
// into it only when autograd records (grad mode on and some input requiring
// grad: the call is then a composite's decomposition); logsumexp is a
// statistic (non-differentiable, like native_layer_norm's mean and rstd).
// The logsumexp of a fully masked row is -inf (its output NaN); of S = 0,
// -inf with a zero output.
void scaled_dot_product_attention_forward(OpCall& c) {
  Runtime* rt = c.runtime;
  const OpDef& op = *c.op;
  TensorImpl* q = c.tensor(0);
  TensorImpl* k = c.tensor(1);
  TensorImpl* v = c.tensor(2);
  TensorImpl* mask = c.opt_tensor(3);
  const bool is_causal = c.bool_arg(4);
  const bool gqa = c.bool_arg(6);
  const AttentionShapes a = check_attention(op, q, k, v, mask, 0.0, is_causal, c.args[5], gqa);
  require_batch_match(op, a, *q, *k, *v);
  DeviceRecord* dev = q->device();
  const tsr_dtype dts[4] = {q->dtype, k->dtype, v->dtype, mask ? mask->dtype : q->dtype};
  if (const BoundKernel* kernel =
          try_find_kernel(OpId::scaled_dot_product_attention_forward, dev, dts, 4)) {
    TensorRef q4 = as_4d(contiguous_of(q));
    TensorRef k4 = as_4d(contiguous_of(k));
    TensorRef v4 = as_4d(contiguous_of(v));
    TensorRef m4 = mask_4d(q, mask, a.s);
    const std::vector<int64_t> out4 = {q4->sizes[0], q4->sizes[1], a.l, a.ev};
    TensorRef out = new_tensor(rt, dev, q->dtype, 4, out4.data());
    TensorRef lse = new_tensor(rt, dev, q->dtype, 3, out4.data());
    nn::run_fused(
        op, *kernel, dev,
        {v_tensor(q4.get()), v_tensor(k4.get()), v_tensor(v4.get()),
         m4 ? v_tensor(m4.get()) : v_none(), v_bool(is_causal), v_float(a.scale), v_bool(gqa)},
        {out.get(), lse.get()});
    std::vector<int64_t> lse_shape = nn::sizes_of(*q);
    lse_shape.pop_back();
    c.set_result(op::reshape(out, with_last(*q, a.ev)));
    c.set_result(op::reshape(lse, lse_shape));
    return;
  }
  auto [key, value] = kv_for_queries(a, q, k, v);
  TensorRef scores = masked_scores(rt, a, q, key, mask, is_causal);
  TensorRef out = op::matmul(op::softmax(scores, -1), value);
  const int64_t last = -1;
  TensorRef lse = op::call(rt, OpId::logsumexp, scores, op::ints(&last, 1), false);
  c.set_result(std::move(out));
  c.set_result(std::move(lse));
}

void scaled_dot_product_attention_backward(OpCall& c) {
  Runtime* rt = c.runtime;
  const OpDef& op = *c.op;
  TensorImpl* g = c.tensor(0);
  TensorImpl* q = c.tensor(1);
  TensorImpl* k = c.tensor(2);
  TensorImpl* v = c.tensor(3);
  TensorImpl* o = c.tensor(4);
  TensorImpl* lse = c.tensor(5);
  TensorImpl* mask = c.opt_tensor(6);
  const bool is_causal = c.bool_arg(7);
  const bool gqa = c.bool_arg(9);
  const AttentionShapes a = check_attention(op, q, k, v, mask, 0.0, is_causal, c.args[8], gqa);
  require_batch_match(op, a, *q, *k, *v);
  const std::vector<int64_t> out_shape = with_last(*q, a.ev);
  std::vector<int64_t> lse_shape = nn::sizes_of(*q);
  lse_shape.pop_back();
  check_like(op, *q, *g, "grad_out", out_shape);
  check_like(op, *q, *o, "out", out_shape);
  check_like(op, *q, *lse, "logsumexp", lse_shape);

  DeviceRecord* dev = q->device();
  const tsr_dtype dts[7] = {
      g->dtype, q->dtype, k->dtype, v->dtype, o->dtype, lse->dtype, mask ? mask->dtype : q->dtype};
  if (const BoundKernel* kernel =
          try_find_kernel(OpId::scaled_dot_product_attention_backward, dev, dts, 7)) {
    TensorRef g4 = as_4d(contiguous_of(g));
    TensorRef q4 = as_4d(contiguous_of(q));
    TensorRef k4 = as_4d(contiguous_of(k));
    TensorRef v4 = as_4d(contiguous_of(v));
    TensorRef o4 = as_4d(contiguous_of(o));
    TensorRef l3 = as_3d(contiguous_of(lse));
    TensorRef m4 = mask_4d(q, mask, a.s);
    TensorRef dq = new_tensor(rt, dev, q->dtype, 4, q4->sizes);
    TensorRef dk = new_tensor(rt, dev, q->dtype, 4, k4->sizes);
    TensorRef dv = new_tensor(rt, dev, q->dtype, 4, v4->sizes);
    nn::run_fused(op, *kernel, dev,
                  {v_tensor(g4.get()), v_tensor(q4.get()), v_tensor(k4.get()), v_tensor(v4.get()),
                   v_tensor(o4.get()), v_tensor(l3.get()), m4 ? v_tensor(m4.get()) : v_none(),
                   v_bool(is_causal), v_float(a.scale), v_bool(gqa)},
                  {dq.get(), dk.get(), dv.get()});
    c.set_result(op::reshape(dq, nn::sizes_of(*q)));
    c.set_result(op::reshape(dk, nn::sizes_of(*k)));
    c.set_result(op::reshape(dv, nn::sizes_of(*v)));
    return;
  }
  auto [key, value] = kv_for_queries(a, q, k, v);
  TensorRef scores = masked_scores(rt, a, q, key, mask, is_causal);
  TensorRef p = op::exp(op::sub(scores, op::unsqueeze(TensorRef::borrow(lse), -1)));
  TensorRef grad = TensorRef::borrow(g);
  TensorRef dv = op::matmul(op::transpose(p, -2, -1), grad);
  TensorRef dp = op::matmul(grad, op::transpose(value, -2, -1));
  TensorRef d = op::sum(op::mul(grad, TensorRef::borrow(o)), {-1}, true);
  TensorRef ds = op::mul(p, op::sub(dp, d));
  TensorRef dq = op::mul(op::matmul(ds, key), a.scale);
  TensorRef dk = op::mul(op::matmul(op::transpose(ds, -2, -1), TensorRef::borrow(q)), a.scale);
  if (a.repeat) {
    // (..., Hkv * groups, S, X) -> (..., Hkv, groups, S, X), summed over groups.
    const int64_t hk = k->sizes[k->ndim - 3];
    const int64_t groups = q->sizes[q->ndim - 3] / hk;
    for (TensorRef* t : {&dk, &dv}) {
      std::vector<int64_t> sizes = nn::sizes_of(**t);
      const size_t h = sizes.size() - 3;
      sizes[h] = hk;
      sizes.insert(sizes.begin() + static_cast<std::ptrdiff_t>(h) + 1, groups);
      *t = op::sum(op::reshape(*t, sizes), {static_cast<int64_t>(h) + 1}, false);
    }
  }
  c.set_result(std::move(dq));
  c.set_result(std::move(dk));
  c.set_result(std::move(dv));
}

}  // namespace tsr::ops
