// collectives.hpp - cpu:0's collectives (tsr_plugin_api.collectives; Note
// [Plugin collectives] in plugin.h): Gloo over its TCP transport, what
// PyTorch uses on CPU.
//
// A communicator is a Gloo context connected to every peer through the host's
// store (comm_init); collectives run synchronously on the calling thread, on
// host memory, one at a time per communicator (the host orders them; a second
// concurrent call waits). Every call runs within the communicator's timeout;
// a peer that vanished or a timeout is UNAVAILABLE / DEADLINE_EXCEEDED with
// Gloo's reason. comm_abort marks the communicator: later calls fail at once
// (Gloo cannot interrupt a call already blocked; it ends at the timeout).
#ifndef TESSERA_PLUGINS_CPU_COMM_COLLECTIVES_HPP_
#define TESSERA_PLUGINS_CPU_COMM_COLLECTIVES_HPP_

#include "tessera/plugin.h"

namespace tessera::cpu {

// The table, or NULL when the plugin was built without Gloo.
const tsr_plugin_collectives* collectives_table() noexcept;

}  // namespace tessera::cpu

#endif  // TESSERA_PLUGINS_CPU_COMM_COLLECTIVES_HPP_
