// Loading, validating, binding and unloading device plugins (Boost.DLL).
//
// Every outcome lands in the load report; failures are returned as statuses and
// never stop the host. Validation order (each step names what failed):
//  1. the file exists and dlopen succeeds (the loader's dlerror text is kept);
//  2. it exports TSR_PLUGIN_ENTRY_SYMBOL and the query returns a table;
//  3. abi_major matches; struct_size covers the minor-0 table
//     (Note [Plugin ABI versioning] in plugin.h); only fields inside
//     struct_size are read;
//  4. name, device type and every mandatory slot are present;
//  5. the name and device type are not taken by another loaded plugin;
//  6. init succeeds (UNAVAILABLE = no device here, recorded as NO_DEVICE);
//  7. kernels are bound where their schema matches the registry exactly;
//     the others are listed as KERNEL_REJECTED.
#define BOOST_DLL_USE_STD_FS 1
#include <boost/dll/shared_library.hpp>

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <system_error>

#include "registry/registry.h"
#include "runtime/custom_op.h"
#include "runtime/plugin_loader.h"
#include "runtime/runtime.h"
#include "runtime/stream.h"
#include "tessera/plugin.h"
#include "util/error.h"

namespace tsr {

namespace fs = std::filesystem;

namespace {

// Runs a plugin entry, turning a C++ exception that escaped a non-conforming
// plugin into an INTERNAL status instead of letting it unwind through us.
template <typename F>
tsr_status* guarded(const std::string& plugin, const char* entry, F&& f) {
  try {
    return f();
  } catch (...) {
    return tsr_status_create(
        TSR_INTERNAL,
        fmt::format("plugin '{}' threw a C++ exception from {} (plugins must return statuses)",
                    plugin, entry)
            .c_str());
  }
}

bool valid_name(const char* s, bool allow_dash) {
  if (s == nullptr || *s == '\0') return false;
  for (const char* p = s; *p; ++p) {
    char c = *p;
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || (allow_dash && c == '-');
    if (!ok) return false;
  }
  return true;
}

std::string canonical_path(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::canonical(path, ec);
  return ec ? path : p.string();
}

// Directory of libtessera itself: plugins live in <that>/tessera.
std::string library_dir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&library_dir), &info) && info.dli_fname)
    return fs::path(info.dli_fname).parent_path().string();
  return {};
}

}  // namespace

