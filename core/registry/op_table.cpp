// The op table: every op of the registry as one row of data, generated from
// the op definition files (defs/*.def). Order matches OpId by construction.
// The functions are the ops layer's (ops/op_functions.cpp).
#include "registry/op_table.h"

#include "tessera/opcodes.h"

namespace tsr {

const std::vector<OpRow>& op_table() {
  static const std::vector<OpRow> rows = {
#define TSR_PRIMITIVE(id, fn, schema) {OpId::id, schema, TSR_OP_PRIMITIVE, OpId::id, -1},
#define TSR_ROUTED(id, fn, kernel_op, code, schema) \
  {OpId::id, schema, TSR_OP_ROUTED, OpId::kernel_op, code},
#define TSR_COMPOSITE(id, fn, schema) {OpId::id, schema, TSR_OP_COMPOSITE, OpId::kNone, -1},
#define TSR_FUSABLE(id, fn, schema) {OpId::id, schema, TSR_OP_COMPOSITE, OpId::id, -1},
#define TSR_VIEW(id, fn, schema) {OpId::id, schema, TSR_OP_VIEW, OpId::kNone, -1},
#define TSR_OUT(id, functional, schema) \
  {OpId::id, schema, TSR_OP_COMPOSITE, OpId::kNone, -1, OpId::functional},
#include "registry/defs/all.inc"
#undef TSR_PRIMITIVE
#undef TSR_ROUTED
#undef TSR_COMPOSITE
#undef TSR_FUSABLE
#undef TSR_VIEW
#undef TSR_OUT
  };
  return rows;
}

}  // namespace tsr
