// target.cpp - the plugin and device under test, and their runtime.
#include "target.h"

#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <utility>

namespace tessera::conformance {
namespace {

Target g_target;

struct State {
  tsr_runtime* runtime = nullptr;
  tsr_device device{};
  tsr_device_properties properties{};
  std::string error;  // why setup failed; empty when it worked
};

State make_state() {
  State s;
  tsr_runtime_options options{};
  options.struct_size = sizeof(options);
  options.skip_default_plugins = true;
  try {
    check(tsr_runtime_create(&options, &s.runtime), "tsr_runtime_create");
    tsr_plugin* plugin = nullptr;
    check(tsr_plugin_load(s.runtime, g_target.plugin_path.c_str(), &plugin),
          "loading the plugin under test (" + g_target.plugin_path + ")");
    if (!g_target.cpu_plugin.empty() && g_target.cpu_plugin != g_target.plugin_path) {
      tsr_plugin* cpu = nullptr;
      check(tsr_plugin_load(s.runtime, g_target.cpu_plugin.c_str(), &cpu),
            "loading the reference CPU plugin (" + g_target.cpu_plugin + ")");
    }
    check(tsr_device_parse(s.runtime, g_target.device.c_str(), &s.device),
          "finding device '" + g_target.device + "'");
    s.properties.struct_size = sizeof(s.properties);
    check(tsr_device_get_properties(s.runtime, s.device, &s.properties),
          "tsr_device_get_properties(" + g_target.device + ")");
  } catch (const std::exception& e) {
    s.error = e.what();
  }
  return s;
}

const State& state() {
  // Never destroyed: tensors of tests may outlive main's return order.
  static const State* s = new State(make_state());
  if (!s->error.empty()) throw std::runtime_error(s->error);
  return *s;
}

}  // namespace

void set_target(Target target) { g_target = std::move(target); }
const Target& target() { return g_target; }

tsr_runtime* runtime() { return state().runtime; }
tsr_device device() { return state().device; }
bool device_is_cpu() { return state().device.type == TSR_DEVICE_CPU; }
const tsr_device_properties& properties() { return state().properties; }

std::string installed_golden_file() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  const std::filesystem::path p =
      exe.parent_path() / ".." / "share" / "tessera" / "conformance" / "golden_ops.json";
  return std::filesystem::exists(p, ec) ? p.string() : std::string();
}

void check(tsr_status* status, const std::string& what) {
  if (status == nullptr) return;
  std::string message = what + " failed: " + tsr_status_code_name(tsr_status_code_of(status)) +
                        ": " + tsr_status_message(status);
  tsr_status_free(status);
  throw std::runtime_error(message);
}

}  // namespace tessera::conformance
