#include "runtime/runtime.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

#include "runtime/generator.h"
#include "runtime/plugin_loader.h"
#include "runtime/stream.h"
#include "util/error.h"
#include "util/version.h"

namespace tsr {

namespace {

int log_threshold() {
  static const int level = [] {
    const char* env = std::getenv("TESSERA_LOG_LEVEL");
    if (!env) return static_cast<int>(TSR_LOG_WARNING);
    if (!std::strcmp(env, "debug")) return static_cast<int>(TSR_LOG_DEBUG);
    if (!std::strcmp(env, "info")) return static_cast<int>(TSR_LOG_INFO);
    if (!std::strcmp(env, "error")) return static_cast<int>(TSR_LOG_ERROR);
    if (!std::strcmp(env, "off")) return 99;
    return static_cast<int>(TSR_LOG_WARNING);
  }();
  return level;
}

void host_log(tsr_log_level level, const char* plugin, const char* message) {
  if (static_cast<int>(level) < log_threshold()) return;
  static const char* kNames[] = {"debug", "info", "warning", "error"};
  int l = level >= TSR_LOG_DEBUG && level <= TSR_LOG_ERROR ? level : TSR_LOG_ERROR;
  std::fprintf(stderr, "[tessera %s] plugin %s: %s\n", kNames[l], plugin ? plugin : "?",
               message ? message : "");
}

tsr_status* host_make_status(tsr_status_code code, const char* message) {
  return tsr_status_create(code, message);
}

// Note [Handle validation]
// ~~~~~~~~~~~~~~~~~~~~~~~~~
// Live user-visible runtime handles: a handle is decoded only if it is in
// this set, so a destroyed or foreign runtime handle is reported, not used.
std::mutex g_runtimes_mu;
std::set<const Runtime*>& live_runtimes() {
  static auto* s = new std::set<const Runtime*>();
  return *s;
}

}  // namespace

Runtime::Runtime() : op_handles_(this) {
  host_api_.struct_size = sizeof(tsr_host_api);
  host_api_.abi_major = TSR_PLUGIN_ABI_MAJOR;
  host_api_.abi_minor = TSR_PLUGIN_ABI_MINOR;
  host_api_.host_version = kVersionString;
  host_api_.make_status = host_make_status;
  host_api_.log = host_log;
  devices_.add_meta_device(this);

  std::lock_guard<std::mutex> lock(g_runtimes_mu);
  live_runtimes().insert(this);
}

Runtime::~Runtime() {
  destroy_default_generators(this);  // before their devices go
  // Every storage/stream/event is gone (refs reached zero): shut plugins down.
  for (auto& p : plugins_.all()) {
    if (!p->loaded) continue;
    for (DeviceRecord* d : p->devices) {
      d->allocator->empty_cache();
      if (d->default_stream) {
        delete d->default_stream;
        d->default_stream = nullptr;
      }
    }
    if (p->api.shutdown) p->api.shutdown(p->context);
    p->loaded = false;
  }
  if (devices_.meta()) delete devices_.meta()->default_stream;
  kernels_.clear();
  for (auto& d : devices_.records()) d->allocator.reset();
  plugins_.clear();  // unloads the libraries last
}

void Runtime::release() noexcept {
  if (refs.fetch_sub(1, std::memory_order_seq_cst) == 1) maybe_delete();
}

void Runtime::maybe_delete() noexcept {
  // No handle is left, so no plugin can be loaded any more: the device records
  // are stable. seq_cst pairs with Storage::release's decrement-then-check.
  for (const auto& d : devices_.records())
    if (d->live_storages.load(std::memory_order_seq_cst) != 0) return;
  if (refs.load(std::memory_order_seq_cst) != 0) return;
  if (deleting_.exchange(true, std::memory_order_acq_rel)) return;
  delete this;
}

void runtime_forget_handle(const Runtime* rt) {
  std::lock_guard<std::mutex> lock(g_runtimes_mu);
  live_runtimes().erase(rt);
}

Runtime* runtime_from_handle(const tsr_runtime* handle, const char* arg) {
  if (handle == nullptr)
    fail(TSR_INVALID_ARGUMENT,
         "argument '{}' is NULL; create a runtime with tsr_runtime_create or use "
         "tsr_runtime_default",
         arg);
  auto* rt = reinterpret_cast<const Runtime*>(handle);
  {
    std::lock_guard<std::mutex> lock(g_runtimes_mu);
    if (!live_runtimes().count(rt))
      fail(TSR_INVALID_ARGUMENT,
           "argument '{}' ({}) is not a live runtime (destroyed, or not a runtime handle)", arg,
           static_cast<const void*>(handle));
  }
  return const_cast<Runtime*>(rt);
}

DeviceRecord* Runtime::device(tsr_device d, const char* arg) const {
  DeviceRecord* rec = find_device(d);
  if (rec) return rec;
  if (d.type < 0 || d.type >= TSR_DEVICE_TYPE_MAX || d.index < 0)
    fail(TSR_INVALID_ARGUMENT, "argument '{}' is an invalid device (type {}, index {})", arg,
         d.type, d.index);
  fail(TSR_NOT_FOUND,
       "argument '{}': device {} does not exist in this runtime; list devices with "
       "`tessera devices`",
       arg, format_device(d));
}

std::vector<DeviceRecord*> Runtime::devices() const {
  std::lock_guard<std::mutex> lock(mu_);
  return devices_.listed();
}

std::string Runtime::device_type_name(int32_t type) const {
  std::lock_guard<std::mutex> lock(mu_);
  return devices_.type_name(type);
}

int32_t Runtime::device_type_id(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  return devices_.type_id(name);
}

std::string Runtime::format_device(tsr_device d) const {
  return device_type_name(d.type) + ":" + std::to_string(d.index);
}

PluginRecord* Runtime::load_plugin(const std::string& path) {
  return PluginLoader(*this).load(path);
}

void Runtime::load_plugins_from_search_path(const char* extra_path) {
  PluginLoader(*this).load_search_path(extra_path);
}

void Runtime::unload_plugin(PluginRecord* plugin) { PluginLoader(*this).unload(plugin); }

std::vector<PluginRecord*> Runtime::plugins() const {
  std::lock_guard<std::mutex> lock(mu_);
  return plugins_.loaded();
}

bool Runtime::is_loaded_plugin(const PluginRecord* plugin) const {
  std::lock_guard<std::mutex> lock(mu_);
  return plugins_.is_loaded(plugin);
}

void Runtime::report(tsr_load_event event, tsr_status_code code, const std::string& path,
                     const std::string& plugin, const std::string& detail) {
  std::lock_guard<std::mutex> lock(mu_);
  report_.add(ReportEntry{event, code, path, plugin, detail});
}

size_t Runtime::report_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return report_.size();
}

const ReportEntry* Runtime::report_at(size_t index) const {
  std::lock_guard<std::mutex> lock(mu_);
  return report_.at(index);
}

void Runtime::set_observer(tsr_op_observer_fn fn, void* context) {
  std::lock_guard<std::mutex> lock(mu_);
  observer_.set(fn, context);
}

CustomOp* Runtime::find_custom_op(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  return custom_ops_.find(name);
}

CustomOp* Runtime::define_custom_op(const std::string& schema_text, tsr_shape_rule_fn shape,
                                    void* shape_context, const std::string& derivative,
                                    PluginRecord* by) {
  std::lock_guard<std::mutex> lock(mu_);
  return custom_ops_.define(this, schema_text, shape, shape_context, derivative, by);
}

}  // namespace tsr
