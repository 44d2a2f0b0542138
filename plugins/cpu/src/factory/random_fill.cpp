// factory/random_fill.cpp - the CPU plugin's random_fill (see random_fill.hpp).
#include "random_fill.hpp"

#include <cstddef>

#include "../kernels.hpp"
#include "../parallel.hpp"
#include "tessera/sdk/dtype_traits.hpp"
#include "tessera/sdk/kernel_args.hpp"
#include "tessera/sdk/philox.hpp"
#include "tessera/sdk/plugin_table.hpp"
#include "tessera/sdk/status.hpp"
#include "tessera/sdk/strided.hpp"

namespace tessera::cpu {
namespace {

namespace philox = sdk::philox;

void fill(const tsr_plugin_context& context, const tsr_random_fill_call* call) {
  constexpr size_t needed = offsetof(tsr_random_fill_call, stream) + sizeof(tsr_plugin_stream*);
  if (call == nullptr) sdk::throw_status(TSR_INVALID_ARGUMENT, "cpu random_fill: call is NULL");
  if (call->struct_size < needed) {
    sdk::throw_status(TSR_INVALID_ARGUMENT,
                      "cpu random_fill: tsr_random_fill_call.struct_size is %zu, smaller than the "
                      "ABI 1.0 layout (%zu bytes)",
                      call->struct_size, needed);
  }
  if (call->device != 0) {
    sdk::throw_status(TSR_OUT_OF_RANGE,
                      "cpu random_fill: device index %d does not exist; the cpu plugin has one "
                      "device, index 0",
                      static_cast<int>(call->device));
  }
  const tsr_tensor_desc* out = call->out;
  if (!sdk::is_valid_desc(out)) {
    sdk::throw_status(TSR_INVALID_ARGUMENT,
                      "cpu random_fill: 'out' is %s (a NULL descriptor, a bad dtype or ndim, a "
                      "negative size, or NULL data with elements)",
                      out == nullptr ? "NULL" : "not a valid descriptor");
  }
  if (!sdk::is_contiguous(*out)) {
    sdk::throw_status(TSR_INVALID_ARGUMENT,
                      "cpu random_fill: 'out' must be contiguous (the host stages other layouts)");
  }
  philox::fill_spec spec;
  spec.distribution = call->distribution;
  spec.dtype = out->dtype;
  spec.seed = call->seed;
  spec.offset = call->offset;
  spec.param0 = call->param0;
  spec.param1 = call->param1;
  if (const char* why = philox::check(spec)) {
    sdk::throw_status(philox::supports_dtype(spec.distribution, spec.dtype) ? TSR_INVALID_ARGUMENT
                                                                            : TSR_UNIMPLEMENTED,
                      "cpu random_fill: cannot fill %s with %s values (param0 %g, param1 %g): %s",
                      sdk::dtype_name(out->dtype), philox::distribution_name(spec.distribution),
                      spec.param0, spec.param1, why);
  }
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
