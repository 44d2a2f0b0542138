// PluginLoader: loading, validating, binding and unloading device plugins in
// one runtime (the steps are listed in plugin_loader.cpp). It holds nothing
// of its own: it updates the runtime's plugins, devices, kernel tables,
// custom ops and load report together under the runtime's mutex
// (Note [Runtime locking] in runtime.h).
#pragma once

#include <string>

namespace tsr {

class Runtime;
struct PluginRecord;

class PluginLoader {
 public:
  explicit PluginLoader(Runtime& runtime) : rt_(runtime) {}

  // Loads the plugin file `path`; the loaded plugin when it is loaded
  // already. Throws (and reports) what failed.
  PluginRecord* load(const std::string& path);
  // Loads every libtessera-*.so of `extra_path`, TESSERA_PLUGIN_PATH and the
  // tessera/ directory next to libtessera (TESSERA_PLUGINS narrows the
  // names); failures are only reported.
  void load_search_path(const char* extra_path);
  // Unloads `plugin`; throws INVALID_ARGUMENT when it is not loaded here and
  // FAILED_PRECONDITION while something it made is alive.
  void unload(PluginRecord* plugin);

 private:
  void bind_kernels(PluginRecord* plugin);
  void unbind_kernels(PluginRecord* plugin);
  void define_plugin_ops(PluginRecord* plugin);

  Runtime& rt_;
};

}  // namespace tsr
