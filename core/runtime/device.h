// DeviceRecord and PluginRecord: what the runtime knows about each loaded plugin
// and each of its devices.
//
// Invariants: a PluginRecord outlives every storage, stream and event made on
// its devices (Note [Plugin lifetime]: `live_objects` counts them and unload is
// refused while it is non-zero). Records are never freed before their runtime,
// so raw pointers to them held by tensors and streams stay valid; an unloaded
// plugin's record is only marked `loaded = false`.
//
// Note [Unload against use]
// ~~~~~~~~~~~~~~~~~~~~~~~~~
// Unload must not pass its "nothing is alive" check
// while another thread is between finding a device and making something on it
// (the plugin's context and library would be freed under that thread). Makers
// count the new object first (live_storages / live_objects) and then read
// `unloading`; unload sets `unloading` first and then reads the counts; all
// seq_cst. So either the unload sees the object and is refused, or the maker
// sees the unload and fails with FAILED_PRECONDITION - never both proceed.
// enter_plugin()/leave_plugin() below are the maker's half.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "runtime/caching_allocator.h"
#include "tessera/plugin.h"
#include "tessera/tessera.h"

namespace tsr {

class Runtime;
struct Stream;

// PluginRecord::unload_state values (Note [Unload against use]).
inline constexpr uint8_t kUnloadNone = 0;       // loaded and in use
inline constexpr uint8_t kUnloadDeciding = 1;   // unload is counting live objects
inline constexpr uint8_t kUnloadCommitted = 2;  // unload passed its check; going away

struct PluginRecord {
  Runtime* runtime = nullptr;
  std::string name, version, path, device_type;
  int32_t device_type_id = -1;
  uint32_t abi_major = 0, abi_minor = 0;
  tsr_plugin_api api{};  // zero past the plugin's struct_size
  tsr_plugin_context* context = nullptr;
  std::shared_ptr<void> library;         // the loaded shared library (Boost.DLL)
  std::atomic<int64_t> live_objects{0};  // streams and events (storages: per device)
  std::atomic<uint8_t> unload_state{0};  // kUnload*, Note [Unload against use]
  int32_t kernels_bound = 0, kernels_rejected = 0;
  std::vector<DeviceRecord*> devices;
  bool loaded = false;
};

struct DeviceRecord {
  Runtime* runtime = nullptr;
  PluginRecord* plugin = nullptr;  // null for the built-in meta device
  tsr_device device{};
  int32_t plugin_index = 0;  // index within the plugin
  tsr_device_properties props{};
  bool host_addressable = false;
  bool async = false;
  bool is_meta = false;
  std::unique_ptr<CachingAllocator> allocator;
  Stream* default_stream = nullptr;  // owned by the record
  std::string label;                 // "cpu:0"
  // Live storages on this device (Note [Runtime lifetime]): counted here rather
  // than as runtime references so a fresh tensor costs one atomic, not three.
  std::atomic<int64_t> live_storages{0};
  // Streams created on this device (not the default one), for
  // tsr_device_synchronize. Guarded by streams_mu.
  std::mutex streams_mu;
  std::set<Stream*> streams;
};

// The maker's half of Note [Unload against use], scoped: the constructor adds
// one to `counter` (a device's live_storages or its plugin's live_objects) and
// fails with FAILED_PRECONDITION (counter restored) if `plugin` (may be null:
// the meta device) is being unloaded; `what` names the thing being made. The
// destructor takes the one back unless keep() said the object now exists and
// holds it - so a maker that fails after entering (bad_alloc, a plugin error)
// never leaves the count raised, which would refuse every later unload.
class PluginEntry {
 public:
  PluginEntry(PluginRecord* plugin, std::atomic<int64_t>& counter, const char* what,
              const std::string& device_label);
  ~PluginEntry();
  PluginEntry(const PluginEntry&) = delete;
  PluginEntry& operator=(const PluginEntry&) = delete;
  // The made object holds the count from now on (released by its release()).
  void keep() noexcept { counter_ = nullptr; }

 private:
  std::atomic<int64_t>* counter_;
};

}  // namespace tsr
