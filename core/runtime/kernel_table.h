// KernelTable: the plugin kernels bound to each registry op, per device type
// (a custom op keeps its own, CustomOp::kernels in runtime/custom_op.h).
//
// Synchronization (Note [Runtime locking] in runtime.h): find() is a
// lock-free read; set() and clear() are called with the runtime's mutex held.
// A replaced list is retired, not freed, until the runtime dies: a reader may
// still hold it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "registry/op_ids.h"
#include "tessera/plugin.h"
#include "tessera/tessera.h"

namespace tsr {

struct PluginRecord;

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

class KernelTable {
 public:
  KernelTable();
  ~KernelTable();
  KernelTable(const KernelTable&) = delete;
  KernelTable& operator=(const KernelTable&) = delete;

  // The kernels of registry op `op_index` (< kOpCount) on `device_type`, or
  // null (lock-free).
  const KernelList* find(uint32_t op_index, int32_t device_type) const noexcept {
    return table_[static_cast<size_t>(op_index) * TSR_DEVICE_TYPE_MAX + device_type].load(
        std::memory_order_acquire);
  }
  // Publishes `list` (owned from now on; null: none) and retires the old one.
  void set(uint32_t op_index, int32_t device_type, KernelList* list);
  // Frees every published list (the runtime's destructor).
  void clear();

 private:
  std::unique_ptr<std::atomic<const KernelList*>[]> table_;  // [op][device type]
  std::vector<std::unique_ptr<KernelList>> retired_;
};

}  // namespace tsr
