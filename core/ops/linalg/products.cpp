// Vector and matrix products built on mm/bmm: dot, vdot, outer/ger, mv, the
// add-and-multiply family (addmm, addmv, addr, baddbmm, addbmm, with beta and
// alpha), linear and tensordot, plus their out= and in-place forms.
//
// Every product of the family takes one dtype for its matrix operands, as
// PyTorch does (outer/ger and addr multiply elementwise and promote). The
// add-and-multiply ops compute `prod = mat1 @ mat2` into a fresh tensor and
// finish in place on it: prod *= alpha (skipped for alpha == 1), then
// prod += beta * self (skipped for beta == 0, so NaN and inf in self are
// ignored then, as PyTorch documents).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "dispatch/op_api.h"
#include "ops/linalg/linalg_util.h"
#include "ops/op_impls.h"
#include "runtime/runtime.h"
#include "util/error.h"

namespace tsr::ops {

namespace {

using linalg_detail::finish_in_place;
using linalg_detail::finish_out;
using linalg_detail::scalar_is;

const char* dims_word(int32_t ndim) {
  static const char* const words[] = {"0-D", "1-D", "2-D", "3-D", "4-D",
                                      "5-D", "6-D", "7-D", "8-D"};
  return ndim >= 0 && ndim <= 8 ? words[ndim] : "N-D";
}

void check_same_dtype(const OpDef& op, const TensorImpl& a, const char* a_name, const TensorImpl& b,
                      const char* b_name) {
  if (a.dtype != b.dtype)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': expected {} and {} to have the same dtype, but got: {} != {}; convert one "
         "with to()",
         op.name, a_name, b_name, dtype_name(a.dtype), dtype_name(b.dtype));
}

void check_not_bool(const OpDef& op, const TensorImpl& t) {
  if (t.dtype == TSR_BOOL)
    fail(TSR_UNIMPLEMENTED,
         "op '{}': not implemented for dtype bool; convert the operands to an integer or "
         "floating dtype with to()",
         op.name);
}

void check_ndim(const OpDef& op, const TensorImpl& t, const char* name, int32_t ndim,
                const char* what) {
  if (t.ndim != ndim)
    fail(TSR_INVALID_ARGUMENT, "op '{}': argument '{}' must be a {}, got a {} tensor of shape {}",
         op.name, name, what, dims_word(t.ndim), shape_str(t.ndim, t.sizes));
}

// beta/alpha as the product's dtype takes them, with PyTorch's checked
// conversion of a Scalar to the dtype (every op of the family): for an integer
// dtype a floating value truncates toward zero and must satisfy
// lowest <= v < max + 1 (so 2.5 is 2, 127.9 fits int8, -0.5 does not fit
// uint8), and an integer must lie in [lowest, max] ([-max, max] for uint8,
// where a negative wraps); a complex value needs a zero imaginary part unless
// the dtype is complex; float16, bfloat16 and float32 refuse a finite value
// beyond their largest. A bool scale is 0 or 1.
tsr_scalar product_scale(const OpDef& op, tsr_dtype dtype, const tsr_scalar& s, const char* name) {
  if (is_complex(dtype)) return s;
  auto refuse = [&](const std::string& value) {
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument '{}' = {} cannot be converted to {} without overflow; pass a {} "
         "that {} holds",
         op.name, name, value, dtype_name(dtype), name, dtype_name(dtype));
  };
  tsr_scalar v = s;
  if (v.kind == TSR_COMPLEX128) {
    if (v.v.c.im != 0.0) refuse(fmt::format("({}+{}j)", v.v.c.re, v.v.c.im));
    v = scalar_float(v.v.c.re);
  }
  if (v.kind == TSR_BOOL) return scalar_int(v.v.i != 0 ? 1 : 0);
  if (is_integral(dtype, false)) {
    // Every bound is a power of two or one less, exact in double.
    static constexpr int64_t kLowest[] = {0, INT8_MIN, INT16_MIN, INT32_MIN, INT64_MIN};
    static constexpr int64_t kMax[] = {UINT8_MAX, INT8_MAX, INT16_MAX, INT32_MAX, INT64_MAX};
    const int64_t lowest = kLowest[dtype - TSR_UINT8], max = kMax[dtype - TSR_UINT8];
    if (v.kind == TSR_FLOAT64) {
      const double f = v.v.f, limit = static_cast<double>(max) + 1.0;  // 2^63 for int64
      if (!(f >= static_cast<double>(lowest) && f < limit)) refuse(fmt::format("{}", f));
      return scalar_int(static_cast<int64_t>(std::trunc(f)));
    }
    const int64_t i = v.v.i;
    if (i > max || i < (lowest == 0 ? -max : lowest)) refuse(fmt::format("{}", i));
    return v;
  }
  double largest = 0;
  switch (dtype) {
    case TSR_FLOAT16:
      largest = 65504.0;
      break;
    case TSR_BFLOAT16:
      largest = 0x1.fep127;
      break;
    case TSR_FLOAT32:
      largest = static_cast<double>(std::numeric_limits<float>::max());
      break;
    default:
      return v;  // float64 holds every scalar
  }
  const double f = v.kind == TSR_FLOAT64 ? v.v.f : static_cast<double>(v.v.i);
  if (std::isfinite(f) && std::fabs(f) > largest)
    refuse(v.kind == TSR_FLOAT64 ? fmt::format("{}", f) : fmt::format("{}", v.v.i));
  return v;
}

