// tessera/autograd.hpp - autograd beyond Tensor's methods: grad(), grad mode
// guards, and gradcheck (PyTorch's torch.autograd namespace).
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tessera/boxed_call.hpp"
#include "tessera/error.hpp"
#include "tessera/factories.hpp"
#include "tessera/ops/arithmetic.hpp"
#include "tessera/tensor.hpp"

namespace tessera::autograd {

// d(outputs)/d(inputs) weighted by grad_outputs (empty: ones for one-element
// outputs). retain_graph defaults to create_graph, as in PyTorch.
inline std::vector<Tensor> grad(const std::vector<Tensor>& outputs,
                                const std::vector<Tensor>& inputs,
                                const std::vector<Tensor>& grad_outputs = {},
                                std::optional<bool> retain_graph = std::nullopt,
                                bool create_graph = false, bool allow_unused = false) {
  std::vector<tsr_tensor*> outs, grads, ins;
  for (const Tensor& t : outputs) outs.push_back(t.get());
  for (const Tensor& t : grad_outputs) grads.push_back(t.get());
  for (const Tensor& t : inputs) ins.push_back(t.get());
  std::vector<tsr_tensor*> result(ins.size(), nullptr);
  check(tsr_autograd_grad(static_cast<int32_t>(outs.size()), outs.data(),
                          grads.empty() ? nullptr : grads.data(), static_cast<int32_t>(ins.size()),
                          ins.data(), retain_graph.value_or(create_graph) ? 1 : 0,
                          create_graph ? 1 : 0, allow_unused ? 1 : 0, result.data()));
  std::vector<Tensor> out;
  for (tsr_tensor* g : result) out.push_back(Tensor::adopt(g));
  return out;
}

// Backward of several tensors at once.
inline void backward(const std::vector<Tensor>& tensors, const std::vector<Tensor>& grads = {},
                     std::optional<bool> retain_graph = std::nullopt, bool create_graph = false) {
  std::vector<tsr_tensor*> outs, gs;
  for (const Tensor& t : tensors) outs.push_back(t.get());
  for (const Tensor& t : grads) gs.push_back(t.get());
  check(tsr_autograd_backward(static_cast<int32_t>(outs.size()), outs.data(),
                              gs.empty() ? nullptr : gs.data(),
                              retain_graph.value_or(create_graph) ? 1 : 0, create_graph ? 1 : 0));
}

// Runs `fn` when the backward running on this thread finishes, after every
// node and hook (PyTorch's Variable._execution_engine.queue_callback); call it
// from a hook. An exception from `fn` ends that backward with it.
inline void queue_callback(std::function<void()> fn) {
  using Fn = std::function<void()>;
  auto* owned = new Fn(std::move(fn));
  check(tsr_autograd_queue_callback(
      [](void* c) -> tsr_status* {
        try {
          (*static_cast<Fn*>(c))();
          return nullptr;
        } catch (...) {
          return tessera::detail::current_exception_status();
        }
      },
      owned, [](void* c) { delete static_cast<Fn*>(c); }));
}

// Sets grad mode on this thread for a scope (torch.no_grad / enable_grad).
class GradModeGuard {
 public:
  explicit GradModeGuard(bool enabled) { check(tsr_grad_mode_set(enabled ? 1 : 0, &previous_)); }
  ~GradModeGuard() { tsr_status_free(tsr_grad_mode_set(previous_, nullptr)); }
  GradModeGuard(const GradModeGuard&) = delete;
  GradModeGuard& operator=(const GradModeGuard&) = delete;

 private:
  int32_t previous_ = 1;
};
class NoGradGuard : public GradModeGuard {
 public:
  NoGradGuard() : GradModeGuard(false) {}
};
class EnableGradGuard : public GradModeGuard {
 public:
  EnableGradGuard() : GradModeGuard(true) {}
};
inline bool is_grad_enabled() { return tsr_grad_mode_enabled() != 0; }

// torch.autograd.set_detect_anomaly (process-wide).
inline void set_detect_anomaly(bool enabled) {
  check(tsr_autograd_set_detect_anomaly(enabled ? 1 : 0));
}
inline bool is_anomaly_enabled() { return tsr_autograd_detect_anomaly_enabled() != 0; }

// Inference mode (torch.inference_mode), thread-local, restored on scope exit:
// no recording, and tensors made meanwhile carry no version counter.
class InferenceMode {
 public:
  explicit InferenceMode(bool enabled = true) {
    int32_t previous = 0;
    check(tsr_inference_mode_set(enabled ? 1 : 0, &previous));
    previous_ = previous != 0;
  }
  ~InferenceMode() { tsr_inference_mode_set(previous_ ? 1 : 0, nullptr); }
  InferenceMode(const InferenceMode&) = delete;
  InferenceMode& operator=(const InferenceMode&) = delete;
  static bool is_enabled() { return tsr_inference_mode_enabled() != 0; }

