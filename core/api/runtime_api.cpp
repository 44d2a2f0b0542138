// tessera.h: runtime, plugins, load report, devices, memory stats.
#include <cstring>
#include <exception>
#include <mutex>

#include "api/guard.h"
#include "dispatch/op_call.h"
#include "registry/registry.h"
#include "runtime/runtime.h"
#include "runtime/stream.h"
#include "tessera/tessera.h"
#include "util/version.h"

using namespace tsr;

namespace {
PluginRecord* plugin_from_handle(const tsr_plugin* p, const char* arg) {
  if (p == nullptr) fail(TSR_INVALID_ARGUMENT, "argument '{}' is NULL; pass a loaded plugin", arg);
  return reinterpret_cast<PluginRecord*>(const_cast<tsr_plugin*>(p));
}
}  // namespace

extern "C" {

TSR_API const char* tsr_version_string(void) { return tsr::kVersionString; }

TSR_API tsr_status* tsr_runtime_create(const tsr_runtime_options* options,
                                       tsr_runtime** out_runtime) {
  return api_guard([&] {
    require_out(out_runtime, "out_runtime");
    tsr_runtime_options o{};
    if (options) {
      size_t n = options->struct_size ? options->struct_size : sizeof o;
      std::memcpy(&o, options, std::min(n, sizeof o));
    }
    Runtime* rt = new Runtime();
    if (!o.skip_default_plugins) rt->load_plugins_from_search_path(o.plugin_path);
    *out_runtime = to_handle(rt);
  });
}

TSR_API void tsr_runtime_destroy(tsr_runtime* runtime) {
  if (runtime == nullptr) return;
  try {
    Runtime* rt = runtime_from_handle(runtime, "runtime");
    runtime_forget_handle(rt);
    rt->release();
  } catch (...) {
  }
}

TSR_API tsr_status* tsr_runtime_default(tsr_runtime** out_runtime) {
  return api_guard([&] {
    require_out(out_runtime, "out_runtime");
    static std::once_flag once;
    static Runtime* rt = nullptr;
    std::call_once(once, [] {
      Runtime* r = new Runtime();
      r->load_plugins_from_search_path(nullptr);
      rt = r;  // lives until process exit (never destroyed: tensors in statics may outlive main)
    });
    *out_runtime = to_handle(rt);
  });
}

TSR_API tsr_status* tsr_plugin_load(tsr_runtime* runtime, const char* path,
                                    tsr_plugin** out_plugin) {
  return api_guard([&] {
    Runtime* rt = runtime_from_handle(runtime, "runtime");
    if (path == nullptr || *path == '\0')
      fail(TSR_INVALID_ARGUMENT, "argument 'path' is NULL or empty; pass a plugin file path");
    require_out(out_plugin, "out_plugin");
    PluginRecord* p = rt->load_plugin(path);
    *out_plugin = reinterpret_cast<tsr_plugin*>(p);
  });
}

TSR_API tsr_status* tsr_runtime_load_plugins(tsr_runtime* runtime, const char* extra_path) {
  return api_guard(
      [&] { runtime_from_handle(runtime, "runtime")->load_plugins_from_search_path(extra_path); });
}

TSR_API tsr_status* tsr_plugin_unload(tsr_runtime* runtime, tsr_plugin* plugin) {
  return api_guard([&] {
    Runtime* rt = runtime_from_handle(runtime, "runtime");
    PluginRecord* p = plugin_from_handle(plugin, "plugin");
    rt->unload_plugin(p);
  });
}

TSR_API tsr_status* tsr_runtime_plugin_count(const tsr_runtime* runtime, size_t* out_count) {
  return api_guard([&] {
    Runtime* rt = runtime_from_handle(runtime, "runtime");
    require_out(out_count, "out_count");
    *out_count = rt->plugins().size();
  });
}

TSR_API tsr_status* tsr_runtime_plugin_at(const tsr_runtime* runtime, size_t index,
                                          tsr_plugin** out_plugin) {
  return api_guard([&] {
    Runtime* rt = runtime_from_handle(runtime, "runtime");
    require_out(out_plugin, "out_plugin");
    auto plugins = rt->plugins();
    if (index >= plugins.size())
      fail(TSR_OUT_OF_RANGE, "argument 'index' = {} is out of range: {} plugin(s) loaded", index,
           plugins.size());
    *out_plugin = reinterpret_cast<tsr_plugin*>(plugins[index]);
  });
}

TSR_API tsr_status* tsr_plugin_get_info(const tsr_plugin* plugin, tsr_plugin_info* out_info) {
  return api_guard([&] {
    PluginRecord* p = plugin_from_handle(plugin, "plugin");
    require_out(out_info, "out_info");
    if (!p->runtime->is_loaded_plugin(p))
      fail(TSR_FAILED_PRECONDITION, "argument 'plugin' ('{}') has been unloaded", p->name);
    tsr_plugin_info info{};
    info.struct_size = sizeof info;
    info.name = p->name.c_str();
    info.version = p->version.c_str();
    info.path = p->path.c_str();
    info.device_type = p->device_type.c_str();
    info.abi_major = p->abi_major;
    info.abi_minor = p->abi_minor;
    info.device_count = static_cast<int32_t>(p->devices.size());
    info.kernels_bound = p->kernels_bound;
    info.kernels_rejected = p->kernels_rejected;
    size_t n = out_info->struct_size ? std::min(out_info->struct_size, sizeof info) : sizeof info;
    std::memcpy(out_info, &info, n);
    out_info->struct_size = n;
  });
}

TSR_API tsr_status* tsr_runtime_load_report_count(const tsr_runtime* runtime, size_t* out_count) {
  return api_guard([&] {
    Runtime* rt = runtime_from_handle(runtime, "runtime");
    require_out(out_count, "out_count");
    *out_count = rt->report_count();
  });
}

TSR_API tsr_status* tsr_runtime_load_report_at(const tsr_runtime* runtime, size_t index,
                                               tsr_load_report_entry* out_entry) {
  return api_guard([&] {
    Runtime* rt = runtime_from_handle(runtime, "runtime");
    require_out(out_entry, "out_entry");
    const ReportEntry* e = rt->report_at(index);
    if (!e)
      fail(TSR_OUT_OF_RANGE, "argument 'index' = {} is out of range: the report has {} entries",
           index, rt->report_count());
    tsr_load_report_entry out{};
    out.struct_size = sizeof out;
    out.event = e->event;
    out.code = e->code;
    out.path = e->path.c_str();
    out.plugin = e->plugin.c_str();
    out.detail = e->detail.c_str();
    size_t n = out_entry->struct_size ? std::min(out_entry->struct_size, sizeof out) : sizeof out;
    std::memcpy(out_entry, &out, n);
    out_entry->struct_size = n;
  });
}

TSR_API tsr_status* tsr_device_count(const tsr_runtime* runtime, size_t* out_count) {
  return api_guard([&] {
    Runtime* rt = runtime_from_handle(runtime, "runtime");
    require_out(out_count, "out_count");
    *out_count = rt->devices().size();
  });
}

TSR_API tsr_status* tsr_device_at(const tsr_runtime* runtime, size_t index,
                                  tsr_device* out_device) {
  return api_guard([&] {
    Runtime* rt = runtime_from_handle(runtime, "runtime");
    require_out(out_device, "out_device");
    auto devs = rt->devices();
    if (index >= devs.size())
      fail(TSR_OUT_OF_RANGE, "argument 'index' = {} is out of range: {} device(s)", index,
           devs.size());
    *out_device = devs[index]->device;
  });
}

TSR_API tsr_status* tsr_device_parse(const tsr_runtime* runtime, const char* text,
                                     tsr_device* out_device) {
  return api_guard([&] {
    Runtime* rt = runtime_from_handle(runtime, "runtime");
    require_out(out_device, "out_device");
    if (text == nullptr) fail(TSR_INVALID_ARGUMENT, "argument 'text' is NULL; pass e.g. \"cpu:0\"");
    std::string s(text);
    std::string type = s;
    int64_t index = 0;
    size_t colon = s.find(':');
    if (colon != std::string::npos) {
      type = s.substr(0, colon);
      std::string idx = s.substr(colon + 1);
      char* end = nullptr;
      index = std::strtoll(idx.c_str(), &end, 10);
      if (idx.empty() || *end != '\0' || index < 0)
        fail(TSR_INVALID_ARGUMENT,
             "argument 'text' = \"{}\": the device index must be a non-negative integer, as in "
             "\"cpu:0\"",
             s);
    }
    int32_t id = rt->device_type_id(type);
    if (id < 0)
      fail(TSR_NOT_FOUND,
           "argument 'text' = \"{}\": unknown device type '{}'; no loaded plugin "
           "provides it (see `tessera devices`)",
           s, type);
    tsr_device d{id, static_cast<int32_t>(std::min<int64_t>(index, INT32_MAX))};
    if (!rt->find_device(d))
      fail(TSR_NOT_FOUND,
           "argument 'text' = \"{}\": device {} does not exist in this runtime "
           "(see `tessera devices`)",
           s, rt->format_device(d));
    *out_device = d;
  });
}

TSR_API tsr_status* tsr_device_format(const tsr_runtime* runtime, tsr_device device, char* buffer,
                                      size_t capacity) {
  return api_guard([&] {
    Runtime* rt = runtime_from_handle(runtime, "runtime");
    if (buffer == nullptr || capacity == 0)
      fail(TSR_INVALID_ARGUMENT, "argument 'buffer' is NULL or 'capacity' is 0");
    std::string s = rt->format_device(device);
    std::snprintf(buffer, capacity, "%s", s.c_str());
  });
}

TSR_API tsr_status* tsr_device_get_properties(const tsr_runtime* runtime, tsr_device device,
                                              tsr_device_properties* out_properties) {
  return api_guard([&] {
    Runtime* rt = runtime_from_handle(runtime, "runtime");
    require_out(out_properties, "out_properties");
    DeviceRecord* d = rt->device(device, "device");
    tsr_device_properties p = d->props;
    if (d->plugin) {
      uint64_t free_b = 0, total_b = 0;
      tsr_status* st =
          d->plugin->api.memory_info(d->plugin->context, d->plugin_index, &free_b, &total_b);
      if (st == nullptr) {
        p.free_memory = free_b;
        if (total_b) p.total_memory = total_b;
      }
      tsr_status_free(st);
    }
    size_t n =
        out_properties->struct_size ? std::min(out_properties->struct_size, sizeof p) : sizeof p;
    std::memcpy(out_properties, &p, n);
    out_properties->struct_size = n;
  });
}

TSR_API tsr_status* tsr_device_memory_stats(tsr_runtime* runtime, tsr_device device,
                                            tsr_memory_stats* out_stats) {
  return api_guard([&] {
    Runtime* rt = runtime_from_handle(runtime, "runtime");
    require_out(out_stats, "out_stats");
    DeviceRecord* d = rt->device(device, "device");
    tsr_memory_stats s{};
    s.struct_size = sizeof s;
    if (d->allocator) s = d->allocator->stats();
    size_t n = out_stats->struct_size ? std::min(out_stats->struct_size, sizeof s) : sizeof s;
    std::memcpy(out_stats, &s, n);
    out_stats->struct_size = n;
  });
}

TSR_API tsr_status* tsr_device_empty_cache(tsr_runtime* runtime, tsr_device device) {
  return api_guard([&] {
    DeviceRecord* d = runtime_from_handle(runtime, "runtime")->device(device, "device");
    if (d->allocator) d->allocator->empty_cache();
  });
}

TSR_API tsr_status* tsr_device_reset_peak(tsr_runtime* runtime, tsr_device device) {
  return api_guard([&] {
    DeviceRecord* d = runtime_from_handle(runtime, "runtime")->device(device, "device");
    if (d->allocator) d->allocator->reset_peak();
  });
}

TSR_API tsr_status* tsr_device_set_option(tsr_runtime* runtime, tsr_device device, const char* key,
                                          const char* value) {
  return api_guard([&] {
    DeviceRecord* d = runtime_from_handle(runtime, "runtime")->device(device, "device");
    if (key == nullptr) fail(TSR_INVALID_ARGUMENT, "argument 'key' is NULL");
    if (value == nullptr) fail(TSR_INVALID_ARGUMENT, "argument 'value' is NULL");
    if (d->is_meta || d->plugin->api.set_option == nullptr)
      fail(TSR_UNIMPLEMENTED, "device {} takes no options (key '{}')", d->label, key);
    throw_if_error(d->plugin->api.set_option(d->plugin->context, key, value),
                   fmt::format("set_option('{}', '{}') on {}", key, value, d->label));
  });
}

TSR_API tsr_status* tsr_device_synchronize(tsr_runtime* runtime, tsr_device device) {
  return api_guard([&] {
    DeviceRecord* d = runtime_from_handle(runtime, "runtime")->device(device, "device");
    d->default_stream->synchronize();
    std::vector<Stream*> streams;
    {
      std::lock_guard<std::mutex> lock(d->streams_mu);
      for (Stream* s : d->streams)
        if (s->try_retain()) streams.push_back(s);
    }
    // Synchronize every stream, report the first error, and drop our references.
    std::exception_ptr first;
    for (Stream* s : streams) {
      try {
        s->synchronize();
      } catch (...) {
        if (!first) first = std::current_exception();
      }
      s->release();
    }
    if (first) std::rethrow_exception(first);
  });
}

}  // extern "C"
