// nn layers: normalisation (batch, layer, group, RMS), dropout and
// embedding, as decompositions into registry ops (core/ops/nn/nn_ops.h).
// Attention is in nn/attention.cpp, the losses in nn/loss.cpp.
//
// Reduced precision: float16/bfloat16 inputs are normalised in float32 and the
// results converted back to the input dtype (PyTorch's CPU kernels accumulate
// in float32 too). Statistics (mean, rstd, save_mean, save_invstd) have the
// input's dtype.
//
// Fused kernels (TSR_FUSABLE): native_layer_norm and native_batch_norm look
// for a plugin kernel for the device and dtypes first (contract in
// defs/nn.def) and decompose only when there is none; the meta device always
// decomposes (shape only).
#include "dispatch/op_api.h"
#include "dispatch/values.h"
#include "ops/nn/nn_ops.h"
#include "ops/op_impls.h"
#include "tensor/grad_mode.h"

namespace tsr::ops {

namespace {

// Validates (input, normalized_shape, weight, bias) as PyTorch's layer_norm
// and rms_norm do; returns the first normalised dim (`axis`).
int32_t check_normalized_shape(const OpDef& op, const TensorImpl& input, const tsr_value& ns,
                               const TensorImpl* weight, const TensorImpl* bias) {
  std::vector<int64_t> shape(ns.u.ints, ns.u.ints + ns.len);
  if (shape.empty())
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'normalized_shape': Expected normalized_shape to be at least "
         "1-dimensional, i.e., containing at least one element, but got normalized_shape = []",
         op.name);
  for (const TensorImpl* p : {weight, bias}) {
    if (p == nullptr) continue;
    bool same = p->ndim == ns.len;
    for (int32_t d = 0; same && d < p->ndim; ++d) same = p->sizes[d] == shape[d];
    if (!same)
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': argument '{}': Expected {} to be of same shape as normalized_shape, but got "
           "{} of shape {} and normalized_shape = {}",
           op.name, p == weight ? "weight" : "bias", p == weight ? "weight" : "bias",
           p == weight ? "weight" : "bias", nn::shape_text(*p), nn::shape_text(shape));
  }
  bool ok = input.ndim >= ns.len;
  for (int32_t i = 0; ok && i < ns.len; ++i) ok = input.sizes[input.ndim - ns.len + i] == shape[i];
  if (!ok) {
    std::string expected = "[*";
    for (int64_t s : shape) expected += fmt::format(", {}", s);
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'input': Given normalized_shape={}, expected input with shape {}], "
         "but got input of size{}",
         op.name, nn::shape_text(shape), expected, nn::shape_text(input));
  }
  return input.ndim - ns.len;
}

std::vector<int64_t> dims_from(int32_t first, int32_t ndim) {
  std::vector<int64_t> dims;
  for (int32_t d = first; d < ndim; ++d) dims.push_back(d);
  return dims;
}

// (x - mean) * rstd over `dims` of x (already in the accumulation dtype), with
// the keepdim-shaped mean and rstd.
struct Normalized {
  TensorRef out, mean, rstd;
};
Normalized normalize(const TensorRef& x, const std::vector<int64_t>& dims, double eps) {
  Normalized n;
  n.mean = op::mean(x, dims, true);
  TensorRef centred = op::sub(x, n.mean);
  TensorRef var = op::mean(op::mul(centred, centred), dims, true);
  n.rstd = op::rsqrt(op::add(var, eps));
  n.out = op::mul(centred, n.rstd);
  return n;
}

TensorRef affine(TensorRef out, TensorImpl* weight, TensorImpl* bias) {
  if (weight) out = op::mul(out, TensorRef::borrow(weight));
  if (bias) out = op::add(out, TensorRef::borrow(bias));
  return out;
}

// `t` as a view of shape [1, C, 1, ...] for an input of `ndim` dims.
TensorRef channel_view(TensorImpl* t, int64_t channels, int32_t ndim) {
  std::vector<int64_t> shape(static_cast<size_t>(ndim), 1);
  shape[1] = channels;
  return op::reshape(TensorRef::borrow(t), shape);
}

// Sets the op's results, in order.
void set_results(OpCall& c, std::initializer_list<TensorRef> results) {
  for (const TensorRef& r : results) c.set_result(r);
}

}  // namespace

