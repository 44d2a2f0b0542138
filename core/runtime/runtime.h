// Runtime: one runtime of the core - what tsr_runtime is. It composes the
// pieces that each keep one kind of state, and owns their lock:
//   PluginSet       plugin records (runtime/plugin_set.h); PluginLoader
//                   (runtime/plugin_loader.h) loads and unloads plugins
//   DeviceTable     devices, their lookup and device type ids (runtime/device_table.h)
//   KernelTable     plugin kernels per registry op and device type (runtime/kernel_table.h)
//   LoadReport      what happened to each plugin (runtime/load_report.h)
//   OpHandleTable   handles of the registry's ops (runtime/op_handles.h)
//   CustomOpTable   custom ops by index and name (runtime/custom_op_table.h)
//   OpObserverSlot  the op observer (runtime/op_observer.h)
// and its own lifetime (Note [Runtime lifetime]) and host callbacks.
//
// Invariant: device and plugin records are never freed before the runtime
// (pointers to them stay valid; unloaded ones are marked).
//
// Note [Runtime lifetime]
// ~~~~~~~~~~~~~~~~~~~~~~~
// The runtime itself
// lives while its user handle, a stream or an event of it is alive (`refs`) or
// any device has a live storage (`DeviceRecord::live_storages`), so tensors may
// outlive tsr_runtime_destroy. Whoever sees both reach
// zero deletes it; `deleting_` makes that happen once.
//
// Note [Runtime locking]
// ~~~~~~~~~~~~~~~~~~~~~~
// One mutex, `mu_`, guards every piece: the pieces have no lock of their own,
// and their members say which are called with `mu_` held. Loading and
// unloading a plugin hold it across every piece they change (plugins,
// devices, kernels, custom ops, report), so the slow paths see a plugin
// either not loaded or loaded with its devices and kernels. Lookups on the
// hot path (device by id, kernel by op and device type, op handle, custom op
// by index, the observer) are lock-free reads of atomics, published with
// release stores after what they point to is complete; what they point to
// is never freed before the runtime (replaced lists and observers are
// retired, not freed).
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "registry/op_ids.h"
#include "runtime/custom_op_table.h"
#include "runtime/device.h"
#include "runtime/device_table.h"
#include "runtime/kernel_table.h"
#include "runtime/load_report.h"
#include "runtime/op_handles.h"
#include "runtime/op_observer.h"
#include "runtime/plugin_set.h"
#include "tessera/plugin.h"
#include "tessera/tessera.h"

namespace tsr {

struct OpDef;
struct CustomOp;

class Runtime {
 public:
  static constexpr uint32_t kAlive = 0x5254494du;
  static constexpr int kMaxDevicesPerType = DeviceTable::kMaxDevicesPerType;

  Runtime();
  ~Runtime();

  uint32_t magic = kAlive;
  std::atomic<int64_t> refs{1};
  void retain() noexcept { refs.fetch_add(1, std::memory_order_relaxed); }
  // Drops a handle/stream/event reference; deletes the runtime once no
  // reference and no storage is left (Note [Runtime lifetime]).
  void release() noexcept;
  // Called by a storage's release when the runtime has no references left.
  void storage_released() noexcept {
    if (refs.load(std::memory_order_seq_cst) == 0) maybe_delete();
  }

  // Devices
  DeviceRecord* find_device(tsr_device d) const noexcept { return devices_.find(d); }
  // Throws NOT_FOUND / INVALID_ARGUMENT naming `arg`.
  DeviceRecord* device(tsr_device d, const char* arg) const;
  DeviceRecord* meta_device() const { return devices_.meta(); }
  std::vector<DeviceRecord*> devices() const;  // enumeration order, meta last
  std::string device_type_name(int32_t type) const;
  int32_t device_type_id(const std::string& name) const;  // -1 if unknown
  std::string format_device(tsr_device d) const;

  // Kernels
  const KernelList* kernels(uint32_t op_index, int32_t device_type) const noexcept {
    if (op_index >= kOpCount) return custom_ops_.kernels(op_index, device_type);
    return kernels_.find(op_index, device_type);
  }

  // Plugins (PluginLoader, runtime/plugin_loader.h)
  PluginRecord* load_plugin(const std::string& path);
  void load_plugins_from_search_path(const char* extra_path);
  void unload_plugin(PluginRecord* plugin);
  std::vector<PluginRecord*> plugins() const;
  bool is_loaded_plugin(const PluginRecord* plugin) const;

  // Load report
  void report(tsr_load_event event, tsr_status_code code, const std::string& path,
              const std::string& plugin, const std::string& detail);
  size_t report_count() const;
  const ReportEntry* report_at(size_t index) const;  // stable address

  // Ops: the registry's (index < kOpCount), then this runtime's custom ops.
  const tsr_op* op_handle(uint32_t index) const noexcept {
    return index < kOpCount ? op_handles_.at(index) : custom_ops_.handle(index);
  }
  const OpDef& op_def(OpId id) const noexcept { return *op_handle(static_cast<uint32_t>(id))->def; }
  size_t op_count() const noexcept { return kOpCount + custom_ops_.count(); }

  // Custom ops (runtime/custom_op.h). define_custom_op throws ALREADY_EXISTS when
  // the name is taken and INVALID_ARGUMENT for a schema a custom op cannot
  // have; `by` is the defining plugin (null: the application).
  static constexpr uint32_t kMaxCustomOps = CustomOpTable::kMaxCustomOps;
  CustomOp* find_custom_op(const std::string& name) const;
  CustomOp* define_custom_op(const std::string& schema_text, tsr_shape_rule_fn shape,
                             void* shape_context, const std::string& derivative, PluginRecord* by);

  // Op observer (tsr_runtime_set_op_observer); read on every call.
  using Observer = OpObserver;
  const Observer* observer() const noexcept { return observer_.get(); }
  void set_observer(tsr_op_observer_fn fn, void* context);

  uint64_t next_storage_id() { return next_storage_id_.fetch_add(1, std::memory_order_relaxed); }

  // Host callbacks given to plugins.
  const tsr_host_api* host_api() const { return &host_api_; }

 private:
  friend class PluginLoader;
  void maybe_delete() noexcept;
  std::atomic<bool> deleting_{false};

  // Note [Runtime locking]. The pieces are destroyed in reverse order: the
  // records of devices and plugins last.
  mutable std::mutex mu_;
  PluginSet plugins_;
  DeviceTable devices_;
  KernelTable kernels_;
  LoadReport report_;
  OpHandleTable op_handles_;
  CustomOpTable custom_ops_;
  std::atomic<uint64_t> next_storage_id_{1};
  OpObserverSlot observer_;
  tsr_host_api host_api_{};
};

// Decodes a runtime handle; throws INVALID_ARGUMENT naming `arg`.
Runtime* runtime_from_handle(const tsr_runtime* handle, const char* arg);
// Makes `runtime`'s user handle invalid (tsr_runtime_destroy).
void runtime_forget_handle(const Runtime* runtime);
inline tsr_runtime* to_handle(Runtime* rt) { return reinterpret_cast<tsr_runtime*>(rt); }

}  // namespace tsr
