// Fuzz target: the schema parser (core/registry/schema.cpp, compiled into this
// target) and custom-op definition through the ABI (tsr_op_define).
// Properties: parsing either succeeds or throws tsr::Error with
// INVALID_ARGUMENT; the canonical text of a parsed schema parses again to the
// same canonical text; the ABI reports the canonical text for a defined op.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fuzz_support.h"
#include "registry/schema.h"
#include "util/error.h"

namespace {

tsr_status* same_shape(void*, const tsr_value* args, int32_t nargs, int32_t, int32_t* dtypes,
                       int32_t* ndims, int64_t* sizes) {
  (void)nargs;
  dtypes[0] = TSR_FLOAT32;
  ndims[0] = args[0].u.desc ? args[0].u.desc->ndim : 0;
  for (int32_t d = 0; d < ndims[0]; ++d) sizes[d] = args[0].u.desc->sizes[d];
  return nullptr;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::string canonical;
  try {
    canonical = tsr::parse_schema(text).canonical();
  } catch (const tsr::Error& e) {
    if (e.code() != TSR_INVALID_ARGUMENT) {
      std::fprintf(stderr, "fuzz: parse_schema threw %s: %s\n", tsr_status_code_name(e.code()),
                   e.what());
      std::abort();
    }
    return 0;
  }
  try {
    const std::string again = tsr::parse_schema(canonical).canonical();
    if (again != canonical) {
      std::fprintf(stderr, "fuzz: canonical schema is not stable:\n  %s\n  %s\n", canonical.c_str(),
                   again.c_str());
      std::abort();
    }
  } catch (const tsr::Error& e) {
    std::fprintf(stderr, "fuzz: the canonical form '%s' does not parse: %s\n", canonical.c_str(),
                 e.what());
    std::abort();
  }
  // Only names of the fuzz namespace: the runtime lives across inputs and
  // refuses a second definition of a name (ALREADY_EXISTS).
  if (text.rfind("fuzz::", 0) != 0 || text.find('\0') != std::string::npos) return 0;
  tsr_op_def def{};
  def.struct_size = sizeof def;
  def.schema = text.c_str();
  def.shape = same_shape;
  const tsr_op* op = nullptr;
  tsr_status* st = tsr_op_define(tsr_fuzz::runtime(), &def, &op);
  if (st == nullptr && canonical != tsr_op_schema(op)) {
    std::fprintf(stderr, "fuzz: tsr_op_schema gives '%s', the parser '%s'\n", tsr_op_schema(op),
                 canonical.c_str());
    std::abort();
  }
  tsr_fuzz::expect_handled(st, "tsr_op_define");
  return 0;
}