// ---------------------------------------------------------------------------
// Layer norm
// ---------------------------------------------------------------------------

void native_layer_norm(OpCall& c) {
  Runtime* rt = c.runtime;
  const OpDef& op = *c.op;
  TensorImpl* input = c.tensor(0);
  TensorImpl* weight = c.opt_tensor(2);
  TensorImpl* bias = c.opt_tensor(3);
  const double eps = c.float_arg(4);
  nn::check_floating(op, *input, "input");
  if (weight) check_same_device(op, *input, *weight, "input", "weight");
  if (bias) check_same_device(op, *input, *bias, "input", "bias");
  const int32_t axis = check_normalized_shape(op, *input, c.args[1], weight, bias);
  std::vector<int64_t> stat_shape = nn::sizes_of(*input);
  for (int32_t d = axis; d < input->ndim; ++d) stat_shape[static_cast<size_t>(d)] = 1;

  DeviceRecord* dev = input->device();
  const tsr_dtype dts[3] = {input->dtype, weight ? weight->dtype : input->dtype,
                            bias ? bias->dtype : input->dtype};
  if (const BoundKernel* k = try_find_kernel(OpId::native_layer_norm, dev, dts, 3)) {
    TensorRef in = contiguous_of(input);
    TensorRef w = weight ? contiguous_of(weight) : TensorRef();
    TensorRef b = bias ? contiguous_of(bias) : TensorRef();
    TensorRef out = new_tensor(rt, dev, input->dtype, shape_of(*input));
    const auto ns = static_cast<int32_t>(stat_shape.size());
    TensorRef mean = new_tensor(rt, dev, input->dtype, ns, stat_shape.data());
    TensorRef rstd = new_tensor(rt, dev, input->dtype, ns, stat_shape.data());
    nn::run_fused(op, *k, dev,
                  {v_tensor(in.get()), c.args[1], w ? v_tensor(w.get()) : v_none(),
                   b ? v_tensor(b.get()) : v_none(), v_float(eps)},
                  {out.get(), mean.get(), rstd.get()});
    set_results(c, {out, mean, rstd});
    return;
  }
  const tsr_dtype acc = nn::acc_dtype(input->dtype);
  TensorRef x = cast(input, acc);
  Normalized n = normalize(x, dims_from(axis, input->ndim), eps);
  TensorRef out = affine(n.out, weight, bias);
  set_results(c, {nn::to_dtype(out, input->dtype), nn::to_dtype(n.mean, input->dtype),
                  nn::to_dtype(n.rstd, input->dtype)});
}

void layer_norm(OpCall& c) {
  OpResults r = op::call_all(c.runtime, OpId::native_layer_norm, c.args[0], c.args[1], c.args[2],
                             c.args[3], c.args[4]);
  c.set_result(std::move(r.r[0]));
}

// ---------------------------------------------------------------------------
// RMS norm
// ---------------------------------------------------------------------------

void rms_norm(OpCall& c) {
  const OpDef& op = *c.op;
  TensorImpl* input = c.tensor(0);
  TensorImpl* weight = c.opt_tensor(2);
  nn::check_floating(op, *input, "input");
  if (weight) check_same_device(op, *input, *weight, "input", "weight");
  const int32_t axis = check_normalized_shape(op, *input, c.args[1], weight, nullptr);
  double eps = 0;
  if (!c.is_none(3)) {
    eps = c.float_arg(3);
  } else {
    // torch.finfo(input.dtype).eps
    switch (input->dtype) {
      case TSR_FLOAT16:
        eps = 0.0009765625;  // 2^-10
        break;
      case TSR_BFLOAT16:
        eps = 0.0078125;  // 2^-7
        break;
      case TSR_FLOAT32:
        eps = 1.1920928955078125e-07;  // 2^-23
        break;
      default:
        eps = 2.220446049250313e-16;  // 2^-52
        break;
    }
  }
  TensorRef x = cast(input, nn::acc_dtype(input->dtype));
  TensorRef ms = op::mean(op::mul(x, x), dims_from(axis, input->ndim), true);
  TensorRef out = op::mul(x, op::rsqrt(op::add(ms, eps)));
  out = affine(out, weight, nullptr);
  c.set_result(nn::to_dtype(out, input->dtype));
}

