/*
 * tessera/plugin.h - the plugin ABI: the one table a device plugin exports.
 *
 * A plugin is a shared library that includes only the abi/ headers (and the
 * header-only plugins/sdk/ helpers) and never links libtessera. It exports one
 * C symbol, TSR_PLUGIN_ENTRY_SYMBOL, of type tsr_plugin_query_fn. The host calls
 * it once with its callbacks and receives the plugin's table.
 *
 * Note [Plugin ABI versioning]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * Versioning rules:
 *  - Every struct here begins with `struct_size`, set by whoever fills it.
 *    Structs are append-only: fields are never removed, reordered or retyped.
 *  - TSR_PLUGIN_ABI_MAJOR changes only when an existing field changes meaning
 *    or layout. The host refuses a table whose abi_major differs from its own,
 *    with a message naming both versions.
 *  - TSR_PLUGIN_ABI_MINOR grows when fields are appended. A newer-minor plugin is
 *    accepted: the host reads only the fields it knows and ignores the rest. An
 *    older-minor plugin is accepted: the host reads only fields inside the
 *    table's struct_size and treats the missing ones as NULL/zero. A struct_size
 *    smaller than the minor-0 layout is refused.
 *  - The plugin sees the host's versions in tsr_host_api (abi_major/minor,
 *    struct_size) and must not call host callbacks past that struct_size.
 *
 * Failure rules: no C++ exception, abort, exit or longjmp crosses this boundary
 * in either direction. Every plugin entry must catch everything and return a
 * status made with host->make_status. Host callbacks never throw.
 *
 * Note [Plugin lifetime]
 * ~~~~~~~~~~~~~~~~~~~~~~
 * Lifetime rules: the host keeps the library loaded
 * while any storage, stream or event the plugin made is alive; unloading earlier
 * is refused with FAILED_PRECONDITION. `shutdown` is called exactly once, after
 * the last of them is gone and before the library is unloaded. Pointers the
 * plugin returns (names, kernel tables, the table itself) must stay valid until
 * shutdown returns.
 *
 * Note [Plugin thread safety]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * Thread safety: the host may call any entry from
 * any thread, concurrently, except: init before everything else, shutdown after
 * everything else. Calls on one stream are issued by the host in stream order
 * from one thread at a time; calls on distinct streams may be concurrent.
 * Allocator entries may be called concurrently for one device.
 */
#ifndef TESSERA_PLUGIN_H_
#define TESSERA_PLUGIN_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tessera/opcodes.h"
#include "tessera/status.h"
#include "tessera/types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TSR_PLUGIN_ABI_MAJOR 1
#define TSR_PLUGIN_ABI_MINOR 3

/* The exported entry point, by name. */
#define TSR_PLUGIN_ENTRY_SYMBOL "tsr_plugin_query"

#if defined(__GNUC__)
#define TSR_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define TSR_PLUGIN_EXPORT
#endif

/* Opaque plugin-side objects. */
typedef struct tsr_plugin_context tsr_plugin_context; /* one per loaded plugin */
typedef struct tsr_plugin_stream tsr_plugin_stream;   /* a queue of work */
typedef struct tsr_plugin_event tsr_plugin_event;     /* a point in a stream */

/* Log levels for tsr_host_api.log. */
typedef enum tsr_log_level {
  TSR_LOG_DEBUG = 0,
  TSR_LOG_INFO = 1,
  TSR_LOG_WARNING = 2,
  TSR_LOG_ERROR = 3
} tsr_log_level;

/* ------------------------------------------------------------------------ */
/* Host -> plugin callbacks. Filled by the host; valid until shutdown returns. */
/* ------------------------------------------------------------------------ */
typedef struct tsr_host_api {
  size_t struct_size;       /* sizeof as the host was built; read fields only inside it */
  uint32_t abi_major;       /* the host's TSR_PLUGIN_ABI_MAJOR */
  uint32_t abi_minor;       /* the host's TSR_PLUGIN_ABI_MINOR */
  const char* host_version; /* "0.1.0" */

  /* Creates a status (owned by whoever receives it; the host frees it).
   * Returns NULL for TSR_OK. Never fails, never throws. */
  tsr_status* (*make_status)(tsr_status_code code, const char* message);

  /* Logs a message attributed to the plugin. Never throws. */
  void (*log)(tsr_log_level level, const char* plugin_name, const char* message);
} tsr_host_api;

