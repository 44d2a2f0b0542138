// tessera/autograd.hpp - autograd beyond Tensor's methods: grad(), grad mode
// guards, and gradcheck (PyTorch's torch.autograd namespace).
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tessera/error.hpp"
#include "tessera/factories.hpp"
#include "tessera/ops.hpp"
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

// gradcheck: compares the analytical Jacobian of `fn` (through backward, one
// row per output element) with central finite differences in float64.
// Inputs must be float64 leaves requiring grad; `fn` returns one tensor.
// Returns an empty string on success, else a description of the first
// mismatch (input, element, analytical and numerical values).
struct GradcheckOptions {
  double eps = 1e-6;
  double atol = 1e-5;
  double rtol = 1e-3;
};

inline std::string gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& fn,
                             const std::vector<Tensor>& inputs, GradcheckOptions opt = {}) {
  Tensor out = fn(inputs);
  const int64_t n_out = out.numel();
  std::vector<std::vector<double>> analytical(inputs.size());  // [input][out * n_in + i]
  for (size_t k = 0; k < inputs.size(); ++k)
    analytical[k].assign(static_cast<size_t>(n_out * inputs[k].numel()), 0.0);
  for (int64_t o = 0; o < n_out; ++o) {
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
  NoGradGuard no_grad;
  for (size_t k = 0; k < inputs.size(); ++k) {
    Tensor x = inputs[k];
    std::vector<double> values = x.contiguous().to_vector<double>();
    const int64_t n_in = static_cast<int64_t>(values.size());
    for (int64_t i = 0; i < n_in; ++i) {
      auto eval = [&](double delta) {
        std::vector<double> v = values;
        v[static_cast<size_t>(i)] += delta;
        x.copy_(tessera::tensor(v, x.sizes(), TensorOptions().dtype(x.dtype())));
        return fn(inputs).contiguous().to_vector<double>();
      };
      const std::vector<double> plus = eval(opt.eps), minus = eval(-opt.eps);
      x.copy_(tessera::tensor(values, x.sizes(), TensorOptions().dtype(x.dtype())));
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

}  // namespace tessera::autograd
