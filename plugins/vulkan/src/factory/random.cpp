// random.cpp - tsr_plugin_api.random_fill: Philox4x32-10 fills on the
// device (shaders/factory/random.comp), bit-identical to the CPU plugin and the core's
// host fallback, which both run sdk/philox.hpp (Note [Random mapping]).
//
// The core calls random_fill for every random op on this device and has no
// fallback when it fails (core/random/generator.cpp turns the status into the
// op's error), so every fill sdk::philox::check accepts must succeed here
// with the reference bits:
//  - BITS, UNIFORM, BERNOULLI and RANDINT into every dtype are computed on
//    the device with the reference's integer, float and double operations;
//  - NORMAL into float32, float16 and bfloat16 is computed on the device with
//    the shader's own double log/sin/cos. Those can differ from the host
//    libm's by an ulp, which the rounding to a 24-bit or narrower dtype hides
//    except near a rounding boundary; the shader lists such elements (about
//    one in 4 million for float32) in a flag block and the host recomputes
//    them (fix_flagged). That costs one stream synchronisation per NORMAL
//    call - correct first, as the index family's bounds check;
//  - NORMAL into float64 shows every bit of the host libm's log, sin and cos,
//    which no shader reproduces, so it is filled on the host with
//    sdk::philox::fill and copied in stream order (exact, not fast).
// `out` must be contiguous, as the ABI says (the core stages other layouts).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <vector>

#include "kernel_util.hpp"
#include "stream.hpp"
#include "tessera/sdk/dtype_traits.hpp"
#include "tessera/sdk/half.hpp"
#include "tessera/sdk/philox.hpp"
#include "tessera/sdk/random_fill.hpp"
#include "tessera/sdk/strided.hpp"

namespace tessera::vulkan {
namespace {

namespace philox = sdk::philox;

const uint32_t kRandomSpirv[] = {
#include "random.spv.inc"
};
const Shader kRandom{"random", kRandomSpirv, sizeof kRandomSpirv, 0, true};

// random.comp's parameter block (std430, 136 bytes). Invariants: nblocks =
// philox::blocks_for(spec, numel); mode matches philox::lanes_of; the fields
// of other distributions are zero.
struct Params {
  uint64_t out_address = 0;
  uint64_t numel = 0;
  uint64_t nblocks = 0;
  uint64_t seed = 0;
  uint64_t offset = 0;
  int32_t distribution = 0;
  int32_t dtype = 0;
  int32_t mode = 0;   // 0 one lane, 1 two lanes, 2 normal pair
  int32_t clamp = 0;  // UNIFORM with param0 < param1
  float from_f = 0, to_f = 0, span_f = 0;
  uint32_t below_bits = 0;
  double d0 = 0, d1 = 0, d2 = 0, d3 = 0;
  uint64_t low = 0;
  uint64_t span = 0;          // RANDINT: 0 means 2^64
  uint64_t flag_address = 0;  // NORMAL: the Flag block
  uint32_t flag_capacity = 0;
  uint32_t pad_ = 0;
};
static_assert(offsetof(Params, distribution) == 40);
static_assert(offsetof(Params, from_f) == 56);
static_assert(offsetof(Params, d0) == 72);
static_assert(offsetof(Params, low) == 104);
static_assert(offsetof(Params, flag_address) == 120);
static_assert(sizeof(Params) == 136);

// The bits of T's largest value below `to` (T(to) itself when it rounded
// down), as philox.hpp's fill_uniform computes it; T is the out dtype.
template <class T>
uint32_t below_bits_of(float to) {
  T below = philox::detail::from_real<T>(to);
  if (philox::detail::as_double(below) >= static_cast<double>(to))
    below = philox::detail::step_down(below);
  if constexpr (std::is_same_v<T, float>) {
    uint32_t bits;
    std::memcpy(&bits, &below, sizeof bits);
    return bits;
  } else {
    return below.bits;
  }
}

Params params_for(const philox::fill_spec& s, const tsr_tensor_desc& out, int64_t n) {
  Params p;
  const auto* a = static_cast<const Allocation*>(out.buffer);
  p.out_address = a->address() + static_cast<uint64_t>(out.byte_offset);
  p.numel = static_cast<uint64_t>(n);
  p.nblocks = philox::blocks_for(s, n);
  p.seed = s.seed;
  p.offset = s.offset;
  p.distribution = s.distribution;
  p.dtype = s.dtype;
  const philox::lanes lanes = philox::lanes_of(s);
  p.mode = lanes == philox::lanes::one ? 0 : lanes == philox::lanes::two ? 1 : 2;
  switch (s.distribution) {
    case TSR_RANDOM_UNIFORM:
      if (s.dtype == TSR_FLOAT64) {
        p.d0 = s.param0;
        p.d1 = s.param1 - s.param0;
        p.d2 = s.param1;
        p.d3 = std::nextafter(s.param1, -std::numeric_limits<double>::infinity());
        p.clamp = s.param0 < s.param1;
      } else {
        p.from_f = static_cast<float>(s.param0);
        p.to_f = static_cast<float>(s.param1);
        p.span_f = p.to_f - p.from_f;
        p.clamp = p.from_f < p.to_f;
        p.below_bits = s.dtype == TSR_FLOAT32   ? below_bits_of<float>(p.to_f)
                       : s.dtype == TSR_FLOAT16 ? below_bits_of<sdk::half>(p.to_f)
                                                : below_bits_of<sdk::bfloat16>(p.to_f);
      }
      break;
    case TSR_RANDOM_NORMAL:
    case TSR_RANDOM_BERNOULLI:
      p.d0 = s.param0;
      p.d1 = s.param1;
      break;
    case TSR_RANDOM_RANDINT: {
      const philox::detail::int_range r = philox::detail::randint_range(s);
      p.low = static_cast<uint64_t>(r.low);
      p.span = r.span_minus_1 + 1;  // wraps to 0 for 2^64
      break;
    }
    default:
      break;
  }
  return p;
}

// random.comp's Flag block: how many NORMAL elements the shader could not
// vouch for, and the first kFlagCapacity of their indices.
constexpr uint32_t kFlagCapacity = 256;
constexpr size_t kFlagBytes = 8 + 8 * size_t{kFlagCapacity};

// The flag block's allocation. Released only once the stream has finished
// with it; when waiting fails it is leaked rather than freed under the GPU.
class FlagBlock {
 public:
  FlagBlock(Device& d, tsr_plugin_stream& s) : d_(d), s_(s), a_(d.allocator->allocate(kFlagBytes)) {
    try {
      std::lock_guard<std::mutex> lock(s.mu);
      VkCommandBuffer cb = s.record();
      vkCmdFillBuffer(cb, a_->block->buffer, a_->offset, 8, 0u);  // count = 0
      s.command_done();
    } catch (...) {
      d.allocator->release(a_);  // nothing was recorded that uses it
      throw;
    }
  }
  ~FlagBlock() {
    try {
      s_.synchronize();
      d_.allocator->release(a_);
    } catch (...) {
    }
  }
  FlagBlock(const FlagBlock&) = delete;
  FlagBlock& operator=(const FlagBlock&) = delete;
  const Allocation& allocation() const { return *a_; }

