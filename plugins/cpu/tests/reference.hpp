// reference.hpp - the tests' own model of Tessera element values, written
// independently of the plugin (and of the SDK's half.hpp) so that kernels are
// checked against something other than themselves.
//
// `ref_value` holds an element exactly: long double (x87, 64-bit significand)
// represents every int64 and every float16/bfloat16/float32/float64 value.
// decode/encode read and write raw elements; float16/bfloat16 rounding uses
// nearbyintl on a power-of-two-scaled value instead of bit tricks.
// ref_convert applies copy_'s rules (docs/operators.md) to an exact value.
#ifndef TESSERA_PLUGINS_CPU_TESTS_REFERENCE_HPP_
#define TESSERA_PLUGINS_CPU_TESTS_REFERENCE_HPP_

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/types.h"

namespace cpu_test {

struct ref_value {
  long double re = 0;
  long double im = 0;
};

bool is_bool(tsr_dtype d);
bool is_integer(tsr_dtype d);   // uint8 .. int64 (not bool)
bool is_floating(tsr_dtype d);  // float16 .. float64
bool is_complex(tsr_dtype d);
size_t size_of(tsr_dtype d);
const char* name_of(tsr_dtype d);
std::vector<tsr_dtype> all_dtypes();

// float16 / bfloat16 bits of the nearest value to x (ties to even), and back.
uint16_t ref_half_bits(long double x);
long double ref_half_value(uint16_t bits);
uint16_t ref_bfloat16_bits(long double x);
long double ref_bfloat16_value(uint16_t bits);

// Reads / writes one element of dtype `d` at `p`. encode() rounds `v` to `d`
// (floating: nearest even; integers: truncate then wrap; bool: v != 0).
ref_value decode(tsr_dtype d, const void* p);
void encode(tsr_dtype d, void* p, const ref_value& v);

// `v`, an element of dtype `from`, converted to dtype `to` by copy_'s rules.
ref_value ref_convert(const ref_value& v, tsr_dtype from, tsr_dtype to);

// Exactly equal, NaN equal to NaN, signed zeros distinguished.
bool same_value(const ref_value& a, const ref_value& b);

// |a - b| <= tolerance in each component (NaN matches NaN, inf matches equal inf).
bool near_value(const ref_value& a, const ref_value& b, long double tolerance);

// The float16 / bfloat16 / float32 / float64 unit roundoff of `d`
// (2^-11, 2^-8, 2^-24, 2^-53; complex: its component's; 0 for integers).
long double unit_roundoff(tsr_dtype d);

std::string to_string(const ref_value& v);

}  // namespace cpu_test

#endif  // TESSERA_PLUGINS_CPU_TESTS_REFERENCE_HPP_
