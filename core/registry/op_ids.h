// Stable ids of the registry's ops, in registration order: one per line of the
// op definition files (core/registry/defs/*.def, see defs/README.md).
#pragma once

#include <cstdint>

namespace tsr {

enum class OpId : uint32_t {
#define TSR_PRIMITIVE(id, fn, schema) id,
#define TSR_ROUTED(id, fn, kernel_op, code, schema) id,
#define TSR_COMPOSITE(id, fn, schema) id,
#define TSR_FUSABLE(id, fn, schema) id,
#define TSR_OUT(id, functional, schema) id,
#define TSR_VIEW(id, fn, schema) id,
#include "registry/defs/all.inc"
#undef TSR_PRIMITIVE
#undef TSR_ROUTED
#undef TSR_COMPOSITE
#undef TSR_FUSABLE
#undef TSR_VIEW
#undef TSR_OUT
  kCount,
  kNone = 0xffffffffu
};

constexpr uint32_t kOpCount = static_cast<uint32_t>(OpId::kCount);

}  // namespace tsr
