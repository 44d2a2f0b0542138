// hooks.cpp - tensor gradient hooks and post-accumulate hooks.
#include "autograd/hooks.h"

#include <algorithm>

#include "autograd/meta.h"
#include "autograd/node.h"
#include "runtime/device.h"
#include "tensor/dtype.h"
#include "tensor/geometry.h"
#include "util/error.h"

namespace tsr::autograd {
namespace {
std::atomic<uint64_t> g_next_hook_id{1};

void throw_status(tsr_status* st, const char* what) {
  tsr_status_code code = tsr_status_code_of(st);
  std::string msg = fmt::format("{} failed: {}", what, tsr_status_message(st));
  tsr_status_free(st);
  throw Error(code, msg);
}
}  // namespace

Hook::Hook(tsr_grad_hook_fn fn, void* ctx, void (*destroy_fn)(void*))
    : kind(Kind::kGrad),
      id(g_next_hook_id.fetch_add(1, std::memory_order_relaxed)),
      grad_fn_(fn),
      context_(ctx),
      destroy_(destroy_fn) {}

Hook::Hook(tsr_post_accumulate_hook_fn fn, void* ctx, void (*destroy_fn)(void*))
    : kind(Kind::kPostAccumulate),
      id(g_next_hook_id.fetch_add(1, std::memory_order_relaxed)),
      post_fn_(fn),
      context_(ctx),
      destroy_(destroy_fn) {}

Hook::~Hook() {
  if (destroy_) destroy_(context_);
}

TensorRef Hook::run_grad(TensorImpl* grad) const {
  tsr_tensor* out = nullptr;
  tsr_status* st = nullptr;
  try {
    st = grad_fn_(context_, to_handle(grad), &out);
  } catch (...) {
    st = tsr_status_create(TSR_INTERNAL, "the hook threw a C++ exception (hooks return statuses)");
  }
  TensorRef replacement;
  std::string bad;
  if (out != nullptr) {
    try {
      replacement = TensorRef(from_handle(out, "out_grad"));
    } catch (const Error& e) {
      bad = e.message();
    }
  }
  if (st) throw_status(st, "a tensor gradient hook");
  if (!bad.empty()) fail(TSR_INVALID_ARGUMENT, "a tensor gradient hook returned {}", bad);
  if (!replacement) return TensorRef::borrow(grad);
  const TensorImpl& r = *replacement;
  bool same = r.ndim == grad->ndim && r.dtype == grad->dtype && r.device() == grad->device();
  for (int32_t d = 0; same && d < r.ndim; ++d) same = r.sizes[d] == grad->sizes[d];
  if (!same)
    fail(TSR_INVALID_ARGUMENT,
         "a tensor gradient hook returned a gradient of shape {} ({}, {}) for a gradient of "
         "shape {} ({}, {}); a hook must keep shape, dtype and device",
         shape_str(r.ndim, r.sizes), dtype_name(r.dtype), r.device()->label,
         shape_str(grad->ndim, grad->sizes), dtype_name(grad->dtype), grad->device()->label);
  return replacement;
}

void Hook::run_post(TensorImpl* leaf) const {
  tsr_status* st = nullptr;
  try {
    st = post_fn_(context_, to_handle(leaf));
  } catch (...) {
    st = tsr_status_create(TSR_INTERNAL, "the hook threw a C++ exception (hooks return statuses)");
  }
  if (st) throw_status(st, "a post-accumulate-grad hook");
}

uint64_t register_hook(TensorImpl& t, std::shared_ptr<Hook> hook) {
  if (!requires_grad(t))
    fail(TSR_FAILED_PRECONDITION,
         "cannot register a hook on a tensor that doesn't require gradient; call "
         "requires_grad_() first");
  AutogradMeta& m = meta_of(t);
  if (hook->kind == Hook::Kind::kPostAccumulate) {
    if (m.grad_fn)
      fail(TSR_FAILED_PRECONDITION,
           "post accumulate grad hooks cannot be registered on non-leaf tensors (this one was "
           "produced by {}); register a gradient hook instead",
           m.grad_fn->name());
    m.post_hooks.push_back(hook);
  } else if (m.grad_fn) {
    m.grad_fn->tensor_hooks.emplace_back(m.output_nr, hook);
  } else {
    m.hooks.push_back(hook);
  }
  const uint64_t id = hook->id;
  m.registered.push_back(std::move(hook));
  return id;
}

bool remove_hook(TensorImpl& t, uint64_t id) {
  if (t.autograd == nullptr) return false;
  AutogradMeta& m = *t.autograd;
  auto it = std::find_if(m.registered.begin(), m.registered.end(),
                         [&](const std::shared_ptr<Hook>& h) { return h->id == id; });
  if (it == m.registered.end()) return false;
  std::shared_ptr<Hook> hook = *it;
  hook->removed.store(true, std::memory_order_release);
  m.registered.erase(it);
  std::erase(m.hooks, hook);
  std::erase(m.post_hooks, hook);
  if (m.grad_fn)
    std::erase_if(m.grad_fn->tensor_hooks, [&](const auto& p) { return p.second == hook; });
  return true;
}

void run_tensor_hooks(Node& node, std::vector<TensorRef>& grads) {
  for (const auto& [k, hook] : node.tensor_hooks) {
    if (hook->removed.load(std::memory_order_acquire) || k >= grads.size() || !grads[k]) continue;
    grads[k] = hook->run_grad(grads[k].get());
  }
  if (auto* acc = dynamic_cast<AccumulateGrad*>(&node)) {
    const TensorRef leaf = acc->leaf();
    if (!leaf || leaf->autograd == nullptr || leaf->autograd->hooks.empty() || grads.empty() ||
        !grads[0])
      return;
    // A copy: a hook may register or remove hooks.
    std::vector<std::shared_ptr<Hook>> hooks = leaf->autograd->hooks;
    for (const auto& hook : hooks) {
      if (hook->removed.load(std::memory_order_acquire)) continue;
      grads[0] = hook->run_grad(grads[0].get());
    }
  }
}

void run_post_accumulate_hooks(TensorImpl& leaf) {
  if (leaf.autograd == nullptr || leaf.autograd->post_hooks.empty()) return;
  std::vector<std::shared_ptr<Hook>> hooks = leaf.autograd->post_hooks;
  for (const auto& hook : hooks) {
    if (!hook->removed.load(std::memory_order_acquire)) hook->run_post(&leaf);
  }
}

}  // namespace tsr::autograd
