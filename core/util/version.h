// The library's version string ("0.1.0"), built from tessera.h's
// TSR_VERSION_MAJOR/MINOR/PATCH so it cannot drift from them: what
// tsr_version_string returns and what the host tells plugins
// (tsr_host_api::host_version).
#pragma once

#include "tessera/tessera.h"

#define TSR_VERSION_STR_(x) #x
#define TSR_VERSION_STR(x) TSR_VERSION_STR_(x)

namespace tsr {

inline constexpr const char kVersionString[] =
    TSR_VERSION_STR(TSR_VERSION_MAJOR) "." TSR_VERSION_STR(TSR_VERSION_MINOR) "." TSR_VERSION_STR(
        TSR_VERSION_PATCH);

}  // namespace tsr
