// exp_constants.hpp - the float32 exp approximation every CPU body uses
// (the baseline's reduction/softmax.cpp, avx2_math.hpp, avx512_lines.cpp),
// stated once so the bodies agree: Cody-Waite reduction x = n ln2 + r with ln2
// split in two (kLn2Hi has 9 significant bits, so n * kLn2Hi is exact for the
// |n| <= 126 reached here), |r| <= ln2/2, then the degree-6 Taylor polynomial
// of exp(r), within 3 ulp over that range, by Horner's rule from kPoly[0] to
// kPoly[6]; 2^n goes into the exponent. Inputs below kLowest give 0.
#ifndef TESSERA_PLUGINS_CPU_EXP_CONSTANTS_HPP_
#define TESSERA_PLUGINS_CPU_EXP_CONSTANTS_HPP_

namespace tessera::cpu::exp_poly {

inline constexpr float kLowest = -87.0f;
inline constexpr float kLog2e = 1.44269504088896341f;
inline constexpr float kLn2Hi = 0.693359375f;
inline constexpr float kLn2Lo = -2.12194440e-4f;
// 1/6!, 1/5!, ..., 1/1!, 1/0!
inline constexpr float kPoly[7] = {1.0f / 720.0f, 1.0f / 120.0f, 1.0f / 24.0f, 1.0f / 6.0f,
                                   0.5f,          1.0f,          1.0f};

}  // namespace tessera::cpu::exp_poly

#endif  // TESSERA_PLUGINS_CPU_EXP_CONSTANTS_HPP_
