// Generators: handle validation (more in issue 3's random work).
#include "random/generator.h"

#include "ops/registry.h"
#include "util/error.h"

namespace tsr {

tsr_generator* check_generator(tsr_generator* g, Runtime* runtime, const char* name) {
  GeneratorImpl* impl = generator_impl(g);
  if (impl == nullptr || impl->magic != GeneratorImpl::kMagic)
    fail(TSR_INVALID_ARGUMENT,
         "argument '{}' is not a live generator handle; create one with tsr_generator_create or "
         "pass None for the default generator",
         name);
  if (impl->runtime != runtime)
    fail(TSR_INVALID_ARGUMENT,
         "argument '{}' is a generator of another runtime; create it in the op's runtime", name);
  return g;
}

}  // namespace tsr
