// The shape family: joining (cat, stack, hstack, vstack), narrowing and
// reordering views (narrow, movedim, swapaxes, diagonal, *_as, broadcast_to),
// and copies that move elements (flip, roll, repeat, tile, diag, tril/triu).
// Nothing here has a kernel of its own: results are new tensors filled by
// copy_ into slices (cat, roll, repeat), by copy_ from a negative-stride
// descriptor (flip: docs/primitives.md requires copy_ kernels to accept
// negative strides), or by where.self with an index comparison (tril/triu,
// pointwise family, called by name). Errors use PyTorch's wording.
#include <algorithm>
#include <limits>
#include <vector>

#include "dispatch/kernel_call.h"
#include "dispatch/op_api.h"
#include "dispatch/values.h"
#include "ops/indexing/helpers.h"
#include "ops/op_impls.h"
#include "ops/op_util.h"
#include "runtime/runtime.h"
#include "util/checked_math.h"
#include "util/error.h"

namespace tsr::ops {

namespace {

// ---- cat ---------------------------------------------------------------------

struct CatPlan {
  tsr_dtype dtype = TSR_FLOAT32;
  int32_t dim = 0;
  Shape shape;
  std::vector<TensorImpl*> parts;  // the tensors that contribute (legacy empties skipped)
};

// PyTorch's cat rules: a 1-d tensor of size 0 is skipped (but its dtype
// counts), 0-d tensors are refused, every other tensor needs the same ndim
// and the same sizes except in `dim`.
CatPlan plan_cat(const OpDef& op, const OpCall& c, int list_arg, int64_t dim_arg) {
  int32_t n = c.list_size(list_arg);
  if (n == 0)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'tensors' is empty; torch.cat(): expected a non-empty list of Tensors",
         op.name);
  CatPlan p;
  ResultType rt;
  TensorImpl* first = c.list_tensor(list_arg, 0);
  TensorImpl* ref = nullptr;
  int32_t ref_index = 0;
  for (int32_t j = 0; j < n; ++j) {
    TensorImpl* t = c.list_tensor(list_arg, j);
    check_same_device(op, *first, *t, "tensors[0]", "tensors");
    if (t->ndim == 0)
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': argument 'tensors': zero-dimensional tensor (at position {}) cannot be "
           "concatenated; unsqueeze it or use stack",
           op.name, j);
    rt.add_tensor(t->dtype, t->ndim);
    if (t->ndim == 1 && t->sizes[0] == 0) continue;  // legacy empty tensor
    if (!ref) {
      ref = t;
      ref_index = j;
    }
    p.parts.push_back(t);
  }
  p.dtype = rt.result();
  if (!ref) {  // only legacy empties
    p.shape.ndim = 1;
    p.shape.sizes[0] = 0;
    return p;
  }
  p.dim = wrap_dim(dim_arg, ref->ndim, "dim");
  p.shape = shape_of(*ref);
  p.shape.sizes[p.dim] = 0;
  for (int32_t j = 0; j < n; ++j) {
    TensorImpl* t = c.list_tensor(list_arg, j);
    if (t->ndim == 1 && t->sizes[0] == 0) continue;
    if (t->ndim != ref->ndim)
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': argument 'tensors': Tensors must have same number of dimensions: got {} and "
           "{} (tensor number {} in the list)",
           op.name, ref->ndim, t->ndim, j);
    for (int32_t d = 0; d < t->ndim; ++d)
      if (d != p.dim && t->sizes[d] != ref->sizes[d])
        fail(TSR_INVALID_ARGUMENT,
             "op '{}': argument 'tensors': Sizes of tensors must match except in dimension {}. "
             "Expected size {} but got size {} for tensor number {} in the list.",
             op.name, p.dim, ref->sizes[d], t->sizes[d], j);
    p.shape.sizes[p.dim] += t->sizes[p.dim];
  }
  (void)ref_index;
  return p;
}

void cat_into(const CatPlan& p, TensorImpl* out) {
  int64_t offset = 0;
  for (TensorImpl* t : p.parts) {
    int64_t size = t->sizes[p.dim];
    if (size > 0) {
      TensorRef slot = op::slice(out, p.dim, offset, offset + size);
      op::copy_(slot.get(), t);
    }
    offset += size;
  }
}

// Concatenates `tensors` (kept alive by the caller) along dim.
TensorRef cat_of(TensorImpl* any, const std::vector<TensorRef>& tensors, int64_t dim) {
  std::vector<TensorImpl*> raw;
  raw.reserve(tensors.size());
  for (const TensorRef& t : tensors) raw.push_back(t.get());
  return op::call(any->runtime, OpId::cat, raw, dim);
}

