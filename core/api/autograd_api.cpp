// autograd_api.cpp - the application API's autograd entries (Note [Autograd]).
#include <memory>
#include <vector>

#include "api/guard.h"
#include "autograd/custom_function.h"
#include "autograd/engine.h"
#include "autograd/hooks.h"
#include "autograd/meta.h"
#include "tensor/geometry.h"
#include "tensor/grad_mode.h"
#include "util/error.h"

using namespace tsr;

namespace {

std::vector<TensorImpl*> tensor_list(int32_t n, tsr_tensor* const* handles, const char* arg,
                                     bool entries_may_be_null) {
  if (n < 0) fail(TSR_INVALID_ARGUMENT, "argument '{}': count {} is negative", arg, n);
  if (n > 0 && handles == nullptr)
    fail(TSR_INVALID_ARGUMENT, "argument '{}' is NULL but its count is {}", arg, n);
  std::vector<TensorImpl*> out(static_cast<size_t>(n), nullptr);
  for (int32_t i = 0; i < n; ++i) {
    if (handles[i] == nullptr && entries_may_be_null) continue;
    out[static_cast<size_t>(i)] = from_handle(handles[i], arg);
  }
  return out;
}

}  // namespace

TSR_API tsr_status* tsr_tensor_set_requires_grad(tsr_tensor* tensor, int32_t requires_grad) {
  return api_guard([&] {
    TensorImpl* t = from_handle(tensor, "tensor");
    if (!autograd::is_leaf(*t)) {
      if (requires_grad) return;  // already does
      fail(TSR_INVALID_ARGUMENT,
           "you can only change requires_grad flags of leaf variables; to use a computed tensor "
           "without history, detach() it");
    }
    if (requires_grad && t->is_inference && !inference_mode())
      fail(TSR_FAILED_PRECONDITION,
           "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed; "
           "clone it to get a normal tensor");
    if (requires_grad && !autograd::is_differentiable_dtype(t->dtype))
      fail(TSR_INVALID_ARGUMENT,
           "only tensors of floating point and complex dtype can require gradients, got {}",
           dtype_name(t->dtype));
    if (!requires_grad && t->autograd == nullptr) return;
    autograd::set_requires_grad(*t, requires_grad != 0);
  });
}

TSR_API tsr_status* tsr_tensor_requires_grad(const tsr_tensor* tensor, int32_t* out_requires_grad) {
  return api_guard([&] {
    TensorImpl* t = from_handle(tensor, "tensor");
    if (out_requires_grad == nullptr)
      fail(TSR_INVALID_ARGUMENT, "argument 'out_requires_grad' is NULL");
    *out_requires_grad = autograd::requires_grad(*t) ? 1 : 0;
  });
}

TSR_API tsr_status* tsr_tensor_is_leaf(const tsr_tensor* tensor, int32_t* out_is_leaf) {
  return api_guard([&] {
    TensorImpl* t = from_handle(tensor, "tensor");
    if (out_is_leaf == nullptr) fail(TSR_INVALID_ARGUMENT, "argument 'out_is_leaf' is NULL");
    *out_is_leaf = autograd::is_leaf(*t) ? 1 : 0;
  });
}

TSR_API tsr_status* tsr_tensor_grad(const tsr_tensor* tensor, tsr_tensor** out_grad) {
  return api_guard([&] {
    TensorImpl* t = from_handle(tensor, "tensor");
    if (out_grad == nullptr) fail(TSR_INVALID_ARGUMENT, "argument 'out_grad' is NULL");
    *out_grad = nullptr;
    if (t->autograd == nullptr) return;
    TensorRef g = t->autograd->retains_grad && t->autograd->retained ? *t->autograd->retained
                                                                     : t->autograd->grad;
    if (g) *out_grad = to_handle(g.take());
  });
}

