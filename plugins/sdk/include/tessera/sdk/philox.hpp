// tessera/sdk/philox.hpp - Philox4x32-10 and the element mapping of random
// fills (Note [Random mapping] in plugin.h), header-only.
//
// Every device must produce the same bits for the same (seed, offset), so the
// mapping from the counter-based stream to elements is part of the ABI. This
// header is its reference implementation: the CPU plugin's random_fill and the
// core's host fallback (used for plugins without random_fill) both call
// fill(), and a plugin for another device checks itself against it.
//
// The stream. Block j of generator state (seed, offset) is
//   Philox4x32-10(counter = {lo32(offset + j), hi32(offset + j), 0, 0},
//                 key = {lo32(seed), hi32(seed)})
// (Salmon et al., "Parallel Random Numbers: As Easy as 1, 2, 3", SC11; the
// Random123 known-answer vectors hold), four 32-bit lanes per block.
//
// Element i of a fill of n elements (row-major over the contiguous output):
//  - one lane per element: lane i % 4 of block i / 4; ceil(n / 4) blocks.
//    BITS; UNIFORM and BERNOULLI into every dtype but float64; RANDINT with a
//    range (param1 - param0) <= 2^32.
//  - two lanes per element: lanes 2(i % 2) (low) and 2(i % 2) + 1 (high) of
//    block i / 2; ceil(n / 2) blocks. UNIFORM and BERNOULLI into float64;
//    RANDINT with a range > 2^32.
//  - NORMAL: elements 2k and 2k + 1 from block k (ceil(n / 2) blocks): u1 from
//    lane 0 and u2 from lane 1 (float64 outputs: u1 from lanes 0, 1 and u2 from
//    lanes 2, 3); r = sqrt(-2 ln u1), z = r cos(2 pi u2) for the even element,
//    r sin(2 pi u2) for the odd one; out = param0 + param1 * z. All of it in
//    double, rounded once to the out dtype.
// Uniforms: a 32-bit uniform is (lane >> 8) * 2^-24 in [0, 1) (u1 of NORMAL:
// ((lane >> 8) + 1) * 2^-24 in (0, 1]); a 53-bit uniform is
// (((high << 32) | low) >> 11) * 2^-53 (u1: (... + 1) * 2^-53).
// Values:
//  - UNIFORM: param0 + u * (param1 - param0), in float (the float-rounded
//    params) for 32-bit uniforms and in double for 53-bit ones, then rounded
//    to the out dtype. When param0 < param1 a result that rounds to param1 or
//    above (possible in float32 and narrower) becomes the largest value of the
//    out dtype below it, so the range stays [param0, param1). param0 > param1
//    is allowed and gives (param1, param0].
//  - BERNOULLI: 1 when u < param0, else 0 (u as a double; any dtype).
//  - RANDINT: param0 + (x mod (param1 - param0)) in int64 arithmetic, x the
//    lane (one lane) or (high << 32) | low (two lanes; the full 64 bits when
//    the range is 2^64), then converted to the out dtype.
//  - BITS: the lane, converted to the integer out dtype modulo 2^bits (uint8
//    keeps the low byte, int64 zero-extends).
// A call consumes whole blocks: lanes left over at its end are never used, and
// the generator's offset advances by blocks_for() (the host does that).
//
// No allocation, no exceptions, no globals: fill() may run on any thread and
// any [begin, end) split of the elements gives the same bits.
#ifndef TESSERA_SDK_PHILOX_HPP_
#define TESSERA_SDK_PHILOX_HPP_

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

// Included by its own directory (not "tessera/sdk/half.hpp") so the core can
// include this header by path without the sdk's include directory.
#include "half.hpp"
#include "tessera/opcodes.h"
#include "tessera/types.h"

namespace tessera::sdk::philox {

// Four 32-bit lanes.
struct block {
  uint32_t lane[4];
};

// One Philox4x32 bijection with 10 rounds of counter {c0..c3} under key {k0, k1}.
constexpr block philox4x32_10(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, uint32_t k0,
                              uint32_t k1) noexcept {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += kW0;
      k1 += kW1;
    }
    const uint64_t p0 = uint64_t{kM0} * c0;
    const uint64_t p1 = uint64_t{kM1} * c2;
    const uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
    const uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
    const uint32_t n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
    c0 = n0;
    c1 = lo1;
    c2 = n2;
    c3 = lo0;
  }
  return block{{c0, c1, c2, c3}};
}

