// The op table's row type (see op_table.cpp): an op as data; its function
// is installed by the ops layer (Note [Op implementations are installed]).
#pragma once

#include <vector>

#include "registry/registry.h"

namespace tsr {

struct OpRow {
  OpId id;
  const char* schema;
  tsr_op_kind kind;
  OpId kernel_op;                 // whose kernels run this op (itself for primitives and fusable
                                  // composites); kNone for plain composites and views
  int32_t code;                   // function code for routed family ops (opcodes.h); -1 otherwise
  OpId functional = OpId::kNone;  // TSR_OUT: the functional op (out_variant.h)
};

const std::vector<OpRow>& op_table();

}  // namespace tsr