// ---------------------------------------------------------------------------
// Batch norm
// ---------------------------------------------------------------------------

void native_batch_norm(OpCall& c) {
  Runtime* rt = c.runtime;
  const OpDef& op = *c.op;
  TensorImpl* input = c.tensor(0);
  TensorImpl* weight = c.opt_tensor(1);
  TensorImpl* bias = c.opt_tensor(2);
  TensorImpl* running_mean = c.opt_tensor(3);
  TensorImpl* running_var = c.opt_tensor(4);
  const bool training = c.bool_arg(5);
  const double momentum = c.float_arg(6);
  const double eps = c.float_arg(7);
  nn::check_floating(op, *input, "input");
  if (input->ndim < 2)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'input' of shape {} has {} dims; batch norm expects (N, C, ...) with "
         "at least 2 dims",
         op.name, nn::shape_text(*input), input->ndim);
  const int64_t channels = input->sizes[1];
  const char* names[4] = {"weight", "bias", "running_mean", "running_var"};
  TensorImpl* params[4] = {weight, bias, running_mean, running_var};
  for (int i = 0; i < 4; ++i) {
    if (params[i] == nullptr) continue;
    check_same_device(op, *input, *params[i], "input", names[i]);
    if (params[i]->numel != channels)
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': argument '{}': {} should contain {} elements not {} (one per channel of "
           "input {})",
           op.name, names[i], names[i], channels, params[i]->numel, nn::shape_text(*input));
  }
  if (!training && (running_mean == nullptr || running_var == nullptr))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument '{}' is None but training=False: evaluation mode normalises with the "
         "running statistics; pass running_mean and running_var or use training=True",
         op.name, running_mean == nullptr ? "running_mean" : "running_var");
  if ((running_mean == nullptr) != (running_var == nullptr))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument '{}' is None but '{}' is not; pass both running statistics or "
         "neither",
         op.name, running_mean == nullptr ? "running_mean" : "running_var",
         running_mean == nullptr ? "running_var" : "running_mean");
  if (training && running_mean) {
    assert_no_internal_overlap(*running_mean, op.name.c_str(), "running_mean");
    assert_no_internal_overlap(*running_var, op.name.c_str(), "running_var");
  }

  DeviceRecord* dev = input->device();
  const tsr_dtype dts[5] = {input->dtype, weight ? weight->dtype : input->dtype,
                            bias ? bias->dtype : input->dtype,
                            running_mean ? running_mean->dtype : input->dtype,
                            running_var ? running_var->dtype : input->dtype};
  const int64_t stat_size = training ? channels : 0;
  if (const BoundKernel* k = try_find_kernel(OpId::native_batch_norm, dev, dts, 5)) {
    TensorRef out = new_tensor(rt, dev, input->dtype, shape_of(*input));
    TensorRef save_mean = new_tensor(rt, dev, input->dtype, 1, &stat_size);
    TensorRef save_invstd = new_tensor(rt, dev, input->dtype, 1, &stat_size);
    nn::run_fused(
        op, *k, dev,
        {c.args[0], c.args[1], c.args[2], c.args[3], c.args[4], c.args[5], c.args[6], c.args[7]},
        {out.get(), save_mean.get(), save_invstd.get()});
    if (training && running_mean) {
      running_mean->bump_version();
      running_var->bump_version();
    }
    set_results(c, {out, save_mean, save_invstd});
    return;
  }

  const tsr_dtype acc = nn::acc_dtype(input->dtype);
  TensorRef x = cast(input, acc);
  std::vector<int64_t> dims = {0};
  for (int32_t d = 2; d < input->ndim; ++d) dims.push_back(d);
  const std::vector<int64_t> vec = {channels};
  TensorRef out, save_mean, save_invstd;
  if (training) {
    TensorRef mean = op::mean(x, dims, false);
    TensorRef centred = op::sub(x, channel_view(mean.get(), channels, input->ndim));
    TensorRef var = op::mean(op::mul(centred, centred), dims, false);
    TensorRef invstd = op::rsqrt(op::add(var, eps));
    out = op::mul(centred, channel_view(invstd.get(), channels, input->ndim));
    if (running_mean) {
      // The running statistics are updated without history, as PyTorch's
      // kernels do: recorded, they would chain every step's graph to the next
      // through the buffers (and their gradient is never asked for).
      autograd::GradModeGuard no_grad(false);
      const double n = static_cast<double>(channels > 0 ? input->numel / channels : 0);
      TensorRef rm = op::reshape(TensorRef::borrow(running_mean), vec);
      TensorRef rv = op::reshape(TensorRef::borrow(running_var), vec);
      TensorRef new_mean = op::add(op::mul(rm, 1.0 - momentum), op::mul(mean, momentum));
      // unbiased variance: sum of squares / (n - 1)
      TensorRef unbiased = op::div(op::mul(var, n), n - 1.0);
      TensorRef new_var = op::add(op::mul(rv, 1.0 - momentum), op::mul(unbiased, momentum));
      op::call(rt, OpId::copy_, running_mean, op::reshape(new_mean, nn::sizes_of(*running_mean)));
      op::call(rt, OpId::copy_, running_var, op::reshape(new_var, nn::sizes_of(*running_var)));
    }
    save_mean = nn::to_dtype(mean, input->dtype);
    save_invstd = nn::to_dtype(invstd, input->dtype);
  } else {
    TensorRef rm = cast(op::reshape(TensorRef::borrow(running_mean), vec).get(), acc);
    TensorRef rv = cast(op::reshape(TensorRef::borrow(running_var), vec).get(), acc);
    TensorRef invstd = op::rsqrt(op::add(rv, eps));
    out = op::mul(op::sub(x, channel_view(rm.get(), channels, input->ndim)),
                  channel_view(invstd.get(), channels, input->ndim));
    save_mean = new_tensor(rt, dev, input->dtype, 1, &stat_size);
    save_invstd = new_tensor(rt, dev, input->dtype, 1, &stat_size);
  }
  TensorRef w = weight ? channel_view(weight, channels, input->ndim) : TensorRef();
  TensorRef b = bias ? channel_view(bias, channels, input->ndim) : TensorRef();
  out = affine(out, w.get(), b.get());
  set_results(c, {nn::to_dtype(out, input->dtype), save_mean, save_invstd});
}

