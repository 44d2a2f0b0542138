/*
 * tessera/tessera.h - the application API of Tessera.
 *
 * What applications and every frontend call. Conventions (see docs/abi.md):
 *  - Handles are opaque: tsr_runtime, tsr_plugin, tsr_tensor, tsr_stream,
 *    tsr_event, tsr_op. A device is a plain value (tsr_device).
 *  - Every fallible call returns tsr_status* (NULL = OK; the caller frees a
 *    non-NULL status with tsr_status_free). On failure, out_ parameters are left
 *    untouched and nothing is leaked.
 *  - `out_` parameters come last. A function named _create / _load / returning a
 *    tensor gives the caller a reference it must release; accessors lend.
 *    Every release/destroy accepts NULL.
 *  - Every argument is validated; a bad one yields TSR_INVALID_ARGUMENT (or
 *    OUT_OF_RANGE for indices/dims) with a message naming the argument, the value
 *    and the fix. No exception, abort or exit crosses this boundary.
 *
 * Note [Handle thread safety]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * Threads: runtime, plugin, op, stream, event
 * handles and devices may be used from any thread. A tensor may be read
 * (metadata, reads of its data) from many threads at once but written (in-place
 * ops, copy_from_host, release of the last reference) by one thread at a time,
 * with no concurrent readers; the core does not lock tensor data.
 *
 * Execution model (Note [Streams]): each thread has a current stream per device,
 * initially the device's default stream. Operators enqueue on the current stream
 * of their device. Host reads (tsr_tensor_copy_to_host, item) synchronize that
 * stream. A failure inside asynchronous work sticks to its stream: the next call
 * that enqueues on, queries or synchronizes that stream returns it, naming the op
 * that failed; the stream stays failed (TSR_FAILED_PRECONDITION, with the
 * original error) until it is destroyed.
 */
#ifndef TESSERA_TESSERA_H_
#define TESSERA_TESSERA_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tessera/status.h"
#include "tessera/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Library version (semantic versioning). */
#define TSR_VERSION_MAJOR 0
#define TSR_VERSION_MINOR 1
#define TSR_VERSION_PATCH 0

/* "0.1.0"; static storage. */
TSR_API const char* tsr_version_string(void);

typedef struct tsr_runtime tsr_runtime;
typedef struct tsr_plugin tsr_plugin;
typedef struct tsr_stream tsr_stream;
typedef struct tsr_event tsr_event;
typedef struct tsr_op tsr_op;
struct DLManagedTensor; /* dlpack/dlpack.h; only pointers are used here */

/* ======================================================================== */
/* Runtime                                                                   */
/* ======================================================================== */

/* Options for tsr_runtime_create; valid when zeroed. */
typedef struct tsr_runtime_options {
  size_t struct_size; /* sizeof(tsr_runtime_options); 0 = the whole struct */
  /* When true, plugins found on the search path are NOT loaded at creation
   * (load them later with tsr_plugin_load / tsr_runtime_load_plugins).
   * Default (false): load every plugin on the search path. */
  bool skip_default_plugins;
  /* Extra directories to search before TESSERA_PLUGIN_PATH and the install
   * directory, ':'-separated. Borrowed for the call. Default NULL: none. */
  const char* plugin_path;
} tsr_runtime_options;

/* Creates a runtime: the CPU-side registry of plugins, devices, kernels and
 * caching allocators. `options` may be NULL (defaults). Plugin load failures
 * never fail creation: they are recorded in the load report.
 * `out_runtime` must be destroyed with tsr_runtime_destroy. */
TSR_API tsr_status* tsr_runtime_create(const tsr_runtime_options* options,
                                       tsr_runtime** out_runtime);

/* Destroys `runtime` (NULL is a no-op). Tensors, streams and events of this
 * runtime must have been released; any still alive keep their storage and
 * plugin alive until released (the runtime is torn down with the last one). */
TSR_API void tsr_runtime_destroy(tsr_runtime* runtime);

/* The process-wide default runtime, created on first use with default options
 * and destroyed at process exit. Borrowed; never destroy it. */
TSR_API tsr_status* tsr_runtime_default(tsr_runtime** out_runtime);

/* ======================================================================== */
/* Plugins and the load report                                               */
/* ======================================================================== */

/* Loads the plugin at `path` (a shared library exporting
 * TSR_PLUGIN_ENTRY_SYMBOL, see plugin.h). On success `*out_plugin` is borrowed
 * (valid until unloaded or the runtime is destroyed). Loading a file that is
 * already loaded returns the loaded plugin (OK) and the report says so. Every
 * outcome, success or failure, is appended to the load report. */
TSR_API tsr_status* tsr_plugin_load(tsr_runtime* runtime, const char* path,
                                    tsr_plugin** out_plugin);

/* Loads every `libtessera-*.so` found in the search path: `extra_path`
 * (':'-separated, may be NULL), then $TESSERA_PLUGIN_PATH, then the install
 * plugin directory. Individual failures go to the load report only; the
 * returned status is non-NULL only for bad arguments. */
TSR_API tsr_status* tsr_runtime_load_plugins(tsr_runtime* runtime, const char* extra_path);

/* Unloads `plugin`. Refused with TSR_FAILED_PRECONDITION (naming how many
 * storages, streams and events are alive) while anything it made is alive. */
TSR_API tsr_status* tsr_plugin_unload(tsr_runtime* runtime, tsr_plugin* plugin);

/* Number of loaded plugins and the i-th one (borrowed). */
TSR_API tsr_status* tsr_runtime_plugin_count(const tsr_runtime* runtime, size_t* out_count);
TSR_API tsr_status* tsr_runtime_plugin_at(const tsr_runtime* runtime, size_t index,
                                          tsr_plugin** out_plugin);

/* Facts about a loaded plugin. Strings are borrowed while the plugin is loaded. */
typedef struct tsr_plugin_info {
  size_t struct_size;            /* set by the caller: sizeof(tsr_plugin_info) */
  const char* name;              /* "cpu" */
  const char* version;           /* the plugin's own version string */
  const char* path;              /* canonical file path */
  const char* device_type;       /* "cpu", "vulkan", ... */
  uint32_t abi_major, abi_minor; /* what the plugin was built against */
  int32_t device_count;
  int32_t kernels_bound;    /* kernel entries bound to registry ops */
  int32_t kernels_rejected; /* entries not bound (listed in the load report) */
} tsr_plugin_info;
TSR_API tsr_status* tsr_plugin_get_info(const tsr_plugin* plugin, tsr_plugin_info* out_info);

/* Outcome kinds of load report entries. */
typedef enum tsr_load_event {
  TSR_LOAD_LOADED = 0,          /* plugin loaded and initialised */
  TSR_LOAD_FAILED = 1,          /* the file could not be used; see code/message */
  TSR_LOAD_ALREADY_LOADED = 2,  /* the same file again: the loaded plugin was returned */
  TSR_LOAD_KERNEL_REJECTED = 3, /* one kernel entry not bound (schema mismatch, ...) */
  TSR_LOAD_UNLOADED = 4,        /* plugin unloaded */
  TSR_LOAD_NO_DEVICE = 5        /* init said UNAVAILABLE: no such device here */
} tsr_load_event;

/* One entry of the load report. Strings are owned by the runtime and stay valid
 * until it is destroyed. */
typedef struct tsr_load_report_entry {
  size_t struct_size; /* set by the caller: sizeof(tsr_load_report_entry) */
  int32_t event;      /* tsr_load_event */
  int32_t code;       /* tsr_status_code; TSR_OK for successes */
  const char* path;   /* the file concerned */
  const char* plugin; /* plugin name when known, else "" */
  const char* detail; /* the reason / message; "" when none */
} tsr_load_report_entry;