// Block `index` of the stream of `seed` (index = offset + j for block j of a call).
constexpr block stream_block(uint64_t seed, uint64_t index) noexcept {
  return philox4x32_10(static_cast<uint32_t>(index), static_cast<uint32_t>(index >> 32), 0, 0,
                       static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
}

// Uniforms of the mapping.
constexpr float uniform24(uint32_t lane) noexcept {
  return static_cast<float>(lane >> 8) * 0x1p-24f;
}
constexpr double uniform24_open(uint32_t lane) noexcept {  // (0, 1]
  return static_cast<double>((lane >> 8) + 1u) * 0x1p-24;
}
constexpr uint64_t join(uint32_t low, uint32_t high) noexcept {
  return (uint64_t{high} << 32) | low;
}
constexpr double uniform53(uint32_t low, uint32_t high) noexcept {
  return static_cast<double>(join(low, high) >> 11) * 0x1p-53;
}
constexpr double uniform53_open(uint32_t low, uint32_t high) noexcept {  // (0, 1]
  return static_cast<double>((join(low, high) >> 11) + 1u) * 0x1p-53;
}

// What one fill computes: tsr_random_fill_call's fields plus the out dtype.
struct fill_spec {
  int32_t distribution = TSR_RANDOM_UNIFORM;  // tsr_random_distribution
  int32_t dtype = TSR_FLOAT32;                // the out dtype
  uint64_t seed = 0;
  uint64_t offset = 0;  // first block
  double param0 = 0, param1 = 1;
};

enum class lanes { one, two, normal_pair };

namespace detail {

constexpr double kTwo63 = 9223372036854775808.0;  // 2^63

// RANDINT's bounds as integers: [low, low + span_minus_1], span_minus_1 < 2^64.
struct int_range {
  int64_t low;
  uint64_t span_minus_1;
};
inline int_range randint_range(const fill_spec& s) noexcept {
  const auto low = static_cast<int64_t>(s.param0);
  const int64_t high_inclusive =
      s.param1 >= kTwo63 ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(s.param1) - 1;
  return {low, static_cast<uint64_t>(high_inclusive) - static_cast<uint64_t>(low)};
}

constexpr bool is_integer_dtype(int32_t dtype) noexcept {
  return dtype >= TSR_UINT8 && dtype <= TSR_INT64;
}
constexpr bool is_float_dtype(int32_t dtype) noexcept {
  return dtype == TSR_FLOAT16 || dtype == TSR_BFLOAT16 || dtype == TSR_FLOAT32 ||
         dtype == TSR_FLOAT64;
}
constexpr bool is_real_dtype(int32_t dtype) noexcept {
  return dtype == TSR_BOOL || is_integer_dtype(dtype) || is_float_dtype(dtype);
}

inline bool is_integral_value(double x) noexcept { return std::isfinite(x) && std::trunc(x) == x; }

}  // namespace detail

// "uniform", ...; "unknown" outside the enum. Static storage.
constexpr const char* distribution_name(int32_t distribution) noexcept {
  switch (distribution) {
    case TSR_RANDOM_BITS:
      return "bits";
    case TSR_RANDOM_UNIFORM:
      return "uniform";
    case TSR_RANDOM_NORMAL:
      return "normal";
    case TSR_RANDOM_BERNOULLI:
      return "bernoulli";
    case TSR_RANDOM_RANDINT:
      return "randint";
    default:
      return "unknown";
  }
}

// Whether `distribution` fills `dtype`: BITS integers; UNIFORM and NORMAL
// floating dtypes; BERNOULLI and RANDINT bool, integers and floating dtypes.
constexpr bool supports_dtype(int32_t distribution, int32_t dtype) noexcept {
  switch (distribution) {
    case TSR_RANDOM_BITS:
      return detail::is_integer_dtype(dtype);
    case TSR_RANDOM_UNIFORM:
    case TSR_RANDOM_NORMAL:
      return detail::is_float_dtype(dtype);
    case TSR_RANDOM_BERNOULLI:
    case TSR_RANDOM_RANDINT:
      return detail::is_real_dtype(dtype);
    default:
      return false;
  }
}

// Null when `s` describes a fill this header computes; else why not (static
// storage). Checked: a known distribution; an out dtype it supports
// (supports_dtype); parameters that keep every value defined (UNIFORM: finite,
// within float's range unless the out is float64; NORMAL: finite mean, finite
// std >= 0; BERNOULLI: 0 <= p <= 1; RANDINT: integers with
// -2^63 <= param0 < param1 <= 2^63).
inline const char* check(const fill_spec& s) noexcept {
  if (!supports_dtype(s.distribution, s.dtype)) {
    switch (s.distribution) {
      case TSR_RANDOM_BITS:
        return "bits fill integer dtypes only";
      case TSR_RANDOM_UNIFORM:
      case TSR_RANDOM_NORMAL:
        return "uniform and normal fill floating dtypes only";
      case TSR_RANDOM_BERNOULLI:
      case TSR_RANDOM_RANDINT:
        return "bernoulli and randint fill real (non-complex) dtypes only";
      default:
        return "unknown distribution";
    }
  }
  switch (s.distribution) {
    case TSR_RANDOM_UNIFORM: {
      if (!std::isfinite(s.param0) || !std::isfinite(s.param1))
        return "uniform needs finite bounds (param0, param1)";
      constexpr double kMax = std::numeric_limits<float>::max();
      if (s.dtype != TSR_FLOAT64 &&
          (std::fabs(s.param0) > kMax || std::fabs(s.param1) > kMax ||
           std::fabs(static_cast<double>(static_cast<float>(s.param1)) -
                     static_cast<double>(static_cast<float>(s.param0))) > kMax))
        return "uniform into a 32-bit or narrower dtype needs bounds and a range within float's";
      return nullptr;
    }
    case TSR_RANDOM_NORMAL:
      if (!std::isfinite(s.param0) || !std::isfinite(s.param1) || s.param1 < 0)
        return "normal needs a finite mean (param0) and a finite std >= 0 (param1)";
      return nullptr;
    case TSR_RANDOM_BERNOULLI:
      if (!(s.param0 >= 0 && s.param0 <= 1)) return "bernoulli needs 0 <= p (param0) <= 1";
      return nullptr;
    case TSR_RANDOM_RANDINT:
      if (!detail::is_integral_value(s.param0) || !detail::is_integral_value(s.param1) ||
          s.param0 < -detail::kTwo63 || s.param1 > detail::kTwo63 || !(s.param0 < s.param1))
        return "randint needs integer bounds with -2^63 <= param0 < param1 <= 2^63";
      return nullptr;
    default:
      return nullptr;
  }
}

// How elements take lanes (see the top of the file). Requires check(s) == null.
inline lanes lanes_of(const fill_spec& s) noexcept {
  switch (s.distribution) {
    case TSR_RANDOM_UNIFORM:
    case TSR_RANDOM_BERNOULLI:
      return s.dtype == TSR_FLOAT64 ? lanes::two : lanes::one;
    case TSR_RANDOM_NORMAL:
      return lanes::normal_pair;
    case TSR_RANDOM_RANDINT:
      return detail::randint_range(s).span_minus_1 < (uint64_t{1} << 32) ? lanes::one : lanes::two;
    default:
      return lanes::one;
  }
}

// Blocks a fill of `n` elements consumes (the offset advance). Requires
// check(s) == null.
inline uint64_t blocks_for(const fill_spec& s, int64_t n) noexcept {
  if (n <= 0) return 0;
  const auto count = static_cast<uint64_t>(n);
  return lanes_of(s) == lanes::one ? (count + 3) / 4 : (count + 1) / 2;
}

namespace detail {

// The out value for a real number computed in float or double.
template <class T, class R>
T from_real(R value) noexcept {
  if constexpr (std::is_same_v<T, bool>)
    return value != 0;
  else if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>)
    return T(value);
  else
    return static_cast<T>(value);
}

// The out value for an integer (RANDINT, BITS, BERNOULLI).
template <class T>
T from_integer(int64_t value) noexcept {
  if constexpr (std::is_same_v<T, bool>)
    return value != 0;
  else if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>)
    return T(static_cast<double>(value));
  else if constexpr (std::is_floating_point_v<T>)
    return static_cast<T>(value);
  else
    return static_cast<T>(value);  // modulo 2^bits (C++20)
}

