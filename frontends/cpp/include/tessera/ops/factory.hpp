// tessera/ops/factory.hpp - typed wrappers of the factory op family (core/ops/defs).
#pragma once

#include "tessera/ops.hpp"

namespace tessera {}  // namespace tessera