TSR_API tsr_status* tsr_runtime_load_report_count(const tsr_runtime* runtime, size_t* out_count);
TSR_API tsr_status* tsr_runtime_load_report_at(const tsr_runtime* runtime, size_t index,
                                               tsr_load_report_entry* out_entry);

/* ======================================================================== */
/* Devices                                                                   */
/* ======================================================================== */

/* Number of devices (all plugins, plus the built-in meta device, which is
 * listed last) and the i-th one. Enumeration order is stable for a runtime. */
TSR_API tsr_status* tsr_device_count(const tsr_runtime* runtime, size_t* out_count);
TSR_API tsr_status* tsr_device_at(const tsr_runtime* runtime, size_t index, tsr_device* out_device);

/* Parses "cpu", "cpu:0", "vulkan:1", "meta". NOT_FOUND when the type is
 * unknown to this runtime or the index has no device. */
TSR_API tsr_status* tsr_device_parse(const tsr_runtime* runtime, const char* text,
                                     tsr_device* out_device);

/* Writes "type:index" into `buffer` (NUL-terminated, truncated to `capacity`). */
TSR_API tsr_status* tsr_device_format(const tsr_runtime* runtime, tsr_device device, char* buffer,
                                      size_t capacity);

/* Feature bits of tsr_device_properties.features. */
#define TSR_FEATURE_HOST_ADDRESSABLE (1u << 0) /* tensor data is a host pointer */
#define TSR_FEATURE_ASYNC (1u << 1)            /* work runs asynchronously */
#define TSR_FEATURE_TIMESTAMPS (1u << 2)       /* events measure elapsed time */
#define TSR_FEATURE_PINNED_HOST (1u << 3)      /* pinned host allocator present */

typedef struct tsr_device_properties {
  size_t struct_size; /* set by the caller: sizeof(tsr_device_properties) */
  tsr_device device;
  char name[128];          /* "AMD Ryzen ...", "llvmpipe (LLVM 15, 256 bits)" */
  char type_name[32];      /* "cpu", "vulkan", "meta" */
  char plugin[64];         /* plugin name; "core" for meta */
  uint64_t total_memory;   /* bytes; 0 if unknown */
  uint64_t free_memory;    /* bytes at the time of the call; 0 if unknown */
  uint64_t dtypes;         /* mask of TSR_DTYPE_BIT()s the device computes in */
  uint64_t max_allocation; /* largest single allocation in bytes; 0 = no limit known */
  uint32_t features;       /* TSR_FEATURE_* */
  int32_t compute_units;   /* cores / SMs / CUs; 0 if unknown */
  uint32_t alignment;      /* guaranteed alignment of allocations, bytes */
} tsr_device_properties;

TSR_API tsr_status* tsr_device_get_properties(const tsr_runtime* runtime, tsr_device device,
                                              tsr_device_properties* out_properties);

/* Caching allocator statistics of a device, in bytes. */
typedef struct tsr_memory_stats {
  size_t struct_size;          /* set by the caller */
  uint64_t allocated;          /* bytes held by live storages */
  uint64_t reserved;           /* bytes obtained from the plugin (allocated + cached) */
  uint64_t peak_allocated;     /* high-water mark of `allocated` since reset */
  uint64_t alloc_count;        /* allocations served */
  uint64_t plugin_alloc_count; /* allocations that reached the plugin */
} tsr_memory_stats;

TSR_API tsr_status* tsr_device_memory_stats(tsr_runtime* runtime, tsr_device device,
                                            tsr_memory_stats* out_stats);
/* Returns cached, unused blocks of `device` to its plugin. */
TSR_API tsr_status* tsr_device_empty_cache(tsr_runtime* runtime, tsr_device device);
/* Resets peak_allocated to the current allocated. */
TSR_API tsr_status* tsr_device_reset_peak(tsr_runtime* runtime, tsr_device device);

/* Sets a plugin option ("threads" = "2", ...) on `device`'s plugin. */
TSR_API tsr_status* tsr_device_set_option(tsr_runtime* runtime, tsr_device device, const char* key,
                                          const char* value);

/* Waits for all work on every stream of `device`. */
TSR_API tsr_status* tsr_device_synchronize(tsr_runtime* runtime, tsr_device device);

/* ======================================================================== */
/* Streams and events                                                        */
/* ======================================================================== */

/* Creates a stream on `device`; release with tsr_stream_release. */
TSR_API tsr_status* tsr_stream_create(tsr_runtime* runtime, tsr_device device,
                                      tsr_stream** out_stream);
TSR_API void tsr_stream_release(tsr_stream* stream);

/* The default stream of `device` (borrowed; lives as long as the runtime). */
TSR_API tsr_status* tsr_stream_default(tsr_runtime* runtime, tsr_device device,
                                       tsr_stream** out_stream);

/* The calling thread's current stream for `device` (borrowed). */
TSR_API tsr_status* tsr_stream_current(tsr_runtime* runtime, tsr_device device,
                                       tsr_stream** out_stream);

/* Makes `stream` current for its device on the calling thread; NULL for
 * `stream` is invalid (use tsr_stream_default). The thread holds a reference
 * until another stream is made current or the thread exits. */
TSR_API tsr_status* tsr_stream_set_current(tsr_stream* stream);

TSR_API tsr_status* tsr_stream_get_device(const tsr_stream* stream, tsr_device* out_device);

/* Blocks until all work enqueued on `stream` is done. Returns the stream's
 * sticky error, if any (Note [Streams]). */
TSR_API tsr_status* tsr_stream_synchronize(tsr_stream* stream);

/* *out_done = true when all work on `stream` is done. */
TSR_API tsr_status* tsr_stream_query(tsr_stream* stream, bool* out_done);

/* Makes all future work on `stream` wait until `event` completes. */
TSR_API tsr_status* tsr_stream_wait_event(tsr_stream* stream, tsr_event* event);

/* Event flags. */
#define TSR_EVENT_TIMING (1u << 0) /* record timestamps for tsr_event_elapsed_ms */

TSR_API tsr_status* tsr_event_create(tsr_runtime* runtime, tsr_device device, uint32_t flags,
                                     tsr_event** out_event);
TSR_API void tsr_event_release(tsr_event* event);
/* Captures the work enqueued on `stream` so far. */
TSR_API tsr_status* tsr_event_record(tsr_event* event, tsr_stream* stream);
/* *out_done = true once the captured work completed (true if never recorded). */
TSR_API tsr_status* tsr_event_query(tsr_event* event, bool* out_done);
TSR_API tsr_status* tsr_event_synchronize(tsr_event* event);
/* Milliseconds between two recorded, completed TIMING events of one device. */
TSR_API tsr_status* tsr_event_elapsed_ms(tsr_event* start, tsr_event* end, double* out_ms);

/* ======================================================================== */
/* Tensors: creation and lifetime                                            */
/* ======================================================================== */

/* Uninitialised contiguous tensor. `sizes` has `ndim` (0..TSR_MAX_DIMS)
 * non-negative entries (may be NULL when ndim is 0). Release with
 * tsr_tensor_release. */
TSR_API tsr_status* tsr_tensor_empty(tsr_runtime* runtime, int32_t ndim, const int64_t* sizes,
                                     tsr_dtype dtype, tsr_device device, tsr_tensor** out_tensor);

/* Uninitialised tensor with explicit element strides (non-negative). Storage
 * covers the largest addressed element. */
TSR_API tsr_status* tsr_tensor_empty_strided(tsr_runtime* runtime, int32_t ndim,
                                             const int64_t* sizes, const int64_t* strides,
                                             tsr_dtype dtype, tsr_device device,
                                             tsr_tensor** out_tensor);

/* Contiguous tensor filled with zeros. */
TSR_API tsr_status* tsr_tensor_zeros(tsr_runtime* runtime, int32_t ndim, const int64_t* sizes,
                                     tsr_dtype dtype, tsr_device device, tsr_tensor** out_tensor);