 private:
  bool previous_;
};

// Custom functions (torch.autograd.Function) over tsr_function_apply. A
// function is a class with two static members:
//   static std::vector<Tensor> forward(FunctionContext& ctx,
//                                      const std::vector<Tensor>& inputs);
//   static std::vector<Tensor> backward(FunctionContext& ctx,
//                                       const std::vector<Tensor>& grad_outputs);
// backward returns one gradient per input (undefined: zero). Apply it with
// Function<MyExp>::apply(inputs, "MyExp").
class FunctionContext {
 public:
  explicit FunctionContext(tsr_function_ctx* ctx) : ctx_(ctx) {}
  void save_for_backward(const std::vector<Tensor>& tensors) {
    std::vector<tsr_tensor*> h = handles(tensors);
    check(tsr_function_ctx_save_for_backward(ctx_, static_cast<int32_t>(h.size()), h.data()));
  }
  void mark_dirty(const std::vector<Tensor>& tensors) {
    std::vector<tsr_tensor*> h = handles(tensors);
    check(tsr_function_ctx_mark_dirty(ctx_, static_cast<int32_t>(h.size()), h.data()));
  }
  void mark_non_differentiable(const std::vector<Tensor>& tensors) {
    std::vector<tsr_tensor*> h = handles(tensors);
    check(tsr_function_ctx_mark_non_differentiable(ctx_, static_cast<int32_t>(h.size()), h.data()));
  }
  std::vector<Tensor> saved_tensors() const {
    int32_t n = 0;
    check(tsr_function_ctx_saved_count(ctx_, &n));
    std::vector<Tensor> out;
    for (int32_t i = 0; i < n; ++i) {
      tsr_tensor* t = nullptr;
      check(tsr_function_ctx_saved(ctx_, i, &t));
      out.push_back(Tensor::adopt(t));
    }
    return out;
  }
  bool needs_input_grad(int32_t index) const {
    int32_t needs = 0;
    check(tsr_function_ctx_needs_input_grad(ctx_, index, &needs));
    return needs != 0;
  }

 private:
  static std::vector<tsr_tensor*> handles(const std::vector<Tensor>& tensors) {
    std::vector<tsr_tensor*> h;
    for (const Tensor& t : tensors) h.push_back(t.get());
    return h;
  }
  tsr_function_ctx* ctx_;
};

template <class Derived>
struct Function {
  static std::vector<Tensor> apply(const std::vector<Tensor>& inputs, const char* name,
                                   int32_t nouts = 1) {
    std::vector<tsr_value> args;
    for (const Tensor& t : inputs) args.push_back(detail::value(t));
    tsr_function_def def{};
    def.struct_size = sizeof def;
    def.name = name;
    def.forward = &Function::run_forward;
    def.backward = &Function::run_backward;
    std::vector<tsr_tensor*> outs(static_cast<size_t>(nouts), nullptr);
    check(tsr_function_apply(&def, args.data(), static_cast<int32_t>(args.size()), outs.data(),
                             nouts));
    std::vector<Tensor> result;
    for (tsr_tensor* t : outs) result.push_back(Tensor::adopt(t));
    return result;
  }

