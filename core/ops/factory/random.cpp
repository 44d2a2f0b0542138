// Random ops. Every draw is one random_fill (ops/factory/random_fill.h) from the
// op's `generator` argument, or the default generator of the result's device
// when it is None; the values are the Philox mapping of Note [Random mapping]
// (plugin.h), so a seed gives the same tensors on every device. Distributions
// the fill does not provide directly are composed: normal with tensor
// parameters (normal * std + mean), bernoulli with tensor p (uniform < p),
// exponential_ (-log(u) / lambda), randperm (sort of 64-bit random keys) and
// multinomial (cumsum + searchsorted with replacement, an exponential race +
// topk without). Meta tensors get shapes and draw nothing. Out-of-place
// results are fresh tensors at version 0; in-place ops bump self's version once.
#include <cmath>
#include <limits>
#include <vector>

#include "dispatch/op_api.h"
#include "ops/factory/factory_util.h"
#include "ops/factory/random_fill.h"
#include "ops/op_impls.h"
#include "ops/op_util.h"
#include "runtime/runtime.h"
#include "util/error.h"

namespace tsr::ops {

using factory::op_name;
using factory::Options;

namespace {

constexpr double kTwo63 = 9223372036854775808.0;

// Draws `distribution` into `out` from generator argument `gen_arg` (-1: the
// op has none; the default generator of out's device).
void draw(OpCall& c, TensorImpl* out, int gen_arg, int32_t distribution, double p0, double p1) {
  tsr_generator* g = gen_arg >= 0 ? c.generator(gen_arg) : nullptr;
  GeneratorImpl* gen = resolve_generator(g, c.runtime, out->device(), op_name(c));
  random_fill(out, gen, distribution, p0, p1, op_name(c));
}

void check_floating(const OpCall& c, tsr_dtype dtype, const char* arg, const char* what) {
  if (!is_floating(dtype))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument '{}' has dtype {}, but {} needs a floating dtype (float16, bfloat16, "
         "float32 or float64){}",
         op_name(c), arg, dtype_name(dtype), what,
         is_complex(dtype) ? "; complex random tensors are not supported yet" : "");
}

void check_real_dtype(const OpCall& c, tsr_dtype dtype, const char* arg) {
  if (is_complex(dtype))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument '{}' has dtype {}; random integers and bernoulli draws need a real "
         "dtype",
         op_name(c), arg, dtype_name(dtype));
}

// The elements of `t` as float64 on the host (for PyTorch's value checks of
// probabilities and standard deviations; synchronizes).
std::vector<double> host_values(TensorImpl* t) {
  std::vector<double> v(static_cast<size_t>(t->numel));
  if (t->numel == 0 || t->device()->is_meta) return {};
  TensorRef d = cast(t, TSR_FLOAT64);
  read_to_host(d.get(), v.data());
  return v;
}

void check_std_tensor(const OpCall& c, TensorImpl* std_t) {
  for (double s : host_values(std_t))
    if (!(s >= 0))
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': normal expects all elements of std >= 0.0 (argument 'std' holds {})",
           op_name(c), s);
}

void check_std(const OpCall& c, double std) {
  if (!(std >= 0))
    fail(TSR_INVALID_ARGUMENT, "op '{}': normal expects std >= 0.0, but found std {}", op_name(c),
         std);
}

// A contiguous tensor of `shape` (the shape of an int list argument).
TensorRef new_sized(OpCall& c, int size_arg, const Options& o) {
  const Shape shape = factory::size_arg(c, size_arg, o.dtype);
  return new_tensor(c.runtime, o.device, o.dtype, shape);
}

// Whether int64 `v` converts to double exactly (the random_fill call carries
// bounds as doubles, plugin.h).
bool exact_in_double(int64_t v) {
  const auto d = static_cast<double>(v);
  return d < kTwo63 && static_cast<int64_t>(d) == v;
}