/* ------------------------------------------------------------------------ */
/* Devices                                                                   */
/* ------------------------------------------------------------------------ */
/* Output structs the host passes to the plugin (like this one) carry the
 * host's struct_size: the plugin writes only fields that lie inside it. */
typedef struct tsr_plugin_device_properties {
  size_t struct_size;      /* set by the host before the call */
  char name[128];          /* human-readable device name */
  uint64_t total_memory;   /* bytes; 0 if unknown */
  uint64_t dtypes;         /* TSR_DTYPE_BIT mask the device computes in */
  uint64_t max_allocation; /* largest single allocation; 0 = unknown */
  uint32_t features;       /* TSR_FEATURE_* of tessera.h (same bit values) */
  int32_t compute_units;
  uint32_t alignment; /* alignment every allocation has, bytes (>= 1) */
  uint32_t reserved_;
} tsr_plugin_device_properties;

/* An allocation. `handle` identifies it to the plugin (its VkBuffer, or the
 * base address); `data` is its base address where device memory is addressable
 * by the plugin's kernels, else NULL. */
typedef struct tsr_plugin_buffer {
  void* handle;
  void* data;
} tsr_plugin_buffer;

/* ------------------------------------------------------------------------ */
/* Kernels                                                                   */
/* ------------------------------------------------------------------------ */

/* Request scratch memory from the core's caching allocator for the duration
 * of the kernel call (freed by the core after the kernel returns, in stream
 * order). Never throws. */
typedef tsr_status* (*tsr_scratch_fn)(void* scratch_context, size_t nbytes,
                                      tsr_plugin_buffer* out_buffer);

/* Note [Kernel contract]
 * ~~~~~~~~~~~~~~~~~~~~~~
 * Everything a kernel receives: fully resolved work.
 *  - args: the op's arguments in schema order, defaults filled, tensors as
 *    descriptors (TSR_VALUE_TENSOR with .desc), Scalars as TSR_VALUE_SCALAR,
 *    `int[]` as TSR_VALUE_INT_LIST, optional None as TSR_VALUE_NONE.
 *  - outs: the results, already allocated by the core in the result shape
 *    and dtype. For in-place and out= ops, outs[0] aliases the mutated
 *    argument.
 *  - Elementwise ops: inputs already broadcast to the output shape (stride 0
 *    on broadcast dims) and already cast to the op's computation dtype (inputs
 *    whose dtype differs from it only). The core may coalesce dims.
 *  - Reductions (sum.dim_IntList, mean.dim, ...): the `dim` list is resolved
 *    (non-negative, sorted, unique; every dim when the user gave none or an
 *    empty list, so it is empty only for a 0-d input). outs[0]
 *    is a descriptor with the input's ndim whose reduced dims have size 1 and
 *    stride 0 (keepdim layout), whatever the user's keepdim: the core reshapes.
 *  - Matrix products (mm, bmm): both inputs and the output have one dtype.
 *  - Arguments the core has validated (shapes, dtypes, alpha kinds) need not
 *    be re-validated; a kernel that receives a dtype it does not implement
 *    returns UNIMPLEMENTED, anything else malformed INVALID_ARGUMENT.
 *  - `stream` is the plugin stream to enqueue on.
 */
typedef struct tsr_kernel_call {
  size_t struct_size;
  const char* op_name; /* "add.Tensor"; for error messages */
  int32_t device;      /* device index within the plugin */
  int32_t nargs;
  int32_t nouts;
  int32_t reserved_;
  const tsr_value* args;
  tsr_tensor_desc* outs;
  tsr_plugin_stream* stream;
  void* kernel_data; /* tsr_kernel_entry.kernel_data */
  tsr_scratch_fn scratch;
  void* scratch_context;
} tsr_kernel_call;

/* A kernel. Must not throw. An error returned for synchronous work is the op's
 * error; a device that runs asynchronously reports later failures from
 * stream_synchronize/stream_query/event_* (they become sticky, Note [Streams]). */
typedef tsr_status* (*tsr_kernel_fn)(tsr_plugin_context* context, const tsr_kernel_call* call);

