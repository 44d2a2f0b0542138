#include "runtime/plugin_set.h"

namespace tsr {

PluginRecord* PluginSet::loaded_from(const std::string& path) const {
  for (auto& p : records_)
    if (p->loaded && p->path == path) return p.get();
  return nullptr;
}

PluginRecord* PluginSet::conflicting(const PluginRecord& rec) const {
  for (auto& p : records_) {
    if (!p->loaded) continue;
    if (p->name == rec.name || p->device_type == rec.device_type) return p.get();
  }
  return nullptr;
}

PluginRecord* PluginSet::add(std::unique_ptr<PluginRecord> rec) {
  records_.push_back(std::move(rec));
  return records_.back().get();
}

std::vector<PluginRecord*> PluginSet::loaded() const {
  std::vector<PluginRecord*> out;
  for (auto& p : records_)
    if (p->loaded) out.push_back(p.get());
  return out;
}

bool PluginSet::contains(const PluginRecord* plugin) const {
  for (auto& p : records_)
    if (p.get() == plugin) return true;
  return false;
}

bool PluginSet::is_loaded(const PluginRecord* plugin) const {
  for (auto& p : records_)
    if (p.get() == plugin) return p->loaded;
  return false;
}

}  // namespace tsr
