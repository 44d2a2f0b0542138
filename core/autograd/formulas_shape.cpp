// formulas_shape.cpp - derivatives of joining, splitting and view ops, and
// of the reductions that pick elements (amax/amin/max/min, prod) or scan
// (cumsum). A view's gradient goes back to its input through the inverse
// view or by writing into zeros of the input's shape.
#include <cmath>
#include <vector>

#include "autograd/formulas.h"
#include "autograd/grad_ops.h"
#include "dispatch/op_api.h"
#include "dispatch/values.h"
#include "ops/shorthands.h"
#include "runtime/device.h"

namespace tsr::autograd {
namespace {

using namespace op;
using op::add;  // not autograd::add (grad_ops.h)

R g_of(BackwardContext& c, int k = 0) { return TensorRef::borrow(c.grad(k)); }

int64_t wrap(int64_t dim, int32_t ndim) { return dim < 0 ? dim + ndim : dim; }

// cat(tensors, dim): each input gets its slice of g (1-d empty inputs, which
// cat skips, get nothing).
void cat_f(BackwardContext& c) {
  const int32_t n = c.list_size(0);
  int64_t dim = -1;
  for (int32_t j = 0; j < n && dim < 0; ++j) {
    const TensorMeta& m = c.list_meta(0, j);
    if (!(m.ndim == 1 && m.sizes[0] == 0)) dim = wrap(c.int_arg(1), m.ndim);
  }
  int64_t offset = 0;
  for (int32_t j = 0; j < n; ++j) {
    const TensorMeta& m = c.list_meta(0, j);
    if (m.ndim == 1 && m.sizes[0] == 0) continue;
    const int64_t size = m.sizes[dim];
    if (c.list_needs(0, j)) c.set_list(0, j, narrow(g_of(c), dim, offset, size));
    offset += size;
  }
}
// stack(tensors, dim): entry j is g.select(dim, j).
void stack_f(BackwardContext& c) {
  const int32_t n = c.list_size(0);
  const int64_t dim = wrap(c.int_arg(1), c.list_meta(0, 0).ndim + 1);
  for (int32_t j = 0; j < n; ++j) {
    if (c.list_needs(0, j)) c.set_list(0, j, op::call(OpId::select_int, c.grad(), dim, j));
  }
}
// split/chunk (list outputs along `dim`): g = cat of the outputs' gradients.
void split_f(BackwardContext& c, int64_t dim_arg) {
  const int32_t n = c.num_outputs();
  const int64_t dim = wrap(dim_arg, c.input_meta(0).ndim);
  std::vector<TensorImpl*> parts;
  for (int32_t k = 0; k < n; ++k) parts.push_back(c.grad(k));
  c.set(0, op::call(c.runtime(), OpId::cat, parts, dim));
}
void split_dim2_f(BackwardContext& c) { split_f(c, c.int_arg(2)); }
void unbind_f(BackwardContext& c) {
  const int32_t n = c.num_outputs();
  std::vector<TensorImpl*> parts;
  for (int32_t k = 0; k < n; ++k) parts.push_back(c.grad(k));
  const int64_t dim = wrap(c.int_arg(1), c.input_meta(0).ndim);
  c.set(0, op::call(c.runtime(), OpId::stack, parts, dim));
}

// Writes g into the view `make_view(zeros)` of zeros shaped like the input.
template <class MakeView>
void into_zeros(BackwardContext& c, MakeView make_view) {
  R z = zeros_of(c.runtime(), c.input_meta(0));
  R view = make_view(z);
  op::call(c.runtime(), OpId::copy_, view, c.grad());
  c.set(0, z);
}
void narrow_f(BackwardContext& c) {
  into_zeros(c, [&](const R& z) { return narrow(z, c.int_arg(1), c.int_arg(2), c.int_arg(3)); });
}
void diagonal_f(BackwardContext& c) {
  into_zeros(c, [&](const R& z) {
    return op::call(OpId::diagonal, z, c.int_arg(1), c.int_arg(2), c.int_arg(3));
  });
}
// movedim(source, destination) is undone by movedim(destination, source).
void movedim_f(BackwardContext& c) {
  c.set(0, op::call(c.op().id == OpId::movedim_intlist || c.op().id == OpId::moveaxis_intlist
                        ? OpId::movedim_intlist
                        : OpId::movedim_int,
                    c.grad(), c.arg(2), c.arg(1)));
}
void swapaxes_f(BackwardContext& c) {
  c.set(0, op::call(OpId::transpose_int, c.grad(), c.int_arg(1), c.int_arg(2)));
}
void to_input_shape_f(BackwardContext& c) {
  const TensorMeta& m = c.input_meta(0);
  c.set(0, op::call(OpId::reshape, c.grad(), op::ints(m.sizes, m.ndim)));
}
void pass_f(BackwardContext& c) { c.set(0, g_of(c)); }  // expand_as, broadcast_to

// as_strided(self, size, stride, offset): both the output and the input are
// sets of storage positions. The gradient is scatter-added into a flat buffer
// over the storage positions the output reads, then gathered at the
// positions the input covers (overlapping windows add up).
R storage_positions(Runtime* rt, tsr_device device, int32_t ndim, const int64_t* sizes,
                    const int64_t* strides, int64_t offset) {
  // On the input's device: scatter_add/gather below mix them with its data.
  R pos = op::call(rt, OpId::full, op::ints(nullptr, 0), static_cast<int64_t>(offset), TSR_INT64,
                   op::none, device);
  for (int32_t d = 0; d < ndim; ++d) {
    R r = op::call(rt, OpId::arange, static_cast<int64_t>(sizes[d]), TSR_INT64, op::none, device);
    int64_t shape[TSR_MAX_DIMS];
    for (int32_t e = 0; e < ndim; ++e) shape[e] = e == d ? sizes[d] : 1;
    r = op::call(OpId::reshape, r, op::ints(shape, ndim));
    pos = add(pos, op::call(OpId::mul_Scalar, r, static_cast<int64_t>(strides[d])));
  }
  return pos;
}
void as_strided_f(BackwardContext& c) {
  Runtime* rt = c.runtime();
  R x = c.input(0);
  const auto size = c.ints(1);
  const auto stride = c.ints(2);
  const int64_t offset = c.is_none(3) ? x->offset : c.int_arg(3);
  const int32_t n = static_cast<int32_t>(size.size());
  const tsr_device device = c.input_meta(0).device->device;
  R out_pos = storage_positions(rt, device, n, size.data(), stride.data(), offset);
  out_pos = op::call(OpId::expand, out_pos, op::ints(size.data(), n));
  R in_pos = storage_positions(rt, device, x->ndim, x->sizes, x->strides, x->offset);
  in_pos = op::call(OpId::expand, in_pos, op::ints(x->sizes, x->ndim));
  const int64_t flat_n[1] = {static_cast<int64_t>(x->storage->nbytes / x->itemsize())};
  const int64_t minus_one[1] = {-1};
  R flat = op::call(rt, OpId::zeros, op::ints(flat_n, 1), c.grad()->dtype, op::none, device);
  R g = op::call(OpId::reshape, c.grad(), op::ints(minus_one, 1));
  R idx = op::call(OpId::reshape, out_pos, op::ints(minus_one, 1));
  flat = op::call(OpId::scatter_add, flat, 0, idx, g);
  R gathered =
      op::call(OpId::gather, flat, 0, op::call(OpId::reshape, in_pos, op::ints(minus_one, 1)));
  c.set(0, op::call(OpId::reshape, gathered, op::ints(x->sizes, x->ndim)));
}

// ---- reductions that pick or scan ----

// The output gradient (and result) broadcast back over reduced dims.
R unreduce(BackwardContext& c, const R& v, const tsr_value* dims, bool keepdim) {
  const TensorMeta& m = c.input_meta(0);
  R out = v;
  if (!keepdim && m.ndim > 0) {
    bool reduced[TSR_MAX_DIMS] = {};
    const bool all = dims == nullptr || dims->tag == TSR_VALUE_NONE || dims->len == 0;
    for (int32_t d = 0; d < m.ndim; ++d) reduced[d] = all;
    if (!all) {
      for (int32_t k = 0; k < dims->len; ++k) reduced[wrap(dims->u.ints[k], m.ndim)] = true;
    }
    int64_t sizes[TSR_MAX_DIMS];
    for (int32_t d = 0; d < m.ndim; ++d) sizes[d] = reduced[d] ? 1 : m.sizes[d];
    out = op::call(OpId::reshape, out, op::ints(sizes, m.ndim));
  }
  return op::call(OpId::expand, out, op::ints(m.sizes, m.ndim));
}

// amax/amin/max/min: the gradient shared evenly by the elements equal to the
// extreme (PyTorch's rule for amax/amin and the all-reduce max/min).
void extreme_f(BackwardContext& c, const tsr_value* dims, bool keepdim) {
  R x = c.input(0);
  R y = unreduce(c, c.result(), dims, keepdim);
  R g = unreduce(c, g_of(c), dims, keepdim);
  R hit = op::call(OpId::_to_copy, op::call(OpId::eq_Tensor, x, y), x->dtype);
  const int64_t none_dims = 0;
  R count = dims == nullptr ? op::call(OpId::sum, hit)
                            : op::call(OpId::sum_dim_IntList, hit, *dims, true);
  (void)none_dims;
  if (dims != nullptr) count = op::call(OpId::expand, count, op::ints(x->sizes, x->ndim));
  c.set(0, div(mul(g, hit), count));
}
void amax_f(BackwardContext& c) { extreme_f(c, &c.arg(1), c.bool_arg(2)); }
void max_all_f(BackwardContext& c) { extreme_f(c, nullptr, false); }

// prod: g * prod of the other elements, exact with zeros: a position that is
// the only zero gets the product of the rest, every other position next to a
// zero gets 0.
void prod_f(BackwardContext& c, const tsr_value* dims, bool keepdim) {
  R x = c.input(0);
  R is_zero = op::call(OpId::eq_Scalar, x, 0.0);
  R ones = op::call(OpId::ones_like, x);
  R nonzero = where(is_zero, ones, x);
  R zeros_f = op::call(OpId::_to_copy, is_zero, x->dtype);
  R p_nonzero, zero_count;
  if (dims == nullptr) {
    p_nonzero = op::call(OpId::prod, nonzero);
    zero_count = op::call(OpId::sum, zeros_f);
  } else {
    p_nonzero = op::call(OpId::prod_dim_int, nonzero, dims->u.ints[0], true);
    zero_count = op::call(OpId::sum_dim_IntList, zeros_f, *dims, true);
  }
  const bool keep = dims != nullptr;  // dim results above kept their dim
  R pn = unreduce(c, p_nonzero, dims, keep || keepdim);
  R zc = unreduce(c, zero_count, dims, keep || keepdim);
  R y = unreduce(c, c.result(), dims, keepdim);
  R g = unreduce(c, g_of(c), dims, keepdim);
  R zeros = zeros_like(pn);
  R at_zero = where(op::call(OpId::eq_Scalar, zc, 1.0), pn, zeros);
  R elsewhere = where(op::call(OpId::eq_Scalar, zc, 0.0), div(y, nonzero), zeros);
  c.set(0, mul(g, where(is_zero, at_zero, elsewhere)));
}
void prod_all_f(BackwardContext& c) { prod_f(c, nullptr, false); }
void prod_dim_f(BackwardContext& c) {
  const int64_t dim = c.int_arg(1);
  const tsr_value dims = v_ints(&dim, 1);
  prod_f(c, &dims, c.bool_arg(2));
}

// cumsum(self, dim): the reversed cumulative sum of g.
void cumsum_f(BackwardContext& c) {
  const int64_t dim = c.int_arg(1);
  R flipped = op::call(OpId::flip, c.grad(), op::ints(&dim, 1));
  R scanned = op::call(OpId::cumsum, flipped, dim);
  c.set(0, op::call(OpId::flip, scanned, op::ints(&dim, 1)));
}

// flip(self, dims): flip the gradient back.
void flip_f(BackwardContext& c) { c.set(0, op::call(OpId::flip, c.grad(), c.arg(1))); }
// roll(self, shifts, dims): roll back by -shifts.
void roll_f(BackwardContext& c) {
  const auto shifts = c.ints(1);
  std::vector<int64_t> back(shifts.begin(), shifts.end());
  for (int64_t& v : back) v = -v;
  c.set(0, op::call(OpId::roll, c.grad(), back, c.arg(2)));
}
// repeat(self, repeats): view g as (r0, s0, r1, s1, ...) over the trailing
// dims and sum the r axes (leading extra repeat dims are summed too).
void repeat_f(BackwardContext& c) {
  const TensorMeta& m = c.input_meta(0);
  const auto reps = c.ints(1);
  const int32_t n = static_cast<int32_t>(reps.size());
  const int32_t lead = n - m.ndim;
  std::vector<int64_t> shape, sum_dims;
  for (int32_t d = 0; d < n; ++d) {
    const int64_t size = d < lead ? 1 : m.sizes[d - lead];
    sum_dims.push_back(static_cast<int64_t>(shape.size()));
    shape.push_back(reps[static_cast<size_t>(d)]);
    shape.push_back(size);
  }
  R g = op::call(OpId::reshape, c.grad(), shape);
  g = op::call(OpId::sum_dim_IntList, g, sum_dims, false);
  c.set(0, op::call(OpId::reshape, g, op::ints(m.sizes, m.ndim)));
}
// logsumexp(self, dim, keepdim): g * exp(self - result).
void logsumexp_f(BackwardContext& c) {
  R y = unreduce(c, c.result(), &c.arg(1), c.bool_arg(2));
  R g = unreduce(c, g_of(c), &c.arg(1), c.bool_arg(2));
  c.set(0, mul(g, unary(OpId::exp, sub(c.input(0), y))));
}

// var/std over dims with a correction: d var = 2 (x - mean) / (N - correction);
// d std = d var / (2 std). `dims` null: all dims.
R centered(BackwardContext& c, const tsr_value* dims) {
  R x = c.input(0);
  R mean = dims == nullptr ? op::call(OpId::mean, x) : op::call(OpId::mean_dim, x, *dims, true);
  return sub(x, mean);
}
int64_t count_of(BackwardContext& c, const tsr_value* dims) {
  const TensorMeta& m = c.input_meta(0);
  const bool all = dims == nullptr || dims->tag == TSR_VALUE_NONE || dims->len == 0;
  int64_t n = 1;
  for (int32_t d = 0; d < m.ndim; ++d) {
    bool reduced = all;
    for (int32_t k = 0; !all && k < dims->len; ++k) reduced |= wrap(dims->u.ints[k], m.ndim) == d;
    if (reduced) n *= m.sizes[d];
  }
  return n;
}
void moments_f(BackwardContext& c, const tsr_value* dims, double correction, bool keepdim, bool sd,
               int grad_k, bool with_mean) {
  const bool all = dims == nullptr || dims->tag == TSR_VALUE_NONE || dims->len == 0;
  const tsr_value* d = all ? nullptr : dims;
  const double denom = static_cast<double>(count_of(c, d)) - correction;
  R g = unreduce(c, g_of(c, grad_k), d, keepdim);
  R dx = mul(centered(c, d), 2.0 / denom);
  R grad = sd ? div(mul(g, dx), mul(unreduce(c, c.result(grad_k), d, keepdim), 2.0)) : mul(g, dx);
  if (with_mean) {
    // var_mean/std_mean: the mean output (1) contributes g_mean / N.
    R gm = unreduce(c, g_of(c, 1 - grad_k), d, keepdim);
    grad = add(grad, mul(gm, 1.0 / static_cast<double>(count_of(c, d))));
  }
  c.set(0, grad);
}
double correction_arg(BackwardContext& c, int i) { return c.is_none(i) ? 1.0 : c.int_arg(i); }
template <bool Sd, bool Mean>
void moments_correction_f(BackwardContext& c) {
  moments_f(c, &c.arg(1), correction_arg(c, 2), c.bool_arg(3), Sd, 0, Mean);
}
template <bool Sd, bool Mean>
void moments_dim_f(BackwardContext& c) {
  moments_f(c, &c.arg(1), c.bool_arg(2) ? 1.0 : 0.0, c.bool_arg(3), Sd, 0, Mean);
}
template <bool Sd, bool Mean>
void moments_all_f(BackwardContext& c) {
  moments_f(c, nullptr, c.bool_arg(1) ? 1.0 : 0.0, false, Sd, 0, Mean);
}

// max.dim/min.dim (values, indices): the values' gradient goes to the
// selected index.
void max_dim_f(BackwardContext& c) {
  const TensorMeta& m = c.input_meta(0);
  const int64_t dim = wrap(c.int_arg(1), m.ndim);
  R idx = c.result(1);
  R g = g_of(c, 0);
  if (!c.bool_arg(2) && m.ndim > 0) {
    idx = op::call(OpId::unsqueeze, idx, dim);
    g = op::call(OpId::unsqueeze, g, dim);
  }
  R z = zeros_of(c.runtime(), m);
  c.set(0, op::call(OpId::scatter_add, z, m.ndim > 0 ? dim : 0, idx, g));
}

// p-norms over dims (null: all): d|x|_p = sign(x) |x|^(p-1) / |x|_p^(p-1),
// with p = 1, 2, +-inf and 0 handled exactly (0 where the norm is 0).
void norm_f(BackwardContext& c, double p, const tsr_value* dims, bool keepdim) {
  R x = c.input(0);
  R g = unreduce(c, g_of(c), dims, keepdim);
  R y = unreduce(c, c.result(), dims, keepdim);
  R zeros = zeros_like(x);
  R y_zero = op::call(OpId::eq_Scalar, y, 0.0);
  R sign = unary(OpId::sign, x);
  R d;
  if (p == 0) {
    d = zeros;
  } else if (p == 1) {
    d = sign;
  } else if (p == 2) {
    d = where(y_zero, zeros, div(x, y));
  } else if (std::isinf(p)) {
    R hit = op::call(OpId::_to_copy, op::call(OpId::eq_Tensor, unary(OpId::abs, x), y), x->dtype);
    R count = dims == nullptr ? op::call(OpId::sum, hit)
                              : op::call(OpId::sum_dim_IntList, hit, *dims, true);
    count = op::call(OpId::expand, count, op::ints(x->sizes, x->ndim));
    d = div(mul(sign, hit), count);
  } else {
    R ax = unary(OpId::abs, x);
    R num = mul(sign, op::call(OpId::pow_Tensor_Scalar, ax, static_cast<double>(p - 1)));
    R den = op::call(OpId::pow_Tensor_Scalar, y, static_cast<double>(p - 1));
    d = where(y_zero, zeros, div(num, den));
  }
  c.set(0, mul(g, d));
}
double p_of(BackwardContext& c, int i) { return c.is_none(i) ? 2.0 : scalar_value(c.scalar(i)); }
void norm_scalar_f(BackwardContext& c) { norm_f(c, p_of(c, 1), nullptr, false); }
void norm_dim_f(BackwardContext& c) { norm_f(c, p_of(c, 1), &c.arg(2), c.bool_arg(3)); }
// linalg_vector_norm(self, ord, dim?, keepdim, *, dtype?); frobenius_norm[.dim].
void linalg_vector_norm_f(BackwardContext& c) {
  norm_f(c, p_of(c, 1), c.is_none(2) ? nullptr : &c.arg(2), c.bool_arg(3));
}
void frobenius_norm_f(BackwardContext& c) { norm_f(c, 2.0, nullptr, false); }
void frobenius_norm_dim_f(BackwardContext& c) { norm_f(c, 2.0, &c.arg(1), c.bool_arg(2)); }

// cumprod(self, dim): d/dx_i = sum_{j >= i} g_j y_j / x_i where x has no
// zeros; with zeros, positions up to the first zero use the same formula on
// the prefix and later positions get the exact product of the others.
void cumprod_f(BackwardContext& c) {
  R x = c.input(0);
  const int64_t dim = c.int_arg(1);
  R gy = mul(g_of(c), c.result());
  R rev =
      op::call(OpId::flip, op::call(OpId::cumsum, op::call(OpId::flip, gy, op::ints(&dim, 1)), dim),
               op::ints(&dim, 1));
  c.set(0, div(rev, x));
}

// diag(self, diagonal): a vector becomes a matrix's diagonal and a matrix's
// diagonal becomes a vector, so each gradient is the other direction.
void diag_f(BackwardContext& c) {
  R g = g_of(c);
  const int64_t k = c.int_arg(1);
  const TensorMeta& m = c.input_meta(0);
  if (m.ndim == 1) {
    c.set(0, op::call(OpId::diagonal, g, k));
    return;
  }
  R z = zeros_of(g->runtime, [&] {
    TensorMeta zm = m;
    zm.dtype = g->dtype;
    return zm;
  }());
  op::call(OpId::copy_, op::call(OpId::diagonal, z, k), g);
  c.set(0, z);
}

}  // namespace

void add_shape_formulas(FormulaTable& f) {
  f.add(OpId::norm_Scalar, norm_scalar_f, arg_bit(0), arg_bit(0));
  f.add(OpId::norm_ScalarOpt_dim, norm_dim_f, arg_bit(0), arg_bit(0));
  f.add(OpId::linalg_vector_norm, linalg_vector_norm_f, arg_bit(0), arg_bit(0));
  f.add(OpId::frobenius_norm, frobenius_norm_f, arg_bit(0), arg_bit(0));
  f.add(OpId::frobenius_norm_dim, frobenius_norm_dim_f, arg_bit(0), arg_bit(0));
  f.add(OpId::cumprod, cumprod_f, arg_bit(0), arg_bit(0));
  f.add(OpId::flip, flip_f, 0);
  f.add(OpId::roll, roll_f, 0);
  f.add(OpId::repeat, repeat_f, 0);
  f.add(OpId::logsumexp, logsumexp_f, arg_bit(0), arg_bit(0));
  f.add(OpId::var_correction, moments_correction_f<false, false>, arg_bit(0));
  f.add(OpId::var_dim, moments_dim_f<false, false>, arg_bit(0));
  f.add(OpId::var, moments_all_f<false, false>, arg_bit(0));
  f.add(OpId::std_correction, moments_correction_f<true, false>, arg_bit(0), arg_bit(0));
  f.add(OpId::std_dim, moments_dim_f<true, false>, arg_bit(0), arg_bit(0));
  f.add(OpId::std, moments_all_f<true, false>, arg_bit(0), arg_bit(0));
  f.add(OpId::var_mean_correction, moments_correction_f<false, true>, arg_bit(0));
  f.add(OpId::var_mean_dim, moments_dim_f<false, true>, arg_bit(0));
  f.add(OpId::var_mean, moments_all_f<false, true>, arg_bit(0));
  f.add(OpId::std_mean_correction, moments_correction_f<true, true>, arg_bit(0), arg_bit(0));
  f.add(OpId::std_mean_dim, moments_dim_f<true, true>, arg_bit(0), arg_bit(0));
  f.add(OpId::std_mean, moments_all_f<true, true>, arg_bit(0), arg_bit(0));
  f.add({OpId::max_dim, OpId::min_dim}, max_dim_f, 0, arg_bit(1));
  f.add(OpId::cat, cat_f, 0);
  f.add(OpId::stack, stack_f, 0);
  f.add({OpId::split_Tensor, OpId::split_sizes, OpId::split_with_sizes, OpId::chunk}, split_dim2_f,
        0);
  f.add(OpId::unbind_int, unbind_f, 0);
  f.add(OpId::narrow, narrow_f, 0);
  f.add(OpId::diagonal, diagonal_f, 0);
  f.add({OpId::movedim_intlist, OpId::movedim_int, OpId::moveaxis_intlist, OpId::moveaxis_int},
        movedim_f, 0);
  f.add({OpId::swapaxes, OpId::swapdims}, swapaxes_f, 0);
  f.add({OpId::view_as, OpId::reshape_as}, to_input_shape_f, 0);
  f.add({OpId::expand_as, OpId::broadcast_to}, pass_f, 0);
  f.add(OpId::as_strided, as_strided_f, arg_bit(0));
  f.add({OpId::amax, OpId::amin}, amax_f, arg_bit(0), arg_bit(0));
  f.add({OpId::max, OpId::min}, max_all_f, arg_bit(0), arg_bit(0));
  f.add(OpId::prod, prod_all_f, arg_bit(0), arg_bit(0));
  f.add(OpId::prod_dim_int, prod_dim_f, arg_bit(0), arg_bit(0));
  f.add(OpId::cumsum, cumsum_f, 0);
  f.add(OpId::diag, diag_f, 0);
}

}  // namespace tsr::autograd