void batch_norm(OpCall& c) {
  OpResults r = op::call_all(c.runtime, OpId::native_batch_norm, c.args[0], c.args[1], c.args[2],
                             c.args[3], c.args[4], c.args[5], c.args[6], c.args[7]);
  c.set_result(std::move(r.r[0]));
}

// ---------------------------------------------------------------------------
// Group norm
// ---------------------------------------------------------------------------

void native_group_norm(OpCall& c) {
  Runtime* rt = c.runtime;
  const OpDef& op = *c.op;
  TensorImpl* input = c.tensor(0);
  TensorImpl* weight = c.opt_tensor(1);
  TensorImpl* bias = c.opt_tensor(2);
  const int64_t n = c.int_arg(3), channels = c.int_arg(4), hxw = c.int_arg(5);
  const int64_t groups = c.int_arg(6);
  const double eps = c.float_arg(7);
  nn::check_floating(op, *input, "input");
  if (groups <= 0)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'group': Expected num groups to be greater than 0, got {}", op.name,
         groups);
  if (n < 0 || channels < 0 || hxw < 0 || input->ndim < 2 || input->sizes[0] != n ||
      input->sizes[1] != channels || n * channels * hxw != input->numel)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': arguments N={}, C={}, HxW={} do not describe argument 'input' of shape {} "
         "(expected (N, C, *) with HxW the product of the trailing sizes)",
         op.name, n, channels, hxw, nn::shape_text(*input));
  if (channels % groups != 0)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'group': Expected number of channels in input to be divisible by "
         "num_groups, but got input of shape {} and num_groups={}",
         op.name, nn::shape_text(*input), groups);
  for (TensorImpl* p : {weight, bias}) {
    if (p == nullptr) continue;
    const char* name = p == weight ? "weight" : "bias";
    check_same_device(op, *input, *p, "input", name);
    if (p->ndim != 1 || p->numel != channels)
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': argument '{}': Expected {} to be a vector of size equal to the number of "
           "channels in input, but got {} of shape {} and input of shape {}",
           op.name, name, name, name, nn::shape_text(*p), nn::shape_text(*input));
  }
  DeviceRecord* dev = input->device();
  const tsr_dtype dts[3] = {input->dtype, weight ? weight->dtype : input->dtype,
                            bias ? bias->dtype : input->dtype};
  const std::vector<int64_t> stat_shape = {n, groups};
  if (const BoundKernel* k = try_find_kernel(OpId::native_group_norm, dev, dts, 3)) {
    TensorRef in = contiguous_of(input);
    TensorRef out = new_tensor(rt, dev, input->dtype, shape_of(*input));
    TensorRef mean = new_tensor(rt, dev, input->dtype, 2, stat_shape.data());
    TensorRef rstd = new_tensor(rt, dev, input->dtype, 2, stat_shape.data());
    nn::run_fused(op, *k, dev,
                  {v_tensor(in.get()), c.args[1], c.args[2], c.args[3], c.args[4], c.args[5],
                   c.args[6], c.args[7]},
                  {out.get(), mean.get(), rstd.get()});
    set_results(c, {out, mean, rstd});
    return;
  }
  TensorRef x = cast(input, nn::acc_dtype(input->dtype));
  x = op::reshape(x, {n, groups, channels / groups * hxw});
  Normalized nz = normalize(x, {2}, eps);
  TensorRef out = op::reshape(nz.out, nn::sizes_of(*input));
  TensorRef w = weight ? channel_view(weight, channels, input->ndim) : TensorRef();
  TensorRef b = bias ? channel_view(bias, channels, input->ndim) : TensorRef();
  out = affine(out, w.get(), b.get());
  set_results(c, {nn::to_dtype(out, input->dtype),
                  nn::to_dtype(op::reshape(nz.mean, stat_shape), input->dtype),
                  nn::to_dtype(op::reshape(nz.rstd, stat_shape), input->dtype)});
}