// The inclusive maximum random_ draws for a dtype without `to` (PyTorch: the
// integer maximum; 2^digits for floating dtypes; 1 for bool), as the exclusive
// bound param1 of the fill.
double default_to(tsr_dtype dtype) {
  switch (dtype) {
    case TSR_BOOL:
      return 2;
    case TSR_UINT8:
      return 256;
    case TSR_INT8:
      return 128;
    case TSR_INT16:
      return 32768;
    case TSR_INT32:
      return 2147483648.0;
    case TSR_INT64:
      return kTwo63;
    case TSR_FLOAT16:
      return 2049;  // [0, 2^11]
    case TSR_BFLOAT16:
      return 257;  // [0, 2^8]
    case TSR_FLOAT32:
      return 16777217;  // [0, 2^24]
    default:  // float64: [0, 2^53) - PyTorch includes 2^53, which a double bound cannot exclude
      return 9007199254740992.0;
  }
}

// `v` as a random_fill bound: exact in double, or INVALID_ARGUMENT.
double exact_bound(const OpCall& c, int64_t v, const char* arg) {
  if (!exact_in_double(v))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument '{}' = {} is not exactly representable as a double; random_fill "
         "carries bounds as doubles (plugin.h), so use bounds within +-2^53 (or exact in double)",
         op_name(c), arg, v);
  return static_cast<double>(v);
}

// The smallest value of an integer (or bool) dtype.
double lowest(tsr_dtype dtype) {
  switch (dtype) {
    case TSR_INT8:
    case TSR_INT16:
    case TSR_INT32:
    case TSR_INT64:
      return -default_to(dtype);
    default:
      return 0;
  }
}

// Checks and draws integers in [from, to) into `out` (randint, random_).
void draw_range(OpCall& c, TensorImpl* out, int gen_arg, double from, double to) {
  check_real_dtype(c, out->dtype, "dtype");
  if (!(from < to))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': random_ expects 'from' to be less than 'to', but got from={} >= to={}",
         op_name(c), static_cast<int64_t>(from),
         to >= kTwo63 ? std::string("2^63") : fmt::format("{}", static_cast<int64_t>(to)));
  if (is_integral(out->dtype, true)) {
    const double lo = lowest(out->dtype), hi = default_to(out->dtype) - 1;
    if (from < lo || from > hi)
      fail(TSR_INVALID_ARGUMENT, "op '{}': from is out of bounds for {} (from={})", op_name(c),
           dtype_name(out->dtype), static_cast<int64_t>(from));
    if (to - 1 < lo || to - 1 > hi)
      fail(TSR_INVALID_ARGUMENT, "op '{}': to - 1 is out of bounds for {} (to={})", op_name(c),
           dtype_name(out->dtype), static_cast<int64_t>(to));
  }
  draw(c, out, gen_arg, TSR_RANDOM_RANDINT, from, to);
}

// rand / randn into a new tensor of `size`.
void rand_impl(OpCall& c, int gen_arg, int options_first, int32_t distribution) {
  const Options o = factory::options(c, options_first, kDefaultFloat);
  check_floating(c, o.dtype, "dtype", c.op->schema.name.c_str());
  TensorRef out = new_sized(c, 0, o);
  draw(c, out.get(), gen_arg, distribution, 0.0, 1.0);
  c.set_result(std::move(out));
}

void randint_impl(OpCall& c, int64_t low, int64_t high, int size_arg, int gen_arg,
                  int options_first) {
  const Options o = factory::options(c, options_first, TSR_INT64);
  TensorRef out = new_sized(c, size_arg, o);
  draw_range(c, out.get(), gen_arg, exact_bound(c, low, "low"), exact_bound(c, high, "high"));
  c.set_result(std::move(out));
}

