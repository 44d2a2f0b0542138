// The op table's row type (see op_table.cpp).
#pragma once

#include <vector>

#include "ops/registry.h"

namespace tsr {

struct OpRow {
  OpId id;
  const char* schema;
  tsr_op_kind kind;
  OpFn fn;
  OpId kernel_op;  // primitive whose kernels run this op; kNone for composites/views
};

const std::vector<OpRow>& op_table();

}  // namespace tsr