/* Note [Two-phase kernels]
 * ~~~~~~~~~~~~~~~~~~~~~~~~
 * Two-phase protocol for data-dependent output shapes (nonzero, unique,
 * masked_select, boolean indexing):
 *  phase 1: `size_fn` receives the call with outs' descriptors holding only
 *    dtype; it writes each output's ndim and sizes into out_ndims/out_sizes
 *    (nouts * TSR_MAX_DIMS entries, row i at out_sizes[i * TSR_MAX_DIMS]). This is
 *    the one place a kernel may synchronize with the host.
 *  phase 2: the core allocates outputs of those sizes and calls `fn`. */
typedef tsr_status* (*tsr_kernel_size_fn)(tsr_plugin_context* context, const tsr_kernel_call* call,
                                          int32_t* out_ndims, int64_t* out_sizes);

/* Kernel flags. */
#define TSR_KERNEL_CONTIGUOUS_INPUTS (1u << 0) /* core makes tensor inputs contiguous */
#define TSR_KERNEL_TWO_PHASE (1u << 1)         /* size_fn is set: see above */

/* Per-argument dtype constraint: masks[i] applies to the i-th Tensor argument
 * of the schema (Tensor, Tensor?, Tensor(a!) - in schema order, counting only
 * tensor arguments); 0 or a missing entry means "any dtype". */
#define TSR_KERNEL_MAX_TENSOR_ARGS 8

typedef struct tsr_kernel_entry {
  size_t struct_size;
  /* The full schema the kernel was written against, e.g.
   * "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor".
   * Bound only when it matches the core's registry exactly (whitespace
   * normalised); a mismatch leaves the op to its decomposition (or missing) and
   * is listed in the load report. A namespaced name the registry does not
   * know ("myvendor::fused_gelu") is a custom operator: bound when the plugin
   * defines it in `op_defs` (ABI 1.1) or the runtime already has it with this
   * exact schema (Note [Custom operators] in tessera.h); else rejected. */
  const char* schema;
  uint64_t dtype_masks[TSR_KERNEL_MAX_TENSOR_ARGS];
  uint32_t flags;
  uint32_t reserved_;
  tsr_kernel_fn fn;
  tsr_kernel_size_fn size_fn; /* (optional) TSR_KERNEL_TWO_PHASE only; else NULL */
  void* kernel_data;          /* passed back in tsr_kernel_call.kernel_data */
  /* Family primitives only (schemas with an `int op` code, opcodes.h): bit c
   * of op_codes[c / 64] set = this kernel implements code c. The host never
   * dispatches a code the kernel does not claim; an entry for a family with no
   * bit set is rejected at load. Ignored for other ops (leave zero). */
  uint64_t op_codes[2];
} tsr_kernel_entry;

/* ------------------------------------------------------------------------ */
/* Slots declared for later work (filled by later ABI minors' plugins).      */
/* ------------------------------------------------------------------------ */

/* Note [Random mapping]
 * ~~~~~~~~~~~~~~~~~~~~~
 * Philox4x32-10 bulk fill: every device must produce
 * the same bits as the CPU plugin, so the mapping is part of the ABI. Its
 * complete statement and reference implementation is
 * plugins/sdk/include/tessera/sdk/philox.hpp (header-only; use it or check
 * against it). In short:
 *  - block j = Philox4x32-10(counter = {lo32(offset + j), hi32(offset + j), 0, 0},
 *    key = {lo32(seed), hi32(seed)}) gives four 32-bit lanes;
 *  - "one lane per element" (BITS; UNIFORM and BERNOULLI into non-float64
 *    outputs; RANDINT with a range <= 2^32): element i takes lane i % 4 of
 *    block i / 4, and the call consumes ceil(n / 4) blocks;
 *  - "two lanes per element" (UNIFORM and BERNOULLI into float64; RANDINT with
 *    a larger range): element i takes lanes 2(i % 2) (low) and 2(i % 2) + 1
 *    (high) of block i / 2; ceil(n / 2) blocks;
 *  - NORMAL (Box-Muller, in double, rounded once): elements 2k and 2k+1 come
 *    from block k: u1 from lane 0 (float64: lanes 0,1), u2 from lane 1
 *    (float64: lanes 2,3); r = sqrt(-2 ln u1), z = r cos(2 pi u2) for the even
 *    element and r sin(2 pi u2) for the odd one; ceil(n / 2) blocks;
 *  - a 32-bit uniform is (lane >> 8) * 2^-24 in [0, 1) (u1 of NORMAL uses
 *    ((lane >> 8) + 1) * 2^-24 in (0, 1]); a 53-bit uniform is
 *    (((high << 32) | low) >> 11) * 2^-53 (u1: (... + 1) * 2^-53);
 *  - UNIFORM: param0 + u * (param1 - param0) in float for 32-bit uniforms, in
 *    double for 53-bit ones; a value that rounds up to param1 becomes the
 *    largest value below it; BERNOULLI: u < param0 ? 1 : 0; RANDINT: param0 +
 *    (lanes mod (param1 - param0)) in int64; BITS: the lane modulo 2^bits.
 * `out` is contiguous; `offset` is the generator's block offset, which the
 * host advances by the blocks the call consumes. */
