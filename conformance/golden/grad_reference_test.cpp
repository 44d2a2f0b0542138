// grad_reference_test.cpp - gradients against PyTorch's: every floating input
// of every golden case (golden_grad_test only).
//
// golden_grads.json (gen_golden_grads.py, Note [Golden gradients] there)
// holds PyTorch 2.15's gradient of f = sum_k <out_k, w_k> for each floating
// input of each case, plus its own cases with overlapping, repeated and
// padding indices. Finite differences (GoldenGrad) check that a gradient is
// a derivative; this suite checks that it is PyTorch's, which is what a
// convention (a written position of index_put gets nothing, padding_idx's
// row gets nothing, tied maxima share) or a silently missing gradient
// changes. Compared normwise: within 1e-7 of the largest expected element.
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "conformance/golden/harness.h"

#ifndef TESSERA_GOLDEN_GRADS_FILE
#error "TESSERA_GOLDEN_GRADS_FILE must name golden_grads.json (set by conformance/CMakeLists.txt)"
#endif

namespace tessera::golden {
namespace {

struct GradFile {
  json cases = json::array();
  std::string error;
  std::map<std::string, size_t> golden_by_name;  // golden_ops.json's cases
};

const GradFile& grad_file() {
  static const GradFile file = [] {
    GradFile f;
    const std::string path = TESSERA_GOLDEN_GRADS_FILE;
    std::ifstream in(path);
    if (!in) {
      f.error = "cannot open " + path +
                "; regenerate it with /root/.cache/tessera/torchpy "
                "conformance/golden/gen_golden_grads.py";
      return f;
    }
    try {
      f.cases = std::move(json::parse(in).at("cases"));
    } catch (const std::exception& e) {
      f.error = path + " is not a golden gradient file: " + e.what();
    }
    const json& golden = golden_file().cases;
    for (size_t i = 0; i < golden.size(); ++i) f.golden_by_name[golden[i].at("name")] = i;
    return f;
  }();
  return file;
}

// The case an entry of golden_grads.json checks: its own, or golden_ops.json's.
const json& grad_case_spec(const json& entry) {
  if (entry.contains("args")) return entry;
  const GradFile& f = grad_file();
  const auto it = f.golden_by_name.find(entry.at("name").get<std::string>());
  if (it == f.golden_by_name.end())
    throw HarnessError("golden_grads.json names case " + entry.at("name").dump() +
                       ", which golden_ops.json lacks; regenerate golden_grads.json with "
                       "conformance/golden/gen_golden_grads.py");
  return golden_file().cases[it->second];
}

std::vector<int64_t> int_list_or_empty(const json& entry, const char* key) {
  return entry.contains(key) ? int_list(entry.at(key)) : std::vector<int64_t>{};
}

// Gradients that still differ from PyTorch's, all at NaN, infinite or
// out-of-domain inputs (finite inputs agree): the case must keep differing;
// once it matches, the entry must go (like an XPASS). case -> what differs.
const std::pair<const char*, const char*> kGradDiffersFromPyTorch[] = {
    {"logit__float64_specials", "inputs outside [0, 1] and at +-inf: PyTorch's gradient is NaN"},
    {"remainder_Tensor__specials", "other's gradient at inf / 0 operands: PyTorch's NaN and 0"},
    {"pow_Tensor_Tensor__negative_base_fractional",
     "negative base with a fractional exponent: PyTorch gives 0 where Tessera's log is NaN"},
    {"atan2__signed_zeros_inf", "both operands 0 or infinite: PyTorch's gradient is 0"},
    {"max__nan_propagates", "a NaN maximum: PyTorch gives g to the NaN elements, not NaN to all"},
    {"min__nan_propagates", "a NaN minimum: PyTorch gives g to the NaN elements, not NaN to all"},
    {"cumprod__nan_inf", "infinite and NaN factors: PyTorch's formula divides differently"},
    {"scaled_dot_product_attention__fully_masked_row_nan",
     "a fully masked row: PyTorch's value gradient is finite"},
    {"binary_cross_entropy__sum_extremes_clamped",
     "inputs exactly 0 and 1: PyTorch's formula clamps the denominator at 1e-12"},
};

// Checks one entry; returns the number of inputs compared.
int check_grad_entry(const json& entry) {
  if (entry.contains("skip")) return 0;
  int checked = 0;
  try {
    const json& spec = grad_case_spec(entry);
    const std::string op_name = spec.at("op").get<std::string>();
    SCOPED_TRACE("op " + op_name + "(" + describe_args(spec) + ")");
    const tsr_op* op = nullptr;
    check(tsr_op_find(runtime(), op_name.c_str(), &op), "tsr_op_find");
    GradScope scope;
    grad_inputs().written = int_list_or_empty(entry, "written");
    grad_inputs().no_grad = int_list_or_empty(entry, "no_grad_args");
    Call call;
    build_args(spec, call);
    const std::vector<tsr_tensor*> leaves = grad_inputs().leaves;
    const json& inputs = entry.at("inputs");
    if (inputs.size() != leaves.size())
      throw HarnessError("golden_grads.json lists " + std::to_string(inputs.size()) +
                         " floating inputs, the harness built " + std::to_string(leaves.size()) +
                         "; regenerate golden_grads.json");
    for (size_t l = 0; l < leaves.size(); ++l) {
      const auto [arg, list_entry] = grad_inputs().where[l];
      if (inputs[l].at("arg").get<int32_t>() != arg || inputs[l].value("entry", -1) != list_entry)
        throw HarnessError("golden_grads.json's input " + std::to_string(l) +
                           " is another argument than the harness's; regenerate it");
    }

    constexpr size_t kMaxOuts = 16;
    tsr_value outs[kMaxOuts] = {};
    if (tsr_status* status = tsr_op_call(op, call.args.data(), call.args.size(), outs, kMaxOuts)) {
      const std::string message = tsr_status_message(status);
      tsr_status_free(status);
      ADD_FAILURE() << "forward with inputs that require grad failed: " << message;
      return 0;
    }
    // Output k of the flattened results gets weight_of(k, i), as in the
    // generator; only those that require grad are differentiated.
    std::vector<TensorPtr> owned, weights;
    std::vector<tsr_tensor*> roots, root_weights;
    size_t k = 0;
    for (const tsr_value& out : outs) {
      if (out.tag != TSR_VALUE_TENSOR || out.u.tensor == nullptr) continue;
      owned.emplace_back(out.u.tensor);
      const size_t index = k++;
      int32_t rg = 0;
      check(tsr_tensor_requires_grad(out.u.tensor, &rg), "tsr_tensor_requires_grad");
      if (!rg) continue;
      const HostTensor h = read(out.u.tensor);
      std::vector<double> w(h.floats.size());
      for (size_t i = 0; i < w.size(); ++i) w[i] = weight_of(index, i);
      tsr_tensor* wt = nullptr;
      check(tsr_tensor_from_host(runtime(), w.data(), w.size() * sizeof(double),
                                 static_cast<int32_t>(h.shape.size()), h.shape.data(), TSR_FLOAT64,
                                 target_device(), &wt),
            "tsr_tensor_from_host");
      TensorPtr weight(wt);
      if (h.dtype != TSR_FLOAT64) {
        tsr_tensor* cast = nullptr;
        check(tsr_tensor_to_dtype(wt, h.dtype, &cast), "tsr_tensor_to_dtype");
        weight.reset(cast);
      }
      roots.push_back(out.u.tensor);
      root_weights.push_back(weight.get());
      weights.push_back(std::move(weight));
    }
    std::vector<tsr_tensor*> grads(leaves.size(), nullptr);
    if (!roots.empty())
      check(tsr_autograd_grad(static_cast<int32_t>(roots.size()), roots.data(), root_weights.data(),
                              static_cast<int32_t>(leaves.size()), leaves.data(), 0, 0,
                              /*allow_unused=*/1, grads.data()),
            "tsr_autograd_grad");
    std::vector<TensorPtr> grad_owner;
    for (tsr_tensor* g : grads) grad_owner.emplace_back(g);

    // A wrong gradient is wrong by O(1); rounding differs between a formula
    // and a decomposition by far less than 1e-7 of the largest element.
    const Tolerance tol{1e-7, 1e-9};
    const char* differs = nullptr;
    for (const auto& [name, what] : kGradDiffersFromPyTorch)
      if (entry.at("name").get<std::string>() == name) differs = what;
    std::string mismatches;
    for (size_t l = 0; l < leaves.size(); ++l) {
      const json& expected = inputs[l];
      if (expected.contains("pytorch_error")) continue;  // no derivative in PyTorch
      ++checked;
      const std::string which = "input " + std::to_string(l) + " (argument " +
                                std::to_string(grad_inputs().where[l].first) + ")";
      const HostTensor shape_of_leaf = read(leaves[l]);
      HostTensor actual;
      if (grads[l] != nullptr) {
        actual = read(grads[l]);
      } else {  // no gradient: zeros
        actual.dtype = TSR_FLOAT64;
        actual.shape = shape_of_leaf.shape;
        actual.floats.assign(shape_of_leaf.floats.size(), 0.0);
      }
      const json& g = expected.at("grad");
      std::vector<double> want;
      std::vector<int64_t> want_shape = shape_of_leaf.shape;
      if (g.is_null()) {
        want.assign(shape_of_leaf.floats.size(), 0.0);
      } else {
        want_shape = int_list(g.at("shape"));
        for (const json& v : g.at("data")) want.push_back(number(v));
      }
      const std::string why = compare_values(actual, want_shape, want, {}, tol, /*normwise=*/true);
      if (!why.empty())
        mismatches += "\n  " + which + ": gradient differs from PyTorch's" +
                      (grads[l] == nullptr ? " (Tessera gives none)" : "") + ": " + why;
    }
    if (differs != nullptr) {
      EXPECT_FALSE(mismatches.empty()) << "the gradient now matches PyTorch's (" << differs
                                       << "): remove the case from kGradDiffersFromPyTorch";
    } else {
      EXPECT_TRUE(mismatches.empty()) << mismatches;
    }
  } catch (const HarnessError& e) {
    ADD_FAILURE() << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "bad golden gradient entry: " << e.what();
  }
  return checked;
}

// One test over all entries (each is a few milliseconds; a process per
// entry under ctest would cost more than the checks); a failure names its
// case. TESSERA_GOLDEN_GRAD_CASE=<substring> checks only matching cases.
TEST(GoldenGradReference, EveryInputMatchesPyTorch) {
  const GradFile& f = grad_file();
  ASSERT_TRUE(f.error.empty()) << f.error;
  const char* only = std::getenv("TESSERA_GOLDEN_GRAD_CASE");
  int checked = 0;
  for (const json& entry : f.cases) {
    const std::string name = entry.at("name").get<std::string>();
    if (only != nullptr && name.find(only) == std::string::npos) continue;
    SCOPED_TRACE("case " + name);
    checked += check_grad_entry(entry);
  }
  testing::Test::RecordProperty("inputs_checked", checked);
  if (only == nullptr) {
    EXPECT_GT(checked, 1000) << "golden_grads.json lost most of its inputs";
  }
}

// Every golden case that succeeds and has a floating tensor input has an
// entry (a case added to gen_golden.py needs gen_golden_grads.py rerun);
// prints how many inputs are checked against PyTorch per op.
TEST(GoldenGradCoverage, EveryCaseWithAFloatingInputHasPyTorchGradients) {
  const GradFile& f = grad_file();
  ASSERT_TRUE(f.error.empty()) << f.error;
  std::map<std::string, const json*> entries;
  for (const json& e : f.cases) entries[e.at("name").get<std::string>()] = &e;
  auto floating = [](const json& spec) {
    if (spec.is_object() && spec.contains("dtype"))
      return is_float(dtype_named(spec.at("dtype").get<std::string>()));
    return false;
  };
  std::string missing;
  for (const json& c : golden_file().cases) {
    if (c.at("expect").value("raises", false)) continue;
    bool has_float = false;
    for (const json& a : c.at("args")) {
      if (!a.is_object()) continue;
      if (a.contains("tensor")) has_float |= floating(a.at("tensor"));
      if (a.contains("tensors"))
        for (const json& e : a.at("tensors")) has_float |= floating(e);
    }
    if (has_float && entries.count(c.at("name").get<std::string>()) == 0)
      missing += " " + c.at("name").get<std::string>();
  }
  EXPECT_TRUE(missing.empty()) << "golden cases without PyTorch gradients (rerun "
                                  "conformance/golden/gen_golden_grads.py):"
                               << missing;
  std::map<std::string, int> per_op;
  int total = 0, skipped = 0, no_derivative = 0;
  for (const json& e : f.cases) {
    if (e.contains("skip")) {
      ++skipped;
      continue;
    }
    const std::string op = grad_case_spec(e).at("op").get<std::string>();
    int& n = per_op[op];
    for (const json& in : e.at("inputs")) {
      if (in.contains("pytorch_error")) {
        ++no_derivative;
        continue;
      }
      ++n;
      ++total;
    }
  }
  std::cout << "golden gradients: " << total << " inputs of " << f.cases.size() - skipped
            << " cases checked against PyTorch over " << per_op.size() << " ops (" << skipped
            << " cases skipped, " << no_derivative
            << " inputs without a PyTorch derivative); inputs per op:\n";
  for (const auto& [op, n] : per_op) std::cout << "  " << op << " " << n << "\n";
  testing::Test::RecordProperty("inputs_checked", total);
}

}  // namespace
}  // namespace tessera::golden
