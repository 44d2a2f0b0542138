// tsr_op, the op handle, and OpHandleTable: a runtime's handles of the
// registry's ops (a custom op's handle lives in its CustomOp).
//
// The table is filled by the constructor and never changes: reads need no
// lock (Note [Runtime locking] in runtime.h).
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/tessera.h"

namespace tsr {
class Runtime;
struct OpDef;
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

class OpHandleTable {
 public:
  // One handle per registry op, seen by `runtime`.
  explicit OpHandleTable(Runtime* runtime);
  // The handle of registry op `index` (< kOpCount).
  const tsr_op* at(uint32_t index) const noexcept { return &handles_[index]; }

 private:
  std::vector<tsr_op> handles_;
};

}  // namespace tsr