// The next value of T toward -inf (keeps UNIFORM's range half-open after
// rounding).
template <class T>
T step_down(T value) noexcept {
  if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
    const uint16_t bits = value.bits;
    const bool negative = (bits & 0x8000u) != 0;
    uint16_t next;
    if ((bits & 0x7fffu) == 0)
      next = 0x8001u;  // +-0 -> the smallest negative subnormal
    else
      next = negative ? static_cast<uint16_t>(bits + 1u) : static_cast<uint16_t>(bits - 1u);
    return T::from_bits(next);
  } else {
    return std::nextafter(value, -std::numeric_limits<T>::infinity());
  }
}

template <class T>
double as_double(T value) noexcept {
  if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>)
    return static_cast<double>(static_cast<float>(value));
  else
    return static_cast<double>(value);
}

// Calls emit(i, lanes...) for elements [begin, end) of a one-lane fill.
template <class Emit>
void for_one_lane(const fill_spec& s, int64_t begin, int64_t end, Emit&& emit) noexcept {
  int64_t i = begin;
  while (i < end) {
    const block b = stream_block(s.seed, s.offset + static_cast<uint64_t>(i) / 4);
    for (int lane = static_cast<int>(i % 4); lane < 4 && i < end; ++lane, ++i)
      emit(i, b.lane[lane]);
  }
}

