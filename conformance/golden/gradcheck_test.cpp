// gradcheck_test.cpp - GoldenGrad: every differentiable golden case,
// gradchecked (float64, or grad_dtype() on a device without it).
//
// The case's floating inputs become float64 leaves that require grad (views
// are then taken of them as the case says). f = sum_k <out_k, w_k> over the
// floating outputs, with fixed pseudo-random weights w_k; autograd's
// d f / d leaf is compared with central finite differences (eps 1e-6,
// atol 1e-4, rtol 1e-3: the gradcheck defaults). Skipped, with the
// reason: error cases, ops that write their inputs, out= overloads, ops with
// no floating input or output, random ops (two forward runs differ), inputs
// holding NaN/inf, and points where the op is not differentiable (listed
// below, each with why).
//
// Instantiated by golden_grad_test.cpp (Ops/GoldenGrad on cpu:0) and by
// suite_target.cpp (Autograd/GoldenGrad, the suite's family "autograd").
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "conformance/golden/harness.h"

namespace tessera::golden {
namespace {

struct GradModeOff {
  int32_t previous = 1;
  GradModeOff() { tsr_status_free(tsr_grad_mode_set(0, &previous)); }
  ~GradModeOff() { tsr_status_free(tsr_grad_mode_set(previous, nullptr)); }
};

// Cases whose inputs sit exactly on a kink of the op (PyTorch's gradcheck
// fails there too): name -> why.
const std::pair<const char*, const char*> kNonSmooth[] = {
    {"binary_cross_entropy__sum_extremes_clamped",
     "inputs exactly 0 and 1, where log is clamped to -100 (one-sided there)"},
    {"kl_div__none_zero_target", "target 0, where xlogy(t, t) is not differentiable in t"},
    {"max_dim__ties_first_index", "tied maxima: the gradient goes to the reported index"},
    {"round__half_to_even", "inputs exactly at .5, where round jumps"},
    {"sort_stable__stable_ties_descending", "tied values: the order changes under perturbation"},
    {"lgamma__float64_negative", "inputs at the poles (0, -3), where lgamma is infinite"},
    {"copysign_Tensor__float32", "`other` holds +-0, where copysign jumps"},
    {"embedding__padding_idx",
     "the padding_idx row is read by forward, but PyTorch defines its gradient as 0 "
     "(GoldenGradReference checks that)"},
};

// In float32 gradchecks only: ops whose jumps lie within a float32
// finite-difference step of the test inputs (a central difference across a
// jump measures the jump, not the derivative).
const std::pair<const char*, const char*> kNonSmoothFloat32[] = {
    {"frac__float32_transposed", "frac jumps at integers, within 1e-3 of some inputs"},
    {"round_decimals__2", "round(x, 2) jumps every 0.01, finer than the float32 step"},
    {"logit__eps", "logit clamps at eps, within the float32 step of the inputs"},
    {"div_Tensor_mode__trunc_float32", "trunc(a / b) jumps within the float32 step"},
    {"div_Tensor_mode__floor_float32", "floor(a / b) jumps within the float32 step"},
    {"remainder_Tensor__float32", "remainder jumps where a / b crosses an integer"},
    {"fmod_Tensor__float32", "fmod jumps where a / b crosses an integer"},
    {"scatter_reduce_two__amin_exclude_self",
     "amin switches between values closer together than the float32 step"},
};

// Ops whose outputs' differentiability deliberately differs from PyTorch's
// (the "differentiable" flags of the golden file are not checked): op -> why.
const std::pair<const char*, const char*> kDifferentiabilityDiffers[] = {
    {"_unique2",
     "PyTorch's derivative is not_implemented (its output requires grad and backward raises); "
     "Tessera declares the op non-differentiable"},
};

// Derivatives not written yet: the case must still fail with a status naming
// the missing derivative; once it passes, the entry must go (like an XPASS).
// (Empty since scatter_reduce's amax/amin/prod/multiply derivatives landed.)
const std::vector<std::pair<const char*, const char*>> kNotYet = {};

// f = sum_k <out_k, w_k> on the host (float64), for finite differences.
double objective(const std::vector<TensorPtr>& outs) {
  double f = 0;
  for (size_t k = 0; k < outs.size(); ++k) {
    const HostTensor h = read(outs[k].get());
    for (size_t i = 0; i < h.floats.size(); ++i) f += h.floats[i] * weight_of(k, i);
  }
  return f;
}

}  // namespace

TEST_P(GoldenGrad, Case) {
  if (GetParam() < 0) FAIL() << golden_file().error;
  const json& spec = golden_file().cases[static_cast<size_t>(GetParam())];
  const std::string op_name = spec.at("op").get<std::string>();
  SCOPED_TRACE("op " + op_name + "(" + describe_args(spec) + ")");
  const json& expect = spec.at("expect");
  if (expect.value("raises", false)) GTEST_SKIP() << "error case";
  if (expect.contains("mutated")) GTEST_SKIP() << "writes its inputs";
  if (grad_dtype() == TSR_FLOAT32)
    for (const auto& [name, why] : kNonSmoothFloat32)
      if (spec.at("name").get<std::string>() == name) GTEST_SKIP() << "float32 gradcheck: " << why;
  for (const auto& [name, why] : kNonSmooth)
    if (spec.at("name").get<std::string>() == name) GTEST_SKIP() << why;
  const char* not_yet = nullptr;
  for (const auto& [name, what] : kNotYet)
    if (spec.at("name").get<std::string>() == name) not_yet = what;
  try {
    const tsr_op* op = nullptr;
    check(tsr_op_find(runtime(), op_name.c_str(), &op), "tsr_op_find");
    GradScope scope;
    Call call;
    build_args(spec, call);
    const std::vector<tsr_tensor*> leaves = grad_inputs().leaves;
    if (leaves.empty()) GTEST_SKIP() << "no floating input";
    if (grad_inputs().non_finite) GTEST_SKIP() << "an input holds NaN or inf";

    // Which outputs PyTorch differentiates (gen_golden.py records it):
    // only those enter f, and each must require grad exactly when PyTorch's
    // does (output_differentiability in derivatives.yaml).
    const json* differentiable =
        spec.contains("differentiable") ? &spec.at("differentiable") : nullptr;
    for (const auto& [op_prefix, why] : kDifferentiabilityDiffers)
      if (op_name == op_prefix) differentiable = nullptr;
    std::string flag_mismatch;
    auto run = [&](std::vector<TensorPtr>& float_outs) -> tsr_status* {
      constexpr size_t kMaxOuts = 16;
      tsr_value outs[kMaxOuts] = {};
      tsr_status* status = tsr_op_call(op, call.args.data(), call.args.size(), outs, kMaxOuts);
      size_t index = 0;
      for (const tsr_value& out : outs) {
        if (out.tag != TSR_VALUE_TENSOR || out.u.tensor == nullptr) continue;
        const size_t k = index++;
        TensorPtr t(out.u.tensor);
        tsr_tensor_info info{};
        info.struct_size = sizeof(info);
        check(tsr_tensor_get_info(t.get(), &info), "tsr_tensor_get_info");
        if (!is_float(static_cast<tsr_dtype>(info.dtype))) continue;
        bool pytorch = true;
        if (differentiable != nullptr && k < differentiable->size()) {
          pytorch = (*differentiable)[k].get<bool>();
          int32_t rg = 0;
          check(tsr_tensor_requires_grad(t.get(), &rg), "tsr_tensor_requires_grad");
          if ((rg != 0) != pytorch)
            flag_mismatch += "\n    output " + std::to_string(k) +
                             (rg ? " requires" : " does not require") + " grad; PyTorch's " +
                             (pytorch ? "does" : "does not");
        }
        if (pytorch) float_outs.push_back(std::move(t));
      }
      return status;
    };
    std::vector<TensorPtr> outs;
    if (tsr_status* status = run(outs)) {
      const std::string message = tsr_status_message(status);
      tsr_status_free(status);
      if (message.find("out=... arguments") != std::string::npos)
        GTEST_SKIP() << "out= overload (not differentiable, as in PyTorch)";
      FAIL() << "forward with inputs that require grad failed: " << message;
    }
    EXPECT_TRUE(flag_mismatch.empty())
        << "which outputs are differentiable differs from PyTorch:" << flag_mismatch;
    if (outs.empty()) GTEST_SKIP() << "no floating output";
    std::vector<tsr_tensor*> needs_grad;
    for (const TensorPtr& o : outs) {
      int32_t rg = 0;
      check(tsr_tensor_requires_grad(o.get(), &rg), "tsr_tensor_requires_grad");
      if (rg) needs_grad.push_back(o.get());
    }
    const double f0 = objective(outs);
    {
      // Same mode as the first run: with grad the fusable ops decompose,
      // without they run fused kernels, which round differently.
      std::vector<TensorPtr> again;
      check(run(again), "second forward");
      if (objective(again) != f0) GTEST_SKIP() << "random op (two forward runs differ)";
    }
    if (needs_grad.empty()) GTEST_SKIP() << "outputs do not depend differentiably on inputs";

    // Analytical: d f / d leaves through autograd, weights as grad_outputs.
    std::vector<TensorPtr> weights;
    std::vector<tsr_tensor*> weight_handles;
    for (size_t k = 0; k < outs.size(); ++k) {
      int32_t rg = 0;
      check(tsr_tensor_requires_grad(outs[k].get(), &rg), "tsr_tensor_requires_grad");
      if (!rg) continue;
      const HostTensor h = read(outs[k].get());
      std::vector<double> w(h.floats.size());
      for (size_t i = 0; i < w.size(); ++i) w[i] = weight_of(k, i);
      tsr_tensor* wt = nullptr;
      check(tsr_tensor_from_host(runtime(), w.data(), w.size() * sizeof(double),
                                 static_cast<int32_t>(h.shape.size()), h.shape.data(), TSR_FLOAT64,
                                 target_device(), &wt),
            "tsr_tensor_from_host");
      TensorPtr owned(wt);
      if (h.dtype != TSR_FLOAT64) {
        tsr_tensor* c = nullptr;
        check(tsr_tensor_to_dtype(wt, h.dtype, &c), "tsr_tensor_to_dtype");
        owned.reset(c);
      }
      weight_handles.push_back(owned.get());
      weights.push_back(std::move(owned));
    }
    std::vector<tsr_tensor*> grads(leaves.size(), nullptr);
    tsr_status* grad_status = tsr_autograd_grad(
        static_cast<int32_t>(needs_grad.size()), needs_grad.data(), weight_handles.data(),
        static_cast<int32_t>(leaves.size()), leaves.data(), 0, 0, 1, grads.data());
    if (not_yet != nullptr) {
      ASSERT_NE(grad_status, nullptr)
          << "the derivative of " << not_yet << " now works: remove the case from kNotYet";
      const std::string message = tsr_status_message(grad_status);
      tsr_status_free(grad_status);
      EXPECT_NE(message.find("not implemented"), std::string::npos) << message;
      return;
    }
    check(grad_status, "tsr_autograd_grad");
    std::vector<TensorPtr> grad_owner;
    for (tsr_tensor* g : grads) grad_owner.emplace_back(g);

    // Numerical, element by element of each leaf (at most 48 per leaf).
    const GradSettings gs = grad_settings();
    const double kEps = gs.eps, kAtol = gs.atol, kRtol = gs.rtol;
    GradModeOff off;
    // Writes host doubles into a leaf of the gradcheck dtype.
    auto write = [](tsr_tensor* leaf, const std::vector<double>& v) {
      if (grad_dtype() == TSR_FLOAT64) {
        check(tsr_tensor_copy_from_host(leaf, v.data(), v.size() * sizeof(double)),
              "tsr_tensor_copy_from_host");
        return;
      }
      const std::vector<float> f(v.begin(), v.end());
      check(tsr_tensor_copy_from_host(leaf, f.data(), f.size() * sizeof(float)),
            "tsr_tensor_copy_from_host");
    };
    for (size_t l = 0; l < leaves.size(); ++l) {
      const HostTensor x = read(leaves[l]);
      const HostTensor g = grads[l] ? read(grads[l]) : HostTensor{};
      const size_t n = x.floats.size();
      const size_t step = std::max<size_t>(1, n / 48);
      for (size_t i = 0; i < n; i += step) {
        auto at = [&](double delta) {
          std::vector<double> v = x.floats;
          v[i] += delta;
          write(leaves[l], v);
          std::vector<TensorPtr> o;
          check(run(o), "forward at a perturbed point");
          return objective(o);
        };
        // float32: the step is relative to the value (|x| ~ 100 would
        // otherwise lose the difference to rounding).
        const double h =
            grad_dtype() == TSR_FLOAT64 ? kEps : kEps * std::max(1.0, std::fabs(x.floats[i]));
        const double numerical = (at(h) - at(-h)) / (2 * h);
        write(leaves[l], x.floats);
        const double analytical = grads[l] ? g.floats[i] : 0.0;
        EXPECT_LE(std::fabs(analytical - numerical), kAtol + kRtol * std::fabs(numerical))
            << "input " << l << " element " << i << ": autograd " << analytical
            << ", finite differences " << numerical;
      }
    }
  } catch (const HarnessError& e) {
    FAIL() << e.what();
  } catch (const std::exception& e) {
    FAIL() << "bad golden case: " << e.what();
  }
}

}  // namespace tessera::golden
