// random.cu - tsr_plugin_api.random_fill: the Philox4x32-10 element mapping
// of Note [Random mapping] (plugin.h), bit-identical to the CPU plugin and the
// core's host fallback (the reference is tessera/sdk/philox.hpp).
//
// One work item per Philox block: it computes the block once
// (philox::stream_block, constexpr and so callable on the device) and
// writes the elements that block feeds: 4 (one lane each), 2 (two lanes
// each, or a Box-Muller pair for NORMAL). The per-element value functions
// restate philox.hpp's detail:: ones (host-only there) as TSR_HD; the
// host-side parts (validation, RANDINT's range, UNIFORM's clamp value) call
// philox.hpp directly.
//
// Rounding: the float and double arithmetic is written with explicitly
// rounded operations (mul_rn/add_rn) so nvcc and hipcc cannot contract it
// into fused multiply-adds, which would change bits. NORMAL's log, sqrt, cos
// and sin come from the device's math library: sqrt is correctly rounded
// everywhere, but log/cos/sin may differ from the host's libm in the last
// place on a GPU, so NORMAL is bit-identical in the emulation and possibly
// 1 ulp away (before rounding to the out dtype) on a real device.
#include <cstddef>
#include <type_traits>

#include "context.hpp"
#include "dtypes.hpp"
#include "kernel_util.hpp"
#include "launch.hpp"
#include "tessera/sdk/dtype_traits.hpp"
#include "tessera/sdk/philox.hpp"
#include "tessera/sdk/random_fill.hpp"

