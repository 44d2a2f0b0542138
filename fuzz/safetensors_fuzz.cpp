// Fuzz target: the safetensors reader (tessera/serialize/safetensors.hpp).
// Any bytes either load or throw tessera::Error with DATA_LOSS (malformed) or
// RESOURCE_EXHAUSTED; a loaded file saves and loads back to the same tensors.
// Runs on the frontend's default runtime (TESSERA_PLUGINS=cpu is enough).
#include <cstdio>
#include <cstdlib>
#include <span>

#include "tessera/serialize/safetensors.hpp"
#include "tessera/tessera.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace st = tessera::serialize;
  try {
    const std::span<const uint8_t> bytes(data, size);
    (void)st::load_metadata(bytes);
    st::NamedTensors tensors = st::load(bytes);
    const std::vector<uint8_t> again = st::save(tensors);
    st::NamedTensors back = st::load(again);
    if (back.size() != tensors.size()) {
      std::fprintf(stderr, "fuzz: %zu tensors saved, %zu loaded back\n", tensors.size(),
                   back.size());
      std::abort();
    }
  } catch (const tessera::Error& e) {
    const tsr_status_code code = e.code();
    if (code != TSR_DATA_LOSS && code != TSR_RESOURCE_EXHAUSTED && code != TSR_INVALID_ARGUMENT) {
      std::fprintf(stderr, "fuzz: load threw %s: %s\n", tsr_status_code_name(code), e.what());
      std::abort();
    }
  }
  return 0;
}