TensorRef at_least(TensorImpl* t, int32_t ndim) {
  if (t->ndim >= ndim) return TensorRef::borrow(t);
  Shape s;
  s.ndim = ndim;
  for (int32_t d = 0; d < ndim; ++d) s.sizes[d] = 1;
  if (t->ndim == 1) s.sizes[ndim - 1] = t->sizes[0];
  return op::view(t, s);
}

std::vector<TensorRef> list_of(const OpCall& c, int arg) {
  std::vector<TensorRef> v;
  for (int32_t j = 0; j < c.list_size(arg); ++j)
    v.push_back(TensorRef::borrow(c.list_tensor(arg, j)));
  return v;
}

// ---- helpers -------------------------------------------------------------------

// `dims` wrapped and checked for repeats; returns a bit mask.
uint32_t dim_mask(const OpDef& op, const tsr_value& dims, int32_t ndim, const char* arg) {
  uint32_t mask = 0;
  for (int32_t i = 0; i < dims.len; ++i) {
    int32_t d = wrap_dim(dims.u.ints[i], ndim, arg);
    if (ndim == 0) continue;
    if (mask & (1u << d))
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': argument '{}': dim {} appears multiple times in the list of dims", op.name,
           arg, d);
    mask |= 1u << d;
  }
  return mask;
}

// out.copy_(src) through the device's copy_ kernel with raw descriptors.
void copy_descs(const OpDef& op, TensorImpl* out, tsr_tensor_desc src) {
  DeviceRecord* dev = out->device();
  if (dev->is_meta || out->numel == 0) return;
  tsr_dtype dts[2] = {out->dtype, static_cast<tsr_dtype>(src.dtype)};
  const BoundKernel& k = find_kernel(op, OpId::copy_, dev, dts, 2);
  tsr_tensor_desc dst = out->desc();
  tsr_value args[3];
  args[0] = tsr_value{};
  args[0].tag = TSR_VALUE_TENSOR;
  args[0].u.desc = &dst;
  args[1] = tsr_value{};
  args[1].tag = TSR_VALUE_TENSOR;
  args[1].u.desc = &src;
  args[2] = v_bool(false);
  tsr_tensor_desc result = dst;
  invoke_kernel(op, k, dev, args, 3, &result, 1);
}

int64_t wrap_shift(int64_t shift, int64_t size) {
  if (size == 0) return 0;
  int64_t s = shift % size;
  return s < 0 ? s + size : s;
}

// Rolls `self` along the dims with non-zero shifts into `out` (same shape):
// one copy per combination of the two halves of every rolled dim.
void roll_into(TensorImpl* self, TensorImpl* out, const int64_t* shift_of_dim) {
  std::vector<int32_t> rolled;
  for (int32_t d = 0; d < self->ndim; ++d)
    if (shift_of_dim[d] != 0) rolled.push_back(d);
  const uint32_t combos = 1u << rolled.size();
  for (uint32_t m = 0; m < combos; ++m) {
    TensorRef src = TensorRef::borrow(self), dst = TensorRef::borrow(out);
    for (size_t i = 0; i < rolled.size(); ++i) {
      int32_t d = rolled[i];
      int64_t n = self->sizes[d], s = shift_of_dim[d];
      if (m & (1u << i)) {  // self[0, n-s) -> out[s, n)
        src = op::slice(src.get(), d, 0, n - s);
        dst = op::slice(dst.get(), d, s, n);
      } else {  // self[n-s, n) -> out[0, s)
        src = op::slice(src.get(), d, n - s, n);
        dst = op::slice(dst.get(), d, 0, s);
      }
    }
    op::copy_(dst.get(), src.get());
  }
}

// repeat along the single dim `d` of contiguous `x` (k dims) by r.
TensorRef repeat_one_dim(TensorImpl* x, int32_t d, int64_t r) {
  int64_t before = 1, after = 1;
  for (int32_t i = 0; i < d; ++i) before *= x->sizes[i];
  for (int32_t i = d + 1; i < x->ndim; ++i) after *= x->sizes[i];
  int64_t s = x->sizes[d];
  TensorRef in = op::reshape(x, Shape{4, {before, 1, s, after}});
  TensorRef expanded = op::expand(in.get(), Shape{4, {before, r, s, after}});
  Shape out_shape = shape_of(*x);
  out_shape.sizes[d] = s * r;
  TensorRef out = op::empty(x, x->dtype, out_shape);
  TensorRef out4 = op::view(out.get(), Shape{4, {before, r, s, after}});
  op::copy_(out4.get(), expanded.get());
  return out;
}

