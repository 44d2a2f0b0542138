// factory/random_fill.cpp - the CPU plugin's random_fill (see random_fill.hpp).
#include "random_fill.hpp"

#include <cstddef>

#include "../kernels.hpp"
#include "../parallel.hpp"
#include "tessera/sdk/dtype_traits.hpp"
#include "tessera/sdk/kernel_args.hpp"
#include "tessera/sdk/philox.hpp"
#include "tessera/sdk/plugin_table.hpp"
#include "tessera/sdk/random_fill.hpp"
#include "tessera/sdk/status.hpp"
#include "tessera/sdk/strided.hpp"

namespace tessera::cpu {
namespace {

namespace philox = sdk::philox;

void fill(const tsr_plugin_context& context, const tsr_random_fill_call* raw_call) {
  const tsr_random_fill_call& call = sdk::check_random_fill_call(kPluginName, raw_call);
  sdk::check_device_index(kPluginName, "random_fill", call.device, 1);
  const philox::fill_spec spec = sdk::random_fill_spec(kPluginName, call);
  const tsr_tensor_desc* out = call.out;
  const int64_t n = sdk::numel(*out);
  const int64_t cost = spec.distribution == TSR_RANDOM_NORMAL ? 16 : 4;
  void* data = out->data;
  parallel_ranges(thread_count(context), n, cost,
                  [&](int64_t begin, int64_t end) { philox::fill(spec, data, begin, end); });
}

}  // namespace

tsr_status* random_fill(tsr_plugin_context* context, const tsr_random_fill_call* call) noexcept {
  const tsr_host_api* host = context != nullptr ? context->host : sdk::query_host();
  return sdk::guard(host, [&] {
    if (context == nullptr) {
      sdk::throw_status(TSR_INVALID_ARGUMENT, "cpu random_fill called with a NULL plugin context");
    }
    fill(*context, call);
  });
}

}  // namespace tessera::cpu
