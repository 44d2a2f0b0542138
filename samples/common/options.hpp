// samples/common/options.hpp - the command-line options every sample shares
// (--device, --seed, --threads, --quiet), registered on a CLI11 app, and
// their application to the runtime: the device is parsed by the runtime
// ("cpu", "vulkan:0", any plugin's type), the CPU plugin's threads are set
// and the default generator is seeded, so a run is reproducible from its
// command line.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

#include "tessera/tessera.hpp"

namespace samples {

struct CommonOptions {
  std::string device = "cpu";
  uint64_t seed = 0;
  int threads = 0;  // 0: the CPU plugin's default
  bool quiet = false;
};

inline void add_common_options(CLI::App& app, CommonOptions& options) {
  app.add_option("--device", options.device,
                 "Device to train on: cpu, vulkan, vulkan:0, ... (see `tessera devices`)")
      ->capture_default_str();
  app.add_option("--seed", options.seed, "Seed of the data, the initial weights and shuffling")
      ->capture_default_str();
  app.add_option("--threads", options.threads,
                 "Threads of the CPU plugin's kernels (0: its default, OMP_NUM_THREADS or the "
                 "core count)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_flag("--quiet", options.quiet, "Print only the final summary (for tests)");
}

// Seeds the default generator, sets the CPU threads and returns the device.
// Throws tessera::Error when the device is unknown; the message lists the
// devices there are.
inline tessera::Device apply_common_options(const CommonOptions& options) {
  tessera::manual_seed(options.seed);
  if (options.threads > 0) tessera::set_num_threads(options.threads);
  if (!tessera::has_device(options.device.c_str())) {
    std::string known;
    for (const tessera::Device& device : tessera::devices())
      known += (known.empty() ? "" : ", ") + device.str();
    tessera::detail::throw_error(TSR_NOT_FOUND, "argument '--device' = '" + options.device +
                                                    "' names no device of this runtime; use one "
                                                    "of: " +
                                                    known +
                                                    " (a plugin that failed to load is listed by "
                                                    "`tessera devices`)");
  }
  return tessera::Device(options.device);
}

}  // namespace samples