/* Contiguous tensor holding a copy of `nbytes` of host memory at `data`, laid
 * out row-major; `nbytes` must equal numel * element size. */
TSR_API tsr_status* tsr_tensor_from_host(tsr_runtime* runtime, const void* data, size_t nbytes,
                                         int32_t ndim, const int64_t* sizes, tsr_dtype dtype,
                                         tsr_device device, tsr_tensor** out_tensor);

/* Called once when a tensor made by tsr_tensor_from_blob releases its storage.
 * Must not throw; may run on any thread. */
typedef void (*tsr_blob_deleter)(void* data, void* context);

/* Wraps memory the caller owns without copying. `data` must be addressable by
 * `device`'s kernels (host memory for cpu) and cover every addressed element;
 * `strides` may be NULL (row-major). `deleter` (may be NULL) runs when the
 * storage dies, or at once if this call fails. */
TSR_API tsr_status* tsr_tensor_from_blob(tsr_runtime* runtime, void* data, int32_t ndim,
                                         const int64_t* sizes, const int64_t* strides,
                                         tsr_dtype dtype, tsr_device device,
                                         tsr_blob_deleter deleter, void* deleter_context,
                                         tsr_tensor** out_tensor);

/* A contiguous copy of host tensor `tensor` in host memory pinned for
 * `device` by its plugin (TSR_FEATURE_PINNED_HOST): copies between that memory
 * and the device skip the plugin's staging and are enqueued on the stream
 * without a host wait (the Vulkan plugin: one transfer command). The copy is a
 * cpu:0 tensor with `tensor`'s dtype and sizes; its memory goes back to the
 * plugin when the storage dies. UNIMPLEMENTED, naming the device, when the
 * device's plugin has no pinned allocator (the CPU plugin: host memory is what
 * it reads already). */
TSR_API tsr_status* tsr_tensor_pin_memory(const tsr_tensor* tensor, tsr_device device,
                                          tsr_tensor** out_tensor);
/* 1 when `tensor`'s memory was pinned by tsr_tensor_pin_memory. */
TSR_API tsr_status* tsr_tensor_is_pinned(const tsr_tensor* tensor, int32_t* out_pinned);

/* DLPack import: takes ownership of `managed` on success (its deleter runs when
 * the storage dies); on failure ownership stays with the caller. */
TSR_API tsr_status* tsr_tensor_from_dlpack(tsr_runtime* runtime, struct DLManagedTensor* managed,
                                           tsr_tensor** out_tensor);

/* DLPack export: a DLManagedTensor sharing `tensor`'s storage; the consumer
 * calls its deleter. Host-addressable devices only; bool exports as uint8
 * (DLPack 0.6 has no bool). */
TSR_API tsr_status* tsr_tensor_to_dlpack(tsr_tensor* tensor, struct DLManagedTensor** out_managed);

/* Reference counting; release accepts NULL. */
TSR_API void tsr_tensor_retain(tsr_tensor* tensor);
TSR_API void tsr_tensor_release(tsr_tensor* tensor);

/* ======================================================================== */
/* Tensors: metadata                                                         */
/* ======================================================================== */

/* A snapshot of a tensor's metadata. */
typedef struct tsr_tensor_info {
  size_t struct_size; /* set by the caller: sizeof(tsr_tensor_info) */
  int32_t dtype;      /* tsr_dtype */
  int32_t ndim;
  int64_t sizes[TSR_MAX_DIMS];
  int64_t strides[TSR_MAX_DIMS]; /* elements */
  int64_t storage_offset;        /* elements */
  int64_t numel;
  tsr_device device;
} tsr_tensor_info;

TSR_API tsr_status* tsr_tensor_get_info(const tsr_tensor* tensor, tsr_tensor_info* out_info);
TSR_API tsr_status* tsr_tensor_dtype(const tsr_tensor* tensor, tsr_dtype* out_dtype);
TSR_API tsr_status* tsr_tensor_device(const tsr_tensor* tensor, tsr_device* out_device);
TSR_API tsr_status* tsr_tensor_ndim(const tsr_tensor* tensor, int32_t* out_ndim);
/* Writes ndim entries into out_sizes / out_strides (room for TSR_MAX_DIMS). */
TSR_API tsr_status* tsr_tensor_sizes(const tsr_tensor* tensor, int64_t* out_sizes);
TSR_API tsr_status* tsr_tensor_strides(const tsr_tensor* tensor, int64_t* out_strides);
TSR_API tsr_status* tsr_tensor_storage_offset(const tsr_tensor* tensor, int64_t* out_offset);
TSR_API tsr_status* tsr_tensor_numel(const tsr_tensor* tensor, int64_t* out_numel);
/* Contiguity in a memory format (PyTorch's is_contiguous(memory_format)). */
TSR_API tsr_status* tsr_tensor_is_contiguous(const tsr_tensor* tensor, tsr_memory_format format,
                                             bool* out_contiguous);
/* A number identifying the storage: equal for tensors that share storage,
 * never reused within a runtime. */
TSR_API tsr_status* tsr_tensor_storage_id(const tsr_tensor* tensor, uint64_t* out_id);
/* The version counter, shared by views and detach (Note [Version counter]):
 * every in-place write through any alias bumps it. */
TSR_API tsr_status* tsr_tensor_version(const tsr_tensor* tensor, uint64_t* out_version);
/* Raw address of element (0,...,0); FAILED_PRECONDITION on devices whose
 * memory is not host addressable. Borrowed while the tensor lives. */
TSR_API tsr_status* tsr_tensor_data_ptr(const tsr_tensor* tensor, void** out_data);
/* The descriptor a kernel would see (see types.h). */
TSR_API tsr_status* tsr_tensor_describe(const tsr_tensor* tensor, tsr_tensor_desc* out_desc);

/* ======================================================================== */
/* Tensors: views (share storage and version counter with `tensor`)          */
/* ======================================================================== */
/* Each returns a new tensor reference in out_view; negative dims count from
 * the end, as in PyTorch. These call the registry's view ops, so observers
 * see them. */

/* One entry of `sizes` may be -1 (inferred). Fails when the strides cannot
 * express the view (use reshape). */
TSR_API tsr_status* tsr_tensor_view(tsr_tensor* tensor, int32_t ndim, const int64_t* sizes,
                                    tsr_tensor** out_view);
/* A view when the strides allow, else a contiguous copy. */
TSR_API tsr_status* tsr_tensor_reshape(tsr_tensor* tensor, int32_t ndim, const int64_t* sizes,
                                       tsr_tensor** out_tensor);
TSR_API tsr_status* tsr_tensor_transpose(tsr_tensor* tensor, int32_t dim0, int32_t dim1,
                                         tsr_tensor** out_view);
TSR_API tsr_status* tsr_tensor_permute(tsr_tensor* tensor, int32_t ndim, const int64_t* dims,
                                       tsr_tensor** out_view);
/* PyTorch's self[..., start:end:step, ...] on `dim`; start/end are clamped;
 * INT64_MAX for end means "to the end"; step >= 1. */
TSR_API tsr_status* tsr_tensor_slice(tsr_tensor* tensor, int32_t dim, int64_t start, int64_t end,
                                     int64_t step, tsr_tensor** out_view);
/* Removes `dim`, taking element `index` (negative counts from the end). */
TSR_API tsr_status* tsr_tensor_select(tsr_tensor* tensor, int32_t dim, int64_t index,
                                      tsr_tensor** out_view);
/* Broadcasts size-1 dims to `sizes` (-1 keeps a size); new dims are prepended.
 * The result has stride 0 on expanded dims and rejects in-place writes. */