typedef struct tsr_random_fill_call {
  size_t struct_size;
  int32_t device;
  int32_t distribution; /* tsr_random_distribution (opcodes.h) */
  uint64_t seed;
  uint64_t offset;
  double param0, param1; /* uniform: low, high; normal: mean, std; bernoulli: p */
  tsr_tensor_desc* out;
  tsr_plugin_stream* stream;
} tsr_random_fill_call;

/* ------------------------------------------------------------------------ */
/* Collectives                                                               */
/* ------------------------------------------------------------------------ */
/* Note [Plugin collectives]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~
 * A plugin that talks to other processes (Gloo, NCCL, MPI) fills
 * tsr_plugin_api.collectives. The host owns the process group: it does the
 * rendezvous (its key/value store, tsr_host_store), checks every argument
 * (shapes, dtypes, roots, peers, ranks), orders collectives on streams and
 * gives the user asynchronous work handles; the plugin moves the bytes.
 *
 * Communicators: comm_init (ABI 1.3) makes one for (rank, world_size) of a
 * group, given the store - prefixed for that communicator, valid during the
 * call only - and, for an engine that needs one (caps.unique_id_size > 0),
 * the unique id rank 0's get_unique_id made, which the host hands every
 * rank through the store. comm_create (ABI 1.0) is the same with the id
 * alone; a 1.3 host calls comm_init when the plugin has it. comm_split makes a
 * sub-communicator of the ranks with the same `color` (ordered by `key`, then
 * rank); a rank with color < 0 takes part and gets NULL.
 *
 * Tensors: descriptors of this plugin's device memory (host memory for
 * an engine with TSR_COLLECTIVES_HOST_MEMORY on a host-addressable device),
 * contiguous, of a dtype in caps.dtypes; the host stages anything else. The
 * layouts are PyTorch's *_into_tensor / *_tensor forms: all_gather's `out`
 * is world_size copies of `in` concatenated along dim 0 in rank order (its
 * sizes: [world_size * in.sizes[0], ...], or [world_size] for a 0-d `in`);
 * reduce_scatter's `in` is world_size slices of `out`'s size; all_to_all
 * sends slice r of `in` (numel / world_size elements) to rank r and receives
 * rank r's slice into slice r of `out`; gather's `out` (the root's only; NULL
 * elsewhere) is all_gather's; scatter's `in` (the root's only) is
 * reduce_scatter's. `in` and `out` may be the same memory where the shapes
 * allow (in place).
 *
 * Ordering and completion: every collective is enqueued on `stream` (NULL:
 * the device's default stream) after the work already there, and has
 * completed when an event recorded on that stream afterwards completes; an
 * engine without device streams (Gloo, MPI) may complete before returning.
 * All ranks of a communicator issue the same collectives in the same order.
 * Within group_start .. group_end (ABI 1.3, calls nest) a plugin may hold the
 * collectives and issue them together at the outermost group_end (NCCL's
 * ncclGroupStart/End); errors may surface at group_end.
 *
 * Failure: a collective that cannot complete within the communicator's
 * timeout (tsr_comm_init_args.timeout_ms), a peer that vanished, or a
 * transport error returns UNAVAILABLE / DEADLINE_EXCEEDED naming the peer
 * rank where known; it never hangs past the timeout. comm_abort makes every
 * pending and later call on the communicator fail promptly (the host calls it
 * when another rank reported a failure; it may be called from another thread
 * while a collective is blocked); comm_get_async_error returns an error an
 * asynchronous engine found since the last call (NULL: none). comm_destroy
 * frees the communicator, aborted or not.
 */