PluginRecord* PluginLoader::load(const std::string& path_in) {
  const std::string path = canonical_path(path_in);
  auto refuse = [&](tsr_status_code code, const std::string& plugin, const std::string& msg,
                    tsr_load_event event = TSR_LOAD_FAILED) -> PluginRecord* {
    rt_.report(event, code, path, plugin, msg);
    throw Error(code, msg);
  };

  {
    std::lock_guard<std::mutex> lock(rt_.mu_);
    if (PluginRecord* p = rt_.plugins_.loaded_from(path)) {
      rt_.report_.add(ReportEntry{TSR_LOAD_ALREADY_LOADED, TSR_OK, path, p->name,
                                  "already loaded; the loaded plugin was returned"});
      return p;
    }
  }

  std::error_code ec;
  if (fs::is_directory(path, ec))
    return refuse(TSR_INVALID_ARGUMENT, "",
                  fmt::format("'{}' is a directory; pass a plugin file (or load a directory's "
                              "plugins with tsr_runtime_load_plugins)",
                              path_in));
  if (!fs::exists(path, ec))
    return refuse(TSR_NOT_FOUND, "",
                  fmt::format("plugin file '{}' does not exist; check the path or "
                              "TESSERA_PLUGIN_PATH",
                              path_in));

  auto lib = std::make_shared<boost::dll::shared_library>();
  try {
    lib->load(path,
              static_cast<boost::dll::load_mode::type>(RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE));
  } catch (const std::exception& e) {
    const char* why = e.what();
    return refuse(TSR_FAILED_PRECONDITION, "",
                  fmt::format("cannot load plugin '{}': {} (a library it needs may be missing: "
                              "check `ldd {}`)",
                              path, why, path));
  }
  if (!lib->has(TSR_PLUGIN_ENTRY_SYMBOL))
    return refuse(TSR_NOT_FOUND, "",
                  fmt::format("'{}' is not a Tessera plugin: it exports no symbol '{}' (declare "
                              "it extern \"C\" with TSR_PLUGIN_EXPORT)",
                              path, TSR_PLUGIN_ENTRY_SYMBOL));
  auto query = lib->get<const tsr_plugin_api*(const tsr_host_api*)>(TSR_PLUGIN_ENTRY_SYMBOL);

  const tsr_plugin_api* table = nullptr;
  try {
    table = query(&rt_.host_api_);
  } catch (...) {
    return refuse(
        TSR_INTERNAL, "",
        fmt::format("plugin '{}': {} threw a C++ exception", path, TSR_PLUGIN_ENTRY_SYMBOL));
  }
  if (table == nullptr)
    return refuse(
        TSR_FAILED_PRECONDITION, "",
        fmt::format("plugin '{}': {} returned no table (the plugin refused this host, "
                    "which speaks plugin ABI {}.{}; see its log messages)",
                    path, TSR_PLUGIN_ENTRY_SYMBOL, TSR_PLUGIN_ABI_MAJOR, TSR_PLUGIN_ABI_MINOR));
  constexpr size_t kVersionEnd = offsetof(tsr_plugin_api, abi_minor) + sizeof(uint32_t);
  if (table->struct_size < kVersionEnd)
    return refuse(TSR_FAILED_PRECONDITION, "",
                  fmt::format("plugin '{}': table struct_size {} is too small to hold the ABI "
                              "version (need at least {} bytes)",
                              path, table->struct_size, TSR_PLUGIN_API_MIN_SIZE));
  if (table->abi_major != TSR_PLUGIN_ABI_MAJOR)
    return refuse(
        TSR_FAILED_PRECONDITION, "",
        fmt::format("plugin '{}' was built for plugin ABI {}.{}, but this host speaks "
                    "{}.{}; rebuild it against Tessera's abi/ headers of major version {}",
                    path, table->abi_major, table->abi_minor, TSR_PLUGIN_ABI_MAJOR,
                    TSR_PLUGIN_ABI_MINOR, TSR_PLUGIN_ABI_MAJOR));
  if (table->struct_size < TSR_PLUGIN_API_MIN_SIZE)
    return refuse(
        TSR_FAILED_PRECONDITION, "",
        fmt::format("plugin '{}': table struct_size {} is smaller than the ABI {}.0 "
                    "table ({} bytes); set struct_size = sizeof(tsr_plugin_api)",
                    path, table->struct_size, TSR_PLUGIN_ABI_MAJOR, TSR_PLUGIN_API_MIN_SIZE));

  auto rec = std::make_unique<PluginRecord>();
  rec->runtime = &rt_;
  // Read only what both sides know (newer minors' extra fields are ignored).
  std::memcpy(&rec->api, table, std::min(table->struct_size, sizeof(tsr_plugin_api)));
  rec->api.struct_size = table->struct_size;
  rec->abi_major = table->abi_major;
  rec->abi_minor = table->abi_minor;
  rec->path = path;
  rec->library = lib;
  const tsr_plugin_api& api = rec->api;

  if (!valid_name(api.name, true))
    return refuse(TSR_FAILED_PRECONDITION, "",
                  fmt::format("plugin '{}': name '{}' is empty or not [a-z0-9_-]+", path,
                              api.name ? api.name : "(null)"));
  rec->name = api.name;
  if (!valid_name(api.device_type, false))
    return refuse(TSR_FAILED_PRECONDITION, rec->name,
                  fmt::format("plugin '{}' ({}): device_type '{}' is empty or not [a-z0-9_]+",
                              rec->name, path, api.device_type ? api.device_type : "(null)"));
  rec->device_type = api.device_type;
  rec->version = api.version ? api.version : "";

  struct Slot {
    const char* name;
    const void* fn;
  };
  const Slot mandatory[] = {
      {"init", reinterpret_cast<const void*>(api.init)},
      {"shutdown", reinterpret_cast<const void*>(api.shutdown)},
      {"device_count", reinterpret_cast<const void*>(api.device_count)},
      {"device_properties", reinterpret_cast<const void*>(api.device_properties)},
      {"alloc", reinterpret_cast<const void*>(api.alloc)},
      {"free", reinterpret_cast<const void*>(api.free)},
      {"memory_info", reinterpret_cast<const void*>(api.memory_info)},
      {"stream_create", reinterpret_cast<const void*>(api.stream_create)},
      {"stream_destroy", reinterpret_cast<const void*>(api.stream_destroy)},
      {"stream_synchronize", reinterpret_cast<const void*>(api.stream_synchronize)},
      {"stream_query", reinterpret_cast<const void*>(api.stream_query)},
      {"event_create", reinterpret_cast<const void*>(api.event_create)},
      {"event_destroy", reinterpret_cast<const void*>(api.event_destroy)},
      {"event_record", reinterpret_cast<const void*>(api.event_record)},
      {"stream_wait_event", reinterpret_cast<const void*>(api.stream_wait_event)},
      {"event_query", reinterpret_cast<const void*>(api.event_query)},
      {"event_synchronize", reinterpret_cast<const void*>(api.event_synchronize)},
      {"event_elapsed_ms", reinterpret_cast<const void*>(api.event_elapsed_ms)},
      {"copy_host_to_device", reinterpret_cast<const void*>(api.copy_host_to_device)},
      {"copy_device_to_host", reinterpret_cast<const void*>(api.copy_device_to_host)},
      {"copy_device_to_device", reinterpret_cast<const void*>(api.copy_device_to_device)},
  };
  for (const Slot& s : mandatory)
    if (s.fn == nullptr)
      return refuse(TSR_FAILED_PRECONDITION, rec->name,
                    fmt::format("plugin '{}' ({}): mandatory table slot '{}' is NULL; every slot "
                                "not marked (optional) in plugin.h must be set",
                                rec->name, path, s.name));
  if (api.kernel_count > 0 && api.kernels == nullptr)
    return refuse(TSR_FAILED_PRECONDITION, rec->name,
                  fmt::format("plugin '{}': kernel_count is {} but kernels is NULL", rec->name,
                              api.kernel_count));

  {
    std::lock_guard<std::mutex> lock(rt_.mu_);
    if (const PluginRecord* p = rt_.plugins_.conflicting(*rec)) {
      std::string msg =
          p->name == rec->name
              ? fmt::format(
                    "plugin name '{}' is already taken by '{}'; '{}' was not loaded (two files "
                    "claim one plugin: remove one of them from the search path)",
                    rec->name, p->path, path)
              : fmt::format(
                    "device type '{}' is already provided by plugin '{}' ({}); '{}' was not "
                    "loaded",
                    rec->device_type, p->name, p->path, path);
      rt_.report_.add(ReportEntry{TSR_LOAD_FAILED, TSR_ALREADY_EXISTS, path, rec->name, msg});
      throw Error(TSR_ALREADY_EXISTS, msg);
    }
  }

  tsr_status* st =
      guarded(rec->name, "init", [&] { return api.init(&rt_.host_api_, &rec->context); });
  if (st) {
    tsr_status_code code = tsr_status_code_of(st);
    std::string msg = fmt::format("plugin '{}' init: {}", rec->name, tsr_status_message(st));
    tsr_status_free(st);
    return refuse(code, rec->name, msg,
                  code == TSR_UNAVAILABLE ? TSR_LOAD_NO_DEVICE : TSR_LOAD_FAILED);
  }
  int32_t count = 0;
  st = guarded(rec->name, "device_count", [&] { return api.device_count(rec->context, &count); });
  if (st == nullptr && (count < 0 || count > Runtime::kMaxDevicesPerType))
    st = tsr_status_create(
        TSR_FAILED_PRECONDITION,
        fmt::format("device_count returned {} (must be 0..{})", count, Runtime::kMaxDevicesPerType)
            .c_str());
  if (st == nullptr && count == 0)
    st = tsr_status_create(TSR_UNAVAILABLE, "the plugin reports no devices on this machine");
  if (st) {
    tsr_status_code code = tsr_status_code_of(st);
    std::string msg = fmt::format("plugin '{}': {}", rec->name, tsr_status_message(st));
    tsr_status_free(st);
    api.shutdown(rec->context);
    return refuse(code, rec->name, msg,
                  code == TSR_UNAVAILABLE ? TSR_LOAD_NO_DEVICE : TSR_LOAD_FAILED);
  }

  std::lock_guard<std::mutex> lock(rt_.mu_);
  try {
    rec->device_type_id = rt_.devices_.assign_type(rec->device_type);
    for (int32_t i = 0; i < count; ++i) {
      tsr_plugin_device_properties pp{};
      pp.struct_size = sizeof pp;
      st = guarded(rec->name, "device_properties",
                   [&] { return api.device_properties(rec->context, i, &pp); });
      throw_if_error(st, fmt::format("plugin '{}' device_properties({})", rec->name, i));
      auto dev = std::make_unique<DeviceRecord>();
      dev->runtime = &rt_;
      dev->plugin = rec.get();
      dev->device = tsr_device{rec->device_type_id, i};
      dev->plugin_index = i;
      dev->label = rec->device_type + ":" + std::to_string(i);
      tsr_device_properties& p = dev->props;
      p.struct_size = sizeof p;
      p.device = dev->device;
      std::memcpy(p.name, pp.name, sizeof p.name);
      p.name[sizeof p.name - 1] = '\0';
      std::snprintf(p.type_name, sizeof p.type_name, "%s", rec->device_type.c_str());
      std::snprintf(p.plugin, sizeof p.plugin, "%s", rec->name.c_str());
      p.total_memory = pp.total_memory;
      p.dtypes = pp.dtypes;
      p.max_allocation = pp.max_allocation;
      p.features = pp.features;
      p.compute_units = pp.compute_units;
      p.alignment = pp.alignment ? pp.alignment : 1;
      dev->host_addressable = (pp.features & TSR_FEATURE_HOST_ADDRESSABLE) != 0;
      dev->async = (pp.features & TSR_FEATURE_ASYNC) != 0;
      dev->allocator = std::make_unique<CachingAllocator>(dev.get());
      dev->default_stream = new Stream();
      dev->default_stream->device = dev.get();
      dev->default_stream->is_default = true;
      rec->devices.push_back(rt_.devices_.own(std::move(dev)));
    }
  } catch (const Error& e) {
    for (DeviceRecord* d : rec->devices) {
      delete d->default_stream;
      d->default_stream = nullptr;
    }
    api.shutdown(rec->context);
    rt_.report_.add(ReportEntry{TSR_LOAD_FAILED, e.code(), path, rec->name, e.message()});
    throw;
  }
  rec->loaded = true;
  PluginRecord* out = rt_.plugins_.add(std::move(rec));
  for (DeviceRecord* d : out->devices) rt_.devices_.publish(d);
  rt_.report_.add(
      ReportEntry{TSR_LOAD_LOADED, TSR_OK, path, out->name,
                  fmt::format("loaded {} {} (plugin ABI {}.{}), {} device(s)", out->name,
                              out->version, out->abi_major, out->abi_minor, count)});
  bind_kernels(out);
  return out;
}

