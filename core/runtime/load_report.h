// LoadReport: what happened to every plugin a runtime tried to load, in order
// (tsr_runtime_load_report_*): loaded, failed, no device, kernel rejected,
// already loaded, unloaded.
//
// Synchronization (Note [Runtime locking] in runtime.h): every member is
// called with the runtime's mutex held. Entries are never removed and never
// move (a deque), so a pointer from at() stays valid for the runtime's life.
#pragma once

#include <cstddef>
#include <deque>
#include <string>
#include <utility>

#include "tessera/tessera.h"

namespace tsr {

struct ReportEntry {
  tsr_load_event event;
  tsr_status_code code;
  std::string path, plugin, detail;
};

class LoadReport {
 public:
  void add(ReportEntry entry) { entries_.push_back(std::move(entry)); }
  size_t size() const noexcept { return entries_.size(); }
  // Entry `index`, or null past the end.
  const ReportEntry* at(size_t index) const noexcept {
    return index < entries_.size() ? &entries_[index] : nullptr;
  }

 private:
  std::deque<ReportEntry> entries_;
};

}  // namespace tsr