// Calls emit(i, low, high) for elements [begin, end) of a two-lane fill.
template <class Emit>
void for_two_lanes(const fill_spec& s, int64_t begin, int64_t end, Emit&& emit) noexcept {
  int64_t i = begin;
  while (i < end) {
    const block b = stream_block(s.seed, s.offset + static_cast<uint64_t>(i) / 2);
    for (int half_block = static_cast<int>(i % 2); half_block < 2 && i < end; ++half_block, ++i)
      emit(i, b.lane[2 * half_block], b.lane[2 * half_block + 1]);
  }
}

template <class T>
void fill_uniform(const fill_spec& s, T* out, int64_t begin, int64_t end) noexcept {
  if constexpr (std::is_same_v<T, double>) {
    const double from = s.param0, span = s.param1 - s.param0, to = s.param1;
    const bool clamp = from < to;
    for_two_lanes(s, begin, end, [&](int64_t i, uint32_t low, uint32_t high) {
      const double scaled = uniform53(low, high) * span;
      double v = from + scaled;
      if (clamp && v >= to) v = step_down(to);
      out[i] = v;
    });
  } else {
    const auto from = static_cast<float>(s.param0);
    const auto to = static_cast<float>(s.param1);
    const float span = to - from;
    const bool clamp = from < to;
    const double to_d = static_cast<double>(to);
    // The largest T below `to` (T(to) itself when it rounded down).
    T below = from_real<T>(to);
    if (as_double(below) >= to_d) below = step_down(below);
    for_one_lane(s, begin, end, [&](int64_t i, uint32_t lane) {
      const float scaled = uniform24(lane) * span;
      const float v = from + scaled;
      const T r = from_real<T>(v);
      out[i] = clamp && as_double(r) >= to_d ? below : r;
    });
  }
}

template <class T>
void fill_normal(const fill_spec& s, T* out, int64_t begin, int64_t end) noexcept {
  constexpr double kTwoPi = 6.283185307179586476925286766559;
  const double mean = s.param0, std = s.param1;
  int64_t i = begin;
  while (i < end) {
    const int64_t pair = i / 2;
    const block b = stream_block(s.seed, s.offset + static_cast<uint64_t>(pair));
    double u1, u2;
    if constexpr (std::is_same_v<T, double>) {
      u1 = uniform53_open(b.lane[0], b.lane[1]);
      u2 = uniform53(b.lane[2], b.lane[3]);
    } else {
      u1 = uniform24_open(b.lane[0]);
      u2 = static_cast<double>(uniform24(b.lane[1]));
    }
    const double r = std::sqrt(-2.0 * std::log(u1));
    const double theta = kTwoPi * u2;
    for (int k = static_cast<int>(i % 2); k < 2 && i < end; ++k, ++i) {
      const double z = k == 0 ? r * std::cos(theta) : r * std::sin(theta);
      const double scaled = std * z;
      out[i] = from_real<T>(mean + scaled);
    }
  }
}