TensorRef repeat_impl(const OpDef& op, TensorImpl* self, const int64_t* reps, int32_t k) {
  if (k < self->ndim)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'repeats' has {} entries; Number of dimensions of repeat dims can "
         "not be smaller than number of dimensions of tensor ({})",
         op.name, k, self->ndim);
  if (k > TSR_MAX_DIMS)
    fail(TSR_INVALID_ARGUMENT, "op '{}': argument 'repeats' has {} entries; at most {} dims",
         op.name, k, TSR_MAX_DIMS);
  Shape padded, result;
  padded.ndim = result.ndim = k;
  int32_t lead = k - self->ndim;
  for (int32_t d = 0; d < k; ++d) {
    if (reps[d] < 0)
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': argument 'repeats' = {}: Trying to create tensor with negative dimension {}",
           op.name, shape_str(k, reps), reps[d]);
    padded.sizes[d] = d < lead ? 1 : self->sizes[d - lead];
    result.sizes[d] = checked_mul(padded.sizes[d], reps[d], [&] {
      return fmt::format(
          "op '{}': argument 'repeats' = {}: the result size {} * {} at dim {} overflows int64; "
          "use smaller repeats",
          op.name, shape_str(k, reps), padded.sizes[d], reps[d], d);
    });
  }
  check_sizes(result.ndim, result.sizes, self->itemsize(), "repeats");
  TensorRef src = op::view(self, padded);
  TensorRef out = op::empty(self, self->dtype, result);
  if (out->numel == 0) return out;
  // One copy from an expanded view: each dim repeated with size > 1 becomes
  // (repeat, size), read with stride 0 along `repeat`.
  int32_t split_dims = 0;
  for (int32_t d = 0; d < k; ++d) split_dims += (reps[d] != 1 && padded.sizes[d] != 1) ? 2 : 1;
  if (split_dims <= TSR_MAX_DIMS) {
    Shape split_src, split_out;
    for (int32_t d = 0; d < k; ++d) {
      if (reps[d] != 1 && padded.sizes[d] != 1) {
        split_src.sizes[split_src.ndim++] = 1;
        split_out.sizes[split_out.ndim++] = reps[d];
        split_src.sizes[split_src.ndim++] = padded.sizes[d];
        split_out.sizes[split_out.ndim++] = padded.sizes[d];
      } else {
        split_src.sizes[split_src.ndim++] = padded.sizes[d];
        split_out.sizes[split_out.ndim++] = result.sizes[d];
      }
    }
    TensorRef in = op::view(src.get(), split_src);
    TensorRef expanded = op::expand(in.get(), split_out);
    TensorRef target = op::view(out.get(), split_out);
    op::copy_(target.get(), expanded.get());
    return out;
  }
  // Too many split dims for TSR_MAX_DIMS: one dim at a time.
  TensorRef x = contiguous_of(src.get());
  for (int32_t d = 0; d < k; ++d)
    if (reps[d] != 1) x = repeat_one_dim(x.get(), d, reps[d]);
  return x;
}

// tril (lower) or triu of `self` (ndim >= 2) as a new tensor.
TensorRef triangle(const OpDef& op, TensorImpl* self, int64_t diagonal, bool lower) {
  if (self->ndim < 2)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'self' is {}-d; {}: input tensor must have at least 2 dimensions",
         op.name, self->ndim, lower ? "tril" : "triu");
  constexpr OpId arange = OpId::arange;
  constexpr OpId le = OpId::le_Scalar;
  constexpr OpId ge = OpId::ge_Scalar;
  constexpr OpId where = OpId::where_self;
  int64_t rows = self->sizes[self->ndim - 2], cols = self->sizes[self->ndim - 1];
  tsr_value dev = v_device(self->device()->device);
  TensorRef r =
      op::call(self->runtime, arange, static_cast<int64_t>(rows), TSR_INT64, op::none, dev);
  TensorRef cidx =
      op::call(self->runtime, arange, static_cast<int64_t>(cols), TSR_INT64, op::none, dev);
  TensorRef rcol = op::view(r.get(), Shape{2, {rows, 1}});
  TensorRef offset = op::call(self->runtime, OpId::sub_Tensor, cidx, rcol);
  TensorRef keep = op::call(self->runtime, lower ? le : ge, offset, static_cast<int64_t>(diagonal));
  TensorRef zero = ix::scalar(self, scalar_int(0), self->dtype);
  return op::call(self->runtime, where, keep, self, zero);
}

}  // namespace