/* Reduce operations of all_reduce, reduce and reduce_scatter. AVG is SUM
 * divided by world_size (floating dtypes only; integer AVG truncates as
 * PyTorch's does). */
typedef enum tsr_collective_op {
  TSR_COLLECTIVE_SUM = 0,
  TSR_COLLECTIVE_PRODUCT = 1,
  TSR_COLLECTIVE_MIN = 2,
  TSR_COLLECTIVE_MAX = 3,
  TSR_COLLECTIVE_AVG = 4,
  TSR_COLLECTIVE_OP_COUNT = 5
} tsr_collective_op;

/* The collectives a communicator runs: bits of tsr_collective_caps.collectives. */
#define TSR_COLLECTIVE_ALL_REDUCE (1u << 0)
#define TSR_COLLECTIVE_BROADCAST (1u << 1)
#define TSR_COLLECTIVE_ALL_GATHER (1u << 2)
#define TSR_COLLECTIVE_REDUCE_SCATTER (1u << 3)
#define TSR_COLLECTIVE_SEND_RECV (1u << 4)
#define TSR_COLLECTIVE_BARRIER (1u << 5)
#define TSR_COLLECTIVE_ALL_TO_ALL (1u << 6)
#define TSR_COLLECTIVE_REDUCE (1u << 7)
#define TSR_COLLECTIVE_GATHER (1u << 8)
#define TSR_COLLECTIVE_SCATTER (1u << 9)

/* tsr_collective_caps.flags */
#define TSR_COLLECTIVES_HOST_MEMORY (1u << 0) /* tensors may be host memory */
#define TSR_COLLECTIVES_GROUPED (1u << 1)     /* group_start/end really batch */
#define TSR_COLLECTIVES_SPLIT (1u << 2)       /* comm_split is native (else the host re-inits) */
#define TSR_COLLECTIVES_ABORT (1u << 3)       /* comm_abort interrupts a blocked call */

/* What a device's communicators can do (ABI 1.3; query_caps). The host sets
 * struct_size; the plugin writes only fields inside it. */
typedef struct tsr_collective_caps {
  size_t struct_size;
  uint32_t collectives;  /* TSR_COLLECTIVE_* bits */
  uint32_t reduce_ops;   /* bits (1u << tsr_collective_op) */
  uint64_t dtypes;       /* TSR_DTYPE_BIT mask the collectives take */
  uint32_t flags;        /* TSR_COLLECTIVES_* */
  uint32_t max_world;    /* largest world_size; 0: no limit */
  size_t unique_id_size; /* bytes of get_unique_id's id; 0: no id needed */
  char engine[64];       /* "gloo (tcp)", "nccl 2.27.3", "mpi (Open MPI 4.1.4)" */
} tsr_collective_caps;

/* The host's key/value store for a rendezvous (ABI 1.3), prefixed for one
 * communicator. Keys are NUL-terminated; values are bytes. Every call blocks
 * at most `timeout_ms` (< 0: the store's default) and returns
 * DEADLINE_EXCEEDED naming the key(s) on expiry; none throws. */
typedef struct tsr_host_store {
  size_t struct_size;
  void* self;
  tsr_status* (*set)(void* self, const char* key, const void* value, size_t size);
  /* Waits for `key`, then calls sink(sink_self, value, size) once before
   * returning (the bytes are valid during that call only). */
  tsr_status* (*get)(void* self, const char* key, int64_t timeout_ms,
                     void (*sink)(void* sink_self, const void* value, size_t size),
                     void* sink_self);
  /* Waits until every key of keys[0 .. count) is set. */
  tsr_status* (*wait)(void* self, const char* const* keys, size_t count, int64_t timeout_ms);
  /* Adds `delta` to the integer at `key` (absent: 0) and returns the sum. */
  tsr_status* (*add)(void* self, const char* key, int64_t delta, int64_t* out_value);
} tsr_host_store;