namespace tessera::gpu {
namespace {

namespace philox = sdk::philox;

// Rounded float/double operations that are never fused.
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
TSR_HD inline float mul_rn(float a, float b) { return __fmul_rn(a, b); }
TSR_HD inline float add_rn(float a, float b) { return __fadd_rn(a, b); }
TSR_HD inline double mul_rn(double a, double b) { return __dmul_rn(a, b); }
TSR_HD inline double add_rn(double a, double b) { return __dadd_rn(a, b); }
#else
TSR_HD inline float mul_rn(float a, float b) { return a * b; }
TSR_HD inline float add_rn(float a, float b) { return a + b; }
TSR_HD inline double mul_rn(double a, double b) { return a * b; }
TSR_HD inline double add_rn(double a, double b) { return a + b; }
#endif

// philox::detail::from_real / from_integer as TSR_HD.
template <class T, class R>
TSR_HD inline T from_real(R value) {
  if constexpr (std::is_same_v<T, bool>)
    return value != 0;
  else if constexpr (is_reduced_float_v<T>)
    return T(value);
  else
    return static_cast<T>(value);
}
template <class T>
TSR_HD inline T from_integer(int64_t value) {
  if constexpr (std::is_same_v<T, bool>)
    return value != 0;
  else if constexpr (is_reduced_float_v<T>)
    return T(static_cast<double>(value));
  else
    return static_cast<T>(value);  // integers: modulo 2^bits
}
template <class T>
TSR_HD inline double as_double(T value) {
  if constexpr (is_reduced_float_v<T>)
    return static_cast<double>(static_cast<float>(value));
  else
    return static_cast<double>(value);
}

// The n elements of a fill; the block of work item j is stream_block(seed,
// offset + j).
struct FillStream {
  void* data;
  int64_t n;
  uint64_t seed, offset;
  TSR_HD philox::block at(int64_t j) const {
    return philox::stream_block(seed, offset + static_cast<uint64_t>(j));
  }
};

// UNIFORM into float16/bfloat16/float32: 32-bit uniforms in float.
template <class T>
struct UniformFloatOp {
  FillStream s;
  float from, span;
  bool clamp;
  double to;
  T below;  // the largest T below `to`
  TSR_HD void operator()(int64_t j) const {
    const philox::block b = s.at(j);
    T* out = static_cast<T*>(s.data);
    for (int k = 0; k < 4; ++k) {
      const int64_t i = 4 * j + k;
      if (i >= s.n) return;
      const float v = add_rn(from, mul_rn(philox::uniform24(b.lane[k]), span));
      const T r = from_real<T>(v);
      out[i] = clamp && as_double(r) >= to ? below : r;
    }
  }
};

// UNIFORM into float64: 53-bit uniforms in double.
struct UniformDoubleOp {
  FillStream s;
  double from, span, to, below;
  bool clamp;
  TSR_HD void operator()(int64_t j) const {
    const philox::block b = s.at(j);
    double* out = static_cast<double*>(s.data);
    for (int k = 0; k < 2; ++k) {
      const int64_t i = 2 * j + k;
      if (i >= s.n) return;
      double v = add_rn(from, mul_rn(philox::uniform53(b.lane[2 * k], b.lane[2 * k + 1]), span));
      if (clamp && v >= to) v = below;
      out[i] = v;
    }
  }
};

template <class T>
struct NormalOp {
  FillStream s;
  double mean, std;
  TSR_HD void operator()(int64_t j) const {
    constexpr double kTwoPi = 6.283185307179586476925286766559;
    const philox::block b = s.at(j);
    double u1, u2;
    if constexpr (std::is_same_v<T, double>) {
      u1 = philox::uniform53_open(b.lane[0], b.lane[1]);
      u2 = philox::uniform53(b.lane[2], b.lane[3]);
    } else {
      u1 = philox::uniform24_open(b.lane[0]);
      u2 = static_cast<double>(philox::uniform24(b.lane[1]));
    }
    const double r = ::sqrt(mul_rn(-2.0, ::log(u1)));
    const double theta = mul_rn(kTwoPi, u2);
    T* out = static_cast<T*>(s.data);
    for (int k = 0; k < 2; ++k) {
      const int64_t i = 2 * j + k;
      if (i >= s.n) return;
      const double z = k == 0 ? mul_rn(r, ::cos(theta)) : mul_rn(r, ::sin(theta));
      out[i] = from_real<T>(add_rn(mean, mul_rn(std, z)));
    }
  }
};

template <class T>
struct BernoulliOp {
  FillStream s;
  double p;
  bool two_lanes;  // float64 outputs
  TSR_HD void operator()(int64_t j) const {
    const philox::block b = s.at(j);
    T* out = static_cast<T*>(s.data);
    const T one = from_integer<T>(1), zero = from_integer<T>(0);
    if (two_lanes) {
      for (int k = 0; k < 2; ++k) {
        const int64_t i = 2 * j + k;
        if (i >= s.n) return;
        out[i] = philox::uniform53(b.lane[2 * k], b.lane[2 * k + 1]) < p ? one : zero;
      }
    } else {
      for (int k = 0; k < 4; ++k) {
        const int64_t i = 4 * j + k;
        if (i >= s.n) return;
        out[i] = static_cast<double>(philox::uniform24(b.lane[k])) < p ? one : zero;
      }
    }
  }
};

// RANDINT: low + (x mod span) in wrapping int64 arithmetic.
enum class RandintMode : int { kOneLane, kFull64, kTwoLanes };
template <class T>
struct RandintOp {
  FillStream s;
  uint64_t low, span;  // span unused for kFull64
  RandintMode mode;
  TSR_HD void operator()(int64_t j) const {
    const philox::block b = s.at(j);
    T* out = static_cast<T*>(s.data);
    if (mode == RandintMode::kOneLane) {
      for (int k = 0; k < 4; ++k) {
        const int64_t i = 4 * j + k;
        if (i >= s.n) return;
        out[i] = from_integer<T>(static_cast<int64_t>(low + uint64_t{b.lane[k]} % span));
      }
    } else {
      for (int k = 0; k < 2; ++k) {
        const int64_t i = 2 * j + k;
        if (i >= s.n) return;
        const uint64_t x = philox::join(b.lane[2 * k], b.lane[2 * k + 1]);
        out[i] = from_integer<T>(
            static_cast<int64_t>(low + (mode == RandintMode::kFull64 ? x : x % span)));
      }
    }
  }
};

template <class T>
struct BitsOp {
  FillStream s;
  TSR_HD void operator()(int64_t j) const {
    const philox::block b = s.at(j);
    T* out = static_cast<T*>(s.data);
    for (int k = 0; k < 4; ++k) {
      const int64_t i = 4 * j + k;
      if (i >= s.n) return;
      out[i] = from_integer<T>(static_cast<int64_t>(b.lane[k]));
    }
  }
};

// philox::detail::step_down for the host-side clamp values.
template <class T>
T step_down(T value) {
  return philox::detail::step_down(value);
}

template <class T>
void fill_typed(const Exec& exec, const philox::fill_spec& spec, const FillStream& s) {
  const auto blocks = static_cast<int64_t>(philox::blocks_for(spec, s.n));
  switch (spec.distribution) {
    case TSR_RANDOM_UNIFORM:
      if constexpr (std::is_same_v<T, double>) {
        const bool clamp = spec.param0 < spec.param1;
        parallel_for(exec, blocks,
                     UniformDoubleOp{s, spec.param0, spec.param1 - spec.param0, spec.param1,
                                     step_down(spec.param1), clamp},
                     "random_fill");
      } else if constexpr (is_floating_v<T>) {
        const auto from = static_cast<float>(spec.param0);
        const auto to = static_cast<float>(spec.param1);
        const double to_d = static_cast<double>(to);
        T below = from_real<T>(to);
        if (as_double(below) >= to_d) below = step_down(below);
        parallel_for(exec, blocks, UniformFloatOp<T>{s, from, to - from, from < to, to_d, below},
                     "random_fill");
      }
      return;
    case TSR_RANDOM_NORMAL:
      if constexpr (is_floating_v<T>)
        parallel_for(exec, blocks, NormalOp<T>{s, spec.param0, spec.param1}, "random_fill");
      return;
    case TSR_RANDOM_BERNOULLI:
      parallel_for(exec, blocks, BernoulliOp<T>{s, spec.param0, spec.dtype == TSR_FLOAT64},
                   "random_fill");
      return;
    case TSR_RANDOM_RANDINT: {
      const philox::detail::int_range range = philox::detail::randint_range(spec);
      RandintMode mode = RandintMode::kTwoLanes;
      if (range.span_minus_1 < (uint64_t{1} << 32))
        mode = RandintMode::kOneLane;
      else if (range.span_minus_1 == ~uint64_t{0})
        mode = RandintMode::kFull64;
      parallel_for(exec, blocks,
                   RandintOp<T>{s, static_cast<uint64_t>(range.low), range.span_minus_1 + 1, mode},
                   "random_fill");
      return;
    }
    case TSR_RANDOM_BITS:
      if constexpr (is_integral_v<T>) parallel_for(exec, blocks, BitsOp<T>{s}, "random_fill");
      return;
    default:
      return;
  }
}

tsr_status* random_fill(tsr_plugin_context* context,
                        const tsr_random_fill_call* raw_call) noexcept {
  const tsr_host_api* host = context != nullptr ? context->host : nullptr;
  if (host == nullptr) return nullptr;  // no way to report; the host never does this
  return sdk::guard(host, [&] {
    const tsr_random_fill_call& call = sdk::check_random_fill_call(flavour_name(), raw_call);
    Device& d = device_at(*context, call.device, "random_fill");
    const philox::fill_spec spec = sdk::random_fill_spec(flavour_name(), call);
    const tsr_tensor_desc* out = call.out;
    const int64_t n = sdk::numel(*out);
    if (n == 0) return;
    Exec exec;
    exec.device = d.index;
    exec.info = &d.info;
    exec.stream = stream_or_default(d, call.stream).native;
    const FillStream s{out->data, n, spec.seed, spec.offset};
    TSR_GPU_DISPATCH(out->dtype, "random_fill", T, fill_typed<T>(exec, spec, s));
  });
}

}  // namespace

RandomFillFn random_fill_kernel() { return random_fill; }

}  // namespace tessera::gpu
