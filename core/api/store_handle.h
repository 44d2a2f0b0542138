// The tsr_store handle (tessera.h): a checked pointer to a tsr::dist::Store,
// shared by the store and process-group entry points.
#pragma once

#include <cstdint>
#include <memory>

#include "distributed/store.h"

struct tsr_store {
  static constexpr uint64_t kMagic = 0x7473725f73746f72ull;  // "tsr_stor"
  uint64_t magic = kMagic;
  std::shared_ptr<tsr::dist::Store> impl;
};