/* comm_init's arguments (ABI 1.3). */
typedef struct tsr_comm_init_args {
  size_t struct_size;
  int32_t device;
  int32_t rank;       /* 0 <= rank < world_size */
  int32_t world_size; /* >= 1 */
  int32_t reserved_;
  const void* unique_id; /* rank 0's get_unique_id; NULL when unique_id_size is 0 */
  size_t unique_id_size;
  const tsr_host_store* store; /* valid during comm_init only */
  int64_t timeout_ms;          /* every later call on the communicator; > 0 */
  /* The engine, where the plugin has several ("gloo", "mpi"); NULL or "":
   * its default. An engine it lacks is NOT_FOUND naming its engines. */
  const char* engine;
} tsr_comm_init_args;

/* Collectives over a communicator (an opaque void*); every entry (optional).
 * ABI 1.0 declared the first block; a 1.3 host reads the rest only inside
 * struct_size. */
typedef struct tsr_plugin_collectives {
  size_t struct_size;
  tsr_status* (*comm_create)(tsr_plugin_context* context, int32_t device, const void* unique_id,
                             size_t id_size, int32_t rank, int32_t world_size, void** out_comm);
  void (*comm_destroy)(tsr_plugin_context* context, void* comm);
  /* op: a tsr_collective_op */
  tsr_status* (*all_reduce)(tsr_plugin_context* context, void* comm, tsr_tensor_desc* inout,
                            int32_t op, tsr_plugin_stream* stream);
  tsr_status* (*broadcast)(tsr_plugin_context* context, void* comm, tsr_tensor_desc* inout,
                           int32_t root, tsr_plugin_stream* stream);
  tsr_status* (*all_gather)(tsr_plugin_context* context, void* comm, const tsr_tensor_desc* in,
                            tsr_tensor_desc* out, tsr_plugin_stream* stream);
  tsr_status* (*reduce_scatter)(tsr_plugin_context* context, void* comm, const tsr_tensor_desc* in,
                                tsr_tensor_desc* out, int32_t op, tsr_plugin_stream* stream);
  tsr_status* (*send)(tsr_plugin_context* context, void* comm, const tsr_tensor_desc* in,
                      int32_t peer, tsr_plugin_stream* stream);
  tsr_status* (*recv)(tsr_plugin_context* context, void* comm, tsr_tensor_desc* out, int32_t peer,
                      tsr_plugin_stream* stream);
  tsr_status* (*barrier)(tsr_plugin_context* context, void* comm, tsr_plugin_stream* stream);

  /* ABI 1.3 (Note [Plugin collectives]). */
  tsr_status* (*query_caps)(tsr_plugin_context* context, int32_t device,
                            tsr_collective_caps* out_caps);
  /* Writes caps.unique_id_size bytes of a new id; `capacity` is out_id's size. */
  tsr_status* (*get_unique_id)(tsr_plugin_context* context, int32_t device, void* out_id,
                               size_t capacity);
  tsr_status* (*comm_init)(tsr_plugin_context* context, const tsr_comm_init_args* args,
                           void** out_comm);
  tsr_status* (*comm_split)(tsr_plugin_context* context, void* comm, int32_t color, int32_t key,
                            const tsr_host_store* store, void** out_comm);
  tsr_status* (*comm_abort)(tsr_plugin_context* context, void* comm);
  tsr_status* (*comm_get_async_error)(tsr_plugin_context* context, void* comm);
  tsr_status* (*group_start)(tsr_plugin_context* context);
  tsr_status* (*group_end)(tsr_plugin_context* context);
  tsr_status* (*all_to_all)(tsr_plugin_context* context, void* comm, const tsr_tensor_desc* in,
                            tsr_tensor_desc* out, tsr_plugin_stream* stream);
  tsr_status* (*reduce)(tsr_plugin_context* context, void* comm, tsr_tensor_desc* inout, int32_t op,
                        int32_t root, tsr_plugin_stream* stream);
  tsr_status* (*gather)(tsr_plugin_context* context, void* comm, const tsr_tensor_desc* in,
                        tsr_tensor_desc* out, int32_t root, tsr_plugin_stream* stream);
  tsr_status* (*scatter)(tsr_plugin_context* context, void* comm, const tsr_tensor_desc* in,
                         tsr_tensor_desc* out, int32_t root, tsr_plugin_stream* stream);
} tsr_plugin_collectives;

