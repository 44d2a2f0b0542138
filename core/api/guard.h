// The ABI boundary: every tessera.h function body runs inside api_guard, which
// turns a tsr::Error (or any other exception) into a tsr_status and never lets
// one escape.
//
// Note [No exceptions across the ABI]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// No C++ exception crosses tessera.h or plugin.h in either direction: every
// entry catches everything and returns a status naming what failed.
#pragma once

#include <new>

#include "tessera/status.h"
#include "util/error.h"

namespace tsr {

template <typename F>
tsr_status* api_guard(F&& body) noexcept {
  try {
    body();
    return nullptr;
  } catch (const Error& e) {
    return tsr_status_create(e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return tsr_status_create(TSR_RESOURCE_EXHAUSTED, "out of host memory");
  } catch (const std::exception& e) {
    return tsr_status_create(TSR_INTERNAL, e.what());
  } catch (...) {
    return tsr_status_create(TSR_INTERNAL, "unknown exception inside libtessera");
  }
}

// Throws INVALID_ARGUMENT when an out_ pointer is NULL.
template <typename T>
void require_out(T* p, const char* name) {
  if (p == nullptr)
    fail(TSR_INVALID_ARGUMENT, "argument '{}' is NULL; pass where to write the result", name);
}

// Throws unless a caller-set struct_size covers at least `min`.
inline void require_struct(size_t struct_size, size_t min, const char* name) {
  if (struct_size != 0 && struct_size < min)
    fail(TSR_INVALID_ARGUMENT,
         "argument '{}': struct_size {} is smaller than the oldest layout ({} bytes); set it to "
         "sizeof",
         name, struct_size, min);
}

}  // namespace tsr