void randperm_impl(OpCall& c, int gen_arg, int options_first) {
  const int64_t n = c.int_arg(0);
  if (n < 0) fail(TSR_INVALID_ARGUMENT, "op '{}': n must be non-negative, got {}", op_name(c), n);
  const Options o = factory::options(c, options_first, TSR_INT64);
  check_real_dtype(c, o.dtype, "dtype");
  if (n > 0) {
    const double largest = default_to(o.dtype) - 1;  // largest exactly representable index
    if (static_cast<double>(n - 1) > largest)
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': n = {} does not fit dtype {}: the largest index, {}, cannot be represented "
           "exactly; pass a wider dtype",
           op_name(c), n, dtype_name(o.dtype), n - 1);
  }
  factory::check_length(c, n, o.dtype, "n");
  factory::check_length(c, n, TSR_INT64, "n");  // the sort keys
  TensorRef out = new_tensor(c.runtime, o.device, o.dtype, 1, &n);
  if (!o.device->is_meta && n > 0) {
    // A permutation is the order of n independent 64-bit keys; the stable
    // sort makes ties (probability ~ n^2 / 2^65) deterministic.
    constexpr OpId sort_stable = OpId::sort_stable;
    TensorRef keys = new_tensor(c.runtime, o.device, TSR_INT64, 1, &n);
    draw(c, keys.get(), gen_arg, TSR_RANDOM_RANDINT, -kTwo63, kTwo63);
    OpResults sorted = op::call_all(c.runtime, sort_stable, keys, true);
    copy_raw(out.get(), sorted.r[1].get());
  }
  c.set_result(std::move(out));
}

// The in-place ops' common start: self must not overlap itself.
TensorImpl* in_place_target(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  assert_no_internal_overlap(*self, op_name(c));
  return self;
}

void finish_in_place(OpCall& c, TensorImpl* self) {
  self->bump_version();
  c.set_result(TensorRef::borrow(self));
}

// Bernoulli draws with per-element probabilities `p` (broadcast to out's
// shape): out = (u < p), u uniform in [0, 1) of p's precision (float64 for
// float64 p, else float32: one lane per element, as a scalar-p bernoulli).
void bernoulli_tensor_into(OpCall& c, TensorImpl* out, TensorImpl* p, int gen_arg) {
  check_floating(c, p->dtype, "p", "bernoulli with a probability tensor");
  check_real_dtype(c, out->dtype, "self");
  check_same_device(*c.op, *out, *p, "self", "p");
  const Shape shape = shape_of(*out);
  Shape joined = broadcast_shapes(out->ndim, out->sizes, p->ndim, p->sizes);
  if (!same_shape(*out, joined))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'p' of shape {} cannot be broadcast to the shape {} of the result",
         op_name(c), shape_str(p->ndim, p->sizes), shape_str(out->ndim, out->sizes));
  for (double v : host_values(p))
    if (!(v >= 0 && v <= 1))
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': argument 'p' holds a probability outside [0, 1] ({}); every element must be "
           "in [0, 1]",
           op_name(c), v);
  if (out->device()->is_meta) return;
  constexpr OpId lt_tensor = OpId::lt_Tensor;
  const tsr_dtype u_dtype = p->dtype == TSR_FLOAT64 ? TSR_FLOAT64 : TSR_FLOAT32;
  TensorRef u = new_tensor(c.runtime, out->device(), u_dtype, shape);
  draw(c, u.get(), gen_arg, TSR_RANDOM_UNIFORM, 0.0, 1.0);
  TensorRef hit = op::call(c.runtime, lt_tensor, u, p);
  copy_raw(out, hit.get());
}

void check_probability(const OpCall& c, double p) {
  if (!(p >= 0 && p <= 1))
    fail(TSR_INVALID_ARGUMENT, "op '{}': bernoulli_ expects p to be in [0, 1], but got p={}",
         op_name(c), p);
}

// -log(u) / lambda in `out` (floating), u uniform in (0, 1] so every sample is
// finite; lambda 0 gives inf (PyTorch).
void exponential_into(OpCall& c, TensorImpl* out, double lambd, int gen_arg) {
  if (out->device()->is_meta || out->numel == 0) return;
  if (lambd == 0) {
    fill_raw(out, scalar_float(std::numeric_limits<double>::infinity()));
    return;
  }
  constexpr OpId log_op = OpId::log;
  const tsr_dtype compute = out->dtype == TSR_FLOAT64 ? TSR_FLOAT64 : TSR_FLOAT32;
  TensorRef u = new_tensor(c.runtime, out->device(), compute, shape_of(*out));
  draw(c, u.get(), gen_arg, TSR_RANDOM_UNIFORM, 1.0, 0.0);  // 1 - u: (0, 1]
  TensorRef logs = op::call(c.runtime, log_op, u);
  TensorRef e = op::call(c.runtime, OpId::mul_Scalar, logs, static_cast<double>(-1.0 / lambd));
  copy_raw(out, e.get());
}

}  // namespace

