// DeviceTable: a runtime's devices - the records it owns, the devices it
// lists (enumeration order), the lookup by tsr_device, and the device type
// names and ids.
//
// Invariant: records are never freed before the runtime (Invariants in
// runtime/device.h); a device of an unloaded plugin is withdrawn (no longer
// found or listed) but its record stays.
//
// Synchronization (Note [Runtime locking] in runtime.h): find() and meta()
// are lock-free; every other member is called with the runtime's mutex held.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/device.h"
#include "tessera/tessera.h"

namespace tsr {

class Runtime;

class DeviceTable {
 public:
  static constexpr int kMaxDevicesPerType = 64;

  DeviceTable();
  DeviceTable(const DeviceTable&) = delete;
  DeviceTable& operator=(const DeviceTable&) = delete;

  // The device `d` while it is published, else null (lock-free).
  DeviceRecord* find(tsr_device d) const noexcept {
    if (d.type < 0 || d.type >= TSR_DEVICE_TYPE_MAX || d.index < 0 || d.index >= kMaxDevicesPerType)
      return nullptr;
    return table_[d.type][d.index].load(std::memory_order_acquire);
  }
  // The built-in meta device (add_meta_device); valid for the runtime's life.
  DeviceRecord* meta() const noexcept { return meta_; }
  // Makes and publishes meta:0 of `runtime`: shapes without storage.
  void add_meta_device(Runtime* runtime);

  // The listed devices in enumeration order, meta last.
  std::vector<DeviceRecord*> listed() const;
  // Every record this runtime made, published or not; stable until it dies.
  const std::vector<std::unique_ptr<DeviceRecord>>& records() const noexcept { return records_; }

  // "cpu", a plugin's device type, or "type<N>" when `type` has no name.
  std::string type_name(int32_t type) const;
  // The id of device type `name`, or -1.
  int32_t type_id(const std::string& name) const;
  // The id of device type `name`, assigned when new; throws RESOURCE_EXHAUSTED
  // when every dynamic id is taken.
  int32_t assign_type(const std::string& name);

  // Takes ownership of a record being made; it is not found until publish().
  DeviceRecord* own(std::unique_ptr<DeviceRecord> record);
  // Makes `d` found and lists it last.
  void publish(DeviceRecord* d);
  // Makes `d` neither found nor listed (its plugin is being unloaded).
  void withdraw(DeviceRecord* d);

 private:
  std::vector<std::unique_ptr<DeviceRecord>> records_;
  std::vector<DeviceRecord*> order_;  // listed devices in enumeration order, meta aside
  DeviceRecord* meta_ = nullptr;
  std::array<std::array<std::atomic<DeviceRecord*>, kMaxDevicesPerType>, TSR_DEVICE_TYPE_MAX>
      table_{};
  std::map<std::string, int32_t> type_ids_;
};

}  // namespace tsr
