// factory/random_fill.hpp - the CPU plugin's random_fill entry (plugin.h).
//
// Fills a contiguous cpu:0 tensor with the Philox4x32-10 mapping of Note
// [Random mapping] through sdk/philox.hpp, so its bits are exactly those of the
// core's host fallback (and of every other conforming device). Large fills
// are split between threads by element range; every split gives the same bits.
#ifndef TESSERA_PLUGINS_CPU_FACTORY_RANDOM_FILL_HPP_
#define TESSERA_PLUGINS_CPU_FACTORY_RANDOM_FILL_HPP_

#include "tessera/plugin.h"

namespace tessera::cpu {

// tsr_plugin_api.random_fill. Validates the call (struct size, device, a valid
// contiguous out descriptor, a distribution and parameters sdk/philox.hpp
// accepts for the out dtype); never throws.
tsr_status* random_fill(tsr_plugin_context* context, const tsr_random_fill_call* call) noexcept;

}  // namespace tessera::cpu

#endif  // TESSERA_PLUGINS_CPU_FACTORY_RANDOM_FILL_HPP_
