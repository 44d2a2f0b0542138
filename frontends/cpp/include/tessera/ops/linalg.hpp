// tessera/ops/linalg.hpp - typed wrappers of the linalg op family (core/ops/defs).
#pragma once

#include "tessera/ops.hpp"

namespace tessera {}  // namespace tessera