// addr's own rules on beta/alpha, checked against the promoted dtype before
// the conversion above: a bool scale only for a bool result, and no floating
// or complex scale for an integral (or bool) result.
void check_addr_scale(const OpDef& op, tsr_dtype dtype, const tsr_scalar& s, const char* name) {
  if (s.kind == TSR_BOOL && dtype != TSR_BOOL)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': Boolean {} only supported for Boolean results (the result is {}); pass an "
         "integer or floating {}",
         op.name, name, dtype_name(dtype), name);
  if (is_integral(dtype, true) && (s.kind == TSR_FLOAT64 || s.kind == TSR_COMPLEX128))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': For integral input tensors, argument {} must not be a floating point number "
         "(the result is {}); pass an integer {} or floating inputs",
         op.name, name, dtype_name(dtype), name);
}

// Throws unless `self` broadcasts to `shape` (it is expanded, never the result).
void check_broadcasts_to(const OpDef& op, const TensorImpl& self, const char* name,
                         const Shape& shape) {
  bool ok = self.ndim <= shape.ndim;
  for (int32_t i = 1; ok && i <= self.ndim; ++i) {
    int64_t s = self.sizes[self.ndim - i], d = shape.sizes[shape.ndim - i];
    ok = s == d || s == 1;
  }
  if (!ok)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument '{}' of shape {} cannot be broadcast to the result shape {}; the "
         "expanded size must match the existing size at every non-singleton dimension",
         op.name, name, shape_str(self.ndim, self.sizes), shape_str(shape.ndim, shape.sizes));
}

// prod = alpha * prod + beta * self, in place on the fresh tensor `prod`.
void scale_and_add(Runtime* rt, TensorImpl* prod, TensorImpl* self, const tsr_scalar& beta,
                   const tsr_scalar& alpha) {
  if (!scalar_is(alpha, 1)) op::call(rt, OpId::mul__Scalar, prod, alpha);
  if (!scalar_is(beta, 0)) {
    op::call(rt, OpId::add__Tensor, prod, self, beta);
  } else if (self->autograd != nullptr) {
    // beta == 0 ignores self's values, but its gradient (beta * g = 0) must
    // still reach it (Note [Composite reachability] in autograd/record.cpp):
    // add a zero that comes from self, NaN and inf in self ignored.
    TensorRef never = op::call(rt, OpId::zeros_like, self, TSR_BOOL);
    TensorRef zero = op::call(rt, OpId::where_ScalarOther, never, self, 0.0);
    op::call(rt, OpId::add__Tensor, prod, zero);
  }
}

