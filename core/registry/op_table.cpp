// The op table: every op of the registry as one row of data, generated from
// the op definition files (defs/*.def). Order matches OpId by construction.
#include "registry/op_table.h"
#include "registry/op_impls.h"
#include "registry/out_variant.h"

namespace tsr {

const std::vector<OpRow>& op_table() {
  using namespace ops;
  static const std::vector<OpRow> rows = {
#define TSR_PRIMITIVE(id, fn, schema) {OpId::id, schema, TSR_OP_PRIMITIVE, fn, OpId::id, -1},
#define TSR_ROUTED(id, fn, kernel_op, code, schema) \
  {OpId::id, schema, TSR_OP_ROUTED, fn, OpId::kernel_op, code},
#define TSR_COMPOSITE(id, fn, schema) {OpId::id, schema, TSR_OP_COMPOSITE, fn, OpId::kNone, -1},
#define TSR_FUSABLE(id, fn, schema) {OpId::id, schema, TSR_OP_COMPOSITE, fn, OpId::id, -1},
#define TSR_VIEW(id, fn, schema) {OpId::id, schema, TSR_OP_VIEW, fn, OpId::kNone, -1},
#define TSR_OUT(id, functional, schema) \
  {OpId::id, schema, TSR_OP_COMPOSITE, out_variant, OpId::kNone, -1, OpId::functional},
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
