/*
 * testdev_plugin.c - a minimal, valid "testdev" device plugin, and the broken
 * variants the loader-fault tests feed to the core.
 *
 * The good plugin: device type "testdev", one device backed by host memory
 * (malloc), synchronous streams and events, memcpy copies, and one kernel,
 * fill_.Scalar for float32. Everything it returns to the host is static or lives
 * in the per-load context, so one file can be loaded by several runtimes.
 *
 * Each variant is this file compiled with one TSRTEST_* definition (see
 * CMakeLists.txt beside it); the defect it injects is written next to the code
 * that injects it. Includes the abi/ headers only, like any vendor plugin.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessera/plugin.h"

#if defined(TSRTEST_KERNEL_HANG)
#include <unistd.h>
#endif
#if defined(TSRTEST_KERNEL_CRASH)
#include <signal.h>
#endif

#if defined(TSRTEST_KERNEL_THROWS)
/* testdev_throw.cpp: throws a C++ exception, which unwinds into this C code
 * (no unwind tables) and ends in std::terminate - what a plugin that lets an
 * exception escape does to its host. */
void tsrtest_throw(void);
#endif

#if defined(TSRTEST_MISSING_DEP)
/* Lives in libtsrtest-dep.so, which is deliberately not on this plugin's
 * RPATH: dlopen of this plugin fails before any of its code runs. */
int tsrtest_dep_answer(void);
#endif

/* One per successful init. Owns nothing but itself; streams and events are
 * separate allocations the host destroys before shutdown. */
struct tsr_plugin_context {
  const tsr_host_api* host;
  int64_t live_buffers;
  /* TSRTEST_ASYNC_FAULT: the default stream's pending fault (see below). */
  int has_pending_fault;
  char pending_fault[256];
};

/* Streams are synchronous: work is done when the call returns. The object
 * exists only so that handles are distinct and leaks show under ASan. */
struct tsr_plugin_stream {
  int32_t device;
  /* TSRTEST_ASYNC_FAULT: a failure "inside the device" on this stream,
   * reported by its next stream_synchronize / stream_query, as an asynchronous
   * device would. */
  int has_pending_fault;
  char pending_fault[256];
  int32_t syncs; /* TSRTEST_PENDING_EVENTS: synchronize calls so far */
};

struct tsr_plugin_event {
  uint32_t flags;
  int32_t recorded;
  /* TSRTEST_PENDING_EVENTS: the stream it was recorded on and that stream's
   * synchronize count then; the event completes at the stream's next
   * synchronize, as if its work were still running until then. */
  tsr_plugin_stream* stream;
  int32_t stamp;
};

#if defined(TSRTEST_PENDING_EVENTS)
/* Synchronize counts: per stream, and the default stream's here. */
static int32_t g_default_syncs;
#endif

static tsr_status* make_error(tsr_plugin_context* context, tsr_status_code code,
                              const char* message) {
  return context->host->make_status(code, message);
}

