// plugin.cpp - the CPU plugin's entry point and its tsr_plugin_api table.
//
// tsr_plugin_query is the SDK's query() (plugin_table.hpp): it checks the
// host's plugin ABI major version (logging both versions and returning NULL on
// a mismatch) and returns a static table. The entries are the static members
// of cpu_entries, which the SDK's install_entries (plugin_entries.hpp) turns
// into the table's noexcept slots: it validates the context and pointers, runs
// each member under its guard (exceptions become host statuses) and never lets
// anything cross the ABI. One device, cpu:0, a host device of the SDK
// (host_device.hpp): NULL streams mean the default stream and all work is
// synchronous.
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "comm/collectives.hpp"
#include "context.hpp"
#include "factory/random_fill.hpp"
#include "isa.hpp"
#include "kernels.hpp"
#include "tessera/plugin.h"
#include "tessera/sdk/host_device.hpp"
#include "tessera/sdk/plugin_entries.hpp"
#include "tessera/sdk/plugin_table.hpp"
#include "tessera/sdk/status.hpp"

namespace tessera::cpu {
namespace {

// ---- the "isa" option ----

// "isa": "auto" (the widest bodies the processor runs), "avx512", "avx2" (at
// most that level; refused where the processor lacks it) or "baseline" (SSE2
// loops only); isa.hpp.
void set_isa_option(tsr_plugin_context& ctx, const char* text) {
  isa_level level = isa_level::baseline;
  switch (sdk::choice_option(kPluginName, "isa", text, {"auto", "avx512", "avx2", "baseline"})) {
    case 0:
      level = detected_isa();
      break;
    case 1:
      if (!cpu_has_avx512()) {
        sdk::throw_status(TSR_FAILED_PRECONDITION,
                          "cpu plugin option 'isa' = 'avx512': this processor (or OS) lacks one "
                          "of AVX-512 F, BW, DQ, VL; use 'auto', 'avx2' or 'baseline'");
      }
      level = isa_level::avx512;
      break;
    case 2:
      if (!cpu_has_avx2_fma()) {
        sdk::throw_status(TSR_FAILED_PRECONDITION,
                          "cpu plugin option 'isa' = 'avx2': this processor lacks AVX2 or FMA; "
                          "use 'auto' or 'baseline'");
      }
      level = isa_level::avx2;
      break;
    default:
      break;
  }
  ctx.isa.store(static_cast<int>(level));
}

// cpu:0 is a host device (sdk/host_device.hpp): memory, streams, events and
// copies are the SDK's, the ones a vendor starts from.
struct cpu_traits {
  static constexpr const char* name = kPluginName;
  static constexpr int32_t device_count = 1;
  static constexpr size_t alignment = kAllocationAlignment;
};

// The plugin's entries (sdk/plugin_entries.hpp: the SDK checks the context and
// the pointers, runs each under its guard and writes the results).
struct cpu_entries : sdk::host_device<cpu_traits> {
  static const char* name() noexcept { return kPluginName; }

  static std::unique_ptr<tsr_plugin_context> init(const tsr_host_api& host) {
    auto context = std::make_unique<tsr_plugin_context>();
    context->host = &host;
    context->device = device_info::detect();
    context->threads.store(std::max(1, omp_get_max_threads()));
    context->isa.store(static_cast<int>(detected_isa()));
    context->matmul = std::make_unique<onednn_matmul>();
    if (const char* wrong = std::getenv("TESSERA_CPU_TEST_WRONG_KERNEL")) {
      context->wrong_kernel = wrong;
      if (context->wrong_kernel.ends_with(":nan")) {
        context->wrong_kernel.resize(context->wrong_kernel.size() - 4);
        context->wrong_nan = true;
      }
      const std::string message = std::string("TESSERA_CPU_TEST_WRONG_KERNEL is set: kernel '") +
                                  wrong + "' returns wrong values (a test switch; unset it)";
      if (host.log != nullptr) host.log(TSR_LOG_WARNING, "cpu", message.c_str());
    }
    return context;
  }

  static tsr_plugin_device_properties device_properties(tsr_plugin_context& ctx, int32_t device) {
    check_device("device_properties", device);
    return device_properties_of(ctx.device);
  }
  // No host_alloc_pinned: host memory is already what the device reads.

  // ---- options: "threads" (OpenMP threads) and "isa" ----

  static void set_option(tsr_plugin_context& ctx, const char* key, const char* value) {
    const char* text = value != nullptr ? value : "";
    if (std::strcmp(key, "isa") == 0) {
      set_isa_option(ctx, text);
      return;
    }
    if (std::strcmp(key, "threads") != 0) {
      sdk::throw_unknown_option(kPluginName, key, "'threads' and 'isa'");
    }
    const int threads = static_cast<int>(sdk::int_option(kPluginName, "threads", text, 1, 4096));
    ctx.threads.store(threads);
    omp_set_num_threads(threads);
  }
};

tsr_plugin_api make_table() noexcept {
  tsr_plugin_api api = sdk::plugin_table(kPluginName, "0.1.0", "cpu");
  sdk::install_entries<cpu_entries>(api);
  const auto kernels = kernel_entries();
  api.kernels = kernels.data();
  api.kernel_count = kernels.size();
  api.random_fill = random_fill;  // factory/random_fill.hpp (Note [Random mapping])
#if defined(TESSERA_CPU_HAVE_GLOO)
  api.collectives = collectives_table();  // comm/collectives.hpp: Gloo over TCP
#endif
  return api;
}

}  // namespace

}  // namespace tessera::cpu

extern "C" TSR_PLUGIN_EXPORT const tsr_plugin_api* tsr_plugin_query(
    const tsr_host_api* host) noexcept {
  return tessera::sdk::query(host, tessera::cpu::kPluginName, tessera::cpu::make_table);
}
