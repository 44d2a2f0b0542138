// The function of every op, by OpId, generated from the op definition files
// (registry/defs/*.def), and installed in the registry when libtessera loads
// (Note [Op implementations are installed], registry/registry.h).
#include "ops/op_impls.h"

namespace tsr {
namespace {

constexpr OpFn kFunctions[] = {
#define TSR_PRIMITIVE(id, fn, schema) ops::fn,
#define TSR_ROUTED(id, fn, kernel_op, code, schema) ops::fn,
#define TSR_COMPOSITE(id, fn, schema) ops::fn,
#define TSR_FUSABLE(id, fn, schema) ops::fn,
#define TSR_VIEW(id, fn, schema) ops::fn,
#define TSR_OUT(id, functional, schema) ops::out_variant,
#include "registry/defs/all.inc"
#undef TSR_PRIMITIVE
#undef TSR_ROUTED
#undef TSR_COMPOSITE
#undef TSR_FUSABLE
#undef TSR_VIEW
#undef TSR_OUT
};
static_assert(sizeof kFunctions / sizeof kFunctions[0] == kOpCount,
              "one function per OpId, in OpId order");

// Runs before any caller can reach the registry: static initialisers of
// libtessera run when it loads, and nothing in them builds the registry.
[[maybe_unused]] const bool kInstalled =
    install_op_functions({kFunctions, sizeof kFunctions / sizeof kFunctions[0], run_custom_op});

}  // namespace
}  // namespace tsr
