// standalone_target.cpp - the target of golden_ops_test and golden_grad_test:
// cpu:0 of the default runtime, gradchecks in float64, the source tree's
// golden_ops.json.
#include <string>

#include "conformance/golden/harness.h"

#ifndef TESSERA_GOLDEN_FILE
#error "TESSERA_GOLDEN_FILE must name golden_ops.json (set by conformance/CMakeLists.txt)"
#endif

namespace tessera::golden {

tsr_runtime* runtime() {
  static tsr_runtime* rt = [] {
    tsr_runtime* r = nullptr;
    check(tsr_runtime_default(&r), "tsr_runtime_default");
    return r;
  }();
  return rt;
}

tsr_device device_under_test() { return tsr_device{TSR_DEVICE_CPU, 0}; }

tsr_dtype grad_dtype() { return TSR_FLOAT64; }

std::string golden_file_path() { return TESSERA_GOLDEN_FILE; }

}  // namespace tessera::golden
