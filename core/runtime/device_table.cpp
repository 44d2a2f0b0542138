#include "runtime/device_table.h"

#include <cstdio>
#include <set>

#include "runtime/stream.h"
#include "util/error.h"

namespace tsr {

DeviceTable::DeviceTable() {
  type_ids_ = {{"cpu", TSR_DEVICE_CPU},
               {"meta", TSR_DEVICE_META},
               {"vulkan", TSR_DEVICE_VULKAN},
               {"cuda", TSR_DEVICE_CUDA},
               {"hip", TSR_DEVICE_HIP}};
  for (auto& row : table_)
    for (auto& cell : row) cell.store(nullptr, std::memory_order_relaxed);
}

void DeviceTable::add_meta_device(Runtime* runtime) {
  auto meta = std::make_unique<DeviceRecord>();
  meta->runtime = runtime;
  meta->device = tsr_device{TSR_DEVICE_META, 0};
  meta->is_meta = true;
  meta->label = "meta:0";
  meta->props.struct_size = sizeof(tsr_device_properties);
  meta->props.device = meta->device;
  std::snprintf(meta->props.name, sizeof meta->props.name, "meta (shapes only, no storage)");
  std::snprintf(meta->props.type_name, sizeof meta->props.type_name, "meta");
  std::snprintf(meta->props.plugin, sizeof meta->props.plugin, "core");
  meta->props.dtypes = TSR_DTYPE_MASK_ALL;
  meta->props.alignment = 64;
  meta->default_stream = new Stream();
  meta->default_stream->device = meta.get();
  meta->default_stream->is_default = true;
  meta_ = meta.get();
  table_[TSR_DEVICE_META][0].store(meta_, std::memory_order_release);
  records_.push_back(std::move(meta));
}

std::vector<DeviceRecord*> DeviceTable::listed() const {
  std::vector<DeviceRecord*> out = order_;
  out.push_back(meta_);
  return out;
}

std::string DeviceTable::type_name(int32_t type) const {
  for (auto& [name, id] : type_ids_)
    if (id == type) return name;
  return "type" + std::to_string(type);
}

int32_t DeviceTable::type_id(const std::string& name) const {
  auto it = type_ids_.find(name);
  return it == type_ids_.end() ? -1 : it->second;
}

int32_t DeviceTable::assign_type(const std::string& name) {
  auto it = type_ids_.find(name);
  if (it != type_ids_.end()) return it->second;
  std::set<int32_t> used;
  for (auto& [n, id] : type_ids_) used.insert(id);
  for (int32_t id = TSR_DEVICE_TYPE_FIRST_DYNAMIC; id < TSR_DEVICE_TYPE_MAX; ++id)
    if (!used.count(id)) {
      type_ids_[name] = id;
      return id;
    }
  fail(TSR_RESOURCE_EXHAUSTED, "no device type id left for device type '{}' (at most {} types)",
       name, TSR_DEVICE_TYPE_MAX - TSR_DEVICE_TYPE_FIRST_DYNAMIC);
}

DeviceRecord* DeviceTable::own(std::unique_ptr<DeviceRecord> record) {
  records_.push_back(std::move(record));
  return records_.back().get();
}

void DeviceTable::publish(DeviceRecord* d) {
  order_.push_back(d);
  table_[d->device.type][d->device.index].store(d, std::memory_order_release);
}

void DeviceTable::withdraw(DeviceRecord* d) {
  table_[d->device.type][d->device.index].store(nullptr, std::memory_order_release);
  std::erase(order_, d);
}

}  // namespace tsr