template <class T>
void fill_bernoulli(const fill_spec& s, T* out, int64_t begin, int64_t end) noexcept {
  const double p = s.param0;
  const T one = from_integer<T>(1), zero = from_integer<T>(0);
  if (s.dtype == TSR_FLOAT64) {
    for_two_lanes(s, begin, end, [&](int64_t i, uint32_t low, uint32_t high) {
      out[i] = uniform53(low, high) < p ? one : zero;
    });
  } else {
    for_one_lane(s, begin, end, [&](int64_t i, uint32_t lane) {
      out[i] = static_cast<double>(uniform24(lane)) < p ? one : zero;
    });
  }
}

template <class T>
void fill_randint(const fill_spec& s, T* out, int64_t begin, int64_t end) noexcept {
  const int_range range = randint_range(s);
  const auto low = static_cast<uint64_t>(range.low);
  const uint64_t span_minus_1 = range.span_minus_1;
  if (span_minus_1 < (uint64_t{1} << 32)) {
    const uint64_t span = span_minus_1 + 1;
    for_one_lane(s, begin, end, [&](int64_t i, uint32_t lane) {
      out[i] = from_integer<T>(static_cast<int64_t>(low + uint64_t{lane} % span));
    });
  } else if (span_minus_1 == std::numeric_limits<uint64_t>::max()) {
    for_two_lanes(s, begin, end, [&](int64_t i, uint32_t lo, uint32_t hi) {
      out[i] = from_integer<T>(static_cast<int64_t>(low + join(lo, hi)));
    });
  } else {
    const uint64_t span = span_minus_1 + 1;
    for_two_lanes(s, begin, end, [&](int64_t i, uint32_t lo, uint32_t hi) {
      out[i] = from_integer<T>(static_cast<int64_t>(low + join(lo, hi) % span));
    });
  }
}

template <class T>
void fill_bits(const fill_spec& s, T* out, int64_t begin, int64_t end) noexcept {
  for_one_lane(s, begin, end, [&](int64_t i, uint32_t lane) {
    out[i] = from_integer<T>(static_cast<int64_t>(lane));
  });
}

template <class T>
void fill_typed(const fill_spec& s, T* out, int64_t begin, int64_t end) noexcept {
  switch (s.distribution) {
    case TSR_RANDOM_UNIFORM:
      if constexpr (!std::is_integral_v<T>) fill_uniform(s, out, begin, end);
      return;
    case TSR_RANDOM_NORMAL:
      if constexpr (!std::is_integral_v<T>) fill_normal(s, out, begin, end);
      return;
    case TSR_RANDOM_BERNOULLI:
      fill_bernoulli(s, out, begin, end);
      return;
    case TSR_RANDOM_RANDINT:
      fill_randint(s, out, begin, end);
      return;
    case TSR_RANDOM_BITS:
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
        fill_bits(s, out, begin, end);
      return;
    default:
      return;
  }
}

}  // namespace detail

// Writes elements [begin, end) of a contiguous output whose element 0 is at
// `data` (an array of the C++ type of s.dtype). Requires check(s) == null and
// 0 <= begin <= end <= n; elements outside [begin, end) are not touched.
inline void fill(const fill_spec& s, void* data, int64_t begin, int64_t end) noexcept {
  if (begin >= end) return;
  switch (s.dtype) {
    case TSR_BOOL:
      detail::fill_typed(s, static_cast<bool*>(data), begin, end);
      return;
    case TSR_UINT8:
      detail::fill_typed(s, static_cast<uint8_t*>(data), begin, end);
      return;
    case TSR_INT8:
      detail::fill_typed(s, static_cast<int8_t*>(data), begin, end);
      return;
    case TSR_INT16:
      detail::fill_typed(s, static_cast<int16_t*>(data), begin, end);
      return;
    case TSR_INT32:
      detail::fill_typed(s, static_cast<int32_t*>(data), begin, end);
      return;
    case TSR_INT64:
      detail::fill_typed(s, static_cast<int64_t*>(data), begin, end);
      return;
    case TSR_FLOAT16:
      detail::fill_typed(s, static_cast<half*>(data), begin, end);
      return;
    case TSR_BFLOAT16:
      detail::fill_typed(s, static_cast<bfloat16*>(data), begin, end);
      return;
    case TSR_FLOAT32:
      detail::fill_typed(s, static_cast<float*>(data), begin, end);
      return;
    case TSR_FLOAT64:
      detail::fill_typed(s, static_cast<double*>(data), begin, end);
      return;
    default:
      return;
  }
}

}  // namespace tessera::sdk::philox

#endif  // TESSERA_SDK_PHILOX_HPP_
