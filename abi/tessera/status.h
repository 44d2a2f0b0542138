/*
 * tessera/status.h - the error type of every Tessera ABI call.
 *
 * Every fallible function of the application API (tessera.h) and of the plugin
 * ABI (plugin.h) returns a `tsr_status*`. NULL means success and costs nothing;
 * a non-NULL status carries a canonical code and a message that names the
 * argument, the value and the fix. The caller owns a returned status and frees
 * it with tsr_status_free (which accepts NULL).
 *
 * Plugins never link libtessera: they create statuses through the host
 * callback `tsr_host_api.make_status` (plugin.h), so every status is created and
 * freed by the host's allocator.
 *
 * C99; no C++ in this header. Thread safety: a status object is owned by one
 * thread at a time; the functions below are safe to call from any thread.
 */
#ifndef TESSERA_STATUS_H_
#define TESSERA_STATUS_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define TSR_API __declspec(dllimport)
#elif defined(__GNUC__)
#define TSR_API __attribute__((visibility("default")))
#else
#define TSR_API
#endif

/* Canonical codes; the numbering follows absl/gRPC so tools can map them. */
typedef enum tsr_status_code {
  TSR_OK = 0,
  TSR_CANCELLED = 1,
  TSR_UNKNOWN = 2,
  TSR_INVALID_ARGUMENT = 3, /* the caller passed a bad value; fix the call */
  TSR_DEADLINE_EXCEEDED = 4,
  TSR_NOT_FOUND = 5,      /* a named thing (op, file, device) is absent */
  TSR_ALREADY_EXISTS = 6, /* e.g. two plugins claiming one name */
  TSR_PERMISSION_DENIED = 7,
  TSR_RESOURCE_EXHAUSTED = 8,  /* out of device or host memory */
  TSR_FAILED_PRECONDITION = 9, /* the system is not in a state to do this */
  TSR_ABORTED = 10,
  TSR_OUT_OF_RANGE = 11,  /* an index or dim outside its valid range */
  TSR_UNIMPLEMENTED = 12, /* no kernel / feature for this combination */
  TSR_INTERNAL = 13,      /* a broken invariant: a bug, please report */
  TSR_UNAVAILABLE = 14,   /* no such device/driver here; try elsewhere */
  TSR_DATA_LOSS = 15
} tsr_status_code;

/* Opaque. NULL = OK. */
typedef struct tsr_status tsr_status;

/* Creates a status owned by the caller. `message` is copied; NULL means "".
 * Returns NULL when `code` is TSR_OK. Never fails: on allocation failure a
 * static out-of-memory status is returned (freeing it is a no-op). */
TSR_API tsr_status* tsr_status_create(tsr_status_code code, const char* message);

/* The code of `status`; TSR_OK for NULL. */
TSR_API tsr_status_code tsr_status_code_of(const tsr_status* status);

/* The message of `status`; "" for NULL. Borrowed: valid until the status is
 * freed. */
TSR_API const char* tsr_status_message(const tsr_status* status);

/* "OK", "INVALID_ARGUMENT", ... ; "UNKNOWN_CODE" for values outside the enum.
 * Static storage. */
TSR_API const char* tsr_status_code_name(tsr_status_code code);

/* Frees `status`; accepts NULL. */
TSR_API void tsr_status_free(tsr_status* status);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TESSERA_STATUS_H_ */
