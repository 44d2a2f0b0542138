// PluginSet: the records of every plugin a runtime loaded, loaded still or
// unloaded since.
//
// Invariant: records are never freed before the runtime (tensors, streams and
// kernels point at them, Note [Plugin lifetime] in runtime/device.h); an
// unloaded plugin's record is only marked `loaded = false`.
//
// Synchronization (Note [Runtime locking] in runtime.h): every member is
// called with the runtime's mutex held.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/device.h"

namespace tsr {

class PluginSet {
 public:
  // The loaded plugin from file `path` (canonical), or null.
  PluginRecord* loaded_from(const std::string& path) const;
  // The first loaded plugin, in load order, with `rec`'s name or device type,
  // or null.
  PluginRecord* conflicting(const PluginRecord& rec) const;
  // Takes ownership of a plugin that finished loading.
  PluginRecord* add(std::unique_ptr<PluginRecord> rec);
  // The loaded plugins in load order.
  std::vector<PluginRecord*> loaded() const;
  // Whether `plugin` is one of these records (loaded or not).
  bool contains(const PluginRecord* plugin) const;
  // Whether `plugin` is one of these records and loaded.
  bool is_loaded(const PluginRecord* plugin) const;
  // Every record, in load order.
  const std::vector<std::unique_ptr<PluginRecord>>& all() const noexcept { return records_; }
  // Frees the records, unloading their libraries (the runtime's destructor).
  void clear() { records_.clear(); }

 private:
  std::vector<std::unique_ptr<PluginRecord>> records_;
};

}  // namespace tsr
