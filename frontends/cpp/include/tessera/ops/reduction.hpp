// tessera/ops/reduction.hpp - typed wrappers of the reduction op family (core/ops/defs).
#pragma once

#include "tessera/ops.hpp"

namespace tessera {}  // namespace tessera
