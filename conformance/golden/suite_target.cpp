// suite_target.cpp - the golden families inside the conformance suite
// (conformance/suite/): the device under test as their target, GoldenGrad
// as the family "autograd", and what the report learns of a golden case.
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "conformance/golden/harness.h"
#include "conformance/suite/case_info.h"
#include "conformance/suite/target.h"

#ifndef TESSERA_GOLDEN_FILE
#error "TESSERA_GOLDEN_FILE must name golden_ops.json (set by conformance/CMakeLists.txt)"
#endif

namespace tessera::golden {

// The device under test (conformance/suite/target.h); a setup failure
// (plugin not loadable, no such device) fails each case with its reason.
tsr_runtime* runtime() {
  try {
    return tessera::conformance::runtime();
  } catch (const std::runtime_error& e) {
    throw HarnessError(e.what());
  }
}

tsr_device device_under_test() { return tessera::conformance::device(); }

tsr_dtype grad_dtype() {
  static const tsr_dtype d = [] {
    const char* forced = std::getenv("TESSERA_CONFORMANCE_GRAD_DTYPE");
    if (forced != nullptr && std::string(forced) == "float32") return TSR_FLOAT32;
    try {
      return (tessera::conformance::properties().dtypes & TSR_DTYPE_BIT(TSR_FLOAT64)) != 0
                 ? TSR_FLOAT64
                 : TSR_FLOAT32;
    } catch (const std::exception&) {
      return TSR_FLOAT64;  // setup failed: every case reports it anyway
    }
  }();
  return d;
}

// An installed suite reads the installed copy (share/tessera/conformance).
std::string golden_file_path() {
  const std::string installed = tessera::conformance::installed_golden_file();
  return installed.empty() ? std::string(TESSERA_GOLDEN_FILE) : installed;
}

namespace {

INSTANTIATE_TEST_SUITE_P(Autograd, GoldenGrad, testing::ValuesIn(case_indices()), case_name);

}  // namespace
}  // namespace tessera::golden

namespace tessera::conformance {

using golden::golden_file;
using golden::int_list;
using golden::json;

// What the report needs to know of golden case `name`: its op, the dtype it
// exercises (first tensor argument's, else a dtype argument's, else the
// first result's) and its shape class: "empty" (an input with no elements),
// "0-d", "non-contiguous" (a transposed, permuted, sliced or strided input),
// "broadcast" (inputs of different shapes, or an expanded one), else
// "plain". Null when there is no such case.
nlohmann::json golden_case_info(const std::string& name) {
  for (const json& spec : golden_file().cases) {
    if (spec.at("name").get<std::string>() != name) continue;
    std::string dtype;
    bool empty = false, scalar = false, strided = false, broadcast = false;
    std::vector<std::vector<int64_t>> shapes;
    auto look = [&](const json& t) {
      if (dtype.empty()) dtype = t.at("dtype").get<std::string>();
      const std::vector<int64_t> shape = int_list(t.at("shape"));
      int64_t numel = 1;
      for (int64_t d : shape) numel *= d;
      empty |= numel == 0;
      scalar |= shape.empty();
      if (t.contains("view")) {
        for (const json& step : t.at("view")) {
          const std::string kind = step.begin().key();
          if (kind == "expand") {
            broadcast = true;
          } else {
            strided = true;
          }
        }
      }
      shapes.push_back(shape);
    };
    for (const json& a : spec.at("args")) {
      if (!a.is_object() || a.size() != 1) continue;
      if (a.contains("tensor")) look(a.at("tensor"));
      if (a.contains("tensors"))
        for (const json& t : a.at("tensors"))
          if (!t.is_null()) look(t);
    }
    for (const json& a : spec.at("args"))
      if (dtype.empty() && a.is_object() && a.contains("dtype")) dtype = a.at("dtype");
    const json& expect = spec.at("expect");
    if (dtype.empty() && expect.contains("outputs") && !expect.at("outputs").empty() &&
        expect.at("outputs")[0].is_object())
      dtype = expect.at("outputs")[0].at("dtype").get<std::string>();
    for (const auto& shape : shapes) broadcast |= shape != shapes.front() && !shape.empty();
    std::string shape_class = "plain";
    if (empty) {
      shape_class = "empty";
    } else if (scalar) {
      shape_class = "0-d";
    } else if (strided) {
      shape_class = "non-contiguous";
    } else if (broadcast) {
      shape_class = "broadcast";
    }
    return json{{"op", spec.at("op")},
                {"dtype", dtype.empty() ? "none" : dtype},
                {"shape_class", shape_class},
                {"error_case", expect.value("raises", false)}};
  }
  return nullptr;
}

}  // namespace tessera::conformance
