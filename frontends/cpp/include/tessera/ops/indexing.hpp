// tessera/ops/indexing.hpp - typed wrappers of the indexing op family (core/ops/defs).
#pragma once

#include "tessera/ops.hpp"

namespace tessera {}  // namespace tessera
