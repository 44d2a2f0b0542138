// tessera/ops/random.hpp - generators and the random op family (core/registry/defs).
//
//   tessera::manual_seed(0);                      // every default generator
//   tessera::Generator g(42);                     // a private cpu generator
//   auto x = tessera::rand({2, 3}, g);            // from g; g.offset() advanced
//   auto saved = g.get_state();                   // 24 opaque bytes
//   auto y = tessera::randn({4}, g);
//   g.set_state(saved);                           // randn({4}, g) repeats y
//
// A Generator is a shared handle, as LibTorch's: copies draw from the same
// stream, and the last copy destroys a private generator. Every random op
// takes an optional Generator; without one it draws from the default
// generator of the result's device (seeded by manual_seed). The same seed
// gives the same bits on every device (Note [Random mapping] in plugin.h).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "tessera/boxed_call.hpp"
#include "tessera/dims.hpp"
#include "tessera/error.hpp"
#include "tessera/factories.hpp"
#include "tessera/runtime.hpp"
#include "tessera/scalar.hpp"
#include "tessera/tensor.hpp"
#include "tessera/tensor_options.hpp"

namespace tessera {

class Generator {
 public:
  // A private generator on `device` with PyTorch's default seed.
  explicit Generator(Device device = kCPU) : Generator(TSR_GENERATOR_DEFAULT_SEED, device) {}
  // A private generator on `device` seeded with `seed`.
  explicit Generator(uint64_t seed, Device device = kCPU) {
    tsr_generator* created = nullptr;
    check(tsr_generator_create(default_runtime(), device.raw(), seed, &created));
    handle_ = std::shared_ptr<tsr_generator>(created, &tsr_generator_destroy);
  }
  // The default runtime's default generator of `device` (what ops use when
  // given none); the handle borrows it.
  static Generator default_generator(Device device = kCPU) {
    tsr_generator* g = nullptr;
    check(tsr_generator_default(default_runtime(), device.raw(), &g));
    Generator result{Unset{}};
    result.handle_ = std::shared_ptr<tsr_generator>(g, [](tsr_generator*) {});
    return result;
  }

  // Sets the seed and rewinds the stream (torch.Generator.manual_seed).
  Generator& manual_seed(uint64_t seed) {
    check(tsr_generator_manual_seed(get(), seed));
    return *this;
  }
  // Reseeds from a non-deterministic source and returns the seed.
  uint64_t seed() {
    uint64_t s = 0;
    check(tsr_generator_seed(get(), &s));
    return s;
  }
  uint64_t initial_seed() const {
    uint64_t s = 0;
    check(tsr_generator_initial_seed(get(), &s));
    return s;
  }
  // The next Philox block the generator hands out.
  uint64_t offset() const {
    uint64_t o = 0;
    check(tsr_generator_get_offset(get(), &o));
    return o;
  }
  Device device() const {
    tsr_device d{};
    check(tsr_generator_get_device(get(), &d));
    return Device(d);
  }
  // The state as opaque bytes (seed and offset; device-independent).
  std::vector<uint8_t> get_state() const {
    std::vector<uint8_t> state(TSR_GENERATOR_STATE_SIZE);
    size_t size = 0;
    check(tsr_generator_get_state(get(), state.data(), state.size(), &size));
    state.resize(size);
    return state;
  }
  // Restores bytes from get_state (refused when they are not a state).
  Generator& set_state(const std::vector<uint8_t>& state) {
    check(tsr_generator_set_state(get(), state.data(), state.size()));
    return *this;
  }

  tsr_generator* get() const noexcept { return handle_.get(); }

 private:
  // An empty generator for default_generator to fill (a tag type, so that
  // Generator(0) means seed 0, not this).
  struct Unset {};
  explicit Generator(Unset) noexcept {}
  std::shared_ptr<tsr_generator> handle_;
};

// The generator argument of the random ops: a Generator, an optional one, or
// none ({} / std::nullopt: the device's default generator). Borrows; valid
// for the call it is passed to. (A non-owning reference rather than a
// std::optional<Generator> parameter: GCC 12 reports a false
// -Wmaybe-uninitialized for every inlined empty optional<Generator>, which
// -Werror builds of any code calling these with the default would trip on.)
class GeneratorRef {
 public:
  GeneratorRef() noexcept = default;
  GeneratorRef(std::nullopt_t) noexcept {}                               // NOLINT
  GeneratorRef(const Generator& generator) noexcept : g_(&generator) {}  // NOLINT
  GeneratorRef(const std::optional<Generator>& generator) noexcept       // NOLINT
      : g_(generator ? &*generator : nullptr) {}
  const Generator* get() const noexcept { return g_; }
  explicit operator bool() const noexcept { return g_ != nullptr; }

