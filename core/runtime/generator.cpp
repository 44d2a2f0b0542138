// Generators: handles and the runtime's default generators. Random ops draw
// through ops/factory/random_fill.h; the application API is
// core/api/generator_api.cpp.
#include "runtime/generator.h"

#include <unordered_map>
#include <utility>
#include <vector>

#include "runtime/runtime.h"
#include "util/error.h"

namespace tsr {

namespace {

// The default generators of one runtime, one per device, and the seed the
// next one is created with (tsr_runtime_manual_seed changes it).
struct DefaultGenerators {
  uint64_t seed = TSR_GENERATOR_DEFAULT_SEED;
  std::vector<GeneratorImpl*> generators;
};

std::mutex g_defaults_mu;
std::unordered_map<const Runtime*, DefaultGenerators>& defaults_by_runtime() {
  static auto* table = new std::unordered_map<const Runtime*, DefaultGenerators>();
  return *table;  // never destroyed: runtimes may outlive static teardown
}

bool same_device(tsr_device a, tsr_device b) { return a.type == b.type && a.index == b.index; }

}  // namespace

GeneratorImpl* generator_from_handle(const tsr_generator* g, const char* arg) {
  auto* impl = reinterpret_cast<GeneratorImpl*>(const_cast<tsr_generator*>(g));
  if (impl == nullptr || impl->magic != GeneratorImpl::kMagic)
    fail(TSR_INVALID_ARGUMENT,
         "argument '{}' is not a live generator handle; create one with tsr_generator_create or "
         "get the device's default with tsr_generator_default",
         arg);
  return impl;
}

tsr_generator* check_generator(tsr_generator* g, Runtime* runtime, const char* name) {
  GeneratorImpl* impl = generator_impl(g);
  if (impl == nullptr || impl->magic != GeneratorImpl::kMagic)
    fail(TSR_INVALID_ARGUMENT,
         "argument '{}' is not a live generator handle; create one with tsr_generator_create or "
         "pass None for the default generator",
         name);
  if (impl->runtime != runtime)
    fail(TSR_INVALID_ARGUMENT,
         "argument '{}' is a generator of another runtime; create it in the op's runtime", name);
  return g;
}

namespace {
// Generator objects are recycled, never freed: a destroyed handle keeps
// pointing at a GeneratorImpl whose magic is cleared (until it is reused), so
// checks of stale handles read valid memory (the tensor handles' rule). The
// pool is bounded by the peak number of live generators.
std::mutex g_pool_mu;
std::vector<GeneratorImpl*>& pool() {
  static auto* free_list = new std::vector<GeneratorImpl*>();  // never destroyed
  return *free_list;
}
}  // namespace

GeneratorImpl* acquire_generator() {
  {
    std::lock_guard<std::mutex> lock(g_pool_mu);
    if (!pool().empty()) {
      GeneratorImpl* g = pool().back();
      pool().pop_back();
      g->runtime = nullptr;
      g->device = tsr_device{};
      g->is_default = false;
      g->seed = 0;
      g->offset = 0;
      g->magic = GeneratorImpl::kMagic;
      return g;
    }
  }
  return new GeneratorImpl();
}

void retire_generator(GeneratorImpl* g) noexcept {
  g->magic = 0;
  std::lock_guard<std::mutex> lock(g_pool_mu);
  try {
    pool().push_back(g);
  } catch (...) {  // out of memory: leak the object rather than free a live address
  }
}

GeneratorImpl* default_generator(Runtime* runtime, tsr_device device) {
  std::lock_guard<std::mutex> lock(g_defaults_mu);
  DefaultGenerators& table = defaults_by_runtime()[runtime];
  for (GeneratorImpl* g : table.generators)
    if (same_device(g->device, device)) return g;
  GeneratorImpl* g = acquire_generator();
  g->runtime = runtime;
  g->device = device;
  g->is_default = true;
  g->seed = table.seed;
  table.generators.push_back(g);
  return g;
}

void manual_seed_defaults(Runtime* runtime, uint64_t seed) {
  std::lock_guard<std::mutex> lock(g_defaults_mu);
  DefaultGenerators& table = defaults_by_runtime()[runtime];
  table.seed = seed;
  for (GeneratorImpl* g : table.generators) {
    std::lock_guard<std::mutex> glock(g->mu);
    g->seed = seed;
    g->offset = 0;
  }
}

void destroy_default_generators(const Runtime* runtime) noexcept {
  std::vector<GeneratorImpl*> doomed;
  {
    std::lock_guard<std::mutex> lock(g_defaults_mu);
    auto it = defaults_by_runtime().find(runtime);
    if (it == defaults_by_runtime().end()) return;
    doomed = std::move(it->second.generators);
    defaults_by_runtime().erase(it);
  }
  for (GeneratorImpl* g : doomed) retire_generator(g);
}

GeneratorImpl* resolve_generator(tsr_generator* g, Runtime* runtime, DeviceRecord* device,
                                 const char* op, const char* arg) {
  if (g == nullptr) return default_generator(runtime, device->device);
  GeneratorImpl* impl = generator_impl(g);
  if (!device->is_meta && !same_device(impl->device, device->device))
    fail(TSR_INVALID_ARGUMENT,
         "op '{}': argument '{}' is a generator of device {} but the result is on {}; create "
         "the generator on {} or pass None for that device's default generator",
         op, arg, runtime->format_device(impl->device), device->label, device->label);
  return impl;
}

}  // namespace tsr
