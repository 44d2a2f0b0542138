// tsr_status: the ABI's error object (abi/tessera/status.h).
//
// A status is a heap object {code, message}. NULL is OK. When allocation fails we
// hand out a static out-of-memory status whose free is a no-op, so making a
// status never fails.
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "tessera/status.h"
#include "util/error.h"

struct tsr_status {
  tsr_status_code code;
  std::string message;
};

namespace {
tsr_status g_out_of_memory{TSR_RESOURCE_EXHAUSTED,
                           std::string("out of host memory while reporting an error")};
}

extern "C" {

TSR_API tsr_status* tsr_status_create(tsr_status_code code, const char* message) {
  if (code == TSR_OK) return nullptr;
  try {
    return new tsr_status{code, std::string(message ? message : "")};
  } catch (...) {
    return &g_out_of_memory;
  }
}

TSR_API tsr_status_code tsr_status_code_of(const tsr_status* status) {
  return status ? status->code : TSR_OK;
}

TSR_API const char* tsr_status_message(const tsr_status* status) {
  return status ? status->message.c_str() : "";
}

TSR_API const char* tsr_status_code_name(tsr_status_code code) {
  switch (code) {
    case TSR_OK:
      return "OK";
    case TSR_CANCELLED:
      return "CANCELLED";
    case TSR_UNKNOWN:
      return "UNKNOWN";
    case TSR_INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case TSR_DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case TSR_NOT_FOUND:
      return "NOT_FOUND";
    case TSR_ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case TSR_PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case TSR_RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case TSR_FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case TSR_ABORTED:
      return "ABORTED";
    case TSR_OUT_OF_RANGE:
      return "OUT_OF_RANGE";
    case TSR_UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case TSR_INTERNAL:
      return "INTERNAL";
    case TSR_UNAVAILABLE:
      return "UNAVAILABLE";
    case TSR_DATA_LOSS:
      return "DATA_LOSS";
  }
  return "UNKNOWN_CODE";
}

TSR_API void tsr_status_free(tsr_status* status) {
  if (status == nullptr || status == &g_out_of_memory) return;
  delete status;
}

}  // extern "C"

namespace tsr {

void throw_if_error(tsr_status* status) {
  if (status == nullptr) return;
  tsr_status_code code = status->code;
  std::string message = std::move(status->message);
  tsr_status_free(status);
  throw Error(code, std::move(message));
}

void throw_if_error(tsr_status* status, const std::string& context) {
  if (status == nullptr) return;
  tsr_status_code code = status->code;
  std::string message = context + ": " + status->message;
  tsr_status_free(status);
  throw Error(code, std::move(message));
}

}  // namespace tsr
