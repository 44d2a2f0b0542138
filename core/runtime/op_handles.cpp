#include "runtime/op_handles.h"

#include "registry/registry.h"

namespace tsr {

OpHandleTable::OpHandleTable(Runtime* runtime) {
  const Registry& reg = Registry::get();
  handles_.resize(reg.size());
  for (uint32_t i = 0; i < reg.size(); ++i)
    handles_[i] = tsr_op{tsr_op::kAlive, runtime, i, &reg.op(static_cast<OpId>(i))};
}

}  // namespace tsr