// Binds `plugin`'s kernel entries (the runtime's mutex held).
void PluginLoader::bind_kernels(PluginRecord* plugin) {
  const Registry& reg = Registry::get();
  std::vector<std::vector<BoundKernel>> per_op(reg.size());
  std::map<CustomOp*, std::vector<BoundKernel>> per_custom;
  const tsr_plugin_api& api = plugin->api;
  define_plugin_ops(plugin);
  for (size_t i = 0; i < api.kernel_count; ++i) {
    const tsr_kernel_entry& e = api.kernels[i];
    auto reject = [&](const std::string& why) {
      ++plugin->kernels_rejected;
      rt_.report_.add(ReportEntry{TSR_LOAD_KERNEL_REJECTED, TSR_FAILED_PRECONDITION, plugin->path,
                                  plugin->name, why});
    };
    if (e.struct_size < offsetof(tsr_kernel_entry, kernel_data) + sizeof(void*)) {
      reject(
          fmt::format("kernel entry #{}: struct_size {} is smaller than tsr_kernel_entry "
                      "({} bytes); not bound",
                      i, e.struct_size, sizeof(tsr_kernel_entry)));
      continue;
    }
    if (e.schema == nullptr || e.fn == nullptr) {
      reject(fmt::format("kernel entry #{}: schema or fn is NULL; not bound", i));
      continue;
    }
    Schema schema;
    try {
      schema = parse_schema(e.schema);
    } catch (const Error& err) {
      reject(fmt::format("kernel entry #{} not bound: {}", i, err.message()));
      continue;
    }
    const OpDef* op = reg.find(schema.full_name());
    if (op == nullptr) {
      // A custom op: defined by this plugin's op_defs, the application or
      // another plugin, with exactly this schema.
      CustomOp* custom = rt_.custom_ops_.find(schema.full_name());
      if (custom == nullptr) {
        reject(fmt::format(
            "kernel '{}' not bound: no op '{}' in the registry, and no custom op of that name "
            "(define it in the plugin's op_defs, plugin ABI 1.1, or with tsr_op_define first)",
            e.schema, schema.full_name()));
        continue;
      }
      op = &custom->def;
    }
    if (op->kernel_op != op->id) {
      reject(
          fmt::format("kernel '{}' not bound: '{}' is not a primitive; it runs through the "
                      "kernel of '{}'",
                      e.schema, op->name,
                      op->kernel_op == OpId::kNone ? std::string("its decomposition")
                                                   : reg.op(op->kernel_op).name));
      continue;
    }
    std::string canonical = schema.canonical();
    if (canonical != op->canonical) {
      reject(
          fmt::format("kernel for '{}' not bound: the plugin's schema '{}' differs from the "
                      "registry's '{}'; rebuild the plugin against the current op schema",
                      op->name, canonical, op->canonical));
      continue;
    }
    bool family = false;
    for (const SchemaArg& a : op->schema.args)
      if (a.name == "op" && a.kind == ArgKind::kInt) family = true;
    bool has_codes = e.struct_size >= offsetof(tsr_kernel_entry, op_codes) + sizeof e.op_codes;
    if (family && (!has_codes || (e.op_codes[0] == 0 && e.op_codes[1] == 0))) {
      reject(
          fmt::format("kernel for '{}' not bound: a family primitive's entry must list the "
                      "function codes it implements in op_codes (tessera/opcodes.h)",
                      op->name));
      continue;
    }
    if ((e.flags & TSR_KERNEL_TWO_PHASE) && e.size_fn == nullptr) {
      reject(
          fmt::format("kernel for '{}' not bound: TSR_KERNEL_TWO_PHASE without size_fn", op->name));
      continue;
    }
    BoundKernel bk{};
    bk.plugin = plugin;
    bk.fn = e.fn;
    bk.size_fn = e.size_fn;
    bk.kernel_data = e.kernel_data;
    bk.flags = e.flags;
    for (int k = 0; k < TSR_KERNEL_MAX_TENSOR_ARGS; ++k) bk.dtype_masks[k] = e.dtype_masks[k];
    bk.op_codes[0] = has_codes ? e.op_codes[0] : 0;
    bk.op_codes[1] = has_codes ? e.op_codes[1] : 0;
    if (op->custom)
      per_custom[op->custom].push_back(bk);
    else
      per_op[static_cast<size_t>(op->id)].push_back(bk);
    ++plugin->kernels_bound;
  }
  for (auto& [custom, kernels] : per_custom) {
    auto list = std::make_unique<KernelList>();
    list->kernels = std::move(kernels);
    custom->set_kernels(plugin->device_type_id, std::move(list));
  }
  for (size_t op = 0; op < per_op.size(); ++op) {
    if (per_op[op].empty()) continue;
    auto list = std::make_unique<KernelList>();
    list->kernels = std::move(per_op[op]);
    rt_.kernels_.set(static_cast<uint32_t>(op), plugin->device_type_id, list.release());
  }
}

