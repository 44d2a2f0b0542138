// Random number generators: Philox4x32-10 state (seed, block offset) behind
// the tsr_generator handle and the runtime's default generator per device.
// Random ops draw through random_fill (ops/factory/random_fill.h).
//
// Invariants: `offset` only grows (by the blocks each fill consumes, Note
// [Random mapping] in plugin.h) until set_state or manual_seed; every access to
// seed/offset holds `mu`, so concurrent draws get disjoint blocks. A private
// generator holds a reference on its runtime (like a stream), so `runtime`
// stays valid while the handle lives; default generators are owned by the
// runtime's generator table (generator.cpp) and are never destroyed by users.
// Generators live in an object pool, so a destroyed handle still reads as
// memory with a cleared magic instead of a use-after-free.
#pragma once

#include <cstdint>
#include <mutex>

#include "tessera/tessera.h"
#include "util/object_pool.h"

namespace tsr {

class Runtime;
struct DeviceRecord;

// Note [Generator state blob]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Tsr_generator_get_state writes 24 bytes,
// little-endian: u32 magic "TSRG" (0x47525354), u32 version (1), u64 seed,
// u64 offset. set_state accepts exactly that size, magic and version.
inline constexpr uint32_t kGeneratorStateMagic = 0x47525354u;
inline constexpr uint32_t kGeneratorStateVersion = 1;

struct GeneratorImpl {
  static constexpr uint64_t kMagic = 0x54535247454e5231ull;  // "TSRGENR1"
  static void* operator new(size_t) { return ObjectPool<GeneratorImpl>::acquire(); }
  static void operator delete(void* p) { ObjectPool<GeneratorImpl>::recycle(p); }
  ~GeneratorImpl() { magic = 0; }

  uint64_t magic = kMagic;
  Runtime* runtime = nullptr;  // retained by private generators (see above)
  tsr_device device{};
  bool is_default = false;  // owned by the runtime; tsr_generator_destroy ignores it
  std::mutex mu;
  uint64_t seed = 0;
  uint64_t offset = 0;  // next Philox block

  // Reserves `blocks` blocks: returns the (seed, offset) to fill with and
  // advances the offset.
  void reserve(uint64_t blocks, uint64_t* out_seed, uint64_t* out_offset) {
    std::lock_guard<std::mutex> lock(mu);
    *out_seed = seed;
    *out_offset = offset;
    offset += blocks;
  }
};

inline GeneratorImpl* generator_impl(tsr_generator* g) {
  return reinterpret_cast<GeneratorImpl*>(g);
}
inline tsr_generator* to_handle(GeneratorImpl* g) { return reinterpret_cast<tsr_generator*>(g); }

// Decodes an application's generator handle; throws INVALID_ARGUMENT naming
// `arg` unless it is a live generator (of any runtime).
GeneratorImpl* generator_from_handle(const tsr_generator* g, const char* arg);

// The runtime's default generator of `device` (created on first use with the
// runtime's default seed). Borrowed; lives as long as the runtime.
GeneratorImpl* default_generator(Runtime* runtime, tsr_device device);

// Seeds every default generator of `runtime`, present and future (offset 0).
void manual_seed_defaults(Runtime* runtime, uint64_t seed);

// Frees `runtime`'s default generators. Called when the runtime is deleted;
// until then its default generators stay valid.
void destroy_default_generators(const Runtime* runtime) noexcept;

// A fresh generator object (magic set, fields zeroed) and its retirement;
// objects are recycled, never freed (stale handles stay safe to check).
GeneratorImpl* acquire_generator();
void retire_generator(GeneratorImpl* g) noexcept;

// Checks a `Generator?` argument of an op call (normalise_args): a live
// generator of `runtime`; throws INVALID_ARGUMENT naming argument `name`.
// Returns `g`.
tsr_generator* check_generator(tsr_generator* g, Runtime* runtime, const char* name);

// The generator a random op draws from for an output on `device`: `g` (a
// generator validated by normalise_args, or null for None -> the device's
// default). Throws INVALID_ARGUMENT naming op and argument when `g` belongs to
// another device.
GeneratorImpl* resolve_generator(tsr_generator* g, Runtime* runtime, DeviceRecord* device,
                                 const char* op, const char* arg = "generator");

}  // namespace tsr