/* A custom operator the plugin defines (ABI 1.1; Note [Custom operators] in
 * tessera.h). Its kernels are ordinary kernel entries with the same schema.
 *  - schema: "myvendor::fused_gelu(Tensor x, float approx) -> Tensor"; the name
 *    needs a namespace other than aten. A runtime that already has the op with
 *    an identical schema keeps its definition (and binds the kernels); a
 *    different schema under the same name is rejected in the load report.
 *  - shape: the shape rule (types.h), called with shape_context.
 *  - derivative (optional): the name of another op ("myvendor::fused_gelu_backward",
 *    usually defined by this plugin too) computing the gradients. It is called
 *    with the gradient of each result followed by the forward's arguments, and
 *    returns one Tensor per Tensor argument of the forward (the engine uses the
 *    ones that need a gradient). NULL: backward through the op fails naming it,
 *    unless the application sets a derivative (tsr_op_set_backward).
 * The definition's strings and shape_context must stay valid until shutdown;
 * after the plugin is unloaded its ops remain defined but fail to run, naming
 * the plugin. */
typedef struct tsr_plugin_op_def {
  size_t struct_size;
  const char* schema;
  tsr_shape_rule_fn shape;
  void* shape_context;
  const char* derivative;
} tsr_plugin_op_def;

/* ------------------------------------------------------------------------ */
/* The plugin table                                                          */
/* ------------------------------------------------------------------------ */
/* Entries marked (optional) may be NULL; the default is stated. Every other
 * entry is mandatory: a table missing one is refused at load, naming it.
 * Device indices are 0 .. device_count-1. A NULL stream argument means the
 * device's default stream. */
