#include "runtime/kernel_table.h"

namespace tsr {

namespace {
constexpr size_t kCells = static_cast<size_t>(kOpCount) * TSR_DEVICE_TYPE_MAX;
}  // namespace

KernelTable::KernelTable() : table_(std::make_unique<std::atomic<const KernelList*>[]>(kCells)) {
  for (size_t i = 0; i < kCells; ++i) table_[i].store(nullptr, std::memory_order_relaxed);
}

KernelTable::~KernelTable() { clear(); }

void KernelTable::set(uint32_t op_index, int32_t device_type, KernelList* list) {
  auto& cell = table_[static_cast<size_t>(op_index) * TSR_DEVICE_TYPE_MAX + device_type];
  const KernelList* old = cell.exchange(list, std::memory_order_acq_rel);
  // Readers may still hold `old`: retire it until the runtime dies.
  if (old) retired_.emplace_back(const_cast<KernelList*>(old));
}

void KernelTable::clear() {
  for (size_t i = 0; i < kCells; ++i) delete table_[i].exchange(nullptr, std::memory_order_relaxed);
}

}  // namespace tsr