void PluginLoader::unbind_kernels(PluginRecord* plugin) {
  for (uint32_t op = 0; op < kOpCount; ++op) {
    if (rt_.kernels_.find(op, plugin->device_type_id))
      rt_.kernels_.set(op, plugin->device_type_id, nullptr);
  }
  for (auto& custom : rt_.custom_ops_.owned()) {
    if (custom->kernels[plugin->device_type_id].load(std::memory_order_acquire))
      custom->set_kernels(plugin->device_type_id, nullptr);
    // Its shape rule and derivative name live in the plugin's image.
    if (custom->defined_by == plugin) custom->orphaned.store(true, std::memory_order_release);
  }
}

// Defines the custom ops of `plugin`'s op_defs (plugin ABI 1.1; the runtime's
// mutex held).
// An op the runtime already has with the identical schema keeps its
// definition; anything else wrong is listed in the load report.
void PluginLoader::define_plugin_ops(PluginRecord* plugin) {
  const tsr_plugin_api& api = plugin->api;
  if (api.struct_size < offsetof(tsr_plugin_api, op_def_count) + sizeof(size_t) ||
      api.op_defs == nullptr)
    return;
  for (size_t i = 0; i < api.op_def_count; ++i) {
    const tsr_plugin_op_def& d = api.op_defs[i];
    auto reject = [&](const std::string& why) {
      rt_.report_.add(ReportEntry{TSR_LOAD_KERNEL_REJECTED, TSR_FAILED_PRECONDITION, plugin->path,
                                  plugin->name, why});
    };
    if (d.struct_size < offsetof(tsr_plugin_op_def, derivative) + sizeof(const char*) ||
        d.schema == nullptr || d.shape == nullptr) {
      reject(
          fmt::format("op definition #{}: struct_size {} too small, or schema or shape NULL; "
                      "not defined",
                      i, d.struct_size));
      continue;
    }
    try {
      Schema schema = parse_schema(d.schema);
      if (const CustomOp* defined = rt_.custom_ops_.find(schema.full_name())) {
        if (defined->def.canonical != schema.canonical())
          reject(fmt::format("op definition '{}' not used: {} already defined '{}' as '{}'",
                             d.schema, defined->defined_by_name, schema.full_name(),
                             defined->def.canonical));
        continue;
      }
      rt_.custom_ops_.define(&rt_, d.schema, d.shape, d.shape_context,
                             d.derivative ? d.derivative : "", plugin);
    } catch (const Error& err) {
      reject(fmt::format("op definition #{} not defined: {}", i, err.message()));
    }
  }
}

