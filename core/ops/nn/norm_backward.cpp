// nn: fused backward of the normalisations, as registry ops so a
// plugin can give one pass over the data where the formula would run a dozen
// ops (core/autograd/formulas_nn.cpp calls them).
//
// native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd,
// weight?, bias?, output_mask) -> (grad_input, grad_weight, grad_bias), as
// PyTorch's: with N the normalized numel, x^ = (x - mean) rstd and
// gx = grad_out * weight (grad_out without weight),
//   grad_input  = rstd (gx - mean_N(gx) - x^ mean_N(gx x^)),
//   grad_weight = sum over the leading dims of grad_out x^,
//   grad_bias   = sum over the leading dims of grad_out.
// mean and rstd are taken as given (the saved statistics; no gradient flows
// to them). A result whose output_mask entry is false is None, and so are
// grad_weight without weight and grad_bias without bias. Nothing normalized
// (N = 0) gives a zero grad_input. Reduced precision computes in float32 and
// rounds once. The decomposition below runs on every device; the fused
// kernel contract is in defs/nn.def.
#include "dispatch/op_api.h"
#include "dispatch/values.h"
#include "ops/nn/nn_ops.h"
#include "ops/op_impls.h"

namespace tsr::ops {

void native_layer_norm_backward(OpCall& c) {
  Runtime* rt = c.runtime;
  const OpDef& op = *c.op;
  TensorImpl* grad = c.tensor(0);
  TensorImpl* input = c.tensor(1);
  const tsr_value& ns = c.args[2];
  TensorImpl* mean = c.tensor(3);
  TensorImpl* rstd = c.tensor(4);
  TensorImpl* weight = c.opt_tensor(5);
  TensorImpl* bias = c.opt_tensor(6);
  const tsr_value& mask = c.args[7];
  if (mask.len != 3)
    fail(TSR_INVALID_ARGUMENT, "op '{}': argument 'output_mask' has {} entries; expected 3",
         op.name, mask.len);
  const bool want[3] = {mask.u.bools[0] != 0, mask.u.bools[1] != 0 && weight != nullptr,
                        mask.u.bools[2] != 0 && bias != nullptr};

  const char* names[4] = {"grad_out", "input", "mean", "rstd"};
  TensorImpl* tensors[4] = {grad, input, mean, rstd};
  for (int i = 0; i < 4; ++i) {
    nn::check_floating(op, *tensors[i], names[i]);
    if (i > 0) check_same_device(op, *grad, *tensors[i], "grad_out", names[i]);
  }
  if (!same_shape(*grad, shape_of(*input)))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'grad_out' of shape {} must have the shape of 'input' {}", op.name,
         nn::shape_text(*grad), nn::shape_text(*input));
  bool ns_ok = ns.len >= 1 && ns.len <= input->ndim;
  int64_t n = 1;
  for (int32_t i = 0; ns_ok && i < ns.len; ++i) {
    ns_ok = input->sizes[input->ndim - ns.len + i] == ns.u.ints[i];
    n *= ns.u.ints[i];
  }
  if (!ns_ok)
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument 'normalized_shape' {} is not a non-empty suffix of input's shape {}",
         op.name, nn::shape_text(std::vector<int64_t>(ns.u.ints, ns.u.ints + ns.len)),
         nn::shape_text(*input));
  const int32_t axis = input->ndim - ns.len;
  int64_t rows = 1;
  for (int32_t d = 0; d < axis; ++d) rows *= input->sizes[d];
  for (TensorImpl* stat : {mean, rstd})
    if (stat->numel != rows)
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': argument '{}' of shape {} must have one element per normalized row ({})",
           op.name, stat == mean ? "mean" : "rstd", nn::shape_text(*stat), rows);
  for (TensorImpl* p : {weight, bias}) {
    if (p == nullptr) continue;
    check_same_device(op, *grad, *p, "grad_out", p == weight ? "weight" : "bias");
    if (p->numel != n)
      fail(TSR_INVALID_ARGUMENT,
           "op '{}': argument '{}' of shape {} must have the normalized shape {}", op.name,
           p == weight ? "weight" : "bias", nn::shape_text(*p),
           nn::shape_text(std::vector<int64_t>(ns.u.ints, ns.u.ints + ns.len)));
  }
  const std::vector<int64_t> param_shape(ns.u.ints, ns.u.ints + ns.len);

  DeviceRecord* dev = input->device();
  const tsr_dtype dts[6] = {grad->dtype,
                            input->dtype,
                            mean->dtype,
                            rstd->dtype,
                            weight ? weight->dtype : input->dtype,
                            bias ? bias->dtype : input->dtype};
  if (const BoundKernel* k = try_find_kernel(op.id, dev, dts, 6)) {
    TensorRef g = contiguous_of(grad);
    TensorRef x = contiguous_of(input);
    TensorRef m = contiguous_of(mean);
    TensorRef r = contiguous_of(rstd);
    TensorRef w = weight ? contiguous_of(weight) : TensorRef();
    TensorRef dx = new_tensor(rt, dev, input->dtype, shape_of(*input));
    const auto pn = static_cast<int32_t>(param_shape.size());
    TensorRef dw = new_tensor(rt, dev, input->dtype, pn, param_shape.data());
    TensorRef db = new_tensor(rt, dev, input->dtype, pn, param_shape.data());
    const int32_t kernel_mask[3] = {want[0] ? 1 : 0, want[1] ? 1 : 0, want[2] ? 1 : 0};
    tsr_value mask_value{};
    mask_value.tag = TSR_VALUE_BOOL_LIST;
    mask_value.len = 3;
    mask_value.u.bools = kernel_mask;
    nn::run_fused(op, *k, dev,
                  {v_tensor(g.get()), v_tensor(x.get()), ns, v_tensor(m.get()), v_tensor(r.get()),
                   w ? v_tensor(w.get()) : v_none(), v_none(), mask_value},
                  {dx.get(), dw.get(), db.get()});
    c.set_result(want[0] ? dx : TensorRef());
    c.set_result(want[1] ? dw : TensorRef());
    c.set_result(want[2] ? db : TensorRef());
    return;
  }

  const tsr_dtype acc = nn::acc_dtype(input->dtype);
  TensorRef g = cast(grad, acc);
  std::vector<int64_t> stat_shape = nn::sizes_of(*input);
  for (int32_t d = axis; d < input->ndim; ++d) stat_shape[static_cast<size_t>(d)] = 1;
  TensorRef mu = op::reshape(cast(mean, acc), stat_shape);
  TensorRef rs = op::reshape(cast(rstd, acc), stat_shape);
  TensorRef xhat = op::mul(op::sub(cast(input, acc), mu), rs);
  std::vector<int64_t> inner, outer;
  for (int32_t d = 0; d < input->ndim; ++d) (d >= axis ? inner : outer).push_back(d);
  auto over_outer = [&](const TensorRef& v) {
    TensorRef s = outer.empty() ? v : op::sum(v, outer, false);
    return nn::to_dtype(op::reshape(s, param_shape), input->dtype);
  };
  TensorRef dx, dw, db;
  if (want[0]) {
    if (n == 0) {
      dx = nn::full(rt, *input, input->dtype, nn::sizes_of(*input), 0.0);
    } else {
      TensorRef gx = weight ? op::mul(g, cast(weight, acc)) : g;
      TensorRef a = op::mean(gx, inner, true);
      TensorRef b = op::mean(op::mul(gx, xhat), inner, true);
      dx = nn::to_dtype(op::mul(op::sub(op::sub(gx, a), op::mul(xhat, b)), rs), input->dtype);
    }
  }
  if (want[1]) dw = over_outer(op::mul(g, xhat));
  if (want[2]) db = over_outer(g);
  c.set_result(dx);
  c.set_result(dw);
  c.set_result(db);
}

}  // namespace tsr::ops