 private:
  static tsr_status* run_forward(void*, tsr_function_ctx* ctx, const tsr_value* args, int32_t nargs,
                                 tsr_tensor** outs, int32_t nouts) noexcept {
    try {
      std::vector<Tensor> inputs;
      for (int32_t i = 0; i < nargs; ++i) inputs.push_back(Tensor::borrow(args[i].u.tensor));
      FunctionContext c(ctx);
      std::vector<Tensor> results = Derived::forward(c, inputs);
      if (static_cast<int32_t>(results.size()) != nouts)
        return tsr_status_create(TSR_INVALID_ARGUMENT,
                                 "forward returned a different number of tensors than apply "
                                 "was told (nouts)");
      for (int32_t k = 0; k < nouts; ++k) outs[k] = results[static_cast<size_t>(k)].release();
      return nullptr;
    } catch (...) {
      return detail::current_exception_status();
    }
  }
  static tsr_status* run_backward(void*, tsr_function_ctx* ctx, tsr_tensor* const* grad_outputs,
                                  int32_t nouts, tsr_tensor** grad_inputs, int32_t nargs) noexcept {
    try {
      std::vector<Tensor> grads;
      for (int32_t k = 0; k < nouts; ++k) grads.push_back(Tensor::borrow(grad_outputs[k]));
      FunctionContext c(ctx);
      std::vector<Tensor> result = Derived::backward(c, grads);
      for (int32_t i = 0; i < nargs && i < static_cast<int32_t>(result.size()); ++i)
        grad_inputs[i] = result[static_cast<size_t>(i)].release();
      return nullptr;
    } catch (...) {
      return detail::current_exception_status();
    }
  }
};

// gradcheck: compares the analytical Jacobian of `fn` (through backward, one
// row per output element) with central finite differences in float64.
// Inputs must be float64 leaves requiring grad; `fn` returns one tensor.
// Returns an empty string on success, else a description of the first
// mismatch (input, element, analytical and numerical values).
struct GradcheckOptions {
  double eps = 1e-6;
  double atol = 1e-4;
  double rtol = 1e-3;
};

inline std::string gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& fn,
                             const std::vector<Tensor>& inputs, GradcheckOptions opt = {}) {
  Tensor out = fn(inputs);
  const int64_t n_out = out.numel();
  std::vector<std::vector<double>> analytical(inputs.size());  // [input][out * n_in + i]
  for (size_t k = 0; k < inputs.size(); ++k)
    analytical[k].assign(static_cast<size_t>(n_out * inputs[k].numel()), 0.0);
  // An output that does not depend differentiably on the inputs (the
  // derivative of a linear function, in gradgradcheck) has zero Jacobian.
  for (int64_t o = 0; o < n_out && out.requires_grad(); ++o) {
    std::vector<double> onehot(static_cast<size_t>(n_out), 0.0);
    onehot[static_cast<size_t>(o)] = 1.0;
    Tensor weight = tessera::tensor(onehot, out.sizes(), TensorOptions().dtype(out.dtype()));
    std::vector<Tensor> g =
        tessera::autograd::grad({out}, inputs, {weight}, true, false, /*allow_unused=*/true);
    for (size_t k = 0; k < inputs.size(); ++k) {
      if (!g[k].defined()) continue;
      const std::vector<double> row = g[k].to_vector<double>();
      std::copy(row.begin(), row.end(),
                analytical[k].begin() + o * static_cast<int64_t>(row.size()));
    }
  }
  // Inputs are perturbed in place under no_grad; fn runs in the caller's grad
  // mode (gradgradcheck's fn itself calls grad()).
  auto set_values = [](Tensor& x, const std::vector<double>& v) {
    NoGradGuard no_grad;
    x.copy_(tessera::tensor(v, x.sizes(), TensorOptions().dtype(x.dtype())));
  };
  for (size_t k = 0; k < inputs.size(); ++k) {
    Tensor x = inputs[k];
    std::vector<double> values = x.contiguous().to_vector<double>();
    const int64_t n_in = static_cast<int64_t>(values.size());
    for (int64_t i = 0; i < n_in; ++i) {
      auto eval = [&](double delta) {
        std::vector<double> v = values;
        v[static_cast<size_t>(i)] += delta;
        set_values(x, v);
        return fn(inputs).detach().contiguous().to_vector<double>();
      };
      const std::vector<double> plus = eval(opt.eps), minus = eval(-opt.eps);
      set_values(x, values);
      for (int64_t o = 0; o < n_out; ++o) {
        const double numerical =
            (plus[static_cast<size_t>(o)] - minus[static_cast<size_t>(o)]) / (2 * opt.eps);
        const double a = analytical[k][static_cast<size_t>(o * n_in + i)];
        if (std::fabs(a - numerical) > opt.atol + opt.rtol * std::fabs(numerical)) {
          return "input " + std::to_string(k) + " element " + std::to_string(i) + ", output " +
                 std::to_string(o) + ": analytical " + std::to_string(a) + ", numerical " +
                 std::to_string(numerical);
        }
      }
    }
  }
  return std::string();
}

// gradgradcheck: gradcheck of the first derivative. The function checked is
// x -> sum_k <d<fn(x), w>/dx_k, u_k> for fixed pseudo-random w and u, its
// first derivative computed with create_graph, so the analytical side
// differentiates the backward formulas themselves.
inline std::string gradgradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& fn,
                                 const std::vector<Tensor>& inputs, GradcheckOptions opt = {}) {
  auto fixed = [](const Tensor& like, uint32_t seed) {
    std::vector<double> v(static_cast<size_t>(like.numel()));
    uint32_t s = seed;
    for (double& e : v) {
      s = s * 1664525u + 1013904223u;
      e = static_cast<double>(s >> 8) / static_cast<double>(1u << 24) - 0.5;
    }
    return tessera::tensor(v, like.sizes(), TensorOptions().dtype(like.dtype()));
  };
  auto first = [&](const std::vector<Tensor>& xs) {
    Tensor out = fn(xs);
    std::vector<Tensor> g = grad({out}, xs, {fixed(out, 7)}, true, /*create_graph=*/true,
                                 /*allow_unused=*/true);
    Tensor total;
    for (size_t k = 0; k < g.size(); ++k) {
      if (!g[k].defined()) continue;
      Tensor term = (g[k] * fixed(g[k], 11 + static_cast<uint32_t>(k))).sum();
      total = total.defined() ? total + term : term;
    }
    return total.defined() ? total : tessera::zeros({}, TensorOptions().dtype(out.dtype()));
  };
  return gradcheck(first, inputs, opt);
}

}  // namespace tessera::autograd