TensorRef dot_impl(OpCall& c, TensorImpl* a, TensorImpl* b) {
  const OpDef& op = *c.op;
  if (a->ndim != 1 || b->ndim != 1)
    fail(TSR_INVALID_ARGUMENT, "op '{}': 1D tensors expected, but got {} and {} tensors", op.name,
         dims_word(a->ndim), dims_word(b->ndim));
  check_same_device(op, *a, *b, "self", op.schema.args[1].name.c_str());
  if (a->dtype != b->dtype)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': expected both vectors to have same dtype, but found {} and {}; convert one "
         "with to()",
         op.name, dtype_name(a->dtype), dtype_name(b->dtype));
  if (a->sizes[0] != b->sizes[0])
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': inconsistent tensor size, expected tensor [{}] and src [{}] to have the same "
         "number of elements, but got {} and {} elements respectively",
         op.name, a->sizes[0], b->sizes[0], a->sizes[0], b->sizes[0]);
  check_not_bool(op, *a);
  Runtime* rt = c.runtime;
  TensorRef row = op::unsqueeze(a, 0);
  TensorRef col = op::unsqueeze(b, 1);
  TensorRef r = op::call(rt, OpId::mm, row.get(), col.get());
  return op::reshape(r.get(), Shape{});
}

TensorRef outer_impl(OpCall& c, TensorImpl* a, TensorImpl* b) {
  const OpDef& op = *c.op;
  if (a->ndim != 1)
    fail(TSR_INVALID_ARGUMENT, "op '{}': expected 1-D argument self, but got {}", op.name,
         dims_word(a->ndim));
  if (b->ndim != 1)
    fail(TSR_INVALID_ARGUMENT, "op '{}': expected 1-D argument vec2, but got {}", op.name,
         dims_word(b->ndim));
  check_same_device(op, *a, *b, "self", "vec2");
  TensorRef col = op::unsqueeze(a, 1);
  return op::call(c.runtime, OpId::mul_Tensor, col, b);
}

TensorRef mv_impl(OpCall& c, TensorImpl* m, TensorImpl* v, const char* m_name, const char* v_name) {
  const OpDef& op = *c.op;
  if (m->ndim != 2 || v->ndim != 1)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument '{}' must be a matrix (2-D) and '{}' a vector (1-D), but got {} and "
         "{} tensors",
         op.name, m_name, v_name, dims_word(m->ndim), dims_word(v->ndim));
  check_same_device(op, *m, *v, m_name, v_name);
  check_same_dtype(op, *m, m_name, *v, v_name);
  if (m->sizes[1] != v->sizes[0])
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': size mismatch, got {} with shape {}x{} and {} with {} elements; the "
         "matrix's columns must equal the vector's length",
         op.name, m_name, m->sizes[0], m->sizes[1], v_name, v->sizes[0]);
  check_not_bool(op, *m);
  TensorRef col = op::unsqueeze(v, 1);
  TensorRef r = op::call(c.runtime, OpId::mm, m, col.get());
  return op::squeeze(r.get(), 1);
}

// addmm: the fresh result of beta * self + alpha * (m1 @ m2).
TensorRef addmm_impl(OpCall& c, TensorImpl* self, TensorImpl* m1, TensorImpl* m2,
                     const tsr_scalar& beta, const tsr_scalar& alpha) {
  const OpDef& op = *c.op;
  check_ndim(op, *m1, "mat1", 2, "matrix (2-D)");
  check_ndim(op, *m2, "mat2", 2, "matrix (2-D)");
  check_same_device(op, *self, *m1, "self", "mat1");
  check_same_device(op, *m1, *m2, "mat1", "mat2");
  check_same_dtype(op, *m1, "mat1", *m2, "mat2");
  check_same_dtype(op, *self, "self", *m2, "mat2");
  if (m1->sizes[1] != m2->sizes[0])
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})", op.name,
         m1->sizes[0], m1->sizes[1], m2->sizes[0], m2->sizes[1]);
  check_not_bool(op, *m1);
  const tsr_scalar b = product_scale(op, m1->dtype, beta, "beta");
  const tsr_scalar a = product_scale(op, m1->dtype, alpha, "alpha");
  Shape shape;
  shape.ndim = 2;
  shape.sizes[0] = m1->sizes[0];
  shape.sizes[1] = m2->sizes[1];
  check_broadcasts_to(op, *self, "self", shape);
  TensorRef prod = op::call(c.runtime, OpId::mm, m1, m2);
  scale_and_add(c.runtime, prod.get(), self, b, a);
  return prod;
}