TSR_API tsr_status* tsr_tensor_set_grad(tsr_tensor* tensor, tsr_tensor* grad) {
  return api_guard([&] {
    TensorImpl* t = from_handle(tensor, "tensor");
    if (grad == nullptr) {
      if (t->autograd != nullptr) t->autograd->grad = TensorRef();
      return;
    }
    TensorImpl* g = from_handle(grad, "grad");
    bool same = g->ndim == t->ndim;
    for (int32_t d = 0; same && d < t->ndim; ++d) same = g->sizes[d] == t->sizes[d];
    if (!same)
      fail(TSR_INVALID_ARGUMENT,
           "argument 'grad' has shape {} but the tensor has shape {}; assigned grad has data "
           "of a different size",
           shape_str(g->ndim, g->sizes), shape_str(t->ndim, t->sizes));
    if (g->device() != t->device())
      fail(TSR_INVALID_ARGUMENT, "argument 'grad' is on another device than the tensor");
    autograd::meta_of(*t).grad = TensorRef::borrow(g);
  });
}

TSR_API tsr_status* tsr_tensor_set_data(tsr_tensor* tensor, tsr_tensor* data) {
  return api_guard([&] {
    TensorImpl* t = from_handle(tensor, "tensor");
    TensorImpl* d = from_handle(data, "data");
    if (t == d) return;
    if (!autograd::is_leaf(*t))
      fail(TSR_INVALID_ARGUMENT,
           "argument 'tensor' is not a leaf (an op produced it); set_data replaces the data of a "
           "leaf such as a parameter: detach() the tensor first");
    if (t->is_inference && !inference_mode())
      fail(TSR_FAILED_PRECONDITION,
           "argument 'tensor' is an inference tensor; its data can only be replaced inside "
           "InferenceMode");
    if (autograd::requires_grad(*t) && !autograd::is_differentiable_dtype(d->dtype))
      fail(TSR_INVALID_ARGUMENT,
           "argument 'data' has dtype {} but the tensor requires grad, which needs a floating "
           "point or complex dtype; convert the data or call requires_grad_(false) first",
           dtype_name(d->dtype));
    d->storage->retain();
    Storage* old_storage = t->storage;
    TensorImpl* old_base = t->view_base;
    t->storage = d->storage;
    t->dtype = d->dtype;
    t->ndim = d->ndim;
    for (int32_t k = 0; k < d->ndim; ++k) {
      t->sizes[k] = d->sizes[k];
      t->strides[k] = d->strides[k];
    }
    t->offset = d->offset;
    t->is_view = false;
    t->view_base = nullptr;
    t->refresh();
    // A graph that saved the old values must not read the new ones as if
    // they were the same (its version check now fails).
    t->bump_version();
    old_storage->release();
    if (old_base != nullptr) old_base->release();
  });
}

TSR_API tsr_status* tsr_tensor_retain_grad(tsr_tensor* tensor) {
  return api_guard([&] {
    TensorImpl* t = from_handle(tensor, "tensor");
    if (!autograd::requires_grad(*t))
      fail(TSR_INVALID_ARGUMENT, "can't retain_grad on a tensor that has requires_grad=False");
    if (autograd::is_leaf(*t)) return;
    autograd::AutogradMeta& m = autograd::meta_of(*t);
    if (m.retains_grad) return;
    m.retains_grad = true;
    m.retained = std::make_shared<TensorRef>();
    m.grad_fn->retained.emplace_back(m.output_nr, m.retained);
  });
}

TSR_API tsr_status* tsr_tensor_detach_(tsr_tensor* tensor) {
  return api_guard([&] {
    TensorImpl* t = from_handle(tensor, "tensor");
    if (t->autograd == nullptr) return;
    if (t->is_view && t->view_base != nullptr && t->view_base->autograd != nullptr &&
        t->view_base->autograd->grad_fn)
      fail(TSR_INVALID_ARGUMENT,
           "can't detach views in-place: this tensor is a view of a tensor with history; use "
           "detach(), which returns a new tensor");
    autograd::AutogradMeta& m = *t->autograd;
    m.grad_fn.reset();
    m.output_nr = 0;
    t->requires_grad = false;
    m.retains_grad = false;
    m.retained.reset();
  });
}

