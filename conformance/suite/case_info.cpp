// case_info.cpp - case ids, the case list and the plugin description.
#include "case_info.h"

#include <cctype>
#include <map>
#include <string>

#include "target.h"
#include "tessera/tessera.h"

namespace tessera::conformance {
namespace {

using nlohmann::json;

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The golden suites' case name: the parameter name after "Case/".
bool golden_name(const testing::TestInfo& info, std::string* name) {
  const std::string suite = info.test_suite_name();
  if (suite != "Ops/Golden" && suite != "Autograd/GoldenGrad") return false;
  const std::string n = info.name();
  *name = n.substr(n.find('/') + 1);
  return true;
}

// Suites whose parameter name is the case name, and the id prefix they get.
struct NamedSuite {
  const char* suite;
  const char* prefix;  // after "<family>/"
};
constexpr NamedSuite kNamedSuites[] = {{"Ops/Large", "large__"},
                                       {"Perf/Timing", ""},
                                       {"Ops/GoldenDtype", ""},
                                       {"Collectives/Matrix", ""}};

std::map<std::string, json>& registry() {
  static std::map<std::string, json> r;
  return r;
}

// How the device under test runs `op` for `dtype`: "kernel" (a plugin kernel
// is bound), "decomposition" (a composite without one: the core runs the ops
// it is made of), "view" (metadata only), "missing" (nothing can run it);
// null when it cannot be told (no such op or dtype, setup failed).
json path_of(const std::string& op_name, const std::string& dtype_name) {
  try {
    const tsr_op* op = nullptr;
    if (tsr_status* s = tsr_op_find(runtime(), op_name.c_str(), &op)) {
      tsr_status_free(s);
      return nullptr;
    }
    int dtype = -1;
    for (int d = 0; d < TSR_DTYPE_COUNT; ++d)
      if (dtype_name == tsr_dtype_name(static_cast<tsr_dtype>(d))) dtype = d;
    if (dtype < 0) dtype = TSR_FLOAT32;
    tsr_op_kind kind = TSR_OP_PRIMITIVE;
    bool kernel = false;
    check(tsr_op_kind_of(op, &kind), "tsr_op_kind_of");
    check(tsr_op_has_kernel(op, device(), static_cast<tsr_dtype>(dtype), &kernel),
          "tsr_op_has_kernel");
    if (kind == TSR_OP_VIEW) return "view";
    if (kernel) return "kernel";
    return kind == TSR_OP_COMPOSITE || kind == TSR_OP_FACTORY ? "decomposition" : "missing";
  } catch (const std::exception&) {
    return nullptr;
  }
}

std::string dtype_text(uint64_t mask) {
  std::string out;
  for (int d = 0; d < 64; ++d) {
    if (!(mask & (uint64_t{1} << d))) continue;
    if (!out.empty()) out += " ";
    out += tsr_dtype_name(static_cast<tsr_dtype>(d));
  }
  return out;
}

}  // namespace

std::string case_family(const testing::TestInfo& info) {
  const std::string suite = info.test_suite_name();
  return lower(suite.substr(0, suite.find('/')));
}

std::string case_id(const testing::TestInfo& info) {
  std::string name;
  if (!golden_name(info, &name)) {
    name = info.name();
    for (const NamedSuite& s : kNamedSuites)
      if (std::string(info.test_suite_name()) == s.suite)
        name = s.prefix + name.substr(name.find('/') + 1);
  }
  return case_family(info) + "/" + name;
}

bool register_case_info(const std::string& id, const std::string& op, const std::string& dtype,
                        const std::string& shape_class) {
  registry()[id] = json{{"op", op}, {"dtype", dtype}, {"shape_class", shape_class}};
  return true;
}

json list_cases() {
  json out = json::array();
  const testing::UnitTest& unit = *testing::UnitTest::GetInstance();
  for (int s = 0; s < unit.total_test_suite_count(); ++s) {
    const testing::TestSuite& suite = *unit.GetTestSuite(s);
    for (int t = 0; t < suite.total_test_count(); ++t) {
      const testing::TestInfo& info = *suite.GetTestInfo(t);
      json c{{"id", case_id(info)},
             {"gtest", std::string(info.test_suite_name()) + "." + info.name()},
             {"family", case_family(info)},
             {"op", nullptr},
             {"dtype", nullptr},
             {"shape_class", nullptr},
             {"path", nullptr}};
      std::string name;
      const auto known = registry().find(case_id(info));
      if (known != registry().end()) {
        c["op"] = known->second.at("op");
        c["dtype"] = known->second.at("dtype");
        c["shape_class"] = known->second.at("shape_class");
      } else if (golden_name(info, &name)) {
        const json meta = golden_case_info(name);
        if (!meta.is_null()) {
          c["op"] = meta.at("op");
          c["dtype"] = meta.at("dtype");
          c["shape_class"] = meta.value("error_case", false) ? json("error") : meta["shape_class"];
        }
      } else if (std::string(info.test_suite_name()) == "Ops/GoldenDtype") {
        // "<golden case>__as_<dtype>" (Note [Dtype sweep] in golden/dtype_sweep_test.cpp)
        const std::string n = info.name();
        const std::string id = n.substr(n.find('/') + 1);
        const size_t as = id.rfind("__as_");
        const json meta = as == std::string::npos ? json() : golden_case_info(id.substr(0, as));
        if (!meta.is_null()) {
          c["op"] = meta.at("op");
          c["dtype"] = id.substr(as + 5);
          c["shape_class"] = meta["shape_class"];
        }
      }
      if (c["op"].is_string() && c["dtype"].is_string())
        c["path"] = path_of(c["op"].get<std::string>(), c["dtype"].get<std::string>());
      out.push_back(std::move(c));
    }
  }
  return out;
}

json describe_plugin() {
  json out{{"loaded", false}, {"path", target().plugin_path}};
  tsr_runtime_options options{};
  options.struct_size = sizeof(options);
  options.skip_default_plugins = true;
  tsr_runtime* rt = nullptr;
  if (tsr_status* s = tsr_runtime_create(&options, &rt)) {
    out["error"] = tsr_status_message(s);
    tsr_status_free(s);
    return out;
  }
  tsr_plugin* plugin = nullptr;
  tsr_status* load = tsr_plugin_load(rt, target().plugin_path.c_str(), &plugin);
  if (load != nullptr) {
    out["error"] = std::string(tsr_status_code_name(tsr_status_code_of(load))) + ": " +
                   tsr_status_message(load);
    out["code"] = tsr_status_code_name(tsr_status_code_of(load));
    tsr_status_free(load);
  }
  size_t n = 0;
  tsr_status_free(tsr_runtime_load_report_count(rt, &n));
  json report = json::array();
  for (size_t i = 0; i < n; ++i) {
    tsr_load_report_entry e{};
    e.struct_size = sizeof(e);
    if (tsr_status* s = tsr_runtime_load_report_at(rt, i, &e)) {
      tsr_status_free(s);
      continue;
    }
    static const char* const kEvents[] = {"loaded",          "failed",   "already_loaded",
                                          "kernel_rejected", "unloaded", "no_device"};
    report.push_back({{"event", e.event >= 0 && e.event < 6 ? kEvents[e.event] : "unknown"},
                      {"code", tsr_status_code_name(static_cast<tsr_status_code>(e.code))},
                      {"plugin", e.plugin},
                      {"detail", e.detail}});
  }
  out["load_report"] = report;
  if (plugin != nullptr) {
    tsr_plugin_info info{};
    info.struct_size = sizeof(info);
    if (tsr_status* s = tsr_plugin_get_info(plugin, &info)) {
      out["error"] = tsr_status_message(s);
      tsr_status_free(s);
    } else {
      out["loaded"] = true;
      out["plugin"] = {
          {"name", info.name},
          {"version", info.version},
          {"device_type", info.device_type},
          {"abi", std::to_string(info.abi_major) + "." + std::to_string(info.abi_minor)},
          {"kernels_bound", info.kernels_bound},
          {"kernels_rejected", info.kernels_rejected}};
      json devices = json::array();
      size_t count = 0;
      tsr_status_free(tsr_device_count(rt, &count));
      for (size_t i = 0; i < count; ++i) {
        tsr_device d{};
        if (tsr_status* s = tsr_device_at(rt, i, &d)) {
          tsr_status_free(s);
          continue;
        }
        tsr_device_properties p{};
        p.struct_size = sizeof(p);
        if (tsr_status* s = tsr_device_get_properties(rt, d, &p)) {
          tsr_status_free(s);
          continue;
        }
        if (std::string(p.plugin) != info.name) continue;
        char id[64] = {};
        tsr_status_free(tsr_device_format(rt, d, id, sizeof(id)));
        devices.push_back({{"id", id},
                           {"name", p.name},
                           {"total_memory", p.total_memory},
                           {"max_allocation", p.max_allocation},
                           {"dtypes", dtype_text(p.dtypes)},
                           {"features", p.features},
                           {"compute_units", p.compute_units},
                           {"alignment", p.alignment}});
      }
      out["devices"] = devices;
    }
  }
  tsr_runtime_destroy(rt);
  return out;
}

}  // namespace tessera::conformance
