// tessera/error.hpp - how the C++ frontend reports failures.
//
// Every `tsr_status*` returned by the C ABI becomes a `tessera::Error`, an
// exception carrying the canonical status code and the core's message
// unchanged (what() is that message, so it can be matched exactly). The
// status object is freed before the exception leaves `check`. Exceptions stay
// on the application side: nothing thrown here ever crosses the ABI.
#pragma once

#include <stdexcept>
#include <string>

#include "tessera/tessera.h"

namespace tessera {

class Error : public std::runtime_error {
 public:
  Error(tsr_status_code code, const std::string& message)
      : std::runtime_error(message), code_(code) {}

  // The canonical code (TSR_INVALID_ARGUMENT, ...).
  tsr_status_code code() const noexcept { return code_; }
  // "INVALID_ARGUMENT", ...; static storage.
  const char* code_name() const noexcept { return tsr_status_code_name(code_); }

 private:
  tsr_status_code code_;
};

namespace detail {

// Kept out of line and cold so that `check` inlines to one compare and branch.
[[noreturn, gnu::noinline, gnu::cold]] inline void throw_status(tsr_status* status) {
  const tsr_status_code code = tsr_status_code_of(status);
  std::string message = tsr_status_message(status);
  tsr_status_free(status);
  throw Error(code, message);
}

[[noreturn, gnu::noinline, gnu::cold]] inline void throw_error(tsr_status_code code,
                                                               const std::string& message) {
  throw Error(code, message);
}

// Inside a catch (...) block: the exception being handled as a status, for
// callbacks the core calls (hooks, custom functions), which must not throw.
inline tsr_status* current_exception_status() noexcept {
  try {
    throw;
  } catch (const Error& e) {
    return tsr_status_create(e.code(), e.what());
  } catch (const std::exception& e) {
    return tsr_status_create(TSR_INTERNAL, e.what());
  } catch (...) {
    return tsr_status_create(TSR_INTERNAL, "a callback threw a non-standard exception");
  }
}

}  // namespace detail

// Takes ownership of `status`: returns when it is NULL (success), otherwise
// frees it and throws the equivalent tessera::Error.
inline void check(tsr_status* status) {
  if (status != nullptr) [[unlikely]] {
    detail::throw_status(status);
  }
}

}  // namespace tessera
