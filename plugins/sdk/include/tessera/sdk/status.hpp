// tessera/sdk/status.hpp - making statuses from plugin code, and the noexcept
// trampoline every plugin table entry goes through.
//
// Plugins never link libtessera, so every status is created by the host through
// tsr_host_api.make_status (plugin.h); `status_maker` holds the host pointer and
// formats messages printf-style (no fmt, no iostreams). A returned status is
// owned by whoever receives it (ultimately the host, which frees it).
//
// Inside a plugin, deep code may throw `status_error` (a code and a message)
// instead of threading statuses through every level; `guard(host, f)` runs f,
// returns its status (or NULL when f returns void) and turns every exception into
// a status, so no exception crosses the ABI:
//   status_error      -> its own code and message
//   std::bad_alloc    -> TSR_RESOURCE_EXHAUSTED
//   std::exception    -> TSR_INTERNAL with what()
//   anything else     -> TSR_INTERNAL
// `host` must be non-NULL with a make_status callback (checked by the plugin's
// query function before anything else runs).
#ifndef TESSERA_SDK_STATUS_HPP_
#define TESSERA_SDK_STATUS_HPP_

#include <cstdarg>
#include <cstdio>
#include <exception>
#include <new>
#include <string>
#include <type_traits>
#include <utility>

#include "tessera/plugin.h"

namespace tessera::sdk {

#if defined(__GNUC__)
#define TSR_SDK_PRINTF(fmt_index, first_arg) __attribute__((format(printf, fmt_index, first_arg)))
#else
#define TSR_SDK_PRINTF(fmt_index, first_arg)
#endif

// printf into a std::string. May throw std::bad_alloc.
inline std::string vformat(const char* fmt, va_list args) {
  char small[256];
  va_list copy;
  va_copy(copy, args);
  const int n = std::vsnprintf(small, sizeof small, fmt, copy);
  va_end(copy);
  if (n < 0) return std::string(fmt);
  if (static_cast<size_t>(n) < sizeof small) return std::string(small, static_cast<size_t>(n));
  std::string out(static_cast<size_t>(n) + 1, '\0');
  std::vsnprintf(out.data(), out.size(), fmt, args);
  out.resize(static_cast<size_t>(n));
  return out;
}

TSR_SDK_PRINTF(1, 2) inline std::string format(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::string out = vformat(fmt, args);
  va_end(args);
  return out;
}

// An error thrown inside plugin code and turned into a status by guard().
class status_error : public std::exception {
 public:
  status_error(tsr_status_code code, std::string message)
      : code_(code), message_(std::move(message)) {}
  tsr_status_code code() const noexcept { return code_; }
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  tsr_status_code code_;
  std::string message_;
};

// Throws status_error(code, printf(fmt, ...)).
[[noreturn]] TSR_SDK_PRINTF(2, 3) inline void throw_status(tsr_status_code code, const char* fmt,
                                                           ...) {
  va_list args;
  va_start(args, fmt);
  std::string message = vformat(fmt, args);
  va_end(args);
  throw status_error(code, std::move(message));
}

// Makes host statuses. Borrows `host` (valid until the plugin's shutdown).
class status_maker {
 public:
  explicit status_maker(const tsr_host_api* host) noexcept : host_(host) {}

  const tsr_host_api* host() const noexcept { return host_; }

  // A status owned by the caller; NULL for TSR_OK. Never throws.
  tsr_status* make(tsr_status_code code, const char* message) const noexcept {
    return host_->make_status(code, message);
  }

  // printf-formatted make(). Never throws: if formatting runs out of memory the
  // format string itself becomes the message.
  TSR_SDK_PRINTF(3, 4)
  tsr_status* makef(tsr_status_code code, const char* fmt, ...) const noexcept {
    va_list args;
    va_start(args, fmt);
    tsr_status* status = nullptr;
    try {
      status = make(code, vformat(fmt, args).c_str());
    } catch (...) {
      status = make(code, fmt);
    }
    va_end(args);
    return status;
  }

  // Logs through host->log (if the host gave one). Never throws.
  TSR_SDK_PRINTF(4, 5)
  void logf(tsr_log_level level, const char* plugin_name, const char* fmt, ...) const noexcept {
    if (host_->log == nullptr) return;
    va_list args;
    va_start(args, fmt);
    try {
      host_->log(level, plugin_name, vformat(fmt, args).c_str());
    } catch (...) {
      host_->log(level, plugin_name, fmt);
    }
    va_end(args);
  }

 private:
  const tsr_host_api* host_;
};

// Runs f() and returns its status (NULL if f returns void); converts every
// exception into a host status as described at the top of this file.
template <class F>
tsr_status* guard(const tsr_host_api* host, F&& f) noexcept {
  const status_maker status(host);
  try {
    if constexpr (std::is_void_v<decltype(f())>) {
      f();
      return nullptr;
    } else {
      return f();
    }
  } catch (const status_error& e) {
    return status.make(e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return status.make(TSR_RESOURCE_EXHAUSTED, "out of host memory (std::bad_alloc)");
  } catch (const std::exception& e) {
    return status.makef(TSR_INTERNAL, "unexpected exception: %s (a plugin bug, please report)",
                        e.what());
  } catch (...) {
    return status.make(TSR_INTERNAL, "unexpected non-standard exception (a plugin bug)");
  }
}

}  // namespace tessera::sdk

#endif  // TESSERA_SDK_STATUS_HPP_