TensorRef addmv_impl(OpCall& c, TensorImpl* self, TensorImpl* mat, TensorImpl* vec,
                     const tsr_scalar& beta, const tsr_scalar& alpha) {
  const OpDef& op = *c.op;
  check_same_device(op, *self, *mat, "self", "mat");
  check_same_dtype(op, *self, "self", *mat, "mat");
  TensorRef prod = mv_impl(c, mat, vec, "mat", "vec");
  const tsr_scalar b = product_scale(op, mat->dtype, beta, "beta");
  const tsr_scalar a = product_scale(op, mat->dtype, alpha, "alpha");
  check_broadcasts_to(op, *self, "self", shape_of(*prod));
  scale_and_add(c.runtime, prod.get(), self, b, a);
  return prod;
}

TensorRef baddbmm_impl(OpCall& c, TensorImpl* self, TensorImpl* b1, TensorImpl* b2,
                       const tsr_scalar& beta, const tsr_scalar& alpha) {
  const OpDef& op = *c.op;
  check_ndim(op, *b1, "batch1", 3, "3-D tensor");
  check_ndim(op, *b2, "batch2", 3, "3-D tensor");
  check_same_device(op, *self, *b1, "self", "batch1");
  check_same_device(op, *b1, *b2, "batch1", "batch2");
  check_same_dtype(op, *b1, "batch1", *b2, "batch2");
  check_same_dtype(op, *self, "self", *b1, "batch1");
  if (b2->sizes[0] != b1->sizes[0] || b2->sizes[1] != b1->sizes[2])
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': expected size for first two dimensions of batch2 tensor to be: [{}, {}] but "
         "got: [{}, {}]",
         op.name, b1->sizes[0], b1->sizes[2], b2->sizes[0], b2->sizes[1]);
  check_not_bool(op, *b1);
  const tsr_scalar b = product_scale(op, b1->dtype, beta, "beta");
  const tsr_scalar a = product_scale(op, b1->dtype, alpha, "alpha");
  Shape shape;
  shape.ndim = 3;
  shape.sizes[0] = b1->sizes[0];
  shape.sizes[1] = b1->sizes[1];
  shape.sizes[2] = b2->sizes[2];
  check_broadcasts_to(op, *self, "self", shape);
  TensorRef prod = op::call(c.runtime, OpId::bmm, b1, b2);
  scale_and_add(c.runtime, prod.get(), self, b, a);
  return prod;
}

// Computes linear's result; `out` may be null.
TensorRef linear_impl(OpCall& c, TensorImpl* input, TensorImpl* weight, TensorImpl* bias) {
  const OpDef& op = *c.op;
  Runtime* rt = c.runtime;
  if (input->ndim == 0 || weight->ndim == 0)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': both arguments to linear need to be at least 1D, but they are {} and {}",
         op.name, dims_word(input->ndim), dims_word(weight->ndim));
  if (weight->ndim > 2)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'weight' must be 1-D (in_features) or 2-D (out_features, "
         "in_features), got shape {}",
         op.name, shape_str(weight->ndim, weight->sizes));
  check_same_device(op, *input, *weight, "input", "weight");
  check_same_dtype(op, *input, "input", *weight, "weight");
  if (bias) {
    check_same_device(op, *input, *bias, "input", "bias");
    check_same_dtype(op, *input, "input", *bias, "bias");
  }
  int64_t in = input->sizes[input->ndim - 1];
  int64_t w_in = weight->sizes[weight->ndim - 1];
  if (in != w_in) {
    int64_t rows = input->numel / std::max<int64_t>(in, 1);
    if (in == 0) {
      rows = 1;
      for (int32_t d = 0; d + 1 < input->ndim; ++d) rows *= input->sizes[d];
    }
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{}); input's last "
         "dim must equal weight's in_features",
         op.name, rows, in, w_in, weight->ndim == 2 ? weight->sizes[0] : 1);
  }
  check_not_bool(op, *input);
  TensorRef wt = weight->ndim == 2 ? op::call(rt, OpId::t, weight) : TensorRef::borrow(weight);
  if (input->ndim == 2 && weight->ndim == 2 && bias) {
    // PyTorch's decomposition for this case: t + addmm.
    Shape shape;
    shape.ndim = 2;
    shape.sizes[0] = input->sizes[0];
    shape.sizes[1] = weight->sizes[0];
    check_broadcasts_to(op, *bias, "bias", shape);
    return op::call(rt, OpId::addmm, bias, input, wt);
  }
  TensorRef result = op::call(rt, OpId::matmul, input, wt);
  if (bias) {
    check_broadcasts_to(op, *bias, "bias", shape_of(*result));
    op::call(rt, OpId::add__Tensor, result, bias);
  }
  return result;
}

}  // namespace