typedef struct tsr_plugin_api {
  size_t struct_size;      /* sizeof(tsr_plugin_api) as the plugin was built */
  uint32_t abi_major;      /* TSR_PLUGIN_ABI_MAJOR the plugin was built with */
  uint32_t abi_minor;      /* TSR_PLUGIN_ABI_MINOR the plugin was built with */
  const char* name;        /* unique plugin name, e.g. "cpu"; [a-z0-9_-]+ */
  const char* version;     /* the plugin's own version, e.g. "0.1.0" */
  const char* device_type; /* device type name, e.g. "cpu", "vulkan"; [a-z0-9_]+ */

  /* Lifecycle. init returns UNAVAILABLE (with the driver's reason) when this
   * machine has no such device: the host records it and unloads the plugin. */
  tsr_status* (*init)(const tsr_host_api* host, tsr_plugin_context** out_context);
  void (*shutdown)(tsr_plugin_context* context);

  /* Devices. */
  tsr_status* (*device_count)(tsr_plugin_context* context, int32_t* out_count);
  tsr_status* (*device_properties)(tsr_plugin_context* context, int32_t device,
                                   tsr_plugin_device_properties* out_properties);

  /* Memory. alloc of 0 bytes must succeed (handle may be NULL). Exhaustion
   * returns RESOURCE_EXHAUSTED, never crashes. */
  tsr_status* (*alloc)(tsr_plugin_context* context, int32_t device, size_t nbytes,
                       tsr_plugin_buffer* out_buffer);
  /* Named `free` in ABI 1.0: a plugin that #defines free (a debug allocator)
   * must #undef it before including this header. */
  void (*free)(tsr_plugin_context* context, int32_t device, tsr_plugin_buffer buffer);
  tsr_status* (*memory_info)(tsr_plugin_context* context, int32_t device, uint64_t* out_free,
                             uint64_t* out_total);
  /* (optional) pinned host memory for fast staging; defaults to no pinning. */
  tsr_status* (*host_alloc_pinned)(tsr_plugin_context* context, size_t nbytes, void** out_ptr);
  void (*host_free_pinned)(tsr_plugin_context* context, void* ptr);

  /* Streams and events. */
  tsr_status* (*stream_create)(tsr_plugin_context* context, int32_t device,
                               tsr_plugin_stream** out_stream);
  void (*stream_destroy)(tsr_plugin_context* context, int32_t device, tsr_plugin_stream* stream);
  tsr_status* (*stream_synchronize)(tsr_plugin_context* context, int32_t device,
                                    tsr_plugin_stream* stream);
  tsr_status* (*stream_query)(tsr_plugin_context* context, int32_t device,
                              tsr_plugin_stream* stream, bool* out_done);
  tsr_status* (*event_create)(tsr_plugin_context* context, int32_t device, uint32_t flags,
                              tsr_plugin_event** out_event);
  void (*event_destroy)(tsr_plugin_context* context, int32_t device, tsr_plugin_event* event);
  tsr_status* (*event_record)(tsr_plugin_context* context, int32_t device, tsr_plugin_event* event,
                              tsr_plugin_stream* stream);
  tsr_status* (*stream_wait_event)(tsr_plugin_context* context, int32_t device,
                                   tsr_plugin_stream* stream, tsr_plugin_event* event);
  /* The host never queries, synchronizes or measures an event it has not
   * recorded (it answers those itself), so these see recorded events only. */
  tsr_status* (*event_query)(tsr_plugin_context* context, int32_t device, tsr_plugin_event* event,
                             bool* out_done);
  tsr_status* (*event_synchronize)(tsr_plugin_context* context, int32_t device,
                                   tsr_plugin_event* event);
  tsr_status* (*event_elapsed_ms)(tsr_plugin_context* context, int32_t device,
                                  tsr_plugin_event* start, tsr_plugin_event* end, double* out_ms);

  /* Copies of contiguous bytes, enqueued on `stream`. Host memory passed to an
   * asynchronous copy must stay valid until the stream reaches it (the host
   * synchronizes before reusing it unless it is pinned). */
  tsr_status* (*copy_host_to_device)(tsr_plugin_context* context, int32_t device,
                                     tsr_plugin_stream* stream, const void* src,
                                     tsr_plugin_buffer dst, uint64_t dst_offset, uint64_t nbytes);
  tsr_status* (*copy_device_to_host)(tsr_plugin_context* context, int32_t device,
                                     tsr_plugin_stream* stream, tsr_plugin_buffer src,
                                     uint64_t src_offset, void* dst, uint64_t nbytes);
  tsr_status* (*copy_device_to_device)(tsr_plugin_context* context, int32_t device,
                                       tsr_plugin_stream* stream, tsr_plugin_buffer src,
                                       uint64_t src_offset, tsr_plugin_buffer dst,
                                       uint64_t dst_offset, uint64_t nbytes);

  /* (optional) Options as key/value strings ("threads" = "2"). NULL:
   * every key is UNIMPLEMENTED. Unknown keys return NOT_FOUND naming the key. */
  tsr_status* (*set_option)(tsr_plugin_context* context, const char* key, const char* value);

  /* Kernels: `kernel_count` entries, valid until shutdown returns. */
  const tsr_kernel_entry* kernels;
  size_t kernel_count;

  /* (optional) Random fills; NULL: the core fills on the host and copies. */
  tsr_status* (*random_fill)(tsr_plugin_context* context, const tsr_random_fill_call* call);
  /* (optional) Collectives; NULL: none. */
  const tsr_plugin_collectives* collectives;

  /* ABI 1.1: (optional) custom operators this plugin defines; NULL/0: none. */
  const tsr_plugin_op_def* op_defs;
  size_t op_def_count;

  /* ABI 1.2: (optional) a copy of contiguous bytes between two devices of this
   * plugin (direct peer access where the hardware has it, else however the
   * plugin can), enqueued on `stream` of `dst_device` (NULL: its default
   * stream). The host orders it: the work on `src_device` that produced the
   * bytes has completed before the call (the host synchronizes that device's
   * stream first), and later work on `stream` runs after the copy. NULL: the
   * host stages such copies through host memory. */
  tsr_status* (*copy_peer)(tsr_plugin_context* context, int32_t dst_device,
                           tsr_plugin_stream* stream, tsr_plugin_buffer dst, uint64_t dst_offset,
                           int32_t src_device, tsr_plugin_buffer src, uint64_t src_offset,
                           uint64_t nbytes);
} tsr_plugin_api;

/* Size of the minor-0 table: the smallest struct_size the host accepts. */
#define TSR_PLUGIN_API_MIN_SIZE (offsetof(tsr_plugin_api, collectives) + sizeof(void*))

/* The entry point's type. Called once per load with the host's callbacks
 * (valid until shutdown returns). Returns the plugin's table (static storage
 * or valid until shutdown), or NULL when the plugin cannot speak to this host
 * (it should log why through host->log first). Must not throw. */
typedef const tsr_plugin_api* (*tsr_plugin_query_fn)(const tsr_host_api* host);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TESSERA_PLUGIN_H_ */