static tsr_status* check_device(tsr_plugin_context* context, int32_t device) {
  if (device != 0) {
    char message[160];
    snprintf(message, sizeof message,
             "testdev: device index %d is out of range; this plugin has one device (0)",
             (int)device);
    return make_error(context, TSR_OUT_OF_RANGE, message);
  }
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Lifecycle and devices                                                     */
/* ------------------------------------------------------------------------ */

static tsr_status* testdev_init(const tsr_host_api* host, tsr_plugin_context** out_context) {
#if defined(TSRTEST_INIT_INTERNAL)
  (void)out_context;
  return host->make_status(TSR_INTERNAL,
                           "testdev: init failed on purpose (TSRTEST_INIT_INTERNAL): "
                           "simulated driver fault 0x2a");
#elif defined(TSRTEST_INIT_UNAVAILABLE)
  (void)out_context;
  return host->make_status(TSR_UNAVAILABLE, "no testdev device on this machine");
#else
  tsr_plugin_context* context = (tsr_plugin_context*)calloc(1, sizeof *context);
  if (context == NULL) {
    return host->make_status(TSR_RESOURCE_EXHAUSTED, "testdev: out of host memory in init");
  }
  context->host = host;
#if defined(TSRTEST_MISSING_DEP)
  /* Never reached in the tests (the load fails earlier); keeps the symbol
   * referenced so the link records the dependency. */
  context->live_buffers = tsrtest_dep_answer() - 42;
#endif
  *out_context = context;
  return NULL;
#endif
}

static void testdev_shutdown(tsr_plugin_context* context) { free(context); }

static tsr_status* testdev_device_count(tsr_plugin_context* context, int32_t* out_count) {
  (void)context;
  *out_count = 1;
  return NULL;
}

static tsr_status* testdev_device_properties(tsr_plugin_context* context, int32_t device,
                                             tsr_plugin_device_properties* out_properties) {
  tsr_status* status = check_device(context, device);
  if (status != NULL) return status;
  /* Write only inside the host's struct_size (the host may be older). */
  tsr_plugin_device_properties properties;
  memset(&properties, 0, sizeof properties);
  snprintf(properties.name, sizeof properties.name, "Tessera test device (host memory)");
  properties.total_memory = 0;
  properties.dtypes = TSR_DTYPE_BIT(TSR_FLOAT32);
  properties.max_allocation = 0;
  properties.features = 1u << 0; /* TSR_FEATURE_HOST_ADDRESSABLE of tessera.h */
#if defined(TSRTEST_ASYNC_FAULT)
  properties.features |= 1u << 1; /* TSR_FEATURE_ASYNC: failures surface later */
#endif
  properties.compute_units = 1;
  properties.alignment = 16; /* malloc's guarantee on x86-64 glibc */
#if defined(TSRTEST_BAD_PROPERTIES)
  /* Wrong facts: an alignment that is no power of two, no float32. */
  properties.alignment = 24;
  properties.dtypes = TSR_DTYPE_BIT(TSR_INT32);
#endif
  size_t size = out_properties->struct_size;
  if (size == 0 || size > sizeof properties) size = sizeof properties;
  properties.struct_size = out_properties->struct_size;
  memcpy(out_properties, &properties, size);
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Memory                                                                    */
/* ------------------------------------------------------------------------ */

/* Unused in the null-alloc variant, which leaves the slot empty. */
__attribute__((unused)) static tsr_status* testdev_alloc(tsr_plugin_context* context,
                                                         int32_t device, size_t nbytes,
                                                         tsr_plugin_buffer* out_buffer) {
  tsr_status* status = check_device(context, device);
  if (status != NULL) return status;
  if (nbytes == 0) {
    out_buffer->handle = NULL;
    out_buffer->data = NULL;
    return NULL;
  }
#if defined(TSRTEST_ALLOC_OOM)
  /* Every non-empty allocation reports exhaustion, as a full device does. */
  void* memory = NULL;
#else
  void* memory = malloc(nbytes);
#endif
  if (memory == NULL) {
    char message[160];
    snprintf(message, sizeof message, "testdev: malloc of %zu bytes failed", nbytes);
    return make_error(context, TSR_RESOURCE_EXHAUSTED, message);
  }
  context->live_buffers++;
  out_buffer->handle = memory;
  out_buffer->data = memory;
  return NULL;
}

static void testdev_free(tsr_plugin_context* context, int32_t device, tsr_plugin_buffer buffer) {
  (void)device;
  if (buffer.handle != NULL) context->live_buffers--;
  free(buffer.handle);
}

static tsr_status* testdev_memory_info(tsr_plugin_context* context, int32_t device,
                                       uint64_t* out_free, uint64_t* out_total) {
  tsr_status* status = check_device(context, device);
  if (status != NULL) return status;
  *out_free = 0;
  *out_total = 0;
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Streams and events (synchronous)                                          */
/* ------------------------------------------------------------------------ */

static tsr_status* testdev_stream_create(tsr_plugin_context* context, int32_t device,
                                         tsr_plugin_stream** out_stream) {
  tsr_status* status = check_device(context, device);
  if (status != NULL) return status;
#if defined(TSRTEST_STREAM_FAIL)
  return make_error(context, TSR_RESOURCE_EXHAUSTED, "testdev: no stream slots left");
#endif
  tsr_plugin_stream* stream = (tsr_plugin_stream*)calloc(1, sizeof *stream);
  if (stream == NULL) return make_error(context, TSR_RESOURCE_EXHAUSTED, "testdev: out of memory");
  stream->device = device;
  *out_stream = stream;
  return NULL;
}

static void testdev_stream_destroy(tsr_plugin_context* context, int32_t device,
                                   tsr_plugin_stream* stream) {
  (void)context;
  (void)device;
  free(stream);
}

/* Reports (once) a fault injected by an earlier kernel on `stream` (NULL: the
 * default stream, whose slot lives in the context). */
static tsr_status* take_pending_fault(tsr_plugin_context* context, tsr_plugin_stream* stream) {
  int* has = stream ? &stream->has_pending_fault : &context->has_pending_fault;
  const char* message = stream ? stream->pending_fault : context->pending_fault;
  if (!*has) return NULL;
  *has = 0;
  return make_error(context, TSR_INTERNAL, message);
}

static tsr_status* testdev_stream_synchronize(tsr_plugin_context* context, int32_t device,
                                              tsr_plugin_stream* stream) {
  (void)stream;
  tsr_status* status = check_device(context, device);
  if (status != NULL) return status;
#if defined(TSRTEST_PENDING_EVENTS)
  if (stream != NULL)
    ++stream->syncs;
  else
    ++g_default_syncs;
#endif
  return take_pending_fault(context, stream);
}

static tsr_status* testdev_stream_query(tsr_plugin_context* context, int32_t device,
                                        tsr_plugin_stream* stream, bool* out_done) {
  (void)stream;
  tsr_status* status = check_device(context, device);
  if (status != NULL) return status;
  status = take_pending_fault(context, stream);
  if (status != NULL) return status;
  *out_done = true;
  return NULL;
}

static tsr_status* testdev_event_create(tsr_plugin_context* context, int32_t device, uint32_t flags,
                                        tsr_plugin_event** out_event) {
  tsr_status* status = check_device(context, device);
  if (status != NULL) return status;
#if defined(TSRTEST_STREAM_FAIL)
  return make_error(context, TSR_RESOURCE_EXHAUSTED, "testdev: no event slots left");
#endif
  tsr_plugin_event* event = (tsr_plugin_event*)calloc(1, sizeof *event);
  if (event == NULL) return make_error(context, TSR_RESOURCE_EXHAUSTED, "testdev: out of memory");
  event->flags = flags;
  *out_event = event;
  return NULL;
}

static void testdev_event_destroy(tsr_plugin_context* context, int32_t device,
                                  tsr_plugin_event* event) {
  (void)context;
  (void)device;
  free(event);
}

static tsr_status* testdev_event_record(tsr_plugin_context* context, int32_t device,
                                        tsr_plugin_event* event, tsr_plugin_stream* stream) {
  (void)stream;
  tsr_status* status = check_device(context, device);
  if (status != NULL) return status;
  event->recorded = 1;
  event->stream = stream;
#if defined(TSRTEST_PENDING_EVENTS)
  event->stamp = stream != NULL ? stream->syncs : g_default_syncs;
#endif
  return NULL;
}

static tsr_status* testdev_stream_wait_event(tsr_plugin_context* context, int32_t device,
                                             tsr_plugin_stream* stream, tsr_plugin_event* event) {
  (void)stream;
  (void)event;
  return check_device(context, device);
}

static tsr_status* testdev_event_query(tsr_plugin_context* context, int32_t device,
                                       tsr_plugin_event* event, bool* out_done) {
  (void)event;
  tsr_status* status = check_device(context, device);
  if (status != NULL) return status;
  *out_done = true;
#if defined(TSRTEST_PENDING_EVENTS)
  /* Every testdev stream is still alive here: the host queries only events
   * it recorded, on streams it has not destroyed. */
  *out_done = (event->stream != NULL ? event->stream->syncs : g_default_syncs) > event->stamp;
#endif
  return NULL;
}

static tsr_status* testdev_event_synchronize(tsr_plugin_context* context, int32_t device,
                                             tsr_plugin_event* event) {
  (void)event;
  return check_device(context, device);
}

static tsr_status* testdev_event_elapsed_ms(tsr_plugin_context* context, int32_t device,
                                            tsr_plugin_event* start, tsr_plugin_event* end,
                                            double* out_ms) {
  tsr_status* status = check_device(context, device);
  if (status != NULL) return status;
  if (!start->recorded || !end->recorded) {
    return make_error(context, TSR_FAILED_PRECONDITION,
                      "testdev: event_elapsed_ms needs two recorded events");
  }
  *out_ms = 0.0; /* synchronous device: no time passes between work items */
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Copies                                                                    */
/* ------------------------------------------------------------------------ */

static tsr_status* testdev_copy_h2d(tsr_plugin_context* context, int32_t device,
                                    tsr_plugin_stream* stream, const void* src,
                                    tsr_plugin_buffer dst, uint64_t dst_offset, uint64_t nbytes) {
  (void)stream;
  tsr_status* status = check_device(context, device);
  if (status != NULL) return status;
  if (nbytes != 0) memcpy((char*)dst.data + dst_offset, src, (size_t)nbytes);
  return NULL;
}

static tsr_status* testdev_copy_d2h(tsr_plugin_context* context, int32_t device,
                                    tsr_plugin_stream* stream, tsr_plugin_buffer src,
                                    uint64_t src_offset, void* dst, uint64_t nbytes) {
  (void)stream;
  tsr_status* status = check_device(context, device);
  if (status != NULL) return status;
#if defined(TSRTEST_SHORT_COPY)
  /* Copies fewer bytes than asked and says nothing: a size bug. */
  if (nbytes > 1) nbytes -= 1;
#endif
  if (nbytes != 0) memcpy(dst, (const char*)src.data + src_offset, (size_t)nbytes);
  return NULL;
}

static tsr_status* testdev_copy_d2d(tsr_plugin_context* context, int32_t device,
                                    tsr_plugin_stream* stream, tsr_plugin_buffer src,
                                    uint64_t src_offset, tsr_plugin_buffer dst, uint64_t dst_offset,
                                    uint64_t nbytes) {
  (void)stream;
  tsr_status* status = check_device(context, device);
  if (status != NULL) return status;
  if (nbytes != 0) {
    memmove((char*)dst.data + dst_offset, (const char*)src.data + src_offset, (size_t)nbytes);
  }
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Kernels                                                                   */
/* ------------------------------------------------------------------------ */

static double scalar_as_double(const tsr_scalar* scalar) {
  switch (scalar->kind) {
    case TSR_BOOL:
    case TSR_INT64:
      return (double)scalar->v.i;
    case TSR_FLOAT64:
      return scalar->v.f;
    default:
      return scalar->v.c.re;
  }
}

/* fill_.Scalar for float32: writes every element of outs[0] (which aliases
 * `self`), honouring its strides. */
static tsr_status* testdev_fill_float32(tsr_plugin_context* context, const tsr_kernel_call* call) {
  if (call->nargs < 2 || call->nouts < 1 || call->args[1].tag != TSR_VALUE_SCALAR) {
    return make_error(context, TSR_INTERNAL,
                      "testdev: fill_.Scalar expects (Tensor self, Scalar value) and one output");
  }
  const tsr_tensor_desc* out = &call->outs[0];
  if (out->dtype != TSR_FLOAT32) {
    return make_error(context, TSR_INTERNAL, "testdev: fill_.Scalar kernel is float32 only");
  }
  const float value = (float)scalar_as_double(&call->args[1].u.scalar);
#if defined(TSRTEST_KERNEL_CRASH)
  /* A kernel that faults on a bad address: SIGSEGV in the host process. */
  raise(SIGSEGV);
#endif
#if defined(TSRTEST_KERNEL_HANG)
  /* A kernel that never returns (a device lock-up). */
  for (;;) sleep(1000);
#endif
#if defined(TSRTEST_KERNEL_THROWS)
  tsrtest_throw();
#endif
#if defined(TSRTEST_ASYNC_FAULT)
  if (value == -1.0f) { /* "enqueue" work that fails later on the device */
    tsr_plugin_stream* stream = call->stream;
    char* slot = stream ? stream->pending_fault : context->pending_fault;
    snprintf(slot, sizeof context->pending_fault,
             "op '%s' failed on testdev:%d: injected asynchronous fault (fill value -1)",
             call->op_name, (int)call->device);
    *(stream ? &stream->has_pending_fault : &context->has_pending_fault) = 1;
    return NULL;
  }
#endif
  int64_t numel = 1;
  for (int32_t d = 0; d < out->ndim; ++d) numel *= out->sizes[d];
  if (numel == 0) return NULL;
  float* base = (float*)out->data;
  int64_t index[TSR_MAX_DIMS] = {0};
  for (int64_t n = 0; n < numel; ++n) {
    int64_t offset = 0;
    for (int32_t d = 0; d < out->ndim; ++d) offset += index[d] * out->strides[d];
    base[offset] = value;
    for (int32_t d = out->ndim - 1; d >= 0; --d) {
      if (++index[d] < out->sizes[d]) break;
      index[d] = 0;
    }
  }
  return NULL;
}

#if defined(TSRTEST_WRONG_SIZES)
/* ------------------------------------------------------------------------ */
/* TSRTEST_WRONG_SIZES: a two-phase nonzero (float32) whose size function     */
/* reports one row more than there are nonzero elements - the classic        */
/* off-by-one of a device-side count. The fill phase writes the true rows     */
/* and leaves the extra one as -1, so the result is wrong in shape and value. */
/* ------------------------------------------------------------------------ */

static int64_t testdev_numel(const tsr_tensor_desc* t) {
  int64_t n = 1;
  for (int32_t d = 0; d < t->ndim; ++d) n *= t->sizes[d];
  return n;
}

/* The element of `t` at row-major position n (any strides). */
static float testdev_float_at(const tsr_tensor_desc* t, int64_t n) {
  int64_t offset = 0;
  for (int32_t d = t->ndim - 1; d >= 0; --d) {
    offset += (n % t->sizes[d]) * t->strides[d];
    n /= t->sizes[d];
  }
  return ((const float*)t->data)[offset];
}

static tsr_status* testdev_nonzero_sizes(tsr_plugin_context* context, const tsr_kernel_call* call,
                                         int32_t* out_ndims, int64_t* out_sizes) {
  (void)context;
  const tsr_tensor_desc* self = call->args[0].u.desc;
  int64_t count = 0;
  const int64_t numel = testdev_numel(self);
  for (int64_t n = 0; n < numel; ++n) count += testdev_float_at(self, n) != 0.0f;
  out_ndims[0] = 2;
  out_sizes[0] = count + 1; /* the injected defect */
  out_sizes[1] = self->ndim;
  return NULL;
}

static tsr_status* testdev_nonzero(tsr_plugin_context* context, const tsr_kernel_call* call) {
  (void)context;
  const tsr_tensor_desc* self = call->args[0].u.desc;
  const tsr_tensor_desc* out = &call->outs[0];
  int64_t* rows = (int64_t*)out->data;
  const int64_t numel = testdev_numel(self);
  int64_t row = 0;
  for (int64_t n = 0; n < numel && row < out->sizes[0]; ++n) {
    if (testdev_float_at(self, n) == 0.0f) continue;
    int64_t rest = n;
    for (int32_t d = self->ndim - 1; d >= 0; --d) {
      rows[row * out->strides[0] + d * out->strides[1]] = rest % self->sizes[d];
      rest /= self->sizes[d];
    }
    ++row;
  }
  for (; row < out->sizes[0]; ++row)
    for (int32_t d = 0; d < self->ndim; ++d) rows[row * out->strides[0] + d * out->strides[1]] = -1;
  return NULL;
}
#endif

/* ------------------------------------------------------------------------ */
/* A custom operator the plugin defines (ABI 1.1): tsrtest::twice(x) = 2 x,  */
/* with its derivative op tsrtest::twice_backward(grad, x) = 2 grad.         */
/* ------------------------------------------------------------------------ */

#define TSRTEST_TWICE_SCHEMA "tsrtest::twice(Tensor self) -> Tensor"
#define TSRTEST_TWICE_BACKWARD_SCHEMA "tsrtest::twice_backward(Tensor grad, Tensor self) -> Tensor"

/* Both results have the shape and dtype of argument 0. */
static tsr_status* testdev_same_shape(void* shape_context, const tsr_value* args, int32_t nargs,
                                      int32_t nouts, int32_t* out_dtypes, int32_t* out_ndims,
                                      int64_t* out_sizes) {
  (void)shape_context;
  if (nargs < 1 || nouts != 1 || args[0].tag != TSR_VALUE_TENSOR || args[0].u.desc->data != NULL)
    return NULL; /* leaves the outputs unset: the host reports the broken rule */
  const tsr_tensor_desc* x = args[0].u.desc;
  out_dtypes[0] = x->dtype;
  out_ndims[0] = x->ndim;
  for (int32_t d = 0; d < x->ndim; ++d) out_sizes[d] = x->sizes[d];
  return NULL;
}

/* outs[0] = 2 * args[0] (float32, any strides on both sides). */
static tsr_status* testdev_double_float32(tsr_plugin_context* context,
                                          const tsr_kernel_call* call) {
  const tsr_tensor_desc* in = call->args[0].u.desc;
  const tsr_tensor_desc* out = &call->outs[0];
  if (in->dtype != TSR_FLOAT32 || out->dtype != TSR_FLOAT32 || in->ndim != out->ndim)
    return make_error(context, TSR_UNIMPLEMENTED, "testdev: tsrtest::twice is float32 only");
  int64_t numel = 1;
  for (int32_t d = 0; d < out->ndim; ++d) numel *= out->sizes[d];
  int64_t index[TSR_MAX_DIMS] = {0};
  for (int64_t n = 0; n < numel; ++n) {
    int64_t oi = 0, ii = 0;
    for (int32_t d = 0; d < out->ndim; ++d) {
      oi += index[d] * out->strides[d];
      ii += index[d] * in->strides[d];
    }
    ((float*)out->data)[oi] = 2.0f * ((const float*)in->data)[ii];
    for (int32_t d = out->ndim - 1; d >= 0; --d) {
      if (++index[d] < out->sizes[d]) break;
      index[d] = 0;
    }
  }
  return NULL;
}

static const tsr_plugin_op_def testdev_op_defs[] = {
    {sizeof(tsr_plugin_op_def), TSRTEST_TWICE_SCHEMA, testdev_same_shape, NULL,
     "tsrtest::twice_backward"},
    {sizeof(tsr_plugin_op_def), TSRTEST_TWICE_BACKWARD_SCHEMA, testdev_same_shape, NULL, NULL},
};

#define TSRTEST_FILL_SCHEMA "fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)"

static const tsr_kernel_entry testdev_kernels[] = {
#if defined(TSRTEST_WRONG_SIZES)
    {sizeof(tsr_kernel_entry),
     "nonzero(Tensor self) -> Tensor",
     {TSR_DTYPE_BIT(TSR_FLOAT32)},
     TSR_KERNEL_TWO_PHASE,
     0,
     testdev_nonzero,
     testdev_nonzero_sizes,
     NULL,
     {0, 0}},
#endif
#if defined(TSRTEST_SCHEMA_MISMATCH)
    /* Written against a schema the registry does not have (an extra argument):
     * must be rejected and listed in the load report, never bound. */
    {sizeof(tsr_kernel_entry),
     "fill_.Scalar(Tensor(a!) self, Scalar value, int extra) -> Tensor(a!)",
     {TSR_DTYPE_BIT(TSR_FLOAT32)},
     0,
     0,
     testdev_fill_float32,
     NULL,
     NULL,
     {0, 0}},
    /* A vendor custom op: unknown to the registry, rejected in ABI 1.0. */
    {sizeof(tsr_kernel_entry),
     "tsrtest_custom_op(Tensor self) -> Tensor",
     {TSR_DTYPE_BIT(TSR_FLOAT32)},
     0,
     0,
     testdev_fill_float32,
     NULL,
     NULL,
     {0, 0}},
#endif
    {sizeof(tsr_kernel_entry),
     TSRTEST_FILL_SCHEMA,
     {TSR_DTYPE_BIT(TSR_FLOAT32)},
     0,
     0,
     testdev_fill_float32,
     NULL,
     NULL,
     {0, 0}},
    {sizeof(tsr_kernel_entry),
     TSRTEST_TWICE_SCHEMA,
     {TSR_DTYPE_BIT(TSR_FLOAT32)},
     0,
     0,
     testdev_double_float32,
     NULL,
     NULL,
     {0, 0}},
    /* twice_backward(grad, self) = 2 grad: the same kernel reads argument 0. */
    {sizeof(tsr_kernel_entry),
     TSRTEST_TWICE_BACKWARD_SCHEMA,
     {TSR_DTYPE_BIT(TSR_FLOAT32)},
     0,
     0,
     testdev_double_float32,
     NULL,
     NULL,
     {0, 0}},
};

/* ------------------------------------------------------------------------ */
/* The table                                                                 */
/* ------------------------------------------------------------------------ */

#if defined(TSRTEST_ABI_MAJOR_NEXT)
#define TSRTEST_ABI_MAJOR (TSR_PLUGIN_ABI_MAJOR + 1)
#else
#define TSRTEST_ABI_MAJOR TSR_PLUGIN_ABI_MAJOR
#endif

#if defined(TSRTEST_ABI_MINOR_NEXT)
#define TSRTEST_ABI_MINOR (TSR_PLUGIN_ABI_MINOR + 1)
#else
#define TSRTEST_ABI_MINOR TSR_PLUGIN_ABI_MINOR
#endif

#if defined(TSRTEST_NULL_ALLOC)
#define TSRTEST_ALLOC_SLOT NULL /* a mandatory slot left empty */
#else
#define TSRTEST_ALLOC_SLOT testdev_alloc
#endif

#define TSRTEST_API_FIELDS(struct_size_value)                                                     \
  struct_size_value, TSRTEST_ABI_MAJOR, TSRTEST_ABI_MINOR, TSRTEST_PLUGIN_NAME, "0.1.0-test",     \
      "testdev", testdev_init, testdev_shutdown, testdev_device_count, testdev_device_properties, \
      TSRTEST_ALLOC_SLOT, testdev_free, testdev_memory_info, NULL, NULL, testdev_stream_create,   \
      testdev_stream_destroy, testdev_stream_synchronize, testdev_stream_query,                   \
      testdev_event_create, testdev_event_destroy, testdev_event_record,                          \
      testdev_stream_wait_event, testdev_event_query, testdev_event_synchronize,                  \
      testdev_event_elapsed_ms, testdev_copy_h2d, testdev_copy_d2h, testdev_copy_d2d, NULL,       \
      testdev_kernels, sizeof testdev_kernels / sizeof testdev_kernels[0], NULL, NULL,            \
      testdev_op_defs, sizeof testdev_op_defs / sizeof testdev_op_defs[0], NULL

#ifndef TSRTEST_PLUGIN_NAME
#define TSRTEST_PLUGIN_NAME "testdev"
#endif

#if defined(TSRTEST_ABI_MINOR_NEXT)
/* A plugin built against a future minor: the table is a prefix of a bigger
 * struct whose appended fields this host does not know. The host must accept
 * it and never touch the tail. The tail holds a slot that fails loudly if
 * called and a marker value. */
static tsr_status* testdev_future_slot(tsr_plugin_context* context) {
  return make_error(context, TSR_INTERNAL,
                    "testdev: the host called a slot appended after its ABI minor");
}

typedef struct testdev_future_api {
  tsr_plugin_api api;
  tsr_status* (*future_slot)(tsr_plugin_context* context);
  uint64_t future_marker;
  const char* future_name;
} testdev_future_api;

static const testdev_future_api testdev_table = {
    {TSRTEST_API_FIELDS(sizeof(testdev_future_api))},
    testdev_future_slot,
    UINT64_C(0x7e55e7a7e55e7a00),
    "appended after the host's ABI minor",
};
#define TSRTEST_TABLE (&testdev_table.api)
#elif defined(TSRTEST_SMALL_STRUCT)
/* Claims a table that ends before `init`: smaller than the minor-0 layout. */
static const tsr_plugin_api testdev_table = {TSRTEST_API_FIELDS(offsetof(tsr_plugin_api, init))};
#define TSRTEST_TABLE (&testdev_table)
#else
static const tsr_plugin_api testdev_table = {TSRTEST_API_FIELDS(sizeof(tsr_plugin_api))};
#define TSRTEST_TABLE (&testdev_table)
#endif

#if defined(TSRTEST_NO_ENTRY)
/* The table is exported under a near-miss name only: the host looks up the
 * exact symbol TSR_PLUGIN_ENTRY_SYMBOL and must report it missing. */
TSR_PLUGIN_EXPORT const tsr_plugin_api* tsr_plugin_query_v0(const tsr_host_api* host);
TSR_PLUGIN_EXPORT const tsr_plugin_api* tsr_plugin_query_v0(const tsr_host_api* host) {
  (void)host;
  return TSRTEST_TABLE;
}
#else
TSR_PLUGIN_EXPORT const tsr_plugin_api* tsr_plugin_query(const tsr_host_api* host);
TSR_PLUGIN_EXPORT const tsr_plugin_api* tsr_plugin_query(const tsr_host_api* host) {
  if (host == NULL) return NULL;
  return TSRTEST_TABLE;
}
#endif