void dot(OpCall& c) { c.set_result(dot_impl(c, c.tensor(0), c.tensor(1))); }

void dot_out(OpCall& c) {
  TensorRef r = dot_impl(c, c.tensor(0), c.tensor(1));
  finish_out(c, r.get(), c.tensor(2));
}

void vdot(OpCall& c) {
  if (is_complex(c.tensor(0)->dtype) || is_complex(c.tensor(1)->dtype))
    fail(TSR_UNIMPLEMENTED,
         "op 'vdot': complex inputs are not supported yet (they need conj); use real inputs, "
         "for which vdot equals dot");
  c.set_result(dot_impl(c, c.tensor(0), c.tensor(1)));
}

void outer(OpCall& c) { c.set_result(outer_impl(c, c.tensor(0), c.tensor(1))); }

void outer_out(OpCall& c) {
  TensorRef r = outer_impl(c, c.tensor(0), c.tensor(1));
  finish_out(c, r.get(), c.tensor(2));
}

void ger(OpCall& c) { c.set_result(outer_impl(c, c.tensor(0), c.tensor(1))); }

void mv(OpCall& c) { c.set_result(mv_impl(c, c.tensor(0), c.tensor(1), "self", "vec")); }

void mv_out(OpCall& c) {
  TensorRef r = mv_impl(c, c.tensor(0), c.tensor(1), "self", "vec");
  finish_out(c, r.get(), c.tensor(2));
}

void addmm(OpCall& c) {
  c.set_result(addmm_impl(c, c.tensor(0), c.tensor(1), c.tensor(2), c.scalar(3), c.scalar(4)));
}

void addmm_out(OpCall& c) {
  TensorRef r = addmm_impl(c, c.tensor(0), c.tensor(1), c.tensor(2), c.scalar(3), c.scalar(4));
  finish_out(c, r.get(), c.tensor(5));
}

void addmm_(OpCall& c) {
  TensorRef r = addmm_impl(c, c.tensor(0), c.tensor(1), c.tensor(2), c.scalar(3), c.scalar(4));
  finish_in_place(c, r.get(), c.tensor(0));
}

void addmv(OpCall& c) {
  c.set_result(addmv_impl(c, c.tensor(0), c.tensor(1), c.tensor(2), c.scalar(3), c.scalar(4)));
}

void addmv_out(OpCall& c) {
  TensorRef r = addmv_impl(c, c.tensor(0), c.tensor(1), c.tensor(2), c.scalar(3), c.scalar(4));
  finish_out(c, r.get(), c.tensor(5));
}

void addmv_(OpCall& c) {
  TensorRef r = addmv_impl(c, c.tensor(0), c.tensor(1), c.tensor(2), c.scalar(3), c.scalar(4));
  finish_in_place(c, r.get(), c.tensor(0));
}

