// custom_function.cpp - custom functions (autograd.Function) through the C ABI.
#include "autograd/custom_function.h"

#include <algorithm>
#include <mutex>
#include <set>

#include "autograd/grad_ops.h"
#include "autograd/meta.h"
#include "ops/op_util.h"
#include "tensor/geometry.h"
#include "tensor/grad_mode.h"
#include "util/error.h"

namespace tsr::autograd {
namespace {

// Node names need static storage; function names are few, so keep each once.
const char* intern(const std::string& s) {
  static std::mutex mu;
  static std::set<std::string> names;
  std::lock_guard<std::mutex> lock(mu);
  return names.insert(s).first->c_str();
}

void throw_status(tsr_status* st, const std::string& what) {
  tsr_status_code code = tsr_status_code_of(st);
  std::string msg = fmt::format("{}: {}", what, tsr_status_message(st));
  tsr_status_free(st);
  throw Error(code, msg);
}

bool contains(const std::vector<TensorRef>& v, const TensorImpl* t) {
  return std::any_of(v.begin(), v.end(), [&](const TensorRef& r) { return r.get() == t; });
}

}  // namespace

FunctionNode::FunctionNode(const tsr_function_def& def, int32_t nargs)
    : Node(intern(std::string(def.name) + "Backward")),
      backward_(def.backward),
      context_(def.context),
      function_name_(intern(def.name)) {
  ctx.node = this;
  edge_of_arg.assign(static_cast<size_t>(nargs), -1);
  meta_of_arg.resize(static_cast<size_t>(nargs));
  arg_is_tensor.assign(static_cast<size_t>(nargs), false);
}

void FunctionNode::release_saved() {
  for (SavedTensor& s : saved) s.release();
}

std::vector<TensorRef> FunctionNode::apply(std::vector<TensorRef>&& grads) {
  const int32_t nargs = static_cast<int32_t>(edge_of_arg.size());
  const int32_t nouts = static_cast<int32_t>(grads.size());
  std::vector<tsr_tensor*> grad_handles;
  for (const TensorRef& g : grads) grad_handles.push_back(to_handle(g.get()));
  std::vector<tsr_tensor*> grad_inputs(static_cast<size_t>(nargs), nullptr);
  ctx.in_backward = true;
  tsr_status* st = nullptr;
  try {
    st = backward_(context_, &ctx, grad_handles.data(), nouts, grad_inputs.data(), nargs);
  } catch (...) {
    st =
        tsr_status_create(TSR_INTERNAL, "backward threw a C++ exception (it must return a status)");
  }
  std::vector<TensorRef> given(static_cast<size_t>(nargs));
  std::string bad;
  for (int32_t i = 0; i < nargs; ++i) {
    if (grad_inputs[static_cast<size_t>(i)] == nullptr) continue;
    try {
      given[static_cast<size_t>(i)] =
          TensorRef(from_handle(grad_inputs[static_cast<size_t>(i)], "grad_inputs"));
    } catch (const Error& e) {
      bad = fmt::format("grad_inputs[{}]: {}", i, e.message());
    }
  }
  if (st) throw_status(st, fmt::format("function '{}' backward failed", function_name_));
  if (!bad.empty())
    fail(TSR_INVALID_ARGUMENT, "function '{}' backward returned a bad tensor in {}", function_name_,
         bad);
  std::vector<TensorRef> out(next.size());
  for (int32_t i = 0; i < nargs; ++i) {
    TensorRef& g = given[static_cast<size_t>(i)];
    if (!g) continue;
    if (!arg_is_tensor[static_cast<size_t>(i)])
      fail(TSR_INVALID_ARGUMENT,
           "function {} returned a gradient different than None at position {}, but the "
           "corresponding forward input was not a tensor; leave grad_inputs[{}] NULL",
           name(), i, i);
    const int32_t e = edge_of_arg[static_cast<size_t>(i)];
    if (e < 0) continue;
    const TensorMeta& m = meta_of_arg[static_cast<size_t>(i)];
    const Shape s = [&] {
      try {
        return broadcast_shapes(g->ndim, g->sizes, m.ndim, m.sizes);
      } catch (const Error&) {
        return Shape{};
      }
    }();
    bool compatible = s.ndim == g->ndim;
    for (int32_t d = 0; compatible && d < s.ndim; ++d) compatible = s.sizes[d] == g->sizes[d];
    if (!compatible || g->device() != m.device)
      fail(TSR_INVALID_ARGUMENT,
           "function {} returned an invalid gradient at index {} - got {} on {} but expected "
           "shape compatible with {} on {}",
           name(), i, shape_str(g->ndim, g->sizes), g->device()->label, shape_str(m.ndim, m.sizes),
           m.device->label);
    out[static_cast<size_t>(e)] = reduce_to(g.get(), m, name());
  }
  return out;
}

TensorRef function_saved(tsr_function_ctx& ctx, int32_t index) {
  if (!ctx.in_backward || ctx.node == nullptr)
    fail(TSR_FAILED_PRECONDITION,
         "saved tensors can be read in backward only (in forward, use the tensors themselves)");
  FunctionNode& node = *ctx.node;
  if (index < 0 || static_cast<size_t>(index) >= node.saved.size())
    fail(TSR_OUT_OF_RANGE, "argument 'index' = {}: function {} saved {} tensor(s)", index,
         node.name(), node.saved.size());
  const std::string what = fmt::format("saved tensor {}", index);
  return node.saved[static_cast<size_t>(index)].unpack(node, what.c_str());
}

void apply_function(const tsr_function_def& def, const tsr_value* args, int32_t nargs,
                    tsr_tensor** outs, int32_t nouts) {
  // Decode the tensor arguments; decide whether anything records.
  std::vector<TensorImpl*> tensors(static_cast<size_t>(nargs), nullptr);
  bool any = false;
  for (int32_t i = 0; i < nargs; ++i) {
    if (args[i].tag == TSR_VALUE_TENSOR_LIST)
      fail(TSR_INVALID_ARGUMENT,
           "argument 'args[{}]': tensor lists are not supported by custom functions; pass the "
           "tensors as separate arguments",
           i);
    if (args[i].tag != TSR_VALUE_TENSOR) continue;
    TensorImpl* t = from_handle(args[i].u.tensor, "args");
    tensors[static_cast<size_t>(i)] = t;
    any = any || (grad_enabled() && requires_grad(*t));
  }
  std::shared_ptr<FunctionNode> node;
  tsr_function_ctx local;
  tsr_function_ctx* ctx = &local;
  if (any) {
    node = std::make_shared<FunctionNode>(def, nargs);
    ctx = &node->ctx;
    for (int32_t i = 0; i < nargs; ++i) {
      TensorImpl* t = tensors[static_cast<size_t>(i)];
      if (t == nullptr) continue;
      node->arg_is_tensor[static_cast<size_t>(i)] = true;
      node->meta_of_arg[static_cast<size_t>(i)] = TensorMeta::of(*t);
      if (requires_grad(*t)) {
        node->edge_of_arg[static_cast<size_t>(i)] = static_cast<int32_t>(node->next.size());
        node->next.push_back(gradient_edge(*t));
      }
    }
  }
  ctx->needs_input_grad.assign(static_cast<size_t>(nargs), 0);
  for (int32_t i = 0; i < nargs; ++i) {
    TensorImpl* t = tensors[static_cast<size_t>(i)];
    ctx->needs_input_grad[static_cast<size_t>(i)] = any && t != nullptr && requires_grad(*t);
  }

  std::vector<tsr_tensor*> raw(static_cast<size_t>(nouts), nullptr);
  tsr_status* st = nullptr;
  {
    GradModeGuard no_grad(false);
    try {
      st = def.forward(def.context, ctx, args, nargs, raw.data(), nouts);
    } catch (...) {
      st = tsr_status_create(TSR_INTERNAL,
                             "forward threw a C++ exception (it must return a status)");
    }
  }
  std::vector<TensorRef> results(static_cast<size_t>(nouts));
  std::string bad;
  for (int32_t k = 0; k < nouts; ++k) {
    if (raw[static_cast<size_t>(k)] == nullptr) continue;
    try {
      results[static_cast<size_t>(k)] = TensorRef(from_handle(raw[static_cast<size_t>(k)], "outs"));
    } catch (const Error& e) {
      bad = fmt::format("outs[{}]: {}", k, e.message());
    }
  }
  std::vector<TensorRef> to_save = std::move(ctx->to_save);
  std::vector<TensorRef> dirty = std::move(ctx->dirty);
  std::vector<TensorRef> non_diff = std::move(ctx->non_differentiable);
  if (st) throw_status(st, fmt::format("function '{}' forward failed", def.name));
  if (!bad.empty())
    fail(TSR_INVALID_ARGUMENT, "function '{}' forward returned a bad tensor in {}", def.name, bad);
  for (int32_t k = 0; k < nouts; ++k) {
    if (!results[static_cast<size_t>(k)])
      fail(TSR_INVALID_ARGUMENT,
           "function '{}' forward left outs[{}] NULL; it must return {} tensor(s)", def.name, k,
           nouts);
  }
  for (const TensorRef& d : dirty) {
    if (std::find(tensors.begin(), tensors.end(), d.get()) == tensors.end())
      fail(TSR_INVALID_ARGUMENT,
           "function '{}': mark_dirty was given a tensor that is not an argument of the function",
           def.name);
    if (!contains(results, d.get()))
      fail(TSR_INVALID_ARGUMENT,
           "function '{}': a tensor marked dirty must be returned by forward (it is modified in "
           "place, so its new value is an output)",
           def.name);
    if (any && requires_grad(*d)) {
      if (is_leaf(*d))
        fail(TSR_INVALID_ARGUMENT,
             "function '{}': a leaf tensor that requires grad is being used in an in-place "
             "operation (mark_dirty); clone it first",
             def.name);
      if (d->view_base != nullptr)
        fail(TSR_UNIMPLEMENTED,
             "function '{}': mark_dirty on a view of a tensor with history is not supported; "
             "modify a clone, or the base itself",
             def.name);
    }
  }
  // Outputs: an input returned as is (not dirty) comes back as a view of it.
  for (int32_t k = 0; k < nouts; ++k) {
    TensorRef& r = results[static_cast<size_t>(k)];
    const bool is_input = std::find(tensors.begin(), tensors.end(), r.get()) != tensors.end();
    if (is_input && !contains(dirty, r.get()))
      r = make_alias(r.get(), r->ndim, r->sizes, r->strides, r->offset);
  }
  if (node) {
    for (int32_t k = 0; k < nouts; ++k) {
      TensorImpl* r = results[static_cast<size_t>(k)].get();
      node->outputs.push_back(TensorMeta::of(*r));
    }
    for (const TensorRef& s : to_save) {
      int32_t out_nr = -1;
      for (int32_t k = 0; k < nouts && out_nr < 0; ++k)
        if (results[static_cast<size_t>(k)].get() == s.get()) out_nr = k;
      node->saved.emplace_back(s.get(), out_nr >= 0, out_nr >= 0 ? out_nr : 0);
    }
    for (int32_t k = 0; k < nouts; ++k) {
      TensorImpl* r = results[static_cast<size_t>(k)].get();
      if (contains(non_diff, r) || !is_differentiable_dtype(r->dtype)) continue;
      set_history(*r, node, static_cast<uint32_t>(k));
    }
  }
  for (int32_t k = 0; k < nouts; ++k) outs[k] = to_handle(results[static_cast<size_t>(k)].take());
}

}  // namespace tsr::autograd