// ---- joining -----------------------------------------------------------------

void cat(OpCall& c) {
  CatPlan p = plan_cat(*c.op, c, 0, c.int_arg(1));
  TensorRef out = op::empty(c.list_tensor(0, 0), p.dtype, p.shape);
  cat_into(p, out.get());
  c.set_result(std::move(out));
}

void cat_out(OpCall& c) {
  const OpDef& op = *c.op;
  CatPlan p = plan_cat(op, c, 0, c.int_arg(1));
  TensorImpl* out = c.tensor(2);
  check_same_device(op, *c.list_tensor(0, 0), *out, "tensors", "out");
  if (!can_cast(p.dtype, out->dtype))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': result type {} can't be cast to the desired output type {}; use a {} output",
         op.name, dtype_name(p.dtype), dtype_name(out->dtype), dtype_name(p.dtype));
  for (int32_t j = 0; j < c.list_size(0); ++j)
    ix::check_no_overlap(op, *out, "out", *c.list_tensor(0, j), "tensors");
  resize_output(out, p.shape);
  assert_no_internal_overlap(*out, op.name.c_str(), "out");
  cat_into(p, out);
  out->bump_version();
  c.set_result(TensorRef::borrow(out));
}

void stack(OpCall& c) {
  const OpDef& op = *c.op;
  int32_t n = c.list_size(0);
  if (n == 0)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'tensors' is empty; stack expects a non-empty TensorList", op.name);
  TensorImpl* first = c.list_tensor(0, 0);
  for (int32_t j = 1; j < n; ++j) {
    TensorImpl* t = c.list_tensor(0, j);
    if (!same_shape(*t, shape_of(*first)))
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': stack expects each tensor to be equal size, but got {} at entry 0 and {} at "
           "entry {}",
           op.name, shape_str(first->ndim, first->sizes), shape_str(t->ndim, t->sizes), j);
  }
  int32_t dim = wrap_dim(c.int_arg(1), first->ndim + 1, "dim");
  std::vector<TensorRef> parts;
  for (int32_t j = 0; j < n; ++j) parts.push_back(op::unsqueeze(c.list_tensor(0, j), dim));
  c.set_result(cat_of(first, parts, dim));
}

void hstack(OpCall& c) {
  if (c.list_size(0) == 0)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'tensors' is empty; hstack expects a non-empty TensorList", c.op->name);
  std::vector<TensorRef> parts;
  for (const TensorRef& t : list_of(c, 0)) parts.push_back(at_least(t.get(), 1));
  int64_t dim = parts.front()->ndim == 1 ? 0 : 1;
  c.set_result(cat_of(parts.front().get(), parts, dim));
}

void vstack(OpCall& c) {
  if (c.list_size(0) == 0)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'tensors' is empty; vstack expects a non-empty TensorList", c.op->name);
  std::vector<TensorRef> parts;
  for (const TensorRef& t : list_of(c, 0)) parts.push_back(at_least(t.get(), 2));
  c.set_result(cat_of(parts.front().get(), parts, 0));
}

// ---- views -----------------------------------------------------------------

void narrow(OpCall& c) {
  const OpDef& op = *c.op;
  TensorImpl* self = c.tensor(0);
  if (self->ndim == 0)
    fail(TSR_INVALID_ARGUMENT, "op '{}': narrow() cannot be applied to a 0-dim tensor.", op.name);
  int32_t dim = wrap_dim(c.int_arg(1), self->ndim, "dim");
  int64_t size = self->sizes[dim];
  int64_t start = c.int_arg(2), length = c.int_arg(3);
  if (start < -size || start > size)
    fail(TSR_OUT_OF_RANGE,
         "op '{}': argument 'start' = {}: start out of range (expected to be in range of [{}, "
         "{}], but got {})",
         op.name, start, -size, size, start);
  if (start < 0) start += size;
  if (length < 0)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'length' = {}: narrow(): length must be non-negative.", op.name,
         length);
  if (start + length > size)
    fail(TSR_OUT_OF_RANGE, "op '{}': start ({}) + length ({}) exceeds dimension size ({}).",
         op.name, start, length, size);
  c.set_result(op::slice(self, dim, start, start + length));
}

namespace {
// Pieces of `self` along `dim` with the given lengths (views, in order).
void split_into(OpCall& c, TensorImpl* self, int32_t dim, const std::vector<int64_t>& lengths) {
  std::vector<TensorRef> pieces;
  pieces.reserve(lengths.size());
  int64_t start = 0;
  for (int64_t len : lengths) {
    pieces.push_back(op::slice(self, dim, start, start + len));
    start += len;
  }
  c.set_list_result(std::move(pieces));
}
}  // namespace

