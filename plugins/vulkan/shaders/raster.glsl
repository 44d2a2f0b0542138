// raster.glsl - for fragment shaders (Note [Raster stores], raster.hpp):
// exact float32 results where the floating-point unit treats subnormal
// inputs and results as zero. lavapipe's rendering threads run so (x86 DAZ
// and FTZ); its compute threads do not, and the device offers no
// denormPreserve. So a fragment shader computes in float, and where an
// input or the result is below 2^-100 (zero, subnormal, or flushed: the
// only places a flush can change a result) takes the result of the same
// operations in double on operands built from their bits with integer
// conversions, rounded back to float32 bits by hand (subnormals included).
// (Sums and differences of two float32s need less: below.)
// Double rounding is harmless: double carries more than 2 x 24 + 2 bits,
// and on the subnormal grid fewer bits still. lavapipe runs both sides of
// a branch on a lane mask, so both results are computed and one selected.
// Include after common.glsl.

// Whether float32 `bits` lie below 2^-100 in magnitude (zero and
// subnormals included; infinities and NaNs do not).
bool below_2_100(uint bits) {
  return ((bits >> 23) & 0xffu) < 27u;
}

// The float32 `bits` as a double, exactly, without the FPU reading a
// subnormal float (it would read zero).
double exact_double(uint bits) {
  const uint biased = (bits >> 23) & 0xffu;
  // 2^-149: the subnormals' unit
  const double v = biased == 0u ? double(bits & 0x7fffffu) * 1.401298464324817070923729583289916e-45LF
                                : abs(double(uintBitsToFloat(bits)));
  return (bits >> 31) != 0u ? -v : v;
}

// `r` rounded to float32 (to nearest even), as bits, without the FPU
// writing a subnormal float (it would write zero).
uint float32_bits(double r) {
  const double a = abs(r);
  const uint sign = uint(doubleBitsToUint64(r) >> 63) << 31;
  // below 2^-126: a multiple of 2^-149, the nearest (ties to even) by hand;
  // 2^23 there is 2^-126 itself, whose bits are the same integer
  const uint magnitude = a < 1.1754943508222875079687365372222457e-38LF
                             ? uint(roundEven(a * 713623846352979940529142984724747568191373312.0LF))
                             : floatBitsToUint(float(a));
  return magnitude | sign;
}

// A sum or difference of float32s x and y only differs under a flush when
// both lie below 2^-100: if one does not, the other is either subnormal
// (then below half the larger's ulp: the result is the larger, as under
// the flush) or normal (no subnormal anywhere; a cancellation leaves at
// least 2^-124). When both do, the operation on both scaled by 2^100 is
// exact-equivalent (every value stays normal) and the result scales back
// by hand. `bits` below 2^-100: its value times 2^100, exactly.
float times_2_100(uint bits) {
  const float v = ((bits >> 23) & 0xffu) == 0u ? float(bits & 0x7fffffu) * 1.7763568394002505e-15  // 2^-49
                                                : abs(uintBitsToFloat(bits)) * 1.2676506002282294e30;  // 2^100
  return (bits >> 31) != 0u ? -v : v;
}
// s * 2^-100 as float32 bits, for s a sum or difference of two
// times_2_100 values (a multiple of 2^-49 below 2^1 in magnitude).
uint times_2_minus_100_bits(float s) {
  const float a = abs(s);
  const uint sign = floatBitsToUint(s) & 0x80000000u;
  // below 2^-26 the result is subnormal: a multiple of 2^-149, exactly
  const uint magnitude = a < 1.4901161193847656e-08 ? uint(a * 562949953421312.0)  // 2^49
                                                    : floatBitsToUint(a * 7.888609052210118e-31);  // 2^-100
  return magnitude | sign;
}
