// target.h - what the conformance suite judges in this process: one plugin
// file and one of its devices (Note [Conformance process model] in
// suite_main.cpp).
//
// The runtime is created on first use, with default plugin discovery off:
// it loads the plugin under test and, when that plugin is not the CPU
// plugin, the CPU plugin next to it as the host-side reference. Families
// that judge the plugin table itself (abi) never create the runtime, so in
// their process the plugin is loaded exactly once, by them.
#pragma once

#include <cstdint>
#include <string>

#include "tessera/tessera.h"

namespace tessera::conformance {

struct Target {
  std::string plugin_path;  // the plugin file under test (absolute)
  std::string device;       // "cpu:0"
  std::string cpu_plugin;   // the reference CPU plugin's file ("" = none found)
  // The collectives family's world (Note [Conformance collectives]): this
  // process is rank `rank` of `ranks`, meeting through the file store at
  // `rendezvous` ("" with one rank: a private file).
  int rank = 0;
  int ranks = 1;
  std::string rendezvous;
};

// The victim of collectives/KilledRankFailsTheOthersWithinTheTimeout
// (--victim FILE): joins rank 0 through FILE and exits 9 mid-collective.
[[noreturn]] void run_victim(const std::string& file);

// Set once by main() before any test runs.
void set_target(Target target);
const Target& target();

// The runtime holding the plugin under test (and the reference CPU plugin).
// Throws std::runtime_error naming the cause when the plugin fails to load
// or the device does not exist; a test that calls it fails with that text.
tsr_runtime* runtime();
// The device under test, parsed in runtime().
tsr_device device();
// Whether the device under test is the CPU (values then need no reference
// device).
bool device_is_cpu();
// tsr_device_get_properties of the device under test.
const tsr_device_properties& properties();

// ../share/tessera/conformance/golden_ops.json next to this program's
// directory when it exists (an installed suite), else "".
std::string installed_golden_file();

// Frees `status` and throws std::runtime_error("<what> failed: CODE: message")
// when it is not OK.
void check(tsr_status* status, const std::string& what);

}  // namespace tessera::conformance