TSR_API tsr_status* tsr_tensor_grad_fn_next(const tsr_tensor* tensor, int32_t capacity,
                                            const char** names, uint32_t* input_nrs,
                                            int32_t* out_count) {
  return api_guard([&] {
    TensorImpl* t = from_handle(tensor, "tensor");
    if (out_count == nullptr) fail(TSR_INVALID_ARGUMENT, "argument 'out_count' is NULL");
    if (capacity < 0) fail(TSR_INVALID_ARGUMENT, "argument 'capacity' = {} is negative", capacity);
    if (capacity > 0 && (names == nullptr || input_nrs == nullptr))
      fail(TSR_INVALID_ARGUMENT,
           "arguments 'names' and 'input_nrs' must hold 'capacity' = {} entries, got NULL",
           capacity);
    *out_count = 0;
    if (autograd::is_leaf(*t)) return;
    const auto& next = t->autograd->grad_fn->next;
    *out_count = static_cast<int32_t>(next.size());
    for (int32_t i = 0; i < capacity && i < *out_count; ++i) {
      const autograd::Edge& e = next[static_cast<size_t>(i)];
      names[i] = e.fn ? e.fn->name() : nullptr;
      input_nrs[i] = e.input_nr;
    }
  });
}

TSR_API tsr_status* tsr_tensor_grad_fn_name(const tsr_tensor* tensor, const char** out_name) {
  return api_guard([&] {
    TensorImpl* t = from_handle(tensor, "tensor");
    if (out_name == nullptr) fail(TSR_INVALID_ARGUMENT, "argument 'out_name' is NULL");
    *out_name = autograd::is_leaf(*t) ? nullptr : t->autograd->grad_fn->name();
  });
}

TSR_API tsr_status* tsr_autograd_backward(int32_t n, tsr_tensor* const* tensors,
                                          tsr_tensor* const* grad_tensors, int32_t retain_graph,
                                          int32_t create_graph) {
  return api_guard([&] {
    std::vector<TensorImpl*> outs = tensor_list(n, tensors, "tensors", false);
    std::vector<TensorImpl*> grads;
    if (grad_tensors != nullptr) grads = tensor_list(n, grad_tensors, "grad_tensors", true);
    autograd::backward(outs, grads, retain_graph != 0, create_graph != 0);
  });
}

TSR_API tsr_status* tsr_autograd_queue_callback(tsr_autograd_callback_fn fn, void* context,
                                                void (*free_context)(void* context)) {
  // The context is owned from here on, whatever happens.
  std::shared_ptr<void> owned(context, [free_context](void* c) {
    if (free_context != nullptr) free_context(c);
  });
  return api_guard([&] {
    if (fn == nullptr) fail(TSR_INVALID_ARGUMENT, "argument 'fn' is NULL; pass the callback");
    autograd::queue_callback([fn, owned] { throw_if_error(fn(owned.get()), "autograd callback"); });
  });
}

TSR_API tsr_status* tsr_autograd_grad(int32_t n_outputs, tsr_tensor* const* outputs,
                                      tsr_tensor* const* grad_outputs, int32_t n_inputs,
                                      tsr_tensor* const* inputs, int32_t retain_graph,
                                      int32_t create_graph, int32_t allow_unused,
                                      tsr_tensor** out_grads) {
  return api_guard([&] {
    std::vector<TensorImpl*> outs = tensor_list(n_outputs, outputs, "outputs", false);
    std::vector<TensorImpl*> grads;
    if (grad_outputs != nullptr) grads = tensor_list(n_outputs, grad_outputs, "grad_outputs", true);
    std::vector<TensorImpl*> ins = tensor_list(n_inputs, inputs, "inputs", false);
    if (out_grads == nullptr && n_inputs > 0)
      fail(TSR_INVALID_ARGUMENT, "argument 'out_grads' is NULL; pass an array of {} handles",
           n_inputs);
    std::vector<TensorRef> result =
        autograd::grad(outs, grads, ins, retain_graph != 0, create_graph != 0, allow_unused != 0);
    for (size_t i = 0; i < result.size(); ++i)
      out_grads[i] = result[i] ? to_handle(result[i].take()) : nullptr;
  });
}

TSR_API tsr_status* tsr_grad_mode_set(int32_t enabled, int32_t* out_previous) {
  return api_guard([&] {
    const bool previous = autograd::set_grad_enabled(enabled != 0);
    if (out_previous != nullptr) *out_previous = previous ? 1 : 0;
  });
}