 private:
  const Generator* g_ = nullptr;
};

// Seeds every default generator of the default runtime (torch.manual_seed).
inline void manual_seed(uint64_t seed) { check(tsr_runtime_manual_seed(default_runtime(), seed)); }

namespace detail {

inline tsr_value value(GeneratorRef generator) noexcept {
  tsr_value v{};
  if (generator) {
    v.tag = TSR_VALUE_GENERATOR;
    v.u.generator = generator.get()->get();
  }
  return v;
}

// Calls a `name(..., Generator? generator, <options>)` factory: `head` are the
// arguments before the generator.
template <OpName Name, size_t N>
Tensor random_factory(const tsr_value (&head)[N], GeneratorRef generator,
                      const TensorOptions& options) {
  tsr_value args[N + 5];
  for (size_t i = 0; i < N; ++i) args[i] = head[i];
  args[N] = value(generator);
  put_options(args + N + 1, options);
  return call(op<Name>(), args, N + 5);
}

}  // namespace detail

// ---- factories ----------------------------------------------------------------

// Uniform on [0, 1).
inline Tensor rand(IntList size, const TensorOptions& options = {}) {
  return detail::random_factory<"rand.generator">({detail::value(size)}, std::nullopt, options);
}
inline Tensor rand(IntList size, const Generator& generator, const TensorOptions& options = {}) {
  return detail::random_factory<"rand.generator">({detail::value(size)}, generator, options);
}

// Standard normal.
inline Tensor randn(IntList size, const TensorOptions& options = {}) {
  return detail::random_factory<"randn.generator">({detail::value(size)}, std::nullopt, options);
}
inline Tensor randn(IntList size, const Generator& generator, const TensorOptions& options = {}) {
  return detail::random_factory<"randn.generator">({detail::value(size)}, generator, options);
}

// Integers in [0, high) or [low, high); int64 unless the options say otherwise.
inline Tensor randint(int64_t high, IntList size, const TensorOptions& options = {}) {
  return detail::random_factory<"randint.generator">({detail::value(high), detail::value(size)},
                                                     std::nullopt, options);
}
inline Tensor randint(int64_t high, IntList size, const Generator& generator,
                      const TensorOptions& options = {}) {
  return detail::random_factory<"randint.generator">({detail::value(high), detail::value(size)},
                                                     generator, options);
}
inline Tensor randint(int64_t low, int64_t high, IntList size, const TensorOptions& options = {}) {
  return detail::random_factory<"randint.low_generator">(
      {detail::value(low), detail::value(high), detail::value(size)}, std::nullopt, options);
}
inline Tensor randint(int64_t low, int64_t high, IntList size, const Generator& generator,
                      const TensorOptions& options = {}) {
  return detail::random_factory<"randint.low_generator">(
      {detail::value(low), detail::value(high), detail::value(size)}, generator, options);
}

// A random permutation of 0 .. n-1; int64 unless the options say otherwise.
inline Tensor randperm(int64_t n, const TensorOptions& options = {}) {
  return detail::random_factory<"randperm.generator">({detail::value(n)}, std::nullopt, options);
}
inline Tensor randperm(int64_t n, const Generator& generator, const TensorOptions& options = {}) {
  return detail::random_factory<"randperm.generator">({detail::value(n)}, generator, options);
}

// Shaped like `self` (dtype and device default to self's).
inline Tensor rand_like(const Tensor& self) {
  const tsr_value args[1] = {detail::value(self)};
  return detail::call(detail::op<"rand_like">(), args, 1);
}
inline Tensor randn_like(const Tensor& self) {
  const tsr_value args[1] = {detail::value(self)};
  return detail::call(detail::op<"randn_like">(), args, 1);
}
inline Tensor randint_like(const Tensor& self, int64_t low, int64_t high) {
  const tsr_value args[3] = {detail::value(self), detail::value(low), detail::value(high)};
  return detail::call(detail::op<"randint_like.low_dtype">(), args, 3);
}

// ---- distributions with tensor parameters -------------------------------------------------

// N(mean, std) elementwise: mean + std * z, shaped like the tensor argument(s).
inline Tensor normal(const Tensor& mean, double std = 1.0, GeneratorRef generator = {}) {
  const tsr_value args[3] = {detail::value(mean), detail::value(std), detail::value(generator)};
  return detail::call(detail::op<"normal.Tensor_float">(), args, 3);
}
inline Tensor normal(double mean, const Tensor& std, GeneratorRef generator = {}) {
  const tsr_value args[3] = {detail::value(mean), detail::value(std), detail::value(generator)};
  return detail::call(detail::op<"normal.float_Tensor">(), args, 3);
}
inline Tensor normal(const Tensor& mean, const Tensor& std, GeneratorRef generator = {}) {
  const tsr_value args[3] = {detail::value(mean), detail::value(std), detail::value(generator)};
  return detail::call(detail::op<"normal.Tensor_Tensor">(), args, 3);
}
// N(mean, std) of `size`.
inline Tensor normal(double mean, double std, IntList size, GeneratorRef generator = {},
                     const TensorOptions& options = {}) {
  tsr_value args[8] = {detail::value(mean), detail::value(std), detail::value(size),
                       detail::value(generator)};
  detail::put_options(args + 4, options);
  return detail::call(detail::op<"normal.float_float">(), args, 8);
}

// 1 with probability p (elementwise; `p` holds probabilities), else 0, in p's dtype.
inline Tensor bernoulli(const Tensor& p, GeneratorRef generator = {}) {
  const tsr_value args[2] = {detail::value(p), detail::value(generator)};
  return detail::call(detail::op<"bernoulli">(), args, 2);
}
// Shaped like `self` (its dtype), 1 with probability p.
inline Tensor bernoulli(const Tensor& self, double p, GeneratorRef generator = {}) {
  const tsr_value args[3] = {detail::value(self), detail::value(p), detail::value(generator)};
  return detail::call(detail::op<"bernoulli.p">(), args, 3);
}

// `num_samples` category indices per row of the (unnormalised) probabilities
// `self` (1-d or 2-d), int64.
inline Tensor multinomial(const Tensor& self, int64_t num_samples, bool replacement = false,
                          GeneratorRef generator = {}) {
  const tsr_value args[4] = {detail::value(self), detail::value(num_samples),
                             detail::value(replacement), detail::value(generator)};
  return detail::call(detail::op<"multinomial">(), args, 4);
}

// ---- in place (each bumps self's version once) ---------------------------------------------

inline Tensor& normal_(Tensor& self, double mean = 0.0, double std = 1.0,
                       GeneratorRef generator = {}) {
  const tsr_value args[4] = {detail::value(self), detail::value(mean), detail::value(std),
                             detail::value(generator)};
  detail::call_in_place(detail::op<"normal_">(), args, 4);
  return self;
}
inline Tensor& uniform_(Tensor& self, double from = 0.0, double to = 1.0,
                        GeneratorRef generator = {}) {
  const tsr_value args[4] = {detail::value(self), detail::value(from), detail::value(to),
                             detail::value(generator)};
  detail::call_in_place(detail::op<"uniform_">(), args, 4);
  return self;
}
inline Tensor& bernoulli_(Tensor& self, double p = 0.5, GeneratorRef generator = {}) {
  const tsr_value args[3] = {detail::value(self), detail::value(p), detail::value(generator)};
  detail::call_in_place(detail::op<"bernoulli_.float">(), args, 3);
  return self;
}
inline Tensor& bernoulli_(Tensor& self, const Tensor& p, GeneratorRef generator = {}) {
  const tsr_value args[3] = {detail::value(self), detail::value(p), detail::value(generator)};
  detail::call_in_place(detail::op<"bernoulli_.Tensor">(), args, 3);
  return self;
}
// Integers in [from, to) (to = nullopt: up to the dtype's largest value).
inline Tensor& random_(Tensor& self, int64_t from, std::optional<int64_t> to,
                       GeneratorRef generator = {}) {
  const tsr_value args[4] = {detail::value(self), detail::value(from),
                             to ? detail::value(*to) : detail::none(), detail::value(generator)};
  detail::call_in_place(detail::op<"random_.from">(), args, 4);
  return self;
}
// Integers in [0, to).
inline Tensor& random_(Tensor& self, int64_t to, GeneratorRef generator = {}) {
  const tsr_value args[3] = {detail::value(self), detail::value(to), detail::value(generator)};
  detail::call_in_place(detail::op<"random_.to">(), args, 3);
  return self;
}
// Integers in [0, the dtype's largest value] (2^digits for floating dtypes).
inline Tensor& random_(Tensor& self, GeneratorRef generator = {}) {
  const tsr_value args[2] = {detail::value(self), detail::value(generator)};
  detail::call_in_place(detail::op<"random_">(), args, 2);
  return self;
}
inline Tensor& exponential_(Tensor& self, double lambd = 1.0, GeneratorRef generator = {}) {
  const tsr_value args[3] = {detail::value(self), detail::value(lambd), detail::value(generator)};
  detail::call_in_place(detail::op<"exponential_">(), args, 3);
  return self;
}

}  // namespace tessera