TSR_API tsr_status* tsr_tensor_expand(tsr_tensor* tensor, int32_t ndim, const int64_t* sizes,
                                      tsr_tensor** out_view);
/* Removes size-1 dim `dim`; TSR_MAX_DIMS as `dim` removes every size-1 dim. */
TSR_API tsr_status* tsr_tensor_squeeze(tsr_tensor* tensor, int32_t dim, tsr_tensor** out_view);
TSR_API tsr_status* tsr_tensor_unsqueeze(tsr_tensor* tensor, int32_t dim, tsr_tensor** out_view);
/* storage_offset < 0 keeps the tensor's own offset. */
TSR_API tsr_status* tsr_tensor_as_strided(tsr_tensor* tensor, int32_t ndim, const int64_t* sizes,
                                          const int64_t* strides, int64_t storage_offset,
                                          tsr_tensor** out_view);
/* Same storage and version counter, no autograd history. */
TSR_API tsr_status* tsr_tensor_detach(tsr_tensor* tensor, tsr_tensor** out_view);

/* ======================================================================== */
/* Tensors: copies and conversion                                            */
/* ======================================================================== */

/* Copies the elements of `tensor` (any strides) row-major into host memory
 * `dst` of `nbytes` (must equal numel * element size). Synchronizes. */
TSR_API tsr_status* tsr_tensor_copy_to_host(const tsr_tensor* tensor, void* dst, size_t nbytes);
/* Overwrites `tensor`'s elements (any strides, not overlapping) from row-major
 * host memory; bumps the version. */
TSR_API tsr_status* tsr_tensor_copy_from_host(tsr_tensor* tensor, const void* src, size_t nbytes);
/* dst.copy_(src): broadcasting, dtype conversion, across devices. */
TSR_API tsr_status* tsr_tensor_copy_(tsr_tensor* dst, tsr_tensor* src);
/* A new contiguous tensor on `device` (a new reference even when already there). */
TSR_API tsr_status* tsr_tensor_to_device(tsr_tensor* tensor, tsr_device device,
                                         tsr_tensor** out_tensor);
/* A new tensor of `dtype`; returns `tensor` itself (retained) when it already
 * has that dtype, as PyTorch's to() does. */
TSR_API tsr_status* tsr_tensor_to_dtype(tsr_tensor* tensor, tsr_dtype dtype,
                                        tsr_tensor** out_tensor);
/* The value of a one-element tensor as a scalar (bool, int64, float64 or
 * complex128 by the dtype's kind). Synchronizes. */
TSR_API tsr_status* tsr_tensor_item(const tsr_tensor* tensor, tsr_scalar* out_value);

/* ======================================================================== */
/* Autograd                                                                  */
/* ======================================================================== */

/* Note [Autograd]
 * ~~~~~~~~~~~~~~~
 * Ops record a graph when grad mode is on (the default, per thread) and a
 * tensor argument requires grad; backward walks it and accumulates into the
 * .grad of the leaves. Only floating and complex tensors can require grad;
 * integer and bool outputs never do. Semantics are PyTorch's. */

/* Sets requires_grad of a leaf (a tensor no recorded op produced). A non-leaf
 * cannot change it (detach() it instead); an integer or bool tensor cannot
 * require grad. */
TSR_API tsr_status* tsr_tensor_set_requires_grad(tsr_tensor* tensor, int32_t requires_grad);
TSR_API tsr_status* tsr_tensor_requires_grad(const tsr_tensor* tensor, int32_t* out_requires_grad);
/* 1 when no recorded op produced the tensor (whether or not it requires grad). */
TSR_API tsr_status* tsr_tensor_is_leaf(const tsr_tensor* tensor, int32_t* out_is_leaf);
/* The accumulated gradient as a new reference, or NULL in *out_grad when none. */
TSR_API tsr_status* tsr_tensor_grad(const tsr_tensor* tensor, tsr_tensor** out_grad);
/* Replaces the gradient (NULL clears it: zero_grad(set_to_none=True)). The
 * gradient must match the tensor's shape and device. */
TSR_API tsr_status* tsr_tensor_set_grad(tsr_tensor* tensor, tsr_tensor* grad);
/* Makes `tensor` (a leaf) a view of `data`'s elements: its storage, dtype,
 * sizes, strides and offset become those of `data`, while it keeps its own
 * identity - handle, requires_grad, grad, hooks and version counter (bumped, so
 * a graph that saved the old values refuses to use them). PyTorch's
 * `param.data = data`: nn::Module::to(device/dtype) moves parameters with it,
 * so references to them (an optimizer's, a layer's) stay valid. `data` may
 * have another shape, dtype or device; a tensor that requires grad needs a
 * floating or complex `data`. Not for a non-leaf (detach() it) or an
 * inference tensor outside inference mode. A write: no other thread may use
 * `tensor` meanwhile. */
TSR_API tsr_status* tsr_tensor_set_data(tsr_tensor* tensor, tsr_tensor* data);
/* A non-leaf keeps its gradient in .grad during backward (no-op on leaves). */
TSR_API tsr_status* tsr_tensor_retain_grad(tsr_tensor* tensor);
/* Detaches the tensor in place: it becomes a leaf that does not require grad
 * (PyTorch's detach_). Refused on a view of a tensor with history. */
TSR_API tsr_status* tsr_tensor_detach_(tsr_tensor* tensor);
/* The name of the node that produced the tensor ("MulBackward0"), or NULL for
 * a leaf. The string lives as long as that node (at least as long as the
 * tensor keeps its history). */
TSR_API tsr_status* tsr_tensor_grad_fn_name(const tsr_tensor* tensor, const char** out_name);
/* The next functions of the tensor's grad_fn (grad_fn.next_functions): for
 * each edge i < *out_count (at most `capacity` are written), names[i] is the
 * next node's name ("AccumulateGrad" for a leaf, NULL where the input needs no
 * gradient) and input_nrs[i] its input slot. *out_count is 0 for a leaf. The
 * names live as long as the nodes. */
TSR_API tsr_status* tsr_tensor_grad_fn_next(const tsr_tensor* tensor, int32_t capacity,
                                            const char** names, uint32_t* input_nrs,
                                            int32_t* out_count);

/* Accumulates d(sum_i tensors[i] * grad_tensors[i]) into the leaves' .grad.
 * grad_tensors may be NULL, or have NULL entries, for one-element tensors
 * (ones). retain_graph keeps the graph's saved tensors for another backward;
 * create_graph records the backward itself (higher-order derivatives). */
TSR_API tsr_status* tsr_autograd_backward(int32_t n, tsr_tensor* const* tensors,
                                          tsr_tensor* const* grad_tensors, int32_t retain_graph,
                                          int32_t create_graph);
/* Runs fn(context) when the tsr_autograd_backward running on this thread
 * finishes - after every node and hook - in the order queued; a status it
 * returns ends the backward with that error (PyTorch's queue_callback).
 * free_context (may be NULL) is called once fn ran or was dropped.
 * FAILED_PRECONDITION outside a backward (call it from a hook). */
typedef tsr_status* (*tsr_autograd_callback_fn)(void* context);
TSR_API tsr_status* tsr_autograd_queue_callback(tsr_autograd_callback_fn fn, void* context,
                                                void (*free_context)(void* context));
/* Gradients of the outputs with respect to `inputs`, returned (new references)
 * in out_grads[n_inputs] instead of accumulated; .grad is left alone. An input
 * the outputs do not depend on is an error unless allow_unused (then NULL). */
TSR_API tsr_status* tsr_autograd_grad(int32_t n_outputs, tsr_tensor* const* outputs,
                                      tsr_tensor* const* grad_outputs, int32_t n_inputs,
                                      tsr_tensor* const* inputs, int32_t retain_graph,
                                      int32_t create_graph, int32_t allow_unused,
                                      tsr_tensor** out_grads);
