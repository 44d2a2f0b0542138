// tessera/ops/pointwise.hpp - typed wrappers of the pointwise op family (core/ops/defs).
#pragma once

#include "tessera/ops.hpp"

namespace tessera {}  // namespace tessera