void split_tensor(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  if (self->ndim == 0)
    fail(TSR_INVALID_ARGUMENT, "op '{}': split expects at least a 1-dimensional tensor",
         c.op->name);
  int32_t dim = wrap_dim(c.int_arg(2), self->ndim, "dim");
  int64_t size = self->sizes[dim], split = c.int_arg(1);
  if (split < 0 || (split == 0 && size != 0))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'split_size' = {}: split_size can only be 0 if dimension size is 0, "
         "but got dimension size of {}; pass a positive split_size",
         c.op->name, split, size);
  std::vector<int64_t> lengths;
  if (size == 0) {
    lengths.push_back(0);  // one empty piece, as PyTorch
  } else {
    for (int64_t s = 0; s < size; s += split) lengths.push_back(std::min(split, size - s));
  }
  split_into(c, self, dim, lengths);
}

void split_sizes(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  if (self->ndim == 0)
    fail(TSR_INVALID_ARGUMENT, "op '{}': split expects at least a 1-dimensional tensor",
         c.op->name);
  int32_t dim = wrap_dim(c.int_arg(2), self->ndim, "dim");
  const tsr_value& v = c.args[1];
  std::vector<int64_t> lengths(v.u.ints, v.u.ints + v.len);
  int64_t total = 0;
  for (int64_t len : lengths) {
    if (len < 0)
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': argument '{}' has a negative entry {}; split sizes must be non-negative",
           c.op->name, c.arg_name(1), len);
    if (!add_ok(total, len, &total))
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': argument '{}' = {}: the split sizes' sum overflows int64; they must sum "
           "to {} (the size of dim {})",
           c.op->name, c.arg_name(1), shape_str(v.len, v.u.ints), self->sizes[dim], dim);
  }
  if (total != self->sizes[dim])
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': split_with_sizes expects split_sizes to sum exactly to {} (input tensor's "
         "size at dimension {}), but got split_sizes={}",
         c.op->name, self->sizes[dim], dim, shape_str(v.len, v.u.ints));
  split_into(c, self, dim, lengths);
}

void chunk(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  if (self->ndim == 0)
    fail(TSR_INVALID_ARGUMENT, "op '{}': chunk expects at least a 1-dimensional tensor",
         c.op->name);
  int64_t chunks = c.int_arg(1);
  if (chunks <= 0)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'chunks' = {}: chunk expects `chunks` to be greater than 0", c.op->name,
         chunks);
  int32_t dim = wrap_dim(c.int_arg(2), self->ndim, "dim");
  int64_t size = self->sizes[dim];
  // PyTorch: ceil(size / chunks), without forming size + chunks - 1.
  int64_t split = size / chunks + (size % chunks != 0 ? 1 : 0);
  std::vector<int64_t> lengths;
  if (split == 0) {  // an empty dim: `chunks` empty pieces
    if (chunks > std::numeric_limits<int32_t>::max())
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': argument 'chunks' = {}: an empty dim splits into `chunks` empty tensors, "
           "and {} of them cannot be returned; pass at most {}",
           c.op->name, chunks, chunks, std::numeric_limits<int32_t>::max());
    lengths.assign(static_cast<size_t>(chunks), 0);
  } else {
    for (int64_t s = 0; s < size; s += split) lengths.push_back(std::min(split, size - s));
  }
  split_into(c, self, dim, lengths);
}

void unbind(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  if (self->ndim == 0)
    fail(TSR_INVALID_ARGUMENT, "op '{}': Dimension specified as 0 but tensor has no dimensions",
         c.op->name);
  int32_t dim = wrap_dim(c.int_arg(1), self->ndim, "dim");
  constexpr OpId select = OpId::select_int;
  std::vector<TensorRef> pieces;
  for (int64_t i = 0; i < self->sizes[dim]; ++i)
    pieces.push_back(op::call(c.runtime, select, self, dim, i));
  c.set_list_result(std::move(pieces));
}