// ---- rand, randn, randint, randperm ----------------------------------------

void rand(OpCall& c) { rand_impl(c, -1, 1, TSR_RANDOM_UNIFORM); }
void rand_generator(OpCall& c) { rand_impl(c, 1, 2, TSR_RANDOM_UNIFORM); }
void randn(OpCall& c) { rand_impl(c, -1, 1, TSR_RANDOM_NORMAL); }
void randn_generator(OpCall& c) { rand_impl(c, 1, 2, TSR_RANDOM_NORMAL); }
void randint(OpCall& c) { randint_impl(c, 0, c.int_arg(0), 1, -1, 2); }
void randint_generator(OpCall& c) { randint_impl(c, 0, c.int_arg(0), 1, 2, 3); }
void randint_low(OpCall& c) { randint_impl(c, c.int_arg(0), c.int_arg(1), 2, -1, 3); }
void randint_low_generator(OpCall& c) { randint_impl(c, c.int_arg(0), c.int_arg(1), 2, 3, 4); }
void randperm(OpCall& c) { randperm_impl(c, -1, 1); }
void randperm_generator(OpCall& c) { randperm_impl(c, 1, 2); }

void rand_like(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  const Options o = factory::options(c, 1, self->dtype, self->device());
  check_floating(c, o.dtype, "dtype", "rand_like");
  TensorRef out = factory::new_like(c, *self, o, 5);
  draw(c, out.get(), -1, TSR_RANDOM_UNIFORM, 0.0, 1.0);
  c.set_result(std::move(out));
}

void randn_like(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  const Options o = factory::options(c, 1, self->dtype, self->device());
  check_floating(c, o.dtype, "dtype", "randn_like");
  TensorRef out = factory::new_like(c, *self, o, 5);
  draw(c, out.get(), -1, TSR_RANDOM_NORMAL, 0.0, 1.0);
  c.set_result(std::move(out));
}

void randint_like(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  const Options o = factory::options(c, 2, self->dtype, self->device());
  TensorRef out = factory::new_like(c, *self, o, 6);
  draw_range(c, out.get(), -1, 0, exact_bound(c, c.int_arg(1), "high"));
  c.set_result(std::move(out));
}

void randint_like_low_dtype(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  const Options o = factory::options(c, 3, self->dtype, self->device());
  TensorRef out = factory::new_like(c, *self, o, 7);
  draw_range(c, out.get(), -1, exact_bound(c, c.int_arg(1), "low"),
             exact_bound(c, c.int_arg(2), "high"));
  c.set_result(std::move(out));
}

// ---- normal ------------------------------------------------------------------

void normal_(OpCall& c) {
  TensorImpl* self = in_place_target(c);
  const double mean = c.float_arg(1), std = c.float_arg(2);
  check_floating(c, self->dtype, "self", "normal_");
  check_std(c, std);
  draw(c, self, 3, TSR_RANDOM_NORMAL, mean, std);
  finish_in_place(c, self);
}

void normal_Tensor_float(OpCall& c) {
  TensorImpl* mean = c.tensor(0);
  const double std = c.float_arg(1);
  check_floating(c, mean->dtype, "mean", "normal");
  check_std(c, std);
  // mean + N(0, std): PyTorch's order (normal_(0, std), then add mean).
  TensorRef z = new_tensor(c.runtime, mean->device(), mean->dtype, shape_of(*mean));
  draw(c, z.get(), 2, TSR_RANDOM_NORMAL, 0.0, std);
  if (mean->device()->is_meta) {
    c.set_result(std::move(z));
    return;
  }
  c.set_result(op::call(c.runtime, OpId::add_Tensor, z, mean));
}

