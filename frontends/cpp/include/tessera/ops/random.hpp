// tessera/ops/random.hpp - typed wrappers of the random op family (core/ops/defs).
#pragma once

#include "tessera/ops.hpp"

namespace tessera {}  // namespace tessera