void movedim_intlist(OpCall& c) {
  const OpDef& op = *c.op;
  TensorImpl* self = c.tensor(0);
  const tsr_value& src = c.args[1];
  const tsr_value& dst = c.args[2];
  if (src.len != dst.len)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': movedim: Invalid source or destination dims: source ({} dims) should contain "
         "the same number of dims as destination ({} dims)",
         op.name, shape_str(src.len, src.u.ints), shape_str(dst.len, dst.u.ints));
  int32_t nd = self->ndim;
  int64_t perm[TSR_MAX_DIMS];
  bool src_used[TSR_MAX_DIMS] = {}, dst_used[TSR_MAX_DIMS] = {};
  for (int32_t i = 0; i < nd; ++i) perm[i] = -1;
  for (int32_t i = 0; i < src.len; ++i) {
    int32_t s = wrap_dim(src.u.ints[i], nd, "source");
    int32_t d = wrap_dim(dst.u.ints[i], nd, "destination");
    if (nd == 0) continue;
    if (src_used[s])
      fail(TSR_INVALID_ARGUMENT, "op '{}': movedim: repeated dim in `source` ({})", op.name,
           shape_str(src.len, src.u.ints));
    if (dst_used[d])
      fail(TSR_INVALID_ARGUMENT, "op '{}': movedim: repeated dim in `destination` ({})", op.name,
           shape_str(dst.len, dst.u.ints));
    src_used[s] = dst_used[d] = true;
    perm[d] = s;
  }
  int32_t next = 0;
  for (int32_t d = 0; d < nd; ++d) {
    if (perm[d] >= 0) continue;
    while (src_used[next]) ++next;
    perm[d] = next++;
  }
  if (nd == 0) {
    c.set_result(op::call(self->runtime, OpId::alias, self));
    return;
  }
  c.set_result(op::permute(self, op::ints(perm, self->ndim)));
}

void movedim_int(OpCall& c) {
  int64_t s = c.int_arg(1), d = c.int_arg(2);
  OpCall inner;
  inner.runtime = c.runtime;
  inner.op = c.op;
  inner.args[0] = c.args[0];
  inner.args[1] = v_ints(&s, 1);
  inner.args[2] = v_ints(&d, 1);
  inner.nargs = 3;
  movedim_intlist(inner);
  c.set_result(std::move(inner.results[0]));
}

void swapaxes(OpCall& c) { c.set_result(op::transpose(c.tensor(0), c.int_arg(1), c.int_arg(2))); }

void expand_as(OpCall& c) { c.set_result(op::expand(c.tensor(0), shape_of(*c.tensor(1)))); }
void view_as(OpCall& c) { c.set_result(op::view(c.tensor(0), shape_of(*c.tensor(1)))); }
void reshape_as(OpCall& c) { c.set_result(op::reshape(c.tensor(0), shape_of(*c.tensor(1)))); }
void broadcast_to(OpCall& c) {
  const tsr_value& size = c.args[1];
  c.set_result(op::expand(c.tensor(0), op::ints(size.u.ints, size.len)));
}

void flatten_using_ints(OpCall& c) {
  const OpDef& op = *c.op;
  TensorImpl* self = c.tensor(0);
  if (self->ndim == 0) {
    int64_t one = 1;
    c.set_result(op::reshape(self, op::ints(&one, 1)));
    return;
  }
  int32_t start = wrap_dim(c.int_arg(1), self->ndim, "start_dim");
  int32_t end = wrap_dim(c.int_arg(2), self->ndim, "end_dim");
  if (start > end)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': flatten() has invalid args: start_dim ({}) cannot come after end_dim ({})",
         op.name, start, end);
  if (start == end) {
    c.set_result(op::call(self->runtime, OpId::alias, self));
    return;
  }
  Shape s;
  for (int32_t d = 0; d < start; ++d) s.sizes[s.ndim++] = self->sizes[d];
  int64_t merged = 1;
  for (int32_t d = start; d <= end; ++d) merged *= self->sizes[d];
  s.sizes[s.ndim++] = merged;
  for (int32_t d = end + 1; d < self->ndim; ++d) s.sizes[s.ndim++] = self->sizes[d];
  c.set_result(op::reshape(self, s));
}