/* Grad mode of the calling thread (no_grad / enable_grad); *out_previous (may
 * be NULL) receives the former setting. */
TSR_API tsr_status* tsr_grad_mode_set(int32_t enabled, int32_t* out_previous);
TSR_API int32_t tsr_grad_mode_enabled(void);
/* Anomaly detection (process-wide): backward checks every gradient a node
 * returns and fails, naming the node and the forward op that recorded it,
 * when one holds NaN. Costs a reduction per gradient; off by default. */
TSR_API tsr_status* tsr_autograd_set_detect_anomaly(int32_t enabled);
TSR_API int32_t tsr_autograd_detect_anomaly_enabled(void);

/* Inference mode (thread-local, PyTorch's inference_mode): grad mode is off
 * and every tensor created meanwhile is an inference tensor - it has no
 * version counter (tsr_tensor_version fails on it) and autograd refuses it
 * later: an op that would save it for backward fails, as do requires_grad and,
 * outside inference mode, in-place writes to it. Views of inference tensors
 * are inference tensors. *out_previous (may be NULL) gets the former setting. */
TSR_API tsr_status* tsr_inference_mode_set(int32_t enabled, int32_t* out_previous);
TSR_API int32_t tsr_inference_mode_enabled(void);
TSR_API tsr_status* tsr_tensor_is_inference(const tsr_tensor* tensor, int32_t* out_is_inference);

/* Tensor hooks.
 * A gradient hook runs each time backward computes the gradient of `tensor`
 * (before it reaches .grad, retain_grad or a grad() result); `grad` is
 * borrowed. To replace the gradient write a new reference of the same shape,
 * dtype and device to *out_grad (left NULL: keep it). Hooks run in
 * registration order, each seeing the previous one's result. An error status
 * fails the backward with the hook's message.
 * A post-accumulate hook (leaves only) runs after the gradient was
 * accumulated into .grad, with the leaf itself (borrowed).
 * `destroy` (may be NULL) is called with `context` once the hook is removed
 * or its tensor and graph are gone. *out_handle identifies the hook for
 * tsr_tensor_remove_hook. The tensor must require grad. */
typedef tsr_status* (*tsr_grad_hook_fn)(void* context, tsr_tensor* grad, tsr_tensor** out_grad);
typedef tsr_status* (*tsr_post_accumulate_hook_fn)(void* context, tsr_tensor* tensor);
TSR_API tsr_status* tsr_tensor_register_hook(tsr_tensor* tensor, tsr_grad_hook_fn fn, void* context,
                                             void (*destroy)(void* context), uint64_t* out_handle);
TSR_API tsr_status* tsr_tensor_register_post_accumulate_grad_hook(tsr_tensor* tensor,
                                                                  tsr_post_accumulate_hook_fn fn,
                                                                  void* context,
                                                                  void (*destroy)(void* context),
                                                                  uint64_t* out_handle);
/* Removes a hook of `tensor` (either kind); NOT_FOUND when it has no such
 * hook (already removed). */
TSR_API tsr_status* tsr_tensor_remove_hook(tsr_tensor* tensor, uint64_t handle);

/* Custom functions (PyTorch's autograd.Function): a forward and a backward
 * written by the application.
 * tsr_function_apply runs `forward` with grad mode off, passing `args`
 * through (tensors as handles) and a context; forward writes `nouts` new
 * tensor references. When grad mode is on and a tensor argument requires
 * grad, the differentiable results get one node, "<name>Backward", whose
 * backward calls `backward` with the gradient of each result (borrowed;
 * zeros for a result nobody differentiated) and expects one new reference per
 * argument in grad_inputs (NULL: zero; NULL for non-tensor arguments).
 * In forward, the context takes:
 *  - save_for_backward: tensors backward reads (inputs or results), checked
 *    against in-place changes; read back with tsr_function_ctx_saved;
 *  - mark_dirty: inputs forward modified in place (they must be returned);
 *  - mark_non_differentiable: results that never require grad.
 * A result that is an input (not dirty) is returned as a view of it. */
typedef struct tsr_function_ctx tsr_function_ctx;
typedef tsr_status* (*tsr_function_forward_fn)(void* context, tsr_function_ctx* ctx,
                                               const tsr_value* args, int32_t nargs,
                                               tsr_tensor** outs, int32_t nouts);
typedef tsr_status* (*tsr_function_backward_fn)(void* context, tsr_function_ctx* ctx,
                                                tsr_tensor* const* grad_outputs, int32_t nouts,
                                                tsr_tensor** grad_inputs, int32_t nargs);
typedef struct tsr_function_def {
  size_t struct_size;                /* sizeof(tsr_function_def) */
  const char* name;                  /* "MyExp": the node is "MyExpBackward"; copied */
  tsr_function_forward_fn forward;   /* required */
  tsr_function_backward_fn backward; /* required */
  void* context;                     /* passed to both; must outlive the graph */
} tsr_function_def;
/* outs[0 .. nouts-1] receive new references. */
TSR_API tsr_status* tsr_function_apply(const tsr_function_def* def, const tsr_value* args,
                                       int32_t nargs, tsr_tensor** outs, int32_t nouts);
/* In forward only. */
TSR_API tsr_status* tsr_function_ctx_save_for_backward(tsr_function_ctx* ctx, int32_t n,
                                                       tsr_tensor* const* tensors);
TSR_API tsr_status* tsr_function_ctx_mark_dirty(tsr_function_ctx* ctx, int32_t n,
                                                tsr_tensor* const* tensors);
TSR_API tsr_status* tsr_function_ctx_mark_non_differentiable(tsr_function_ctx* ctx, int32_t n,
                                                             tsr_tensor* const* tensors);
/* In backward: the number of saved tensors and saved tensor i (a new
 * reference). Fails naming the function when it was modified in place since
 * it was saved, or freed by an earlier backward without retain_graph. */
TSR_API tsr_status* tsr_function_ctx_saved_count(const tsr_function_ctx* ctx, int32_t* out_count);
TSR_API tsr_status* tsr_function_ctx_saved(tsr_function_ctx* ctx, int32_t index,
                                           tsr_tensor** out_tensor);
/* In forward and backward: whether argument i needs a gradient. */
TSR_API tsr_status* tsr_function_ctx_needs_input_grad(const tsr_function_ctx* ctx, int32_t index,
                                                      int32_t* out_needs);

/* ======================================================================== */
/* Operators                                                                 */
/* ======================================================================== */

/* Finds an operator by "name.overload" ("add.Tensor") or bare name for the
 * default overload ("mm"). NOT_FOUND names the closest known ops. `*out_op`
 * is borrowed and valid for the runtime's lifetime; look it up once. */
TSR_API tsr_status* tsr_op_find(tsr_runtime* runtime, const char* name, const tsr_op** out_op);

/* Calls `op` with `nargs` positional arguments in schema order (keyword-only
 * ones included, in order); trailing arguments with defaults may be omitted.
 * Results are written to outs[0 .. nouts-1]; tensor results are new references
 * the caller releases (also for in-place / out= ops, which return their target).
 * `nouts` may be smaller than the number of results (extra ones are dropped);
 * `outs` may be NULL when `nouts` is 0. An op whose schema returns a list
 * (`Tensor(a)[]`: split, chunk, unbind) writes its tensors to outs[0 ..
 * count-1] and None after them; it fails with OUT_OF_RANGE, naming the count
 * and releasing everything, when nouts is smaller than the count. Runs on the
 * current stream of the tensors' device. */
TSR_API tsr_status* tsr_op_call(const tsr_op* op, const tsr_value* args, size_t nargs,
                                tsr_value* outs, size_t nouts);

