// Checked int64 arithmetic for sizes, strides, element counts, byte counts and
// storage offsets.
//
// Note [Checked size arithmetic]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Every size, stride or offset the core derives
// from numbers a caller passed (op arguments, ABI sizes and strides, DLPack
// fields, schema text) is computed with these helpers, never with a bare `*`,
// `+` or `-`. Signed overflow is undefined behaviour, and a wrapped size is worse
// than a crash: it passes later bounds checks (a byte count that wraps to a few
// bytes allocates a few bytes, then a kernel writes the full count). Numbers
// derived only from an existing tensor's own sizes and strides need no check,
// because every tensor was checked when it was made (TensorImpl invariants).
//
// The throwing forms take `describe`, a callable returning the error message,
// called only on overflow so the success path costs one flag test. The message
// must name the argument, its value and the fix (STYLE.md); `overflow_message`
// spells the common form.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "util/error.h"

namespace tsr {

// a * b, a + b, a - b into `out`; false (out unspecified) on int64 overflow.
[[nodiscard]] inline bool mul_ok(int64_t a, int64_t b, int64_t* out) noexcept {
  return !__builtin_mul_overflow(a, b, out);
}
[[nodiscard]] inline bool add_ok(int64_t a, int64_t b, int64_t* out) noexcept {
  return !__builtin_add_overflow(a, b, out);
}
[[nodiscard]] inline bool sub_ok(int64_t a, int64_t b, int64_t* out) noexcept {
  return !__builtin_sub_overflow(a, b, out);
}

// "argument '<arg>' = <value>: <what> overflows int64; <fix>".
inline std::string overflow_message(std::string_view arg, std::string_view value,
                                    std::string_view what, std::string_view fix) {
  return fmt::format("argument '{}' = {}: {} overflows int64; {}", arg, value, what, fix);
}

// Throwing forms: `describe()` gives the message (see the file comment);
// `code` is INVALID_ARGUMENT unless the caller says otherwise.
template <typename Describe>
int64_t checked_mul(int64_t a, int64_t b, Describe&& describe,
                    tsr_status_code code = TSR_INVALID_ARGUMENT) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) [[unlikely]]
    throw Error(code, std::forward<Describe>(describe)());
  return r;
}
template <typename Describe>
int64_t checked_add(int64_t a, int64_t b, Describe&& describe,
                    tsr_status_code code = TSR_INVALID_ARGUMENT) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) [[unlikely]]
    throw Error(code, std::forward<Describe>(describe)());
  return r;
}
template <typename Describe>
int64_t checked_sub(int64_t a, int64_t b, Describe&& describe,
                    tsr_status_code code = TSR_INVALID_ARGUMENT) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) [[unlikely]]
    throw Error(code, std::forward<Describe>(describe)());
  return r;
}

}  // namespace tsr