void group_norm(OpCall& c) {
  const OpDef& op = *c.op;
  TensorImpl* input = c.tensor(0);
  const int64_t groups = c.int_arg(1);
  if (input->ndim < 2)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'input' of shape {} has {} dims; group norm expects (N, C, *) with at "
         "least 2 dims",
         op.name, nn::shape_text(*input), input->ndim);
  if (groups <= 0)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'num_groups': Expected num groups to be greater than 0, got {}",
         op.name, groups);
  const int64_t channels = input->sizes[1];
  if (channels % groups != 0)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'num_groups': Expected number of channels in input to be divisible "
         "by num_groups, but got input of shape {} and num_groups={}",
         op.name, nn::shape_text(*input), groups);
  int64_t hxw = 1;
  for (int32_t d = 2; d < input->ndim; ++d) hxw *= input->sizes[d];
  OpResults r = op::call_all(c.runtime, OpId::native_group_norm, c.args[0], c.args[2], c.args[3],
                             input->sizes[0], channels, hxw, groups, c.args[4]);
  c.set_result(std::move(r.r[0]));
}

// ---------------------------------------------------------------------------
// Dropout
// ---------------------------------------------------------------------------

namespace {

void check_dropout_p(const OpDef& op, double p) {
  if (!(p >= 0.0 && p <= 1.0))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'p': dropout probability has to be between 0 and 1, but got {}",
         op.name, p);
}

// A keep-mask of `like`'s shape and dtype: 1 with probability 1 - p, from the
// default generator (bernoulli_).
TensorRef keep_mask(Runtime* rt, TensorImpl* like, double p) {
  TensorRef mask = new_tensor(rt, like->device(), like->dtype, shape_of(*like));
  op::call(rt, OpId::bernoulli__float, mask, 1.0 - p);
  return mask;
}

}  // namespace

void dropout(OpCall& c) {
  TensorImpl* input = c.tensor(0);
  const double p = c.float_arg(1);
  check_dropout_p(*c.op, p);
  if (p == 0.0 || !c.bool_arg(2) || input->numel == 0) {
    c.set_result(TensorRef::borrow(input));  // PyTorch returns the input itself
    return;
  }
  nn::check_floating(*c.op, *input, "input");
  Runtime* rt = c.runtime;
  TensorRef in = TensorRef::borrow(input);
  if (p == 1.0) {
    c.set_result(op::mul(in, 0.0));  // input * 0: NaN and inf stay NaN, as in PyTorch
    return;
  }
  c.set_result(op::mul(in, op::mul(keep_mask(rt, input, p), 1.0 / (1.0 - p))));
}

