// custom_backward.cpp - the derivative of custom ops (Note [Custom operators]
// in tessera.h): the application's callback, or a derivative op called with
// (gradient of each result..., the forward's arguments...) that returns one
// Tensor per Tensor argument.
#include <string>
#include <vector>

#include "autograd/formulas.h"
#include "autograd/record.h"
#include "dispatch/op_api.h"
#include "dispatch/values.h"
#include "runtime/custom_op.h"
#include "util/error.h"

namespace tsr::autograd {
namespace {

// The forward's arguments as the application sees them (tensors as borrowed
// handles), with the references that keep them alive.
struct HandleArgs {
  std::vector<tsr_value> values;
  std::vector<TensorRef> keep;
  std::vector<std::vector<tsr_tensor*>> lists;
};

void build_handle_args(BackwardContext& ctx, int32_t nargs, HandleArgs& out) {
  out.values.resize(static_cast<size_t>(nargs));
  out.lists.reserve(static_cast<size_t>(nargs));
  for (int32_t i = 0; i < nargs; ++i) {
    tsr_value v = ctx.arg(i);
    if (v.tag == TSR_VALUE_TENSOR) {
      TensorRef t = ctx.input(i);
      v.u.tensor = to_handle(t.get());
      out.keep.push_back(std::move(t));
    } else if (v.tag == TSR_VALUE_TENSOR_LIST) {
      std::vector<tsr_tensor*>& l = out.lists.emplace_back();
      for (int32_t j = 0; j < ctx.list_size(i); ++j) {
        TensorRef t = ctx.list_input(i, j);
        l.push_back(to_handle(t.get()));
        out.keep.push_back(std::move(t));
      }
      v.len = static_cast<int32_t>(l.size());
      v.u.tensors = l.data();
    }
    out.values[static_cast<size_t>(i)] = v;
  }
}

void run_callback(BackwardContext& ctx, const CustomBackward& cb) {
  const OpDef& op = ctx.op();
  const int32_t nargs = static_cast<int32_t>(op.schema.args.size());
  const int32_t nouts = ctx.num_outputs();
  HandleArgs args;
  build_handle_args(ctx, nargs, args);
  std::vector<TensorRef> results;
  std::vector<tsr_tensor*> outputs, grads;
  for (int32_t k = 0; k < nouts; ++k) {
    results.push_back(ctx.result(k));
    outputs.push_back(to_handle(results.back().get()));
    grads.push_back(to_handle(ctx.grad(k)));
  }
  std::vector<int32_t> needs(static_cast<size_t>(nargs), 0);
  for (int32_t i = 0; i < nargs; ++i)
    needs[static_cast<size_t>(i)] =
        args.values[static_cast<size_t>(i)].tag == TSR_VALUE_TENSOR && ctx.needs(i);
  std::vector<tsr_tensor*> grad_inputs(static_cast<size_t>(nargs), nullptr);
  tsr_backward_call call{};
  call.struct_size = sizeof call;
  call.op = &op.custom->handle;
  call.nargs = nargs;
  call.nouts = nouts;
  call.args = args.values.data();
  call.outputs = outputs.data();
  call.grad_outputs = grads.data();
  call.needs_grad = needs.data();
  call.grad_inputs = grad_inputs.data();
  tsr_status* st = nullptr;
  try {
    st = cb.fn(cb.context, &call);
  } catch (...) {
    st = tsr_status_create(TSR_INTERNAL,
                           "the backward callback threw a C++ exception (it must return a status)");
  }
  // Take every reference handed over, whatever happens next.
  std::vector<TensorRef> given(static_cast<size_t>(nargs));
  std::string bad;
  for (int32_t i = 0; i < nargs; ++i) {
    tsr_tensor* h = grad_inputs[static_cast<size_t>(i)];
    if (h == nullptr) continue;
    try {
      given[static_cast<size_t>(i)] = TensorRef(from_handle(h, "grad_inputs"));
    } catch (const Error& e) {
      bad = fmt::format("grad_inputs[{}]: {}", i, e.message());
    }
  }
  if (st) {
    tsr_status_code code = tsr_status_code_of(st);
    std::string msg =
        fmt::format("backward of custom op '{}' failed: {}", op.name, tsr_status_message(st));
    tsr_status_free(st);
    throw Error(code, msg);
  }
  if (!bad.empty())
    fail(TSR_INVALID_ARGUMENT, "backward of custom op '{}' returned a bad tensor in {}", op.name,
         bad);
  for (int32_t i = 0; i < nargs; ++i) {
    TensorRef& g = given[static_cast<size_t>(i)];
    if (!g) continue;
    if (args.values[static_cast<size_t>(i)].tag != TSR_VALUE_TENSOR)
      fail(TSR_INVALID_ARGUMENT,
           "backward of custom op '{}' returned a gradient for argument {} ('{}'), which is not "
           "a tensor; leave grad_inputs[{}] NULL",
           op.name, i, op.schema.args[static_cast<size_t>(i)].name, i);
    if (ctx.needs(i)) ctx.set(i, std::move(g));
  }
}

void run_derivative_op(BackwardContext& ctx, const CustomOp& custom) {
  const OpDef& op = ctx.op();
  Runtime* rt = ctx.runtime();
  const OpDef* d = Registry::get().find(custom.derivative);
  if (d == nullptr) {
    CustomOp* c = rt->find_custom_op(custom.derivative);
    d = c ? &c->def : nullptr;
  }
  if (d == nullptr)
    fail(TSR_NOT_FOUND,
         "custom op '{}': its derivative op '{}' is not defined in this runtime (its plugin "
         "must define it too)",
         op.name, custom.derivative);
  const int32_t nargs = static_cast<int32_t>(op.schema.args.size());
  const int32_t nouts = ctx.num_outputs();
  // (grad_0 .. grad_{nouts-1}, forward args...) with matching kinds.
  bool fits = static_cast<int32_t>(d->schema.args.size()) == nouts + nargs &&
              nouts + nargs <= OpCall::kMaxArgs;
  for (int32_t k = 0; fits && k < nouts; ++k)
    fits = d->schema.args[static_cast<size_t>(k)].kind == ArgKind::kTensor;
  for (int32_t i = 0; fits && i < nargs; ++i)
    fits = d->schema.args[static_cast<size_t>(nouts + i)].kind ==
           op.schema.args[static_cast<size_t>(i)].kind;
  int32_t tensor_args = 0;
  for (const SchemaArg& a : op.schema.args) tensor_args += a.kind == ArgKind::kTensor;
  fits = fits && static_cast<int32_t>(d->schema.returns.size()) == tensor_args;
  if (!fits)
    fail(TSR_FAILED_PRECONDITION,
         "custom op '{}': its derivative op '{}' must take the gradient of each of the {} "
         "result(s) followed by the op's own arguments, and return one Tensor per Tensor "
         "argument ({}); its schema is '{}'",
         op.name, d->name, nouts, tensor_args, d->canonical);
  std::vector<tsr_value> values(static_cast<size_t>(nouts + nargs));
  std::vector<TensorRef> keep;
  std::vector<std::vector<tsr_tensor*>> lists;
  lists.reserve(static_cast<size_t>(nargs));
  for (int32_t k = 0; k < nouts; ++k) values[static_cast<size_t>(k)] = v_tensor(ctx.grad(k));
  for (int32_t i = 0; i < nargs; ++i) {
    tsr_value v = ctx.arg(i);
    if (v.tag == TSR_VALUE_TENSOR) {
      keep.push_back(ctx.input(i));
      v = v_tensor(keep.back().get());
    } else if (v.tag == TSR_VALUE_TENSOR_LIST) {
      std::vector<tsr_tensor*>& l = lists.emplace_back();
      for (int32_t j = 0; j < ctx.list_size(i); ++j) {
        keep.push_back(ctx.list_input(i, j));
        l.push_back(reinterpret_cast<tsr_tensor*>(keep.back().get()));
      }
      v.len = static_cast<int32_t>(l.size());
      v.u.tensors = l.data();
    }
    values[static_cast<size_t>(nouts + i)] = v;
  }
  OpResults r = op::call_values(rt, d->id, values);
  int32_t j = 0;
  for (int32_t i = 0; i < nargs; ++i) {
    if (op.schema.args[static_cast<size_t>(i)].kind != ArgKind::kTensor) continue;
    if (j < r.n && ctx.arg(i).tag == TSR_VALUE_TENSOR && ctx.needs(i))
      ctx.set(i, std::move(r.r[j]));
    ++j;
  }
}

void custom_backward(BackwardContext& ctx) {
  const CustomOp& custom = *ctx.op().custom;
  if (const CustomBackward* cb = custom.backward.load(std::memory_order_acquire)) {
    run_callback(ctx, *cb);
    return;
  }
  if (!custom.derivative.empty()) {
    run_derivative_op(ctx, custom);
    return;
  }
  fail(TSR_UNIMPLEMENTED,
       "the derivative of custom op '{}' is not implemented; give it one with "
       "tsr_op_set_backward (or a derivative op in its definition), or call it under no_grad",
       ctx.op().name);
}

}  // namespace

const Formula& custom_formula() {
  // Saves every tensor argument (bits beyond the schema are ignored) and
  // every result.
  static const Formula f{custom_backward, 0xFFFFFFFFu, 0xFFFFFFFFu, false};
  return f;
}

}  // namespace tsr::autograd