/* Borrowed strings valid for the runtime's lifetime. */
TSR_API const char* tsr_op_name(const tsr_op* op);   /* "add.Tensor" */
TSR_API const char* tsr_op_schema(const tsr_op* op); /* full schema */

TSR_API tsr_status* tsr_op_count(const tsr_runtime* runtime, size_t* out_count);
TSR_API tsr_status* tsr_op_at(tsr_runtime* runtime, size_t index, const tsr_op** out_op);

/* An operator observer (profilers, tracers, op logs). Called before every
 * operator call that crosses the dispatcher: the application's calls and the
 * core's own calls made by decompositions, views included - so a recording
 * observer sees exactly which ops a call turned into. `op` is borrowed (valid
 * for the runtime's lifetime). Must not throw and must not call back into the
 * same runtime's ops; may run on any thread, concurrently. */
typedef void (*tsr_op_observer_fn)(const tsr_op* op, void* context);

/* Installs `fn` (NULL removes it) as `runtime`'s op observer, replacing any
 * previous one. `context` is passed back to every call. */
TSR_API tsr_status* tsr_runtime_set_op_observer(tsr_runtime* runtime, tsr_op_observer_fn fn,
                                                void* context);

/* Kinds of ops (see docs/operators.md). */
typedef enum tsr_op_kind {
  TSR_OP_PRIMITIVE = 0, /* a plugin kernel computes it */
  TSR_OP_COMPOSITE = 1, /* defined by a decomposition; a plugin may fuse it */
  TSR_OP_VIEW = 2,      /* metadata only, computed by the core for every device */
  TSR_OP_FACTORY = 3,
  TSR_OP_ROUTED = 4 /* an overload or alias that runs a primitive's kernel (add_.Tensor, exp) */
} tsr_op_kind;
TSR_API tsr_status* tsr_op_kind_of(const tsr_op* op, tsr_op_kind* out_kind);

/* How autograd differentiates an op (docs/autograd.md). */
typedef enum tsr_op_autograd {
  TSR_AUTOGRAD_FORMULA = 0,            /* a derivative formula (custom ops: their derivative) */
  TSR_AUTOGRAD_DECOMPOSES = 1,         /* a composite: differentiated through the ops it runs */
  TSR_AUTOGRAD_NOT_DIFFERENTIABLE = 2, /* its results never require grad */
  TSR_AUTOGRAD_OUT_VARIANT = 3,        /* an out= overload: refuses inputs that require grad */
  TSR_AUTOGRAD_MISSING = 4             /* no derivative: backward through it fails naming it */
} tsr_op_autograd;
TSR_API tsr_status* tsr_op_autograd_support(const tsr_op* op, tsr_op_autograd* out_support);

/* Whether `device` runs `op` for `dtype`: *out_kernel is true when a plugin
 * kernel is bound (composites and views may run without one). */
TSR_API tsr_status* tsr_op_has_kernel(const tsr_op* op, tsr_device device, tsr_dtype dtype,
                                      bool* out_kernel);

/* ======================================================================== */
/* Custom operators                                                          */
/* ======================================================================== */

/* Note [Custom operators]
 * ~~~~~~~~~~~~~~~~~~~~~~~
 * An application (or a plugin: tsr_plugin_op_def in plugin.h) defines an
 * operator in its own namespace from a schema - "asquare::affine(Tensor x,
 * float scale, float shift) -> Tensor" - and a shape rule (tsr_shape_rule_fn,
 * types.h). Kernels come per device type from the application
 * (tsr_op_register_kernel) or from the plugin of that device type (a kernel
 * entry with the same schema). The op is one opaque operator: observers see
 * one call, autograd records one node, tsr_op_find / tsr_op_call reach it like
 * any registry op. On the meta device only the shape rule runs.
 * Limits: arguments of any schema type but without alias annotations (no
 * in-place or view custom ops); 1 to 4 Tensor results; at least one Tensor
 * argument, and all tensor arguments on one device (the results' device).
 * A custom op lives as long as its runtime. */

/* The gradients of one custom op call (tsr_op_set_backward).
 *  - args: the forward's arguments in schema order (tensors as borrowed
 *    handles: the saved inputs, version-checked);
 *  - outputs / grad_outputs: the forward's results and the gradient of each
 *    (borrowed; a result nobody differentiated gets zeros);
 *  - needs_grad[i]: whether argument i needs a gradient;
 *  - grad_inputs[i]: write a new tensor reference (the engine takes it) for
 *    each argument that needs one; NULL means zero. Entries of non-tensor
 *    arguments must stay NULL. The gradient may have the broadcast shape of
 *    its argument (it is summed down).
 * Compute with tsr_op_call: under create_graph those ops are recorded, so
 * higher-order derivatives work. */
typedef struct tsr_backward_call {
  size_t struct_size;
  const tsr_op* op;
  int32_t nargs;
  int32_t nouts;
  const tsr_value* args;
  tsr_tensor* const* outputs;
  tsr_tensor* const* grad_outputs;
  const int32_t* needs_grad;
  tsr_tensor** grad_inputs;
} tsr_backward_call;
typedef tsr_status* (*tsr_backward_fn)(void* context, const tsr_backward_call* call);

/* An application kernel for a custom op: arguments in schema order (tensors
 * as descriptors), results preallocated by the core from the shape rule.
 * Runs on the calling thread after the device's stream has reached this call,
 * so on a host-addressable device it may read and write through `data`. */
typedef tsr_status* (*tsr_custom_kernel_fn)(void* context, const tsr_value* args, int32_t nargs,
                                            tsr_tensor_desc* outs, int32_t nouts);

typedef struct tsr_op_def {
  size_t struct_size;       /* sizeof(tsr_op_def) */
  const char* schema;       /* "ns::name(...) -> Tensor"; copied */
  tsr_shape_rule_fn shape;  /* required */
  void* shape_context;      /* passed to shape; must outlive the runtime */
  tsr_backward_fn backward; /* (optional) derivative, see tsr_op_set_backward */
  void* backward_context;   /* must outlive the runtime */
  const char* derivative;   /* (optional) derivative op name, as tsr_plugin_op_def */
} tsr_op_def;

/* Defines a custom op in `runtime`. ALREADY_EXISTS when the name is taken
 * (by the registry, a plugin or an earlier definition); INVALID_ARGUMENT
 * naming the schema's problem. *out_op is borrowed for the runtime's life. */
TSR_API tsr_status* tsr_op_define(tsr_runtime* runtime, const tsr_op_def* def,
                                  const tsr_op** out_op);
/* Registers `fn` as `op`'s kernel on every device of type `device_type`
 * ("cpu"), for the tensor dtypes in `dtypes` (a TSR_DTYPE_BIT mask over the
 * first tensor argument; 0 = any). Custom ops only. A kernel registered here
 * is tried before the plugin's. `context` must outlive the runtime. */
TSR_API tsr_status* tsr_op_register_kernel(const tsr_op* op, const char* device_type,
                                           uint64_t dtypes, tsr_custom_kernel_fn fn, void* context);
/* Sets (fn NULL: removes) the derivative of custom op `op`; it overrides a
 * derivative op named by the definition. */
TSR_API tsr_status* tsr_op_set_backward(const tsr_op* op, tsr_backward_fn fn, void* context);

/* Names: "float32", "int64", ... ; "invalid" outside the enum. Static. */
TSR_API const char* tsr_dtype_name(tsr_dtype dtype);
/* Bytes per element; 0 outside the enum. */
TSR_API size_t tsr_dtype_size(tsr_dtype dtype);
/* PyTorch's promote_types. */
TSR_API tsr_status* tsr_dtype_promote(tsr_dtype a, tsr_dtype b, tsr_dtype* out_dtype);