void PluginLoader::unload(PluginRecord* plugin) {
  std::lock_guard<std::mutex> lock(rt_.mu_);
  if (!rt_.plugins_.contains(plugin) || !plugin->loaded)
    fail(TSR_INVALID_ARGUMENT, "argument 'plugin' is not a plugin loaded in this runtime");
  // See Note [Unload against use]: announce first, then count.
  // Makers that read kUnloadDeciding wait for the decision, so it is always
  // published (and waiters woken) before this function leaves.
  plugin->unload_state.store(kUnloadDeciding, std::memory_order_seq_cst);
  int64_t live = plugin->live_objects.load(std::memory_order_seq_cst);
  for (DeviceRecord* d : plugin->devices) live += d->live_storages.load(std::memory_order_seq_cst);
  plugin->unload_state.store(live > 0 ? kUnloadNone : kUnloadCommitted, std::memory_order_seq_cst);
  plugin->unload_state.notify_all();
  if (live > 0)
    fail(TSR_FAILED_PRECONDITION,
         "cannot unload plugin '{}': {} storage(s), stream(s) or event(s) it made are still "
         "alive; release every tensor, stream and event on its devices first",
         plugin->name, live);
  for (DeviceRecord* d : plugin->devices) {
    rt_.devices_.withdraw(d);
    d->allocator->empty_cache();
    delete d->default_stream;
    d->default_stream = nullptr;
  }
  unbind_kernels(plugin);
  plugin->api.shutdown(plugin->context);
  plugin->loaded = false;
  plugin->library.reset();
  rt_.report_.add(ReportEntry{TSR_LOAD_UNLOADED, TSR_OK, plugin->path, plugin->name, "unloaded"});
}