void dropout_(OpCall& c) {
  TensorImpl* self = c.tensor(0);
  const double p = c.float_arg(1);
  check_dropout_p(*c.op, p);
  Runtime* rt = c.runtime;
  if (p != 0.0 && c.bool_arg(2) && self->numel != 0) {
    nn::check_floating(*c.op, *self, "self");
    if (p == 1.0) {
      op::call(rt, OpId::mul__Scalar, self, 0.0);
    } else {
      TensorRef scaled = op::mul(keep_mask(rt, self, p), 1.0 / (1.0 - p));
      op::call(rt, OpId::mul__Tensor, self, scaled);
    }
  }
  c.set_result(TensorRef::borrow(self));
}

void native_dropout(OpCall& c) {
  Runtime* rt = c.runtime;
  TensorImpl* input = c.tensor(0);
  const double p = c.float_arg(1);
  const bool train = c.is_none(2) || c.bool_arg(2);
  check_dropout_p(*c.op, p);
  nn::check_floating(*c.op, *input, "input");
  TensorRef in = TensorRef::borrow(input);
  if (!train) {
    set_results(c, {op::call(rt, OpId::clone, input),
                    nn::full(rt, *input, TSR_BOOL, nn::sizes_of(*input), 1.0)});
    return;
  }
  if (p == 1.0) {
    set_results(c, {op::mul(in, 0.0), nn::full(rt, *input, TSR_BOOL, nn::sizes_of(*input), 0.0)});
    return;
  }
  TensorRef keep = keep_mask(rt, input, p);
  TensorRef out = op::mul(in, op::mul(keep, 1.0 / (1.0 - p)));
  set_results(c, {out, cast(keep.get(), TSR_BOOL)});
}

// ---------------------------------------------------------------------------
// Embedding
// ---------------------------------------------------------------------------

void embedding(OpCall& c) {
  const OpDef& op = *c.op;
  TensorImpl* weight = c.tensor(0);
  TensorImpl* indices = c.tensor(1);
  const int64_t padding_idx = c.int_arg(2);
  if (weight->ndim != 2)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'weight': 'weight' must be 2-D (num_embeddings, embedding_dim), got "
         "shape {}",
         op.name, nn::shape_text(*weight));
  if (indices->dtype != TSR_INT64 && indices->dtype != TSR_INT32)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': Expected tensor for argument #1 'indices' to have one of the following scalar "
         "types: Long, Int; but got {} instead (while checking arguments for embedding)",
         op.name, dtype_name(indices->dtype));
  check_same_device(op, *weight, *indices, "weight", "indices");
  const int64_t rows = weight->sizes[0];
  if (padding_idx != -1 && (padding_idx >= rows || padding_idx < -rows))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'padding_idx' = {}: Padding_idx must be within num_embeddings ({})",
         op.name, padding_idx, rows);
  // Range check on the host: an index outside [0, rows) is the caller's error,
  // reported with its value and position, never an out-of-bounds read.
  if (!indices->device()->is_meta && indices->numel > 0) {
    TensorRef idx64 = cast(indices, TSR_INT64);
    std::vector<int64_t> host(static_cast<size_t>(indices->numel));
    read_to_host(idx64.get(), host.data());
    for (size_t i = 0; i < host.size(); ++i)
      if (host[i] < 0 || host[i] >= rows)
        fail(TSR_OUT_OF_RANGE,
             "op '{}': argument 'indices' holds {} at flat position {}, out of range for "
             "argument 'weight' with {} rows (valid: 0 to {}): index out of range in self",
             op.name, host[i], i, rows, rows - 1);
  }
  TensorRef flat = op::reshape(TensorRef::borrow(indices), {indices->numel});
  TensorRef rows_out = op::index_select(TensorRef::borrow(weight), 0, flat);
  std::vector<int64_t> shape = nn::sizes_of(*indices);
  shape.push_back(weight->sizes[1]);
  c.set_result(op::reshape(rows_out, shape));
}

}  // namespace tsr::ops
