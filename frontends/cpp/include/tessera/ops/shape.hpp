// tessera/ops/shape.hpp - typed wrappers of the shape op family (core/ops/defs).
#pragma once

#include "tessera/ops.hpp"

namespace tessera {}  // namespace tessera
