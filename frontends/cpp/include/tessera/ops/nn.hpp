// tessera/ops/nn.hpp - typed wrappers of the nn op family (core/ops/defs).
#pragma once

#include "tessera/ops.hpp"

namespace tessera {}  // namespace tessera
