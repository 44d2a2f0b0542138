// Random number generators: Philox4x32-10 state (seed, block offset) behind
// the tsr_generator handle. Invariants: `offset` only grows (by the blocks each
// fill consumes, Note [Random mapping] in plugin.h) until set_state or
// manual_seed; every access holds `mu`.
#pragma once

#include <cstdint>
#include <mutex>

#include "tessera/tessera.h"

namespace tsr {

class Runtime;

struct GeneratorImpl {
  static constexpr uint64_t kMagic = 0x54535247454e5231ull;  // "TSRGENR1"
  uint64_t magic = kMagic;
  Runtime* runtime = nullptr;  // borrowed; the generator must not outlive it
  tsr_device device{};
  bool is_default = false;  // owned by the runtime; tsr_generator_destroy refuses it
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

}  // namespace tsr