void unflatten_int(OpCall& c) {
  const OpDef& op = *c.op;
  TensorImpl* self = c.tensor(0);
  const tsr_value& sizes = c.args[2];
  int32_t dim = wrap_dim(c.int_arg(1), self->ndim, "dim");
  if (sizes.len == 0)
    fail(TSR_INVALID_ARGUMENT, "op '{}': argument 'sizes': unflatten: sizes must be non-empty",
         op.name);
  int64_t have = self->ndim == 0 ? 1 : self->sizes[dim];
  int64_t product = 1;
  int32_t infer = -1;
  for (int32_t i = 0; i < sizes.len; ++i) {
    int64_t v = sizes.u.ints[i];
    if (v == -1) {
      if (infer >= 0)
        fail(TSR_INVALID_ARGUMENT,
             "op '{}': argument 'sizes' = {}: only one dimension can be inferred", op.name,
             shape_str(sizes.len, sizes.u.ints));
      infer = i;
      continue;
    }
    if (v < 0)
      fail(TSR_INVALID_ARGUMENT, "op '{}': argument 'sizes' = {}: invalid size {}", op.name,
           shape_str(sizes.len, sizes.u.ints), v);
    product = checked_mul(product, v, [&] {
      return fmt::format(
          "op '{}': argument 'sizes' = {}: the product of the sizes overflows int64; they must "
          "multiply to {} (the size of dim {})",
          op.name, shape_str(sizes.len, sizes.u.ints), have, dim);
    });
  }
  bool ok = infer >= 0 ? (product != 0 && have % product == 0) || (product == 0 && have == 0)
                       : product == have;
  if (!ok || (infer >= 0 && product == 0))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': unflatten: Provided sizes {} don't multiply up to the size of dim {} ({}) in "
         "the input tensor",
         op.name, shape_str(sizes.len, sizes.u.ints), dim, have);
  Shape s;
  int32_t out_dims = std::max<int32_t>(self->ndim, 1) - 1 + sizes.len;
  if (out_dims > TSR_MAX_DIMS)
    fail(TSR_INVALID_ARGUMENT, "op '{}': the result would have {} dims; at most {}", op.name,
         out_dims, TSR_MAX_DIMS);
  for (int32_t d = 0; d < std::max<int32_t>(self->ndim, 1); ++d) {
    if (d != dim) {
      s.sizes[s.ndim++] = self->sizes[d];
      continue;
    }
    for (int32_t i = 0; i < sizes.len; ++i)
      s.sizes[s.ndim++] = i == infer ? have / product : sizes.u.ints[i];
  }
  c.set_result(op::view(self, s));
}

void diagonal(OpCall& c) {
  const OpDef& op = *c.op;
  TensorImpl* self = c.tensor(0);
  int64_t offset = c.int_arg(1);
  int32_t d1 = wrap_dim(c.int_arg(2), self->ndim, "dim1");
  int32_t d2 = wrap_dim(c.int_arg(3), self->ndim, "dim2");
  if (self->ndim < 2)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'self' is {}-d; diagonal needs at least 2 dimensions", op.name,
         self->ndim);
  if (d1 == d2)
    fail(TSR_INVALID_ARGUMENT, "op '{}': diagonal dimensions cannot be identical {}, {}", op.name,
         c.int_arg(2), c.int_arg(3));
  int64_t s1 = self->sizes[d1], s2 = self->sizes[d2];
  int64_t len = offset >= 0 ? std::min(s1, s2 - offset) : std::min(s1 + offset, s2);
  len = std::max<int64_t>(len, 0);
  int64_t storage_offset = self->offset;
  if (len > 0)
    storage_offset += offset >= 0 ? offset * self->strides[d2] : -offset * self->strides[d1];
  int64_t sizes[TSR_MAX_DIMS], strides[TSR_MAX_DIMS];
  int32_t n = 0;
  for (int32_t d = 0; d < self->ndim; ++d)
    if (d != d1 && d != d2) {
      sizes[n] = self->sizes[d];
      strides[n++] = self->strides[d];
    }
  sizes[n] = len;
  strides[n++] = self->strides[d1] + self->strides[d2];
  c.set_result(make_alias(self, n, sizes, strides, storage_offset));
}

// ---- copies ----------------------------------------------------------------

void flip(OpCall& c) {
  const OpDef& op = *c.op;
  TensorImpl* self = c.tensor(0);
  uint32_t mask = dim_mask(op, c.args[1], self->ndim, "dims");
  int64_t strides[TSR_MAX_DIMS];
  preserve_strides(*self, strides);
  TensorRef out =
      new_tensor(c.runtime, self->device(), self->dtype, self->ndim, self->sizes, strides);
  tsr_tensor_desc src = self->desc();
  int64_t item = static_cast<int64_t>(self->itemsize());
  for (int32_t d = 0; d < self->ndim; ++d) {
    if (!(mask & (1u << d)) || self->sizes[d] <= 1) continue;
    int64_t shift = (self->sizes[d] - 1) * self->strides[d] * item;
    src.byte_offset += shift;
    if (src.data) src.data = static_cast<char*>(src.data) + shift;
    src.strides[d] = -src.strides[d];
  }
  copy_descs(op, out.get(), src);
  c.set_result(std::move(out));
}