/* ======================================================================== */
/* Generators                                                                */
/* ======================================================================== */
/* A generator is the state of a Philox4x32-10 counter-based stream on one
 * device: a 64-bit seed and a block offset. Random ops (rand, normal_,
 * bernoulli, randperm, multinomial ...) take it as their `Generator? generator`
 * argument (TSR_VALUE_GENERATOR); None draws from the runtime's default
 * generator of the result's device. Each draw reserves the blocks it needs and
 * advances the offset, under the generator's lock, so concurrent draws get
 * disjoint blocks. The same seed and offset give the same bits on every device
 * and with every plugin (Note [Random mapping] in plugin.h): a plugin without a
 * random_fill entry gets the identical bits computed on the host.
 *
 * Threads: a generator may be used from any thread; seeding and state calls
 * take its lock, so a get_state taken between two draws sees the first one
 * whole. Private generators keep their runtime alive until destroyed. */

/* Bytes of a generator state (tsr_generator_get_state). */
#define TSR_GENERATOR_STATE_SIZE 24

/* The seed of a default generator that nobody has seeded (PyTorch's). */
#define TSR_GENERATOR_DEFAULT_SEED UINT64_C(67280421310721)

/* Creates a private generator on `device` (any device of `runtime`, meta
 * included) with `seed` and offset 0. Destroy it with tsr_generator_destroy;
 * it holds a reference on `runtime` until then. */
TSR_API tsr_status* tsr_generator_create(tsr_runtime* runtime, tsr_device device, uint64_t seed,
                                         tsr_generator** out_generator);

/* Destroys a private generator. NULL, a default generator (owned by its
 * runtime) and an already destroyed handle are ignored. */
TSR_API void tsr_generator_destroy(tsr_generator* generator);

/* The runtime's default generator of `device`: what ops use when their
 * `generator` argument is None. Created on first use with the runtime's
 * default seed (TSR_GENERATOR_DEFAULT_SEED, or the last
 * tsr_runtime_manual_seed). Borrowed; valid for the runtime's lifetime. */
TSR_API tsr_status* tsr_generator_default(tsr_runtime* runtime, tsr_device device,
                                          tsr_generator** out_generator);

/* Sets the seed and rewinds the offset to 0 (torch.Generator.manual_seed). */
TSR_API tsr_status* tsr_generator_manual_seed(tsr_generator* generator, uint64_t seed);

/* Seeds from a non-deterministic source, rewinds the offset, and returns the
 * seed chosen (torch.Generator.seed). */
TSR_API tsr_status* tsr_generator_seed(tsr_generator* generator, uint64_t* out_seed);

/* The seed the generator was last seeded with (torch.Generator.initial_seed). */
TSR_API tsr_status* tsr_generator_initial_seed(const tsr_generator* generator, uint64_t* out_seed);

/* The next Philox block the generator hands out: a draw of n elements
 * advances it by ceil(n / 4) blocks when each element takes one 32-bit lane
 * and ceil(n / 2) when it takes two (float64 uniforms, normals, wide integer
 * ranges); see Note [Random mapping] in plugin.h. */
TSR_API tsr_status* tsr_generator_get_offset(const tsr_generator* generator, uint64_t* out_offset);

/* The device the generator draws for. */
TSR_API tsr_status* tsr_generator_get_device(const tsr_generator* generator,
                                             tsr_device* out_device);

/* Copies the generator's state (seed and offset, with a format tag and
 * version: TSR_GENERATOR_STATE_SIZE bytes, to be treated as opaque) into
 * `buffer` of `capacity` bytes and writes its size to `out_size` (may be
 * NULL). `buffer` NULL with `capacity` 0 only reports the size. States are
 * device-independent: restoring one on any generator replays the same draws. */
TSR_API tsr_status* tsr_generator_get_state(const tsr_generator* generator, void* buffer,
                                            size_t capacity, size_t* out_size);

/* Restores a state written by tsr_generator_get_state. `size` must be the
 * state's size; a state of another format or version is refused with
 * TSR_INVALID_ARGUMENT and the generator is left unchanged. */
TSR_API tsr_status* tsr_generator_set_state(tsr_generator* generator, const void* state,
                                            size_t size);

/* Seeds every default generator of `runtime`, present and future, and
 * rewinds their offsets (torch.manual_seed). Private generators are not
 * touched. */
TSR_API tsr_status* tsr_runtime_manual_seed(tsr_runtime* runtime, uint64_t seed);

/* ------------------------------------------------------------------------ */
/* Distributed: key/value stores                                             */
/* ------------------------------------------------------------------------ */
/* The rendezvous of a process group goes through a store, as in PyTorch
 * (torch.distributed.TCPStore / FileStore / PrefixStore). Keys are
 * NUL-terminated strings, values bytes; set overwrites; get and wait wait for
 * their keys; add adds to a counter (its value reads as decimal text, "3")
 * and returns the sum; check says whether keys exist without waiting. A
 * timeout_ms < 0 means the store's own timeout. A wait that expires returns
 * TSR_DEADLINE_EXCEEDED naming the keys; an unreachable server
 * TSR_UNAVAILABLE naming its address. Stores are thread-safe; a process may
 * hold several. */
typedef struct tsr_store tsr_store;

/* A TCP store. `is_server`: serve it from a thread of this process on `port`
 * of every interface (0 picks a free port: tsr_store_port) and connect to it;
 * otherwise connect to host:port, retrying for up to `timeout_ms` while the
 * server starts (MASTER_ADDR / MASTER_PORT in env://). */
TSR_API tsr_status* tsr_store_create_tcp(const char* host, uint16_t port, bool is_server,
                                         int64_t timeout_ms, tsr_store** out_store);
/* A store in the file at `path` (created when absent), shared by processes
 * of one machine through advisory locks. */
TSR_API tsr_status* tsr_store_create_file(const char* path, int64_t timeout_ms,
                                          tsr_store** out_store);
/* The keys of `base` under "<prefix>/" (holds a reference to `base`). */
TSR_API tsr_status* tsr_store_create_prefix(tsr_store* base, const char* prefix,
                                            tsr_store** out_store);
/* Releases the handle; a TCP server stops once its last handle is gone. NULL:
 * nothing. */
TSR_API void tsr_store_destroy(tsr_store* store);

TSR_API tsr_status* tsr_store_set(tsr_store* store, const char* key, const void* value,
                                  size_t size);
/* Waits for `key`, copies its value into `buffer` of `capacity` bytes and
 * writes its size to `out_size` (may be NULL). `buffer` NULL with `capacity`
 * 0 only reports the size; a value larger than `capacity` is
 * TSR_OUT_OF_RANGE with its size in `out_size`. */
TSR_API tsr_status* tsr_store_get(tsr_store* store, const char* key, int64_t timeout_ms,
                                  void* buffer, size_t capacity, size_t* out_size);
TSR_API tsr_status* tsr_store_wait(tsr_store* store, const char* const* keys, size_t count,
                                   int64_t timeout_ms);
TSR_API tsr_status* tsr_store_add(tsr_store* store, const char* key, int64_t delta,
                                  int64_t* out_value);
TSR_API tsr_status* tsr_store_check(tsr_store* store, const char* const* keys, size_t count,
                                    bool* out_all);
/* The port a TCP store serves or reaches (0 for other stores). */
TSR_API tsr_status* tsr_store_port(const tsr_store* store, uint16_t* out_port);

/* ------------------------------------------------------------------------ */
/* Distributed: process groups and collectives                               */
/* ------------------------------------------------------------------------ */
/* torch.distributed's model (docs/distributed.md; Note [Process groups] in
 * core/distributed/process_group.h). A process group is `world_size`
 * processes meeting through a store; every rank issues the same collectives
 * in the same order. A tensor of any device works: its plugin's collectives
 * where it has them, else host staging through the host communicator
 * (cpu:0's Gloo). Each collective takes `out_work`: NULL runs it
 * synchronously (returns once it completed, with its error); non-NULL queues
 * it and writes a work handle (async_op=True) whose tsr_work_wait returns
 * the error. `op` is a tsr_dist_reduce_op (the values of plugin.h's
 * tsr_collective_op). Argument errors are INVALID_ARGUMENT on
 * the issuing rank; an engine error (a peer gone, a timeout) fails the work
 * and the group (later calls: FAILED_PRECONDITION carrying it). */