void normal_float_Tensor(OpCall& c) {
  const double mean = c.float_arg(0);
  TensorImpl* std_t = c.tensor(1);
  check_floating(c, std_t->dtype, "std", "normal");
  check_std_tensor(c, std_t);
  TensorRef z = new_tensor(c.runtime, std_t->device(), std_t->dtype, shape_of(*std_t));
  draw(c, z.get(), 2, TSR_RANDOM_NORMAL, 0.0, 1.0);
  if (std_t->device()->is_meta) {
    c.set_result(std::move(z));
    return;
  }
  TensorRef scaled = op::call(c.runtime, OpId::mul_Tensor, z, std_t);
  c.set_result(op::call(c.runtime, OpId::add_Scalar, scaled, static_cast<double>(mean)));
}

void normal_Tensor_Tensor(OpCall& c) {
  TensorImpl* mean = c.tensor(0);
  TensorImpl* std_t = c.tensor(1);
  check_floating(c, mean->dtype, "mean", "normal");
  check_floating(c, std_t->dtype, "std", "normal");
  check_same_device(*c.op, *mean, *std_t, "mean", "std");
  const Shape shape = broadcast_shapes(mean->ndim, mean->sizes, std_t->ndim, std_t->sizes);
  check_std_tensor(c, std_t);
  TensorRef z = new_tensor(c.runtime, mean->device(), mean->dtype, shape);
  draw(c, z.get(), 2, TSR_RANDOM_NORMAL, 0.0, 1.0);
  if (mean->device()->is_meta) {
    c.set_result(std::move(z));
    return;
  }
  TensorRef scaled = op::call(c.runtime, OpId::mul_Tensor, z, std_t);
  TensorRef sum = op::call(c.runtime, OpId::add_Tensor, scaled, mean);
  c.set_result(cast(sum.get(), mean->dtype));  // the result has mean's dtype (PyTorch)
}

void normal_float_float(OpCall& c) {
  const double mean = c.float_arg(0), std = c.float_arg(1);
  check_std(c, std);
  const Options o = factory::options(c, 4, kDefaultFloat);
  check_floating(c, o.dtype, "dtype", "normal");
  TensorRef out = new_sized(c, 2, o);
  draw(c, out.get(), 3, TSR_RANDOM_NORMAL, mean, std);
  c.set_result(std::move(out));
}

// ---- uniform_, bernoulli, random_, exponential_ -----------------------------------------

void uniform_(OpCall& c) {
  TensorImpl* self = in_place_target(c);
  const double from = c.float_arg(1), to = c.float_arg(2);
  check_floating(c, self->dtype, "self", "uniform_");
  if (!(from <= to))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': uniform_ expects to return a [from, to) range, but found from={} > to={}",
         op_name(c), from, to);
  double max = std::numeric_limits<float>::max();
  if (self->dtype == TSR_FLOAT64) max = std::numeric_limits<double>::max();
  if (!std::isfinite(from) || !std::isfinite(to) || !(to - from <= max))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': uniform_ expects to-from <= std::numeric_limits<{}>::max(), but found to={} "
         "and from={} which result in to-from to exceed the limit",
         op_name(c), self->dtype == TSR_FLOAT64 ? "double" : "float", to, from);
  draw(c, self, 3, TSR_RANDOM_UNIFORM, from, to);
  finish_in_place(c, self);
}

// A new tensor like `self` (its dtype, device and dim order).
TensorRef empty_like_self(OpCall& c, TensorImpl* self) {
  int64_t strides[TSR_MAX_DIMS];
  preserve_strides(*self, strides);
  return new_tensor(c.runtime, self->device(), self->dtype, self->ndim, self->sizes, strides);
}

void bernoulli(OpCall& c) {
  TensorImpl* p = c.tensor(0);
  check_floating(c, p->dtype, "self", "bernoulli (self holds the probabilities)");
  TensorRef out = empty_like_self(c, p);
  bernoulli_tensor_into(c, out.get(), p, 1);
  c.set_result(std::move(out));
}

