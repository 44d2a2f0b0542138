// The application API of generators (tessera.h, "Generators"): handles
// validated, state saved and restored as TSR_GENERATOR_STATE_SIZE bytes.
#include <cstdint>
#include <cstring>
#include <mutex>
#include <random>

#include "api/guard.h"
#include "runtime/generator.h"
#include "runtime/runtime.h"
#include "util/error.h"

namespace {

// Little-endian fields of the saved state.
void store_le(unsigned char* p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}
uint64_t load_le(const unsigned char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

}  // namespace

using tsr::api_guard;
using tsr::fail;
using tsr::generator_from_handle;
using tsr::GeneratorImpl;
using tsr::require_out;

TSR_API tsr_status* tsr_generator_create(tsr_runtime* runtime, tsr_device device, uint64_t seed,
                                         tsr_generator** out_generator) {
  return api_guard([&] {
    tsr::Runtime* rt = tsr::runtime_from_handle(runtime, "runtime");
    require_out(out_generator, "out_generator");
    rt->device(device, "device");  // must exist
    GeneratorImpl* g = tsr::acquire_generator();
    g->runtime = rt;
    g->device = device;
    g->seed = seed;
    rt->retain();
    *out_generator = tsr::to_handle(g);
  });
}

TSR_API void tsr_generator_destroy(tsr_generator* generator) {
  if (generator == nullptr) return;
  GeneratorImpl* g = tsr::generator_impl(generator);
  if (g->magic != GeneratorImpl::kMagic || g->is_default) return;
  tsr::Runtime* rt = g->runtime;
  tsr::retire_generator(g);
  rt->release();
}

TSR_API tsr_status* tsr_generator_default(tsr_runtime* runtime, tsr_device device,
                                          tsr_generator** out_generator) {
  return api_guard([&] {
    tsr::Runtime* rt = tsr::runtime_from_handle(runtime, "runtime");
    require_out(out_generator, "out_generator");
    rt->device(device, "device");
    *out_generator = tsr::to_handle(tsr::default_generator(rt, device));
  });
}

TSR_API tsr_status* tsr_generator_manual_seed(tsr_generator* generator, uint64_t seed) {
  return api_guard([&] {
    GeneratorImpl* g = generator_from_handle(generator, "generator");
    std::lock_guard<std::mutex> lock(g->mu);
    g->seed = seed;
    g->offset = 0;
  });
}

TSR_API tsr_status* tsr_generator_seed(tsr_generator* generator, uint64_t* out_seed) {
  return api_guard([&] {
    GeneratorImpl* g = generator_from_handle(generator, "generator");
    require_out(out_seed, "out_seed");
    std::random_device device;
    const uint64_t seed = (static_cast<uint64_t>(device()) << 32) | device();
    {
      std::lock_guard<std::mutex> lock(g->mu);
      g->seed = seed;
      g->offset = 0;
    }
    *out_seed = seed;
  });
}

TSR_API tsr_status* tsr_generator_initial_seed(const tsr_generator* generator, uint64_t* out_seed) {
  return api_guard([&] {
    GeneratorImpl* g = generator_from_handle(generator, "generator");
    require_out(out_seed, "out_seed");
    std::lock_guard<std::mutex> lock(g->mu);
    *out_seed = g->seed;
  });
}

TSR_API tsr_status* tsr_generator_get_offset(const tsr_generator* generator, uint64_t* out_offset) {
  return api_guard([&] {
    GeneratorImpl* g = generator_from_handle(generator, "generator");
    require_out(out_offset, "out_offset");
    std::lock_guard<std::mutex> lock(g->mu);
    *out_offset = g->offset;
  });
}

TSR_API tsr_status* tsr_generator_get_device(const tsr_generator* generator,
                                             tsr_device* out_device) {
  return api_guard([&] {
    GeneratorImpl* g = generator_from_handle(generator, "generator");
    require_out(out_device, "out_device");
    *out_device = g->device;
  });
}

TSR_API tsr_status* tsr_generator_get_state(const tsr_generator* generator, void* buffer,
                                            size_t capacity, size_t* out_size) {
  return api_guard([&] {
    GeneratorImpl* g = generator_from_handle(generator, "generator");
    if (buffer == nullptr && capacity != 0)
      fail(TSR_INVALID_ARGUMENT,
           "argument 'buffer' is NULL but 'capacity' is {}; pass a buffer, or NULL and 0 to ask "
           "for the size",
           capacity);
    if (buffer != nullptr && capacity < TSR_GENERATOR_STATE_SIZE)
      fail(TSR_INVALID_ARGUMENT,
           "argument 'capacity' = {} is smaller than a generator state ({} bytes); pass a buffer "
           "of TSR_GENERATOR_STATE_SIZE bytes",
           capacity, TSR_GENERATOR_STATE_SIZE);
    if (buffer != nullptr) {
      unsigned char state[TSR_GENERATOR_STATE_SIZE];
      {
        std::lock_guard<std::mutex> lock(g->mu);
        store_le(state, tsr::kGeneratorStateMagic, 4);
        store_le(state + 4, tsr::kGeneratorStateVersion, 4);
        store_le(state + 8, g->seed, 8);
        store_le(state + 16, g->offset, 8);
      }
      std::memcpy(buffer, state, sizeof state);
    }
    if (out_size != nullptr) *out_size = TSR_GENERATOR_STATE_SIZE;
  });
}

TSR_API tsr_status* tsr_generator_set_state(tsr_generator* generator, const void* state,
                                            size_t size) {
  return api_guard([&] {
    GeneratorImpl* g = generator_from_handle(generator, "generator");
    if (state == nullptr)
      fail(TSR_INVALID_ARGUMENT,
           "argument 'state' is NULL; pass bytes from tsr_generator_get_state");
    if (size != TSR_GENERATOR_STATE_SIZE)
      fail(TSR_INVALID_ARGUMENT,
           "argument 'size' = {} is not the size of a generator state ({} bytes); pass exactly "
           "what tsr_generator_get_state wrote",
           size, TSR_GENERATOR_STATE_SIZE);
    const auto* bytes = static_cast<const unsigned char*>(state);
    const uint64_t magic = load_le(bytes, 4);
    const uint64_t version = load_le(bytes + 4, 4);
    if (magic != tsr::kGeneratorStateMagic)
      fail(TSR_INVALID_ARGUMENT,
           "argument 'state' is not a generator state (magic {:#010x}, expected {:#010x}); pass "
           "bytes from tsr_generator_get_state",
           magic, tsr::kGeneratorStateMagic);
    if (version != tsr::kGeneratorStateVersion)
      fail(TSR_INVALID_ARGUMENT,
           "argument 'state' has version {} but this library reads version {}; save the state "
           "with this library's tsr_generator_get_state",
           version, tsr::kGeneratorStateVersion);
    std::lock_guard<std::mutex> lock(g->mu);
    g->seed = load_le(bytes + 8, 8);
    g->offset = load_le(bytes + 16, 8);
  });
}

TSR_API tsr_status* tsr_runtime_manual_seed(tsr_runtime* runtime, uint64_t seed) {
  return api_guard([&] {
    tsr::Runtime* rt = tsr::runtime_from_handle(runtime, "runtime");
    tsr::manual_seed_defaults(rt, seed);
  });
}