typedef struct tsr_process_group tsr_process_group;
typedef struct tsr_work tsr_work;

/* torch.distributed.ReduceOp. AVG: floating and complex tensors only. */
typedef enum tsr_dist_reduce_op {
  TSR_DIST_SUM = 0,
  TSR_DIST_PRODUCT = 1,
  TSR_DIST_MIN = 2,
  TSR_DIST_MAX = 3,
  TSR_DIST_AVG = 4
} tsr_dist_reduce_op;

/* Options of a group; zeroed (or NULL) means the defaults. */
typedef struct tsr_process_group_options {
  size_t struct_size; /* sizeof(tsr_process_group_options) */
  int64_t timeout_ms; /* <= 0: 30 minutes (PyTorch's default) */
  /* "auto" or NULL: every device's own engine; "gloo", "mpi", "nccl": the
   * engine asked of plugins that have several (a device without it stages). */
  const char* backend;
  /* Cross-rank header checks of every collective's dtype and shape: 1 on,
   * 0 off, -1 from TESSERA_DISTRIBUTED_DEBUG (DETAIL: on). */
  int32_t check_headers;
  int32_t reserved_;
} tsr_process_group_options;

/* The world group (torch.distributed.init_process_group): init_method NULL
 * or "env://" (MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE; under mpirun
 * OMPI_COMM_WORLD_RANK/_SIZE, and a file store for the job when MASTER_ADDR
 * is unset), "tcp://HOST:PORT" or "file:///PATH". rank / world_size < 0:
 * from the environment. Returns once every rank joined (DEADLINE_EXCEEDED
 * after the timeout naming how many did not). */
TSR_API tsr_status* tsr_process_group_init(tsr_runtime* runtime, const char* init_method,
                                           int32_t rank, int32_t world_size,
                                           const tsr_process_group_options* options,
                                           tsr_process_group** out_group);
/* A group over a store the caller made (c10d's ProcessGroup(store, rank, size)). */
TSR_API tsr_status* tsr_process_group_create(tsr_runtime* runtime, tsr_store* store, int32_t rank,
                                             int32_t world_size,
                                             const tsr_process_group_options* options,
                                             tsr_process_group** out_group);
/* Every rank of `group` calls it with the same ranks; members get the new
 * group (member i is its rank i), others NULL. */
TSR_API tsr_status* tsr_process_group_new_group(tsr_process_group* group, const int32_t* ranks,
                                                size_t count,
                                                const tsr_process_group_options* options,
                                                tsr_process_group** out_group);
/* Every rank calls it; ranks with one colour form a group ordered by (key,
 * rank); colour < 0 gets NULL. */
TSR_API tsr_status* tsr_process_group_split(tsr_process_group* group, int32_t color, int32_t key,
                                            const tsr_process_group_options* options,
                                            tsr_process_group** out_group);
TSR_API tsr_status* tsr_process_group_rank(const tsr_process_group* group, int32_t* out_rank,
                                           int32_t* out_size);
/* Fails every pending and later collective of the group (ABORTED). */
TSR_API tsr_status* tsr_process_group_abort(tsr_process_group* group);
/* What runs collectives of `device`'s tensors: "gloo 0.5.0 (tcp)", "staged
 * through cpu:0: gloo ...". */
TSR_API tsr_status* tsr_process_group_engine(tsr_process_group* group, tsr_device device,
                                             char* buffer, size_t capacity);
/* What a device's plugin offers for collectives (tessera devices lists it). */
typedef struct tsr_device_collectives {
  size_t struct_size; /* sizeof(tsr_device_collectives) */
  /* The plugin runs collectives on this device itself; false: its tensors are
   * staged through the host communicator (the fields below are then 0). */
  bool native;
  uint32_t collectives; /* TSR_COLLECTIVE_* bits (plugin.h) */
  uint32_t reduce_ops;  /* bits (1u << tsr_dist_reduce_op) */
  uint64_t dtypes;      /* TSR_DTYPE_BIT mask */
  uint32_t flags;       /* TSR_COLLECTIVES_* (plugin.h) */
  char engine[64];      /* "gloo 0.5.0 (tcp)"; "" when not native */
} tsr_device_collectives;
TSR_API tsr_status* tsr_device_get_collectives(const tsr_runtime* runtime, tsr_device device,
                                               tsr_device_collectives* out_collectives);
/* Destroys the handle after its queued collectives ran (PyTorch's
 * destroy_process_group). NULL: nothing. */
TSR_API void tsr_process_group_destroy(tsr_process_group* group);

TSR_API tsr_status* tsr_all_reduce(tsr_process_group* group, tsr_tensor* tensor, int32_t op,
                                   tsr_work** out_work);
TSR_API tsr_status* tsr_broadcast(tsr_process_group* group, tsr_tensor* tensor, int32_t src,
                                  tsr_work** out_work);
/* The result lands on `dst` only. */
TSR_API tsr_status* tsr_reduce(tsr_process_group* group, tsr_tensor* tensor, int32_t op,
                               int32_t dst, tsr_work** out_work);
/* output: world_size copies of input along dim 0 ([world_size] for 0-d). */
TSR_API tsr_status* tsr_all_gather_into_tensor(tsr_process_group* group, tsr_tensor* output,
                                               tsr_tensor* input, tsr_work** out_work);
/* input: world_size slices of output's shape along dim 0. */
TSR_API tsr_status* tsr_reduce_scatter_tensor(tsr_process_group* group, tsr_tensor* output,
                                              tsr_tensor* input, int32_t op, tsr_work** out_work);
/* output: all_gather's layout, on `dst` only (NULL elsewhere). */
TSR_API tsr_status* tsr_gather(tsr_process_group* group, tsr_tensor* output, tsr_tensor* input,
                               int32_t dst, tsr_work** out_work);
/* input: reduce_scatter's layout, on `src` only (NULL elsewhere). */
TSR_API tsr_status* tsr_scatter(tsr_process_group* group, tsr_tensor* output, tsr_tensor* input,
                                int32_t src, tsr_work** out_work);
/* Equal splits along dim 0 (all_to_all_single). */
TSR_API tsr_status* tsr_all_to_all_single(tsr_process_group* group, tsr_tensor* output,
                                          tsr_tensor* input, tsr_work** out_work);
TSR_API tsr_status* tsr_send(tsr_process_group* group, tsr_tensor* tensor, int32_t dst,
                             tsr_work** out_work);
TSR_API tsr_status* tsr_recv(tsr_process_group* group, tsr_tensor* tensor, int32_t src,
                             tsr_work** out_work);
TSR_API tsr_status* tsr_barrier(tsr_process_group* group, tsr_work** out_work);

/* Waits for the work (timeout_ms < 0: the group's; on expiry the group is
 * aborted and DEADLINE_EXCEEDED returned) and returns its error. */
TSR_API tsr_status* tsr_work_wait(tsr_work* work, int64_t timeout_ms);
TSR_API tsr_status* tsr_work_is_completed(tsr_work* work, bool* out_completed);
/* A copy of the work's error if it completed with one, else NULL. */
TSR_API tsr_status* tsr_work_error(tsr_work* work);
/* Releases the handle (the collective still completes). NULL: nothing. */
TSR_API void tsr_work_destroy(tsr_work* work);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TESSERA_TESSERA_H_ */