// addr promotes self, vec1 and vec2 to one dtype (PyTorch computes it
// elementwise). A bool result is (beta && self) || (alpha && vec1 (x) vec2).
void addr(OpCall& c) {
  const OpDef& op = *c.op;
  Runtime* rt = c.runtime;
  TensorImpl* self = c.tensor(0);
  TensorImpl* v1 = c.tensor(1);
  TensorImpl* v2 = c.tensor(2);
  check_same_device(op, *self, *v1, "self", "vec1");
  check_same_device(op, *v1, *v2, "vec1", "vec2");
  if (v1->ndim != 1 || v2->ndim != 1)
    fail(TSR_INVALID_ARGUMENT, "op '{}': vec1 and vec2 must be 1-D, but got {} and {} tensors",
         op.name, dims_word(v1->ndim), dims_word(v2->ndim));
  const tsr_dtype dtype = promote_types(promote_types(self->dtype, v1->dtype), v2->dtype);
  check_addr_scale(op, dtype, c.scalar(3), "beta");
  check_addr_scale(op, dtype, c.scalar(4), "alpha");
  const tsr_scalar beta = product_scale(op, dtype, c.scalar(3), "beta");
  const tsr_scalar alpha = product_scale(op, dtype, c.scalar(4), "alpha");
  TensorRef a = cast(v1, dtype);
  TensorRef b = cast(v2, dtype);
  TensorRef col = op::unsqueeze(a.get(), 1);
  if (dtype == TSR_BOOL) {
    TensorRef prod = op::call(rt, OpId::logical_and, col, b);
    check_broadcasts_to(op, *self, "self", shape_of(*prod));
    if (scalar_is(alpha, 0)) fill_raw(prod.get(), scalar_int(0));
    if (!scalar_is(beta, 0)) prod = op::call(rt, OpId::logical_or, prod, self);
    c.set_result(std::move(prod));
    return;
  }
  TensorRef prod = op::call(rt, OpId::mul_Tensor, col, b);
  check_broadcasts_to(op, *self, "self", shape_of(*prod));
  scale_and_add(rt, prod.get(), self, beta, alpha);
  c.set_result(std::move(prod));
}

void baddbmm(OpCall& c) {
  c.set_result(baddbmm_impl(c, c.tensor(0), c.tensor(1), c.tensor(2), c.scalar(3), c.scalar(4)));
}

void baddbmm_out(OpCall& c) {
  TensorRef r = baddbmm_impl(c, c.tensor(0), c.tensor(1), c.tensor(2), c.scalar(3), c.scalar(4));
  finish_out(c, r.get(), c.tensor(5));
}

void baddbmm_(OpCall& c) {
  TensorRef r = baddbmm_impl(c, c.tensor(0), c.tensor(1), c.tensor(2), c.scalar(3), c.scalar(4));
  finish_in_place(c, r.get(), c.tensor(0));
}

// sum_b batch1[b] @ batch2[b] is one mm: (n, B*k) @ (B*k, m) with batch1's
// batches laid side by side and batch2's stacked.
void addbmm(OpCall& c) {
  const OpDef& op = *c.op;
  TensorImpl* self = c.tensor(0);
  TensorImpl* b1 = c.tensor(1);
  TensorImpl* b2 = c.tensor(2);
  check_ndim(op, *b1, "batch1", 3, "3-D tensor");
  check_ndim(op, *b2, "batch2", 3, "3-D tensor");
  check_same_device(op, *self, *b1, "self", "batch1");
  check_same_device(op, *b1, *b2, "batch1", "batch2");
  check_same_dtype(op, *b1, "batch1", *b2, "batch2");
  check_same_dtype(op, *self, "self", *b1, "batch1");
  if (b2->sizes[0] != b1->sizes[0] || b2->sizes[1] != b1->sizes[2])
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': expected size for first two dimensions of batch2 tensor to be: [{}, {}] but "
         "got: [{}, {}]",
         op.name, b1->sizes[0], b1->sizes[2], b2->sizes[0], b2->sizes[1]);
  check_not_bool(op, *b1);
  const tsr_scalar beta = product_scale(op, b1->dtype, c.scalar(3), "beta");
  const tsr_scalar alpha = product_scale(op, b1->dtype, c.scalar(4), "alpha");
  const int64_t batch = b1->sizes[0], n = b1->sizes[1], k = b1->sizes[2], m = b2->sizes[2];
  Shape shape;
  shape.ndim = 2;
  shape.sizes[0] = n;
  shape.sizes[1] = m;
  check_broadcasts_to(op, *self, "self", shape);
  const int64_t perm[3] = {1, 0, 2};
  TensorRef a = op::permute(b1, op::ints(perm, 3));
  TensorRef a2 = op::reshape(a.get(), {n, batch * k});
  TensorRef bb = op::reshape(b2, {batch * k, m});
  TensorRef prod = op::call(c.runtime, OpId::mm, a2.get(), bb.get());
  scale_and_add(c.runtime, prod.get(), self, beta, alpha);
  c.set_result(std::move(prod));
}