 private:
  Device& d_;
  tsr_plugin_stream& s_;
  Allocation* a_;
};

// Recomputes on the host the NORMAL elements the shader flagged (Note in
// random.comp's normal_element), or the whole fill when more were flagged
// than the block lists.
void fix_flagged(Device& d, tsr_plugin_stream& s, const philox::fill_spec& spec,
                 const tsr_tensor_desc& out, int64_t n, const FlagBlock& flag) {
  uint32_t count = 0;
  read_back(d, s, flag.allocation(), 0, &count, sizeof count);
  if (count == 0) return;
  auto& a = *static_cast<Allocation*>(out.buffer);
  const size_t item = sdk::element_size(spec.dtype);
  const auto base = static_cast<uint64_t>(out.byte_offset);
  if (count > kFlagCapacity) {
    std::vector<unsigned char> host(static_cast<size_t>(n) * item);
    philox::fill(spec, host.data(), 0, n);
    write_to(d, s, a, base, host.data(), host.size());
    return;
  }
  std::vector<uint64_t> indices(count);
  read_back(d, s, flag.allocation(), 8, indices.data(), count * sizeof(uint64_t));
  for (uint64_t i : indices) {
    // Element i is element i % 2 of the one-pair fill starting at block i / 2.
    philox::fill_spec one = spec;
    one.offset = spec.offset + i / 2;
    unsigned char pair[16] = {};
    const auto k = static_cast<int64_t>(i % 2);
    philox::fill(one, pair, k, k + 1);
    write_to(d, s, a, base + i * item, pair + k * static_cast<int64_t>(item), item);
  }
}

void fill(tsr_plugin_context& context, const tsr_random_fill_call* raw_call) {
  const tsr_random_fill_call& call = sdk::check_random_fill_call("vulkan", raw_call);
  check_validation(context);
  Device& d = device_at(context, call.device, "random_fill");
  const philox::fill_spec spec = sdk::random_fill_spec<sdk::memory::buffer>("vulkan", call);
  const tsr_tensor_desc* out = call.out;
  const int64_t n = sdk::numel(*out);
  if (n == 0) return;
  if (out->buffer == nullptr)
    sdk::throw_status(TSR_INVALID_ARGUMENT,
                      "vulkan random_fill: 'out' has %lld elements but no buffer",
                      static_cast<long long>(n));
  tsr_plugin_stream& s = call.stream != nullptr ? *call.stream : *d.default_stream;

  if (spec.distribution == TSR_RANDOM_NORMAL && spec.dtype == TSR_FLOAT64) {
    // Every bit of libm's log, sin and cos shows here: fill on the host.
    std::vector<double> host(static_cast<size_t>(n));
    philox::fill(spec, host.data(), 0, n);
    auto& a = *static_cast<Allocation*>(out->buffer);
    write_to(d, s, a, static_cast<uint64_t>(out->byte_offset), host.data(),
             host.size() * sizeof(double));
    return;
  }
  Params p = params_for(spec, *out, n);
  if (spec.distribution != TSR_RANDOM_NORMAL) {
    d.kernels->dispatch(&s, kRandom, &p, sizeof p, p.nblocks);
    return;
  }
  FlagBlock flag(d, s);
  p.flag_address = flag.allocation().address();
  p.flag_capacity = kFlagCapacity;
  d.kernels->dispatch(&s, kRandom, &p, sizeof p, p.nblocks);
  fix_flagged(d, s, spec, *out, n, flag);
}

tsr_status* random_fill(tsr_plugin_context* context, const tsr_random_fill_call* call) noexcept {
  const tsr_host_api* host = context != nullptr ? context->host : nullptr;
  return sdk::guard(host, [&] {
    if (context == nullptr)
      sdk::throw_status(TSR_INVALID_ARGUMENT, "vulkan random_fill: the plugin context is NULL");
    fill(*context, call);
  });
}

}  // namespace

RandomFillFn random_fill_kernel() { return random_fill; }

}  // namespace tessera::vulkan