TSR_API int32_t tsr_grad_mode_enabled(void) { return autograd::grad_enabled() ? 1 : 0; }

TSR_API tsr_status* tsr_autograd_set_detect_anomaly(int32_t enabled) {
  return api_guard([&] { autograd::set_detect_anomaly(enabled != 0); });
}

TSR_API int32_t tsr_autograd_detect_anomaly_enabled(void) {
  return autograd::detect_anomaly() ? 1 : 0;
}

namespace {
template <typename Fn>
tsr_status* register_any_hook(tsr_tensor* tensor, Fn fn, void* context, void (*destroy)(void*),
                              uint64_t* out_handle) {
  return api_guard([&] {
    TensorImpl* t = from_handle(tensor, "tensor");
    require_out(out_handle, "out_handle");
    if (fn == nullptr) fail(TSR_INVALID_ARGUMENT, "argument 'fn' is NULL; pass the hook function");
    auto hook = std::make_shared<autograd::Hook>(fn, context, nullptr);
    *out_handle = autograd::register_hook(*t, hook);
    // Only now the core owns the context: a refused registration leaves it
    // with the caller.
    hook->set_destroy(destroy);
  });
}
}  // namespace

TSR_API tsr_status* tsr_tensor_register_hook(tsr_tensor* tensor, tsr_grad_hook_fn fn, void* context,
                                             void (*destroy)(void* context), uint64_t* out_handle) {
  return register_any_hook(tensor, fn, context, destroy, out_handle);
}

TSR_API tsr_status* tsr_tensor_register_post_accumulate_grad_hook(tsr_tensor* tensor,
                                                                  tsr_post_accumulate_hook_fn fn,
                                                                  void* context,
                                                                  void (*destroy)(void* context),
                                                                  uint64_t* out_handle) {
  return register_any_hook(tensor, fn, context, destroy, out_handle);
}

TSR_API tsr_status* tsr_tensor_remove_hook(tsr_tensor* tensor, uint64_t handle) {
  return api_guard([&] {
    TensorImpl* t = from_handle(tensor, "tensor");
    if (!autograd::remove_hook(*t, handle))
      fail(TSR_NOT_FOUND,
           "argument 'handle' = {}: the tensor has no such hook (removed already, or registered "
           "on another tensor)",
           handle);
  });
}

// ---- custom functions ----------------------------------------------------

namespace {
tsr_function_ctx* ctx_from_handle(const tsr_function_ctx* ctx) {
  if (ctx == nullptr)
    fail(TSR_INVALID_ARGUMENT, "argument 'ctx' is NULL; pass the context your callback received");
  if (ctx->magic != tsr_function_ctx::kAlive)
    fail(TSR_INVALID_ARGUMENT,
         "argument 'ctx' is not a live function context (use it only inside the callback that "
         "received it)");
  return const_cast<tsr_function_ctx*>(ctx);
}

std::vector<TensorRef> refs_of(int32_t n, tsr_tensor* const* tensors) {
  std::vector<TensorRef> out;
  for (TensorImpl* t : tensor_list(n, tensors, "tensors", false))
    out.push_back(TensorRef::borrow(t));
  return out;
}

void forward_only(const tsr_function_ctx* ctx, const char* what) {
  if (ctx->in_backward)
    fail(TSR_FAILED_PRECONDITION, "{} is for forward; this context is in backward", what);
}
}  // namespace

TSR_API tsr_status* tsr_function_apply(const tsr_function_def* def, const tsr_value* args,
                                       int32_t nargs, tsr_tensor** outs, int32_t nouts) {
  return api_guard([&] {
    if (def == nullptr) fail(TSR_INVALID_ARGUMENT, "argument 'def' is NULL");
    require_struct(def->struct_size, offsetof(tsr_function_def, context) + sizeof(void*), "def");
    if (def->name == nullptr || def->name[0] == '\0')
      fail(TSR_INVALID_ARGUMENT, "argument 'def->name' is empty; name the function (\"MyExp\")");
    if (def->forward == nullptr || def->backward == nullptr)
      fail(TSR_INVALID_ARGUMENT, "function '{}': def->forward and def->backward are required",
           def->name);
    if (nargs < 0 || (nargs > 0 && args == nullptr))
      fail(TSR_INVALID_ARGUMENT, "argument 'args' is NULL or nargs ({}) is negative", nargs);
    if (nouts < 1 || outs == nullptr)
      fail(TSR_INVALID_ARGUMENT,
           "function '{}': nouts is {} and outs {}; a function returns at least one tensor",
           def->name, nouts, outs ? "non-NULL" : "NULL");
    for (int32_t k = 0; k < nouts; ++k) outs[k] = nullptr;
    autograd::apply_function(*def, args, nargs, outs, nouts);
  });
}

