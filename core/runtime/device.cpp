// PluginEntry (device.h): the maker's half of Note [Unload against use].
#include <atomic>
#include <string>

#include "runtime/device.h"
#include "util/error.h"

namespace tsr {

PluginEntry::PluginEntry(PluginRecord* plugin, std::atomic<int64_t>& counter, const char* what,
                         const std::string& device_label)
    : counter_(&counter) {
  counter.fetch_add(1, std::memory_order_seq_cst);
  if (plugin == nullptr) return;
  uint8_t state = plugin->unload_state.load(std::memory_order_seq_cst);
  // An unload is counting: our count is visible to it or it is not; wait for
  // its decision rather than guess (a refused unload must not fail us).
  while (state == kUnloadDeciding) {
    plugin->unload_state.wait(kUnloadDeciding, std::memory_order_seq_cst);
    state = plugin->unload_state.load(std::memory_order_seq_cst);
  }
  if (state == kUnloadCommitted) {
    counter.fetch_sub(1, std::memory_order_seq_cst);
    counter_ = nullptr;
    fail(TSR_FAILED_PRECONDITION,
         "cannot make a {} on {}: its plugin '{}' is being unloaded by another thread; finish "
         "using a device before unloading its plugin",
         what, device_label, plugin->name);
  }
}

PluginEntry::~PluginEntry() {
  if (counter_ != nullptr) counter_->fetch_sub(1, std::memory_order_seq_cst);
}

}  // namespace tsr
