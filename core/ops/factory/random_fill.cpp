// random_fill: the one place random ops draw (ops/factory/random_fill.h).
#include "ops/factory/random_fill.h"

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ops/op_util.h"
#include "runtime/runtime.h"
#include "runtime/stream.h"
#include "tessera/sdk/philox.hpp"
#include "util/error.h"

namespace tsr {

namespace {

namespace philox = tessera::sdk::philox;

// TESSERA_RANDOM_FILL=host makes every fill take the host path, to check a
// plugin's random_fill against the reference bits (read on every fill).
bool force_host_fill() {
  const char* env = std::getenv("TESSERA_RANDOM_FILL");
  return env != nullptr && std::strcmp(env, "host") == 0;
}

}  // namespace

void random_fill(TensorImpl* out, GeneratorImpl* gen, int32_t distribution, double param0,
                 double param1, const char* op) {
  DeviceRecord* dev = out->device();
  if (dev->is_meta || out->numel == 0) return;
  philox::fill_spec spec;
  spec.distribution = distribution;
  spec.dtype = out->dtype;
  spec.param0 = param0;
  spec.param1 = param1;
  if (const char* why = philox::check(spec))
    fail(TSR_INVALID_ARGUMENT, "op '{}': cannot draw {} values ({}, {}) into {}: {}", op,
         philox::distribution_name(distribution), param0, param1, dtype_name(out->dtype), why);

  // Fills write contiguous outputs; other layouts go through a temporary so
  // the bits land in row-major order whatever the strides.
  TensorRef staging;
  TensorImpl* target = out;
  if (!out->contiguous) {
    staging = new_tensor(out->runtime, dev, out->dtype, out->ndim, out->sizes);
    target = staging.get();
  }
  gen->reserve(philox::blocks_for(spec, out->numel), &spec.seed, &spec.offset);

  const tsr_plugin_api& api = dev->plugin->api;
  if (api.random_fill != nullptr && !force_host_fill()) {
    Stream* stream = current_stream(dev);
    stream->check_sticky();
    tsr_tensor_desc desc = target->desc();
    tsr_random_fill_call call;
    std::memset(&call, 0, sizeof call);
    call.struct_size = sizeof call;
    call.device = dev->plugin_index;
    call.distribution = distribution;
    call.seed = spec.seed;
    call.offset = spec.offset;
    call.param0 = param0;
    call.param1 = param1;
    call.out = &desc;
    call.stream = stream->plugin_stream;
    tsr_status* st;
    try {
      st = api.random_fill(dev->plugin->context, &call);
    } catch (...) {
      st = tsr_status_create(TSR_INTERNAL,
                             "random_fill threw a C++ exception (plugins must return statuses)");
    }
    if (st) {
      tsr_status_code code = tsr_status_code_of(st);
      std::string msg = fmt::format("op '{}' on {} (plugin {} random_fill): {}", op, dev->label,
                                    dev->plugin->name, tsr_status_message(st));
      tsr_status_free(st);
      throw Error(code, msg);
    }
  } else {
    std::vector<unsigned char> host(static_cast<size_t>(target->numel) * target->itemsize());
    philox::fill(spec, host.data(), 0, target->numel);
    write_from_host(target, host.data());
  }
  if (target != out) copy_raw(out, target);
}

}  // namespace tsr