TSR_API tsr_status* tsr_function_ctx_save_for_backward(tsr_function_ctx* ctx, int32_t n,
                                                       tsr_tensor* const* tensors) {
  return api_guard([&] {
    tsr_function_ctx* c = ctx_from_handle(ctx);
    forward_only(c, "save_for_backward");
    for (TensorRef& t : refs_of(n, tensors)) c->to_save.push_back(std::move(t));
  });
}

TSR_API tsr_status* tsr_function_ctx_mark_dirty(tsr_function_ctx* ctx, int32_t n,
                                                tsr_tensor* const* tensors) {
  return api_guard([&] {
    tsr_function_ctx* c = ctx_from_handle(ctx);
    forward_only(c, "mark_dirty");
    for (TensorRef& t : refs_of(n, tensors)) c->dirty.push_back(std::move(t));
  });
}

TSR_API tsr_status* tsr_function_ctx_mark_non_differentiable(tsr_function_ctx* ctx, int32_t n,
                                                             tsr_tensor* const* tensors) {
  return api_guard([&] {
    tsr_function_ctx* c = ctx_from_handle(ctx);
    forward_only(c, "mark_non_differentiable");
    for (TensorRef& t : refs_of(n, tensors)) c->non_differentiable.push_back(std::move(t));
  });
}

TSR_API tsr_status* tsr_function_ctx_saved_count(const tsr_function_ctx* ctx, int32_t* out_count) {
  return api_guard([&] {
    tsr_function_ctx* c = ctx_from_handle(ctx);
    require_out(out_count, "out_count");
    *out_count = c->in_backward && c->node ? static_cast<int32_t>(c->node->saved.size())
                                           : static_cast<int32_t>(c->to_save.size());
  });
}

TSR_API tsr_status* tsr_function_ctx_saved(tsr_function_ctx* ctx, int32_t index,
                                           tsr_tensor** out_tensor) {
  return api_guard([&] {
    tsr_function_ctx* c = ctx_from_handle(ctx);
    require_out(out_tensor, "out_tensor");
    *out_tensor = to_handle(autograd::function_saved(*c, index).take());
  });
}

TSR_API tsr_status* tsr_function_ctx_needs_input_grad(const tsr_function_ctx* ctx, int32_t index,
                                                      int32_t* out_needs) {
  return api_guard([&] {
    tsr_function_ctx* c = ctx_from_handle(ctx);
    require_out(out_needs, "out_needs");
    if (index < 0 || static_cast<size_t>(index) >= c->needs_input_grad.size())
      fail(TSR_OUT_OF_RANGE, "argument 'index' = {}: the function has {} argument(s)", index,
           c->needs_input_grad.size());
    *out_needs = c->needs_input_grad[static_cast<size_t>(index)];
  });
}

// ---- inference mode ------------------------------------------------------

TSR_API tsr_status* tsr_inference_mode_set(int32_t enabled, int32_t* out_previous) {
  return api_guard([&] {
    const bool previous = autograd::set_inference_mode(enabled != 0);
    if (out_previous != nullptr) *out_previous = previous ? 1 : 0;
  });
}

TSR_API int32_t tsr_inference_mode_enabled(void) { return inference_mode() ? 1 : 0; }

TSR_API tsr_status* tsr_tensor_is_inference(const tsr_tensor* tensor, int32_t* out_is_inference) {
  return api_guard([&] {
    TensorImpl* t = from_handle(tensor, "tensor");
    require_out(out_is_inference, "out_is_inference");
    *out_is_inference = t->is_inference ? 1 : 0;
  });
}
