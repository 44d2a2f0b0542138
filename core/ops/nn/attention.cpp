// nn ops, part 2: scaled_dot_product_attention.
//
//   out = nn::softmax(q k^T * scale + mask) v      scale = 1 / sqrt(E) by default
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
#include <cmath>
#include <limits>

#include "ops/nn/nn_ops.h"
#include "ops/op_impls.h"

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
TensorRef repeat_heads(Runtime* rt, TensorImpl* t, int64_t groups) {
  std::vector<int64_t> sizes = nn::sizes_of(*t);
  const size_t h = sizes.size() - 3;
  TensorRef u = nn::unsqueeze(rt, TensorRef::borrow(t), static_cast<int64_t>(h) + 1);
  std::vector<int64_t> expanded = sizes;
  expanded.insert(expanded.begin() + static_cast<std::ptrdiff_t>(h) + 1, groups);
  u = nn::expand(rt, u, expanded);
  sizes[h] *= groups;
  return nn::reshape(rt, u, sizes);
}

// A view of `t` (contiguous or any layout) with the batch dims in front of the
// last three merged: (B, H, X, Y). Copies when no view exists.
TensorRef as_4d(Runtime* rt, const TensorRef& t) {
  std::vector<int64_t> sizes = nn::sizes_of(*t);
  while (sizes.size() < 4) sizes.insert(sizes.begin(), 1);
  int64_t batch = 1;
  for (size_t d = 0; d + 3 < sizes.size(); ++d) batch *= sizes[d];
  std::vector<int64_t> shape = {batch, sizes[sizes.size() - 3], sizes[sizes.size() - 2],
                                sizes[sizes.size() - 1]};
  int64_t strides[TSR_MAX_DIMS];
  if (compute_view_strides(t->ndim, t->sizes, t->strides, 4, shape.data(), strides))
    return make_alias(t.get(), 4, shape.data(), strides, t->offset);
  return nn::reshape(rt, t, shape);
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
  const int64_t e = q->sizes[q->ndim - 1], l = q->sizes[q->ndim - 2];
  const int64_t s = k->sizes[k->ndim - 2];
  if (k->sizes[k->ndim - 1] != e)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'key' of shape {} has embedding size {} but query {} has {}; they "
         "must match",
         op.name, nn::shape_text(*k), k->sizes[k->ndim - 1], nn::shape_text(*q), e);
  if (v->sizes[v->ndim - 2] != s)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'value' of shape {} has sequence length {} but key {} has {}; they "
         "must match",
         op.name, nn::shape_text(*v), v->sizes[v->ndim - 2], nn::shape_text(*k), s);
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
  const double scale = c.is_none(6) ? 1.0 / std::sqrt(static_cast<double>(e)) : c.float_arg(6);

  // Grouped-query attention: repeat each key/value head.
  TensorRef key = TensorRef::borrow(k), value = TensorRef::borrow(v);
  if (gqa && q->ndim >= 3 && k->ndim >= 3 && v->ndim >= 3) {
    const int64_t hq = q->sizes[q->ndim - 3], hk = k->sizes[k->ndim - 3];
    const int64_t hv = v->sizes[v->ndim - 3];
    if (hk != hv || hk == 0 || hq % hk != 0)
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': enable_gqa=True needs the number of key/value heads ({} and {}) to be equal "
           "and to divide the number of query heads ({})",
           op.name, hk, hv, hq);
    if (hq != hk) {
      key = repeat_heads(rt, k, hq / hk);
      value = repeat_heads(rt, v, hq / hk);
    }
  }
  // Batch dims (everything but the last two) broadcast like matmul's.
  Shape qb, kb, vb;
  qb.ndim = q->ndim - 2;
  kb.ndim = key->ndim - 2;
  vb.ndim = value->ndim - 2;
  std::copy_n(q->sizes, qb.ndim, qb.sizes);
  std::copy_n(key->sizes, kb.ndim, kb.sizes);
  std::copy_n(value->sizes, vb.ndim, vb.sizes);
  Shape batch = broadcast_shapes(qb.ndim, qb.sizes, kb.ndim, kb.sizes);
  batch = broadcast_shapes(batch.ndim, batch.sizes, vb.ndim, vb.sizes);
  std::vector<int64_t> scores_shape(batch.sizes, batch.sizes + batch.ndim);
  scores_shape.push_back(l);
  scores_shape.push_back(s);
  if (mask) {
    bool ok = mask->ndim <= static_cast<int32_t>(scores_shape.size());
    for (int32_t i = 1; ok && i <= mask->ndim; ++i) {
      const int64_t m = mask->sizes[mask->ndim - i];
      ok = m == 1 || m == scores_shape[scores_shape.size() - static_cast<size_t>(i)];
    }
    if (!ok)
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': argument 'attn_mask' of shape {} does not broadcast to the attention "
           "weights' shape {}",
           op.name, nn::shape_text(*mask), nn::shape_text(scores_shape));
  }
  const int64_t ev = value->sizes[value->ndim - 1];

  // The fused kernel: no dropout (it needs the generator), q/k/v batch dims
  // equal (heads included, after the gqa repeat check).
  DeviceRecord* dev = q->device();
  bool batch_match = k->ndim == q->ndim && v->ndim == q->ndim;
  for (int32_t d = 0; batch_match && d < q->ndim - 2; ++d) {
    const bool heads = d == q->ndim - 3;
    batch_match = k->sizes[d] == v->sizes[d] && (k->sizes[d] == q->sizes[d] || (heads && gqa));
  }
  const tsr_dtype dts[4] = {q->dtype, k->dtype, v->dtype, mask ? mask->dtype : q->dtype};
  const BoundKernel* kernel = dropout_p == 0.0 && batch_match
                                  ? try_find_kernel(OpId::scaled_dot_product_attention, dev, dts, 4)
                                  : nullptr;
  if (kernel) {
    TensorRef q4 = as_4d(rt, contiguous_of(q));
    TensorRef k4 = as_4d(rt, contiguous_of(k));
    TensorRef v4 = as_4d(rt, contiguous_of(v));
    TensorRef m4;
    if (mask) {
      std::vector<int64_t> full_shape = nn::sizes_of(*q);
      full_shape.back() = s;
      m4 = as_4d(rt, nn::expand(rt, TensorRef::borrow(mask), full_shape));
    }
    const std::vector<int64_t> out4 = {q4->sizes[0], q4->sizes[1], l, ev};
    TensorRef out = new_tensor(rt, dev, q->dtype, 4, out4.data());
    nn::run_fused(op, *kernel, dev,
                  {v_tensor(q4.get()), v_tensor(k4.get()), v_tensor(v4.get()),
                   m4 ? v_tensor(m4.get()) : v_none(), v_float(0.0), v_bool(is_causal),
                   v_float(scale), v_bool(gqa)},
                  {out.get()});
    std::vector<int64_t> out_shape = nn::sizes_of(*q);
    out_shape.back() = ev;
    c.set_result(nn::reshape(rt, out, out_shape));
    return;
  }

  TensorRef scores =
      nn::matmul(rt, nn::mul_s(rt, TensorRef::borrow(q), scale), nn::transpose(rt, key, -2, -1));
  TensorRef neg_inf = nn::full(rt, *q, scores->dtype, {}, -std::numeric_limits<double>::infinity());
  if (is_causal) {
    scores = nn::where(rt, causal_mask(rt, *q, l, s), scores, neg_inf);
  } else if (mask && mask->dtype == TSR_BOOL) {
    scores = nn::where(rt, TensorRef::borrow(mask), scores, neg_inf);
  } else if (mask) {
    scores = nn::add(rt, scores, TensorRef::borrow(mask));
  }
  TensorRef attn = nn::softmax(rt, scores, -1);
  if (dropout_p > 0.0)
    attn = call_op(rt, OpId::dropout, {nn::tv(attn), v_float(dropout_p), v_bool(true)});
  c.set_result(nn::matmul(rt, attn, value));
}

}  // namespace tsr::ops