void bernoulli_p(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  const double p = c.float_arg(1);
  check_probability(c, p);
  check_real_dtype(c, self->dtype, "self");
  TensorRef out = empty_like_self(c, self);
  draw(c, out.get(), 2, TSR_RANDOM_BERNOULLI, p, 0.0);
  c.set_result(std::move(out));
}

void bernoulli_Tensor(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  TensorRef out = empty_like_self(c, self);
  bernoulli_tensor_into(c, out.get(), c.tensor(1), 2);
  c.set_result(std::move(out));
}

void bernoulli__Tensor(OpCall& c) {
  TensorImpl* self = in_place_target(c);
  TensorImpl* p = c.tensor(1);
  assert_no_partial_overlap(*self, *p);
  bernoulli_tensor_into(c, self, p, 2);
  finish_in_place(c, self);
}

void bernoulli__float(OpCall& c) {
  TensorImpl* self = in_place_target(c);
  const double p = c.float_arg(1);
  check_probability(c, p);
  check_real_dtype(c, self->dtype, "self");
  draw(c, self, 2, TSR_RANDOM_BERNOULLI, p, 0.0);
  finish_in_place(c, self);
}

void random__from(OpCall& c) {
  TensorImpl* self = in_place_target(c);
  const double from = exact_bound(c, c.int_arg(1), "from");
  // to = None: up to the dtype's largest value, inclusive.
  const double to = c.is_none(2) ? default_to(self->dtype) : exact_bound(c, c.int_arg(2), "to");
  draw_range(c, self, 3, from, to);
  finish_in_place(c, self);
}

void random__to(OpCall& c) {
  TensorImpl* self = in_place_target(c);
  draw_range(c, self, 2, 0, exact_bound(c, c.int_arg(1), "to"));
  finish_in_place(c, self);
}

void random_(OpCall& c) {
  TensorImpl* self = in_place_target(c);
  draw_range(c, self, 1, 0, default_to(self->dtype));
  finish_in_place(c, self);
}

void exponential_(OpCall& c) {
  TensorImpl* self = in_place_target(c);
  const double lambd = c.float_arg(1);
  check_floating(c, self->dtype, "self", "exponential_");
  if (!(lambd >= 0))
    fail(TSR_INVALID_ARGUMENT, "op '{}': exponential_ expects lambda >= 0.0, but found lambda={}",
         op_name(c), lambd);
  exponential_into(c, self, lambd, 2);
  finish_in_place(c, self);
}

// ---- multinomial ---------------------------------------------------------------