void PluginLoader::load_search_path(const char* extra_path) {
  std::vector<std::string> dirs;
  auto split = [&](const char* s) {
    if (!s) return;
    std::string all(s);
    size_t p = 0;
    while (p <= all.size()) {
      size_t q = all.find(':', p);
      if (q == std::string::npos) q = all.size();
      if (q > p) dirs.push_back(all.substr(p, q - p));
      p = q + 1;
    }
  };
  split(extra_path);
  split(std::getenv("TESSERA_PLUGIN_PATH"));
  // TESSERA_PLUGINS=cpu,vulkan: only these plugins (libtessera-<name>.so) are
  // loaded from the search path, as CUDA_VISIBLE_DEVICES narrows devices;
  // unset or empty, all of them. Explicit loads are not affected.
  std::set<std::string> allowed;
  if (const char* only = std::getenv("TESSERA_PLUGINS")) {
    std::string list(only);
    size_t p = 0;
    while (p <= list.size()) {
      size_t q = list.find(',', p);
      if (q == std::string::npos) q = list.size();
      if (q > p) allowed.insert("libtessera-" + list.substr(p, q - p) + ".so");
      p = q + 1;
    }
  }
  std::string here = library_dir();
  if (!here.empty()) dirs.push_back(here + "/tessera");
  std::set<std::string> seen_dirs, seen_files;
  for (const std::string& d : dirs) {
    std::error_code ec;
    std::string cd = canonical_path(d);
    if (!seen_dirs.insert(cd).second) continue;
    if (!fs::is_directory(cd, ec)) continue;
    std::vector<std::string> files;
    for (const auto& entry : fs::directory_iterator(cd, ec)) {
      std::string name = entry.path().filename().string();
      if (name.rfind("libtessera-", 0) == 0 && name.size() > 3 &&
          name.compare(name.size() - 3, 3, ".so") == 0 &&
          (allowed.empty() || allowed.count(name) != 0))
        files.push_back(entry.path().string());
    }
    std::sort(files.begin(), files.end());
    for (const std::string& f : files) {
      if (!seen_files.insert(canonical_path(f)).second) continue;
      try {
        load(f);
      } catch (const Error&) {
        // recorded in the load report
      }
    }
  }
}

}  // namespace tsr