void linear(OpCall& c) { c.set_result(linear_impl(c, c.tensor(0), c.tensor(1), c.opt_tensor(2))); }

void linear_out(OpCall& c) {
  TensorRef r = linear_impl(c, c.tensor(0), c.tensor(1), c.opt_tensor(2));
  finish_out(c, r.get(), c.tensor(3));
}

// Free dims of self, then of other; the contracted dims pair up in list order.
void tensordot(OpCall& c) {
  const OpDef& op = *c.op;
  TensorImpl* a = c.tensor(0);
  TensorImpl* b = c.tensor(1);
  const tsr_value& da = c.args[2];
  const tsr_value& db = c.args[3];
  check_same_device(op, *a, *b, "self", "other");
  if (da.len != db.len)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': both dimension lists should have same length, but got dims_self of length {} "
         "and dims_other of length {}",
         op.name, da.len, db.len);
  check_same_dtype(op, *a, "self", *b, "other");
  check_not_bool(op, *a);
  bool used_a[TSR_MAX_DIMS] = {}, used_b[TSR_MAX_DIMS] = {};
  int64_t ca[TSR_MAX_DIMS], cb[TSR_MAX_DIMS];
  int64_t k = 1;
  for (int32_t i = 0; i < da.len; ++i) {
    ca[i] = wrap_dim(da.u.ints[i], a->ndim, "dims_self");
    cb[i] = wrap_dim(db.u.ints[i], b->ndim, "dims_other");
    if (used_a[ca[i]] || used_b[cb[i]])
      fail(TSR_INVALID_ARGUMENT, "op '{}': dim {} appears multiple times in {}", op.name,
           used_a[ca[i]] ? ca[i] : cb[i], used_a[ca[i]] ? "dims_self" : "dims_other");
    used_a[ca[i]] = used_b[cb[i]] = true;
    if (a->sizes[ca[i]] != b->sizes[cb[i]])
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': contracted dimensions need to match, but first has size {} in dim {} and "
           "second has size {} in dim {}",
           op.name, a->sizes[ca[i]], ca[i], b->sizes[cb[i]], cb[i]);
    k *= a->sizes[ca[i]];
  }
  int64_t perm_a[TSR_MAX_DIMS], perm_b[TSR_MAX_DIMS];
  int32_t na = 0, nb = 0;
  Shape out;
  int64_t p = 1, q = 1;
  for (int32_t d = 0; d < a->ndim; ++d)
    if (!used_a[d]) {
      perm_a[na++] = d;
      out.sizes[out.ndim++] = a->sizes[d];
      p *= a->sizes[d];
    }
  for (int32_t i = 0; i < da.len; ++i) perm_a[na++] = ca[i];
  for (int32_t i = 0; i < db.len; ++i) perm_b[nb++] = cb[i];
  for (int32_t d = 0; d < b->ndim; ++d)
    if (!used_b[d]) {
      perm_b[nb++] = d;
      if (out.ndim >= TSR_MAX_DIMS)
        fail(TSR_INVALID_ARGUMENT, "op '{}': the result would have more than {} dims", op.name,
             TSR_MAX_DIMS);
      out.sizes[out.ndim++] = b->sizes[d];
      q *= b->sizes[d];
    }
  TensorRef ap = op::permute(a, op::ints(perm_a, na));
  TensorRef bp = op::permute(b, op::ints(perm_b, nb));
  TensorRef a2 = op::reshape(ap.get(), {p, k});
  TensorRef b2 = op::reshape(bp.get(), {k, q});
  TensorRef r = op::call(c.runtime, OpId::mm, a2.get(), b2.get());
  c.set_result(op::reshape(r.get(), out));
}

}  // namespace tsr::ops