void multinomial(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  const int64_t num_samples = c.int_arg(1);
  const bool replacement = c.bool_arg(2);
  if (!is_floating(self->dtype))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': multinomial only supports floating-point dtypes for input, got: {}", op_name(c),
         dtype_name(self->dtype));
  if (self->ndim != 1 && self->ndim != 2)
    fail(TSR_INVALID_ARGUMENT, "op '{}': prob_dist must be 1 or 2 dim, got {} dims", op_name(c),
         self->ndim);
  const int64_t categories = self->sizes[self->ndim - 1];
  const int64_t rows = self->ndim == 2 ? self->sizes[0] : 1;
  if (num_samples <= 0)
    fail(TSR_INVALID_ARGUMENT, "op '{}': cannot sample n_sample <= 0 samples (num_samples = {})",
         op_name(c), num_samples);
  if (!replacement && num_samples > categories)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': cannot sample n_sample > prob_dist.size(-1) samples without replacement "
         "({} > {})",
         op_name(c), num_samples, categories);
  if (categories > (int64_t{1} << 24))
    fail(TSR_INVALID_ARGUMENT, "op '{}': number of categories cannot exceed 2^24 (got {})",
         op_name(c), categories);
  if (categories == 0)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': invalid multinomial distribution (sum of probabilities <= 0): prob_dist has "
         "no categories",
         op_name(c));
  const std::vector<double> probs = host_values(self);
  for (int64_t r = 0; r < rows && !probs.empty(); ++r) {
    double sum = 0;
    for (int64_t k = 0; k < categories; ++k) {
      const double p = probs[static_cast<size_t>(r * categories + k)];
      if (!std::isfinite(p) || p < 0)
        fail(TSR_INVALID_ARGUMENT,
             "op '{}': probability tensor contains either `inf`, `nan` or element < 0", op_name(c));
      sum += p;
    }
    if (!(sum > 0))
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': invalid multinomial distribution (sum of probabilities <= 0) in row {}",
           op_name(c), r);
  }

  DeviceRecord* dev = self->device();
  const int64_t out_sizes[2] = {rows, num_samples};
  const int32_t out_ndim = self->ndim;
  const int64_t* out_shape = self->ndim == 2 ? out_sizes : out_sizes + 1;
  if (dev->is_meta || rows == 0) {
    c.set_result(new_tensor(c.runtime, dev, TSR_INT64, out_ndim, out_shape));
    return;
  }
  // Work on (rows, categories) float64 probabilities.
  TensorRef p64 = cast(self, TSR_FLOAT64);
  const int64_t grid[2] = {rows, categories};
  int64_t grid_strides[2];
  contiguous_strides(2, grid, grid_strides);
  TensorRef p2 = contiguous_of(p64.get());
  TensorRef p = make_alias(p2.get(), 2, grid, grid_strides, p2->offset);
  TensorRef indices;
  if (replacement) {
    // Inverse CDF: u * total located in the running sum (right side, so a
    // zero-probability category is never hit). The last entry of the running
    // sum becomes +inf so u * total rounding up to total stays in range.
    constexpr OpId cumsum = OpId::cumsum;
    constexpr OpId searchsorted = OpId::searchsorted_Tensor;
    TensorRef cdf = contiguous_of(op::call(c.runtime, cumsum, p, 1).get());
    const int64_t col = categories - 1, row_stride = categories;
    const int64_t total_sizes[2] = {rows, 1};
    const int64_t total_strides[2] = {categories, 1};
    TensorRef last = make_alias(cdf.get(), 2, total_sizes, total_strides, cdf->offset + col);
    TensorRef totals = new_tensor(c.runtime, dev, TSR_FLOAT64, 2, total_sizes);
    copy_raw(totals.get(), last.get());
    TensorRef last_col = make_alias(cdf.get(), 1, &rows, &row_stride, cdf->offset + col);
    fill_raw(last_col.get(), scalar_float(std::numeric_limits<double>::infinity()));
    TensorRef u = new_tensor(c.runtime, dev, TSR_FLOAT64, 2, out_sizes);
    draw(c, u.get(), 3, TSR_RANDOM_UNIFORM, 0.0, 1.0);
    TensorRef targets = op::call(c.runtime, OpId::mul_Tensor, u, totals);
    indices = op::call(c.runtime, searchsorted, cdf, targets, false, true);
  } else {
    // Exponential race: the num_samples largest p / E, E ~ Exp(1) drawn as
    // -log(u) with u in [0, 1) (E > 0, so no 0 / 0), are a sample without
    // replacement with the right probabilities; zero-probability categories
    // have key 0 and come last.
    constexpr OpId log_op = OpId::log;
    constexpr OpId topk = OpId::topk;
    TensorRef u = new_tensor(c.runtime, dev, TSR_FLOAT64, 2, grid);
    draw(c, u.get(), 3, TSR_RANDOM_UNIFORM, 0.0, 1.0);
    TensorRef logs = op::call(c.runtime, log_op, u);
    TensorRef e = op::call(c.runtime, OpId::mul_Scalar, logs, -1.0);
    TensorRef keys = op::call(c.runtime, OpId::div_Tensor, p, e);
    OpResults top = op::call_all(c.runtime, topk, keys, num_samples, 1, true, true);
    indices = std::move(top.r[1]);
  }
  // (rows, num_samples) int64 indices; a 1-d input gives (num_samples).
  TensorRef dense = contiguous_of(indices.get());
  int64_t out_strides[2];
  contiguous_strides(out_ndim, out_shape, out_strides);
  TensorRef out = make_alias(dense.get(), out_ndim, out_shape, out_strides, dense->offset);
  c.set_result(std::move(out));
}

}  // namespace tsr::ops
