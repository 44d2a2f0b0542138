// Internal errors of the core.
//
// Inside libtessera, failures are C++ exceptions of type tsr::Error carrying a
// canonical code and a message; every ABI entry point (core/api/) catches them
// and returns a tsr_status*, so no exception crosses the ABI (Note [No
// exceptions across the ABI]). Success paths never throw, so this costs nothing
// on the hot path.
#pragma once

#include <fmt/format.h>

#include <exception>
#include <string>
#include <utility>

#include "tessera/status.h"

namespace tsr {

class Error : public std::exception {
 public:
  Error(tsr_status_code code, std::string message) : code_(code), message_(std::move(message)) {}
  tsr_status_code code() const noexcept { return code_; }
  const char* what() const noexcept override { return message_.c_str(); }
  const std::string& message() const noexcept { return message_; }

 private:
  tsr_status_code code_;
  std::string message_;
};

// Throws Error(code, fmt::format(...)).
template <typename... Args>
[[noreturn]] void fail(tsr_status_code code, fmt::format_string<Args...> format, Args&&... args) {
  throw Error(code, fmt::format(format, std::forward<Args>(args)...));
}

// Converts a plugin- or host-made status into an exception (frees it), no-op on OK.
void throw_if_error(tsr_status* status);
// Same, prefixing the message with `context` ("plugin 'cpu' alloc: ...").
void throw_if_error(tsr_status* status, const std::string& context);

}  // namespace tsr
