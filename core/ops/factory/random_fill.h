// random_fill: how every random op draws its values from a generator
// (runtime/generator.h).
#pragma once

#include <cstdint>

#include "runtime/generator.h"
#include "tensor/tensor_impl.h"

namespace tsr {

// Fills `out` (any strides; row-major element order) with `distribution`
// (opcodes.h) drawn from `gen`: reserves the blocks from the generator, then
// runs the device plugin's random_fill, or - when the plugin has none, or
// TESSERA_RANDOM_FILL=host is set - computes the same bits on the host
// (sdk/philox.hpp) and copies them. Meta and empty outputs draw nothing. No
// version bump. `op` names the op in errors.
void random_fill(TensorImpl* out, GeneratorImpl* gen, int32_t distribution, double param0,
                 double param1, const char* op);

}  // namespace tsr
