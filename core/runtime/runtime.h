// Runtime: the registry of plugins, devices, kernels and the load report.
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
// Lookups on the hot path (device by id, kernel by op and device type) are
// lock-free reads of atomics; loading and unloading take `mu`.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "registry/op_ids.h"
#include "runtime/device.h"
#include "tessera/plugin.h"
#include "tessera/tessera.h"

namespace tsr {
class Runtime;
struct OpDef;
struct CustomOp;
}  // namespace tsr
// An op handle: op `index` (the registry's, or a custom op's: kOpCount and up)
// as seen by one runtime.
struct tsr_op {
  static constexpr uint32_t kAlive = 0x4f504844u;
  uint32_t magic;
  tsr::Runtime* runtime;
  uint32_t index;
  const tsr::OpDef* def;
};

namespace tsr {

struct OpDef;

// A plugin kernel bound to a registry op for one device type.
struct BoundKernel {
  PluginRecord* plugin;
  tsr_kernel_fn fn;
  tsr_kernel_size_fn size_fn;
  void* kernel_data;
  uint32_t flags;
  uint64_t dtype_masks[TSR_KERNEL_MAX_TENSOR_ARGS];
  uint64_t op_codes[2];  // family primitives: the function codes it implements
  // True when the kernel accepts these tensor-argument dtypes and, for a family
  // primitive, function code `code` (-1: not a family call).
  bool accepts(const tsr_dtype* dtypes, int32_t n, int32_t code) const {
    if (code >= 0 && (code >= 128 || !(op_codes[code / 64] & (uint64_t{1} << (code % 64)))))
      return false;
    for (int32_t i = 0; i < n && i < TSR_KERNEL_MAX_TENSOR_ARGS; ++i) {
      uint64_t mask = dtype_masks[i];
      if (mask != 0 && !(mask & (uint64_t{1} << dtypes[i]))) return false;
    }
    return true;
  }
};
struct KernelList {
  std::vector<BoundKernel> kernels;
};

struct ReportEntry {
  tsr_load_event event;
  tsr_status_code code;
  std::string path, plugin, detail;
};

class Runtime {
 public:
  static constexpr uint32_t kAlive = 0x5254494du;
  static constexpr int kMaxDevicesPerType = 64;

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
  DeviceRecord* find_device(tsr_device d) const noexcept {
    if (d.type < 0 || d.type >= TSR_DEVICE_TYPE_MAX || d.index < 0 || d.index >= kMaxDevicesPerType)
      return nullptr;
    return device_table_[d.type][d.index].load(std::memory_order_acquire);
  }
  // Throws NOT_FOUND / INVALID_ARGUMENT naming `arg`.
  DeviceRecord* device(tsr_device d, const char* arg) const;
  DeviceRecord* meta_device() const { return meta_; }
  std::vector<DeviceRecord*> devices() const;  // enumeration order, meta last
  std::string device_type_name(int32_t type) const;
  int32_t device_type_id(const std::string& name) const;  // -1 if unknown
  std::string format_device(tsr_device d) const;

  // Kernels
  const KernelList* kernels(uint32_t op_index, int32_t device_type) const noexcept {
    if (op_index >= kOpCount) return custom_kernels(op_index, device_type);
    return kernel_table_[static_cast<size_t>(op_index) * TSR_DEVICE_TYPE_MAX + device_type].load(
        std::memory_order_acquire);
  }

  // Plugins (runtime/plugin_loader.cpp)
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
    return index < kOpCount ? &op_handles_[index] : custom_handle(index);
  }
  const OpDef& op_def(OpId id) const noexcept { return *op_handle(static_cast<uint32_t>(id))->def; }
  size_t op_count() const noexcept {
    return kOpCount + custom_count_.load(std::memory_order_acquire);
  }

  // Custom ops (registry/custom_op.h). define_custom_op throws ALREADY_EXISTS when
  // the name is taken and INVALID_ARGUMENT for a schema a custom op cannot
  // have; `by` is the defining plugin (null: the application).
  static constexpr uint32_t kMaxCustomOps = 1024;
  CustomOp* find_custom_op(const std::string& name) const;
  CustomOp* define_custom_op(const std::string& schema_text, tsr_shape_rule_fn shape,
                             void* shape_context, const std::string& derivative, PluginRecord* by);

  // Op observer (tsr_runtime_set_op_observer); read on every call.
  struct Observer {
    tsr_op_observer_fn fn;
    void* context;
  };
  const Observer* observer() const noexcept { return observer_.load(std::memory_order_acquire); }
  void set_observer(tsr_op_observer_fn fn, void* context);

  uint64_t next_storage_id() { return next_storage_id_.fetch_add(1, std::memory_order_relaxed); }

  // Host callbacks given to plugins.
  const tsr_host_api* host_api() const { return &host_api_; }

 private:
  friend class PluginLoader;
  void maybe_delete() noexcept;
  std::atomic<bool> deleting_{false};
  DeviceRecord* add_device(PluginRecord* plugin, int32_t type, int32_t index);
  int32_t assign_device_type(const std::string& name);
  void bind_kernels(PluginRecord* plugin);
  void unbind_kernels(PluginRecord* plugin);
  void define_plugin_ops(PluginRecord* plugin);
  void set_kernels(uint32_t op_index, int32_t type, KernelList* list);
  const KernelList* custom_kernels(uint32_t op_index, int32_t device_type) const noexcept;
  const tsr_op* custom_handle(uint32_t index) const noexcept;
  CustomOp* define_custom_op_locked(const std::string& schema_text, tsr_shape_rule_fn shape,
                                    void* shape_context, const std::string& derivative,
                                    PluginRecord* by);

  mutable std::mutex mu_;
  std::vector<std::unique_ptr<PluginRecord>> plugins_;
  std::vector<std::unique_ptr<DeviceRecord>> device_records_;
  std::vector<DeviceRecord*> device_order_;  // active devices in enumeration order
  DeviceRecord* meta_ = nullptr;
  std::array<std::array<std::atomic<DeviceRecord*>, kMaxDevicesPerType>, TSR_DEVICE_TYPE_MAX>
      device_table_{};
  std::map<std::string, int32_t> device_type_ids_;
  std::unique_ptr<std::atomic<const KernelList*>[]> kernel_table_;  // [op][device type]
  std::vector<std::unique_ptr<KernelList>> retired_kernel_lists_;
  std::deque<ReportEntry> report_;
  std::vector<tsr_op> op_handles_;
  // Custom ops: published lock-free by index (custom_ops_[i] is op kOpCount +
  // i), owned by custom_owned_, found by name under mu_.
  std::unique_ptr<std::atomic<CustomOp*>[]> custom_ops_;
  std::atomic<uint32_t> custom_count_{0};
  std::vector<std::unique_ptr<CustomOp>> custom_owned_;
  std::map<std::string, CustomOp*> custom_by_name_;
  std::atomic<uint64_t> next_storage_id_{1};
  std::atomic<const Observer*> observer_{nullptr};
  std::vector<std::unique_ptr<Observer>> observers_;  // retired ones stay valid
  tsr_host_api host_api_{};
};

// Decodes a runtime handle; throws INVALID_ARGUMENT naming `arg`.
Runtime* runtime_from_handle(const tsr_runtime* handle, const char* arg);
// Makes `runtime`'s user handle invalid (tsr_runtime_destroy).
void runtime_forget_handle(const Runtime* runtime);
inline tsr_runtime* to_handle(Runtime* rt) { return reinterpret_cast<tsr_runtime*>(rt); }

}  // namespace tsr