void roll(OpCall& c) {
  const OpDef& op = *c.op;
  TensorImpl* self = c.tensor(0);
  const tsr_value& shifts = c.args[1];
  const tsr_value& dims = c.args[2];
  if (dims.len == 0) {
    if (shifts.len != 1)
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': shifts and dimensions must align. shifts: {}, dims:{} (without dims, give "
           "one shift for the flattened tensor)",
           op.name, shifts.len, dims.len);
    TensorRef flat = op::flatten(self);
    TensorRef out = op::empty(self, self->dtype, shape_of(*flat));
    int64_t shift = wrap_shift(shifts.u.ints[0], flat->numel);
    if (out->numel > 0) roll_into(flat.get(), out.get(), &shift);
    c.set_result(op::view(out.get(), shape_of(*self)));
    return;
  }
  if (shifts.len != dims.len)
    fail(TSR_INVALID_ARGUMENT, "op '{}': shifts and dimensions must align. shifts: {}, dims:{}",
         op.name, shifts.len, dims.len);
  int64_t per_dim[TSR_MAX_DIMS] = {};
  for (int32_t i = 0; i < dims.len; ++i) {
    int32_t d = wrap_dim(dims.u.ints[i], self->ndim, "dims");
    if (self->ndim == 0) continue;
    per_dim[d] += shifts.u.ints[i] % std::max<int64_t>(self->sizes[d], 1);
  }
  for (int32_t d = 0; d < self->ndim; ++d) per_dim[d] = wrap_shift(per_dim[d], self->sizes[d]);
  TensorRef out = op::empty(self, self->dtype, shape_of(*self));
  if (out->numel > 0) roll_into(self, out.get(), per_dim);
  c.set_result(std::move(out));
}

void repeat(OpCall& c) {
  const tsr_value& reps = c.args[1];
  c.set_result(repeat_impl(*c.op, c.tensor(0), reps.u.ints, reps.len));
}

void tile(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  const tsr_value& dims = c.args[1];
  int64_t reps[TSR_MAX_DIMS];
  int32_t k = std::max<int32_t>(dims.len, self->ndim);
  if (k > TSR_MAX_DIMS)
    fail(TSR_INVALID_ARGUMENT, "op '{}': argument 'dims' has {} entries; at most {} dims",
         c.op->name, dims.len, TSR_MAX_DIMS);
  int32_t lead = k - dims.len;
  for (int32_t d = 0; d < k; ++d) reps[d] = d < lead ? 1 : dims.u.ints[d - lead];
  c.set_result(repeat_impl(*c.op, self, reps, k));
}

void diag(OpCall& c) {
  const OpDef& op = *c.op;
  TensorImpl* self = c.tensor(0);
  int64_t k = c.int_arg(1);
  if (self->ndim == 1) {
    int64_t n = self->sizes[0];
    // m = n + |k|, and the m x m result, must fit int64.
    int64_t m = 0, numel = 0;
    if (k == std::numeric_limits<int64_t>::min() || !add_ok(n, k >= 0 ? k : -k, &m) ||
        !mul_ok(m, m, &numel) || !mul_ok(numel, static_cast<int64_t>(self->itemsize()), &numel))
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': argument 'diagonal' = {}: the result for a vector of {} elements has "
           "(n + |diagonal|)^2 elements, which overflows int64; pass a diagonal closer to 0",
           op.name, k, n);
    TensorRef out = op::empty(self, self->dtype, {m, m});
    fill_raw(out.get(), scalar_int(0));
    TensorRef d = op::call(out.get()->runtime, OpId::diagonal, out, k, 0, 1);
    op::copy_(d.get(), self);
    c.set_result(std::move(out));
    return;
  }
  if (self->ndim != 2)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'self' is {}-d; diag(): matrix or a vector expected (1-d or 2-d)",
         op.name, self->ndim);
  TensorRef d = op::call(self->runtime, OpId::diagonal, self, k, 0, 1);
  c.set_result(contiguous_of(d.get()));
}

void tril(OpCall& c) { c.set_result(triangle(*c.op, c.tensor(0), c.int_arg(1), true)); }
void triu(OpCall& c) { c.set_result(triangle(*c.op, c.tensor(0), c.int_arg(1), false)); }

void tril_(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  TensorRef r = triangle(*c.op, self, c.int_arg(1), true);
  op::copy_(self, r.get());
  c.set_result(TensorRef::borrow(self));
}

void triu_(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  TensorRef r = triangle(*c.op, self, c.int_arg(1), false);
  op::copy_(self, r.get());
  c.set_result(TensorRef::borrow(self));
}

}  // namespace tsr::ops
