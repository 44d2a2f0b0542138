// case_info.h - naming and describing conformance cases and the plugin
// under test, for the runner (Note [Conformance process model]).
#pragma once

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace tessera::conformance {

// "ops/add_Tensor__broadcast", "memory/ZeroSizeAllocationSucceeds".
std::string case_id(const testing::TestInfo& info);
// "ops", "memory", ...
std::string case_family(const testing::TestInfo& info);

// Every registered case: [{"id", "gtest", "family", "op", "dtype",
// "shape_class", "path"}] (null where they do not apply); path is how the
// device runs the op: "kernel", "decomposition", "view" or "missing".
nlohmann::json list_cases();

// The plugin under test loaded alone into a fresh runtime: {"loaded",
// "error", "plugin": {name, version, device_type, abi, kernels_bound,
// kernels_rejected}, "load_report": [...], "devices": [{"id", "name",
// "total_memory", "dtypes", "features", "compute_units", "alignment",
// "max_allocation"}]}.
nlohmann::json describe_plugin();

// Op, dtype and shape class of a case that is not a golden case (the large
// and perf cases register theirs at static initialisation).
bool register_case_info(const std::string& id, const std::string& op, const std::string& dtype,
                        const std::string& shape_class);

// Golden case metadata (conformance/golden/suite_target.cpp).
nlohmann::json golden_case_info(const std::string& name);

}  // namespace tessera::conformance
