/*
 * `tessera devices`: what a runtime sees on this machine. It creates a runtime
 * the way an application does (the default plugin scan, with --plugin-path
 * searched first, then each explicit --plugin file) and prints every loaded
 * plugin, every device with its properties, and every load-report entry that
 * is not a success, with its reason ("FAILED <path>: <CODE>: <why>"). A plugin
 * that fails to load is a finding to report, not a failure of the command: the
 * exit code is 0 unless the usage is wrong or the runtime cannot be created.
 * --json prints the same facts as one JSON object, with the whole load report,
 * for scripts and CI.
 *
 * The facts are gathered first (Snapshot) and rendered after, so the text and
 * JSON views cannot disagree.
 */
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "common.h"
#include "tessera/plugin.h"

namespace tessera::cli {
namespace {

struct PluginFacts {
  std::string name, version, path, device_type;
  uint32_t abi_major = 0, abi_minor = 0;
  int32_t device_count = 0, kernels_bound = 0, kernels_rejected = 0;
};

struct DeviceFacts {
  std::string id;  // "cpu:0"
  std::string name, type_name, plugin;
  uint64_t total_memory = 0, free_memory = 0, max_allocation = 0, dtypes = 0;
  uint32_t features = 0, alignment = 0;
  int32_t compute_units = 0;
  tsr_device_collectives collectives{};
};

// A load report entry. `no_device`: the plugin loaded but found no device of
// its kind here (NO_DEVICE with UNAVAILABLE, e.g. the CUDA plugin on a
// machine without a GPU): listed apart from the problems, since an install
// prefix carries plugins for devices a given machine lacks.
struct ReportEntry {
  std::string event, code, path, plugin, detail;
  bool problem = false;
  bool no_device = false;
};

struct Snapshot {
  std::vector<PluginFacts> plugins;
  std::vector<DeviceFacts> devices;
  std::vector<ReportEntry> report;
};

std::string load_event_name(int32_t event) {
  switch (event) {
    case TSR_LOAD_LOADED:
      return "LOADED";
    case TSR_LOAD_FAILED:
      return "FAILED";
    case TSR_LOAD_ALREADY_LOADED:
      return "ALREADY_LOADED";
    case TSR_LOAD_KERNEL_REJECTED:
      return "KERNEL_REJECTED";
    case TSR_LOAD_UNLOADED:
      return "UNLOADED";
    case TSR_LOAD_NO_DEVICE:
      return "NO_DEVICE";
    default:
      return fmt::format("EVENT{}", event);
  }
}

// A plugin that loaded but found no device of its kind here.
bool is_no_device(const tsr_load_report_entry& entry) {
  return entry.event == TSR_LOAD_NO_DEVICE && entry.code == TSR_UNAVAILABLE;
}

// Successes are loads, repeated loads and unloads that returned OK, and
// plugins without a device here (listed apart); anything else (a failure, a
// plugin whose init failed otherwise, a rejected kernel) is a problem.
bool is_problem(const tsr_load_report_entry& entry) {
  const bool success_event = entry.event == TSR_LOAD_LOADED ||
                             entry.event == TSR_LOAD_ALREADY_LOADED ||
                             entry.event == TSR_LOAD_UNLOADED;
  return !is_no_device(entry) && (!success_event || entry.code != TSR_OK);
}

// A fixed-size char field of an ABI struct, which may lack its terminator.
template <size_t N>
std::string field(const char (&chars)[N]) {
  return std::string(chars, strnlen(chars, N));
}

std::string text(const char* borrowed) { return borrowed != nullptr ? borrowed : ""; }

Snapshot take_snapshot(const tsr_runtime* runtime) {
  Snapshot snapshot;

  size_t plugin_count = 0;
  check(tsr_runtime_plugin_count(runtime, &plugin_count));
  for (size_t i = 0; i < plugin_count; ++i) {
    tsr_plugin* plugin = nullptr;
    check(tsr_runtime_plugin_at(runtime, i, &plugin));
    tsr_plugin_info info{};
    info.struct_size = sizeof info;
    check(tsr_plugin_get_info(plugin, &info));
    snapshot.plugins.push_back({text(info.name), text(info.version), text(info.path),
                                text(info.device_type), info.abi_major, info.abi_minor,
                                info.device_count, info.kernels_bound, info.kernels_rejected});
  }

  for (const tsr_device device : list_devices(runtime)) {
    tsr_device_properties properties{};
    properties.struct_size = sizeof properties;
    check(tsr_device_get_properties(runtime, device, &properties));
    DeviceFacts facts;
    facts.id = device_string(runtime, device);
    facts.name = field(properties.name);
    facts.type_name = field(properties.type_name);
    facts.plugin = field(properties.plugin);
    facts.total_memory = properties.total_memory;
    facts.free_memory = properties.free_memory;
    facts.max_allocation = properties.max_allocation;
    facts.dtypes = properties.dtypes;
    facts.features = properties.features;
    facts.alignment = properties.alignment;
    facts.compute_units = properties.compute_units;
    facts.collectives.struct_size = sizeof facts.collectives;
    check(tsr_device_get_collectives(runtime, device, &facts.collectives));
    snapshot.devices.push_back(std::move(facts));
  }

  size_t report_count = 0;
  check(tsr_runtime_load_report_count(runtime, &report_count));
  for (size_t i = 0; i < report_count; ++i) {
    tsr_load_report_entry entry{};
    entry.struct_size = sizeof entry;
    check(tsr_runtime_load_report_at(runtime, i, &entry));
    snapshot.report.push_back({load_event_name(entry.event),
                               tsr_status_code_name(static_cast<tsr_status_code>(entry.code)),
                               text(entry.path), text(entry.plugin), text(entry.detail),
                               is_problem(entry), is_no_device(entry)});
  }
  return snapshot;
}

std::string collectives_text(const tsr_device_collectives& c) {
  if (!c.native) return "none of its own (staged through the host communicator)";
  return fmt::format("{}: {}; reduce ops {}; {} dtypes", field(c.engine),
                     fmt::join(collective_names(c.collectives), ", "),
                     fmt::join(reduce_op_names(c.reduce_ops), ", "), dtype_names(c.dtypes).size());
}

std::string plural(size_t n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

void print_text(const Snapshot& snapshot) {
  fmt::print("tessera {} (plugin ABI {}.{})\n", tsr_version_string(), TSR_PLUGIN_ABI_MAJOR,
             TSR_PLUGIN_ABI_MINOR);

  fmt::print("\nPlugins ({}):\n", snapshot.plugins.size());
  if (snapshot.plugins.empty()) {
    fmt::print("  none loaded: set TESSERA_PLUGIN_PATH or pass --plugin PATH\n");
  }
  for (const PluginFacts& plugin : snapshot.plugins) {
    fmt::print("  {} {}  {}\n", plugin.name, plugin.version, plugin.path);
    fmt::print("    device type {}, plugin ABI {}.{}, {}, kernels: {} bound, {} rejected\n",
               plugin.device_type, plugin.abi_major, plugin.abi_minor,
               plural(static_cast<size_t>(plugin.device_count), "device", "devices"),
               plugin.kernels_bound, plugin.kernels_rejected);
  }

  fmt::print("\nDevices ({}):\n", snapshot.devices.size());
  for (const DeviceFacts& device : snapshot.devices) {
    fmt::print("  {}  {}\n", device.id, device.name);
    fmt::print("    type {}, plugin {}\n", device.type_name, device.plugin);
    fmt::print("    memory: {} total, {} free, max allocation {}\n",
               format_bytes(device.total_memory), format_bytes(device.free_memory),
               device.max_allocation == 0 ? "no limit known" : format_bytes(device.max_allocation));
    fmt::print("    dtypes: {}\n", join(dtype_names(device.dtypes)));
    fmt::print("    features: {}\n", join(feature_names(device.features)));
    fmt::print(
        "    compute units: {}, alignment: {} bytes\n",
        device.compute_units == 0 ? std::string("unknown") : std::to_string(device.compute_units),
        device.alignment);
    fmt::print("    collectives: {}\n", device.id.rfind("meta", 0) == 0
                                            ? std::string("none (meta tensors hold no data)")
                                            : collectives_text(device.collectives));
  }

  size_t problems = 0, no_device = 0;
  for (const ReportEntry& entry : snapshot.report) {
    problems += entry.problem ? 1 : 0;
    no_device += entry.no_device ? 1 : 0;
  }
  auto print_entry = [](const ReportEntry& entry) {
    fmt::print("  {} {}", entry.event, entry.path);
    if (!entry.plugin.empty()) fmt::print(" ({})", entry.plugin);
    fmt::print(": {}: {}\n", entry.code, entry.detail.empty() ? "no reason given" : entry.detail);
  };
  if (problems == 0) {
    fmt::print("\nLoad report: no problems ({})\n",
               plural(snapshot.report.size(), "entry", "entries"));
  } else {
    fmt::print("\nLoad report: {}\n", plural(problems, "problem", "problems"));
    for (const ReportEntry& entry : snapshot.report)
      if (entry.problem) print_entry(entry);
  }
  if (no_device > 0) {
    fmt::print("Plugins without a device here ({}):\n", no_device);
    for (const ReportEntry& entry : snapshot.report)
      if (entry.no_device) print_entry(entry);
  }
}

nlohmann::ordered_json to_json(const Snapshot& snapshot) {
  using Json = nlohmann::ordered_json;
  Json root;
  root["tessera_version"] = tsr_version_string();
  root["plugin_abi"] = fmt::format("{}.{}", TSR_PLUGIN_ABI_MAJOR, TSR_PLUGIN_ABI_MINOR);

  Json plugins = Json::array();
  for (const PluginFacts& plugin : snapshot.plugins) {
    plugins.push_back({{"name", plugin.name},
                       {"version", plugin.version},
                       {"path", plugin.path},
                       {"device_type", plugin.device_type},
                       {"abi", fmt::format("{}.{}", plugin.abi_major, plugin.abi_minor)},
                       {"device_count", plugin.device_count},
                       {"kernels_bound", plugin.kernels_bound},
                       {"kernels_rejected", plugin.kernels_rejected}});
  }
  root["plugins"] = std::move(plugins);

  Json devices = Json::array();
  for (const DeviceFacts& device : snapshot.devices) {
    devices.push_back(
        {{"device", device.id},
         {"name", device.name},
         {"type", device.type_name},
         {"plugin", device.plugin},
         {"total_memory", device.total_memory},
         {"free_memory", device.free_memory},
         {"max_allocation", device.max_allocation},
         {"dtypes", dtype_names(device.dtypes)},
         {"features", feature_names(device.features)},
         {"collectives",
          device.collectives.native
              ? Json{{"engine", field(device.collectives.engine)},
                     {"collectives", collective_names(device.collectives.collectives)},
                     {"reduce_ops", reduce_op_names(device.collectives.reduce_ops)},
                     {"dtypes", dtype_names(device.collectives.dtypes)}}
              : Json(nullptr)},
         {"compute_units", device.compute_units},
         {"alignment", device.alignment}});
  }
  root["devices"] = std::move(devices);

  Json report = Json::array();
  for (const ReportEntry& entry : snapshot.report) {
    report.push_back({{"event", entry.event},
                      {"code", entry.code},
                      {"path", entry.path},
                      {"plugin", entry.plugin},
                      {"detail", entry.detail},
                      {"ok", !entry.problem},
                      {"no_device", entry.no_device}});
  }
  root["load_report"] = std::move(report);
  return root;
}

}  // namespace

Command add_devices_command(CLI::App& root) {
  struct Options {
    RuntimeOptions runtime;
    bool json = false;
  };
  auto options = std::make_shared<Options>();
  CLI::App* command =
      root.add_subcommand("devices", "List loaded plugins, devices and plugin load problems");
  options->runtime.add_to(*command);
  command->add_flag("--json", options->json, "Print JSON instead of text");
  return {command, [options] {
            Runtime runtime = create_runtime(options->runtime);
            const Snapshot snapshot = take_snapshot(runtime.get());
            if (options->json) {
              fmt::print("{}\n", to_json(snapshot).dump(2, ' ', false,
                                                        nlohmann::json::error_handler_t::replace));
            } else {
              print_text(snapshot);
            }
            return kExitOk;
          }};
}

}  // namespace tessera::cli
