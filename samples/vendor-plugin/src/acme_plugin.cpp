// acme_plugin.cpp - the ACME sample plugin's table: lifecycle, one device,
// memory, streams, events, copies, and the kernel table.
//
// The "ACME accelerator" of this sample is host memory and the host CPU, so
// every slot is short: memory comes from aligned_alloc (`data` is the address),
// streams run synchronously (work is done when the call returns), events
// record a steady_clock timestamp, copies are memcpy. A vendor replaces the
// bodies with calls into their driver; the shape of the table stays.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <iterator>
#include <new>

#include "acme.hpp"

namespace acme {
namespace {

constexpr const char* kName = "acme";
constexpr uint32_t kAlignment = 64;  // bytes; every allocation's base is a multiple

// Feature bits of tsr_plugin_device_properties.features (TSR_FEATURE_* in
// tessera.h, which a plugin does not include; the values are part of the ABI).
constexpr uint32_t kFeatureHostAddressable = 1u << 0;  // tensor data is a host pointer
constexpr uint32_t kFeatureTimestamps = 1u << 2;       // events measure elapsed time

// ---------------------------------------------------------------------------
// Streams and events. The device is synchronous: a stream only needs to be a
// distinct handle, and an event is "done" as soon as it is recorded.
// ---------------------------------------------------------------------------
struct stream_state {
  int32_t device;
};
struct event_state {
  bool recorded = false;
  std::chrono::steady_clock::time_point when;
};

tsr_status* make_status(tsr_plugin_context* context, tsr_status_code code, const char* message) {
  return context->host->make_status(code, message);
}

tsr_status* check_device(tsr_plugin_context* context, int32_t device) {
  if (device == 0) return nullptr;
  return tessera::sdk::status_maker(context->host)
      .makef(TSR_OUT_OF_RANGE,
             "acme: device index %d is out of range; this plugin has one "
             "device, acme:0",
             static_cast<int>(device));
}

uint64_t physical_bytes(int name) {
  const long pages = sysconf(name);
  const long page_size = sysconf(_SC_PAGESIZE);
  return pages > 0 && page_size > 0
             ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size)
             : 0;
}

// ---------------------------------------------------------------------------
// Lifecycle and devices
// ---------------------------------------------------------------------------
tsr_status* acme_init(const tsr_host_api* host, tsr_plugin_context** out_context) {
  // A real plugin asks its driver here, and returns TSR_UNAVAILABLE with the
  // driver's reason when the machine has no ACME device.
  auto* context = new (std::nothrow) tsr_plugin_context{host};
  if (context == nullptr) return host->make_status(TSR_RESOURCE_EXHAUSTED, "acme: out of memory");
  *out_context = context;
  return nullptr;
}

void acme_shutdown(tsr_plugin_context* context) { delete context; }

tsr_status* acme_device_count(tsr_plugin_context*, int32_t* out_count) {
  *out_count = 1;
  return nullptr;
}

tsr_status* acme_device_properties(tsr_plugin_context* context, int32_t device,
                                   tsr_plugin_device_properties* out) {
  if (tsr_status* status = check_device(context, device)) return status;
  tsr_plugin_device_properties p{};
  std::snprintf(p.name, sizeof p.name, "ACME sample accelerator (host memory)");
  p.total_memory = physical_bytes(_SC_PHYS_PAGES);
  p.max_allocation = p.total_memory;
  p.dtypes = 0;
  for (int d : {TSR_BOOL, TSR_UINT8, TSR_INT8, TSR_INT16, TSR_INT32, TSR_INT64, TSR_FLOAT16,
                TSR_BFLOAT16, TSR_FLOAT32, TSR_FLOAT64})
    p.dtypes |= TSR_DTYPE_BIT(d);
  p.features = kFeatureHostAddressable | kFeatureTimestamps;
  p.compute_units = 1;
  p.alignment = kAlignment;
  // The host may be older (smaller struct): write only what it knows.
  size_t size = out->struct_size;
  if (size == 0 || size > sizeof p) size = sizeof p;
  p.struct_size = out->struct_size;
  std::memcpy(out, &p, size);
  return nullptr;
}

// ---------------------------------------------------------------------------
// Memory
// ---------------------------------------------------------------------------
tsr_status* acme_alloc(tsr_plugin_context* context, int32_t device, size_t nbytes,
                       tsr_plugin_buffer* out) {
  if (tsr_status* status = check_device(context, device)) return status;
  out->handle = out->data = nullptr;
  if (nbytes == 0) return nullptr;
  // More than the machine has is refused up front (Linux would promise it and
  // fail later); aligned_alloc wants a multiple of the alignment.
  const uint64_t total = physical_bytes(_SC_PHYS_PAGES);
  void* memory = nullptr;
  if (total == 0 || nbytes <= total) {
    const size_t rounded = (nbytes + kAlignment - 1) / kAlignment * kAlignment;
    memory = std::aligned_alloc(kAlignment, rounded);
  }
  if (memory == nullptr) {
    return tessera::sdk::status_maker(context->host)
        .makef(TSR_RESOURCE_EXHAUSTED,
               "acme: cannot allocate %zu bytes on acme:0 (%llu bytes "
               "of memory in all); free tensors or use smaller ones",
               nbytes, static_cast<unsigned long long>(total));
  }
  out->handle = memory;
  out->data = memory;
  return nullptr;
}

void acme_free(tsr_plugin_context*, int32_t, tsr_plugin_buffer buffer) { std::free(buffer.handle); }

tsr_status* acme_memory_info(tsr_plugin_context* context, int32_t device, uint64_t* out_free,
                             uint64_t* out_total) {
  if (tsr_status* status = check_device(context, device)) return status;
  *out_total = physical_bytes(_SC_PHYS_PAGES);
  *out_free = physical_bytes(_SC_AVPHYS_PAGES);
  return nullptr;
}

// ---------------------------------------------------------------------------
// Streams and events
// ---------------------------------------------------------------------------
tsr_status* acme_stream_create(tsr_plugin_context* context, int32_t device,
                               tsr_plugin_stream** out) {
  if (tsr_status* status = check_device(context, device)) return status;
  auto* stream = new (std::nothrow) stream_state{device};
  if (stream == nullptr) return make_status(context, TSR_RESOURCE_EXHAUSTED, "acme: out of memory");
  *out = reinterpret_cast<tsr_plugin_stream*>(stream);
  return nullptr;
}

void acme_stream_destroy(tsr_plugin_context*, int32_t, tsr_plugin_stream* stream) {
  delete reinterpret_cast<stream_state*>(stream);
}

// Synchronous: everything enqueued has already run.
tsr_status* acme_stream_synchronize(tsr_plugin_context* context, int32_t device,
                                    tsr_plugin_stream*) {
  return check_device(context, device);
}

tsr_status* acme_stream_query(tsr_plugin_context* context, int32_t device, tsr_plugin_stream*,
                              bool* out_done) {
  if (tsr_status* status = check_device(context, device)) return status;
  *out_done = true;
  return nullptr;
}

tsr_status* acme_event_create(tsr_plugin_context* context, int32_t device, uint32_t,
                              tsr_plugin_event** out) {
  if (tsr_status* status = check_device(context, device)) return status;
  auto* event = new (std::nothrow) event_state{};
  if (event == nullptr) return make_status(context, TSR_RESOURCE_EXHAUSTED, "acme: out of memory");
  *out = reinterpret_cast<tsr_plugin_event*>(event);
  return nullptr;
}

void acme_event_destroy(tsr_plugin_context*, int32_t, tsr_plugin_event* event) {
  delete reinterpret_cast<event_state*>(event);
}

// The work before the event has run, so "now" is when the stream reached it.
tsr_status* acme_event_record(tsr_plugin_context* context, int32_t device, tsr_plugin_event* event,
                              tsr_plugin_stream*) {
  if (tsr_status* status = check_device(context, device)) return status;
  auto* e = reinterpret_cast<event_state*>(event);
  e->recorded = true;
  e->when = std::chrono::steady_clock::now();
  return nullptr;
}

tsr_status* acme_stream_wait_event(tsr_plugin_context* context, int32_t device, tsr_plugin_stream*,
                                   tsr_plugin_event*) {
  return check_device(context, device);  // the event's work is already done
}

tsr_status* acme_event_query(tsr_plugin_context* context, int32_t device, tsr_plugin_event*,
                             bool* out_done) {
  if (tsr_status* status = check_device(context, device)) return status;
  *out_done = true;
  return nullptr;
}

tsr_status* acme_event_synchronize(tsr_plugin_context* context, int32_t device, tsr_plugin_event*) {
  return check_device(context, device);
}

tsr_status* acme_event_elapsed_ms(tsr_plugin_context* context, int32_t device,
                                  tsr_plugin_event* start, tsr_plugin_event* end, double* out_ms) {
  if (tsr_status* status = check_device(context, device)) return status;
  const auto* a = reinterpret_cast<const event_state*>(start);
  const auto* b = reinterpret_cast<const event_state*>(end);
  if (!a->recorded || !b->recorded) {
    return make_status(context, TSR_FAILED_PRECONDITION,
                       "acme: event_elapsed_ms needs two recorded events; record both first");
  }
  *out_ms = std::chrono::duration<double, std::milli>(b->when - a->when).count();
  return nullptr;
}

// ---------------------------------------------------------------------------
// Copies (synchronous; memmove because device-to-device ranges may overlap)
// ---------------------------------------------------------------------------
tsr_status* acme_copy_h2d(tsr_plugin_context* context, int32_t device, tsr_plugin_stream*,
                          const void* src, tsr_plugin_buffer dst, uint64_t dst_offset,
                          uint64_t nbytes) {
  if (tsr_status* status = check_device(context, device)) return status;
  if (nbytes != 0) std::memcpy(static_cast<char*>(dst.data) + dst_offset, src, nbytes);
  return nullptr;
}

tsr_status* acme_copy_d2h(tsr_plugin_context* context, int32_t device, tsr_plugin_stream*,
                          tsr_plugin_buffer src, uint64_t src_offset, void* dst, uint64_t nbytes) {
  if (tsr_status* status = check_device(context, device)) return status;
  if (nbytes != 0) std::memcpy(dst, static_cast<const char*>(src.data) + src_offset, nbytes);
  return nullptr;
}

tsr_status* acme_copy_d2d(tsr_plugin_context* context, int32_t device, tsr_plugin_stream*,
                          tsr_plugin_buffer src, uint64_t src_offset, tsr_plugin_buffer dst,
                          uint64_t dst_offset, uint64_t nbytes) {
  if (tsr_status* status = check_device(context, device)) return status;
  if (nbytes != 0) {
    std::memmove(static_cast<char*>(dst.data) + dst_offset,
                 static_cast<const char*>(src.data) + src_offset, nbytes);
  }
  return nullptr;
}

// ---------------------------------------------------------------------------
// Kernel table: the 20 primitives of docs/primitives.md. Schemas must match
// the registry exactly (`tessera info <op>` prints them). dtype masks apply to
// the schema's tensor arguments in order; a family entry lists its codes.
// ---------------------------------------------------------------------------
constexpr uint64_t bit(int dtype) { return TSR_DTYPE_BIT(dtype); }
constexpr uint64_t kBool = bit(TSR_BOOL);
constexpr uint64_t kInt64 = bit(TSR_INT64);
constexpr uint64_t kIntegers =
    bit(TSR_UINT8) | bit(TSR_INT8) | bit(TSR_INT16) | bit(TSR_INT32) | bit(TSR_INT64);
constexpr uint64_t kFloating =
    bit(TSR_FLOAT16) | bit(TSR_BFLOAT16) | bit(TSR_FLOAT32) | bit(TSR_FLOAT64);
constexpr uint64_t kNumbers = kIntegers | kFloating;
constexpr uint64_t kReal = kBool | kNumbers;  // every dtype ACME computes in (no complex)

struct codes {
  uint64_t words[2] = {0, 0};
};
constexpr codes code_list(std::initializer_list<int> list) {
  codes c;
  for (int code : list) c.words[code / 64] |= uint64_t{1} << (code % 64);
  return c;
}
constexpr codes codes_below(int count, std::initializer_list<int> except = {}) {
  codes c;
  for (int code = 0; code < count; ++code) c.words[code / 64] |= uint64_t{1} << (code % 64);
  for (int code : except) c.words[code / 64] &= ~(uint64_t{1} << (code % 64));
  return c;
}

constexpr tsr_kernel_entry kernel(const char* schema, tsr_kernel_fn fn,
                                  std::initializer_list<uint64_t> masks, codes c = {},
                                  uint32_t flags = 0, tsr_kernel_size_fn size_fn = nullptr) {
  tsr_kernel_entry e{};
  e.struct_size = sizeof(tsr_kernel_entry);
  e.schema = schema;
  int i = 0;
  for (uint64_t m : masks) e.dtype_masks[i++] = m;
  e.flags = flags;
  e.fn = fn;
  e.size_fn = size_fn;
  e.op_codes[0] = c.words[0];
  e.op_codes[1] = c.words[1];
  return e;
}

tsr_status* nonzero_size_entry(tsr_plugin_context* context, const tsr_kernel_call* call,
                               int32_t* out_ndims, int64_t* out_sizes) noexcept {
  return tessera::sdk::guard(context->host, [&] { nonzero_count(*call, out_ndims, out_sizes); });
}

constexpr const char* kUnary =
    "_unary(Tensor self, int op, Scalar p0=0, Scalar p1=0, Scalar p2=0) -> Tensor";
constexpr const char* kBinary = "_binary(Tensor self, Tensor other, int op, Scalar p0=0) -> Tensor";
constexpr const char* kScatter =
    "_scatter_(Tensor(a!) self, int dim, Tensor index, Tensor src, int op) -> Tensor(a!)";

// Which _unary / _binary codes each kind of dtype gets (the others are not
// defined there: the host converts, e.g. exp of an int tensor runs in float).
constexpr codes kUnaryIntegerAndBool =
    code_list({TSR_UNARY_SIGN, TSR_UNARY_NAN_TO_NUM, TSR_UNARY_BITWISE_NOT, TSR_UNARY_LOGICAL_NOT,
               TSR_UNARY_ISNAN, TSR_UNARY_ISINF, TSR_UNARY_ISPOSINF, TSR_UNARY_ISNEGINF,
               TSR_UNARY_ISFINITE, TSR_UNARY_SIGNBIT});
constexpr codes kUnaryIntegerOnly =
    code_list({TSR_UNARY_NEG, TSR_UNARY_ABS, TSR_UNARY_FLOOR, TSR_UNARY_CEIL, TSR_UNARY_ROUND,
               TSR_UNARY_TRUNC, TSR_UNARY_RELU, TSR_UNARY_SQUARE, TSR_UNARY_CLAMP,
               TSR_UNARY_CLAMP_MIN, TSR_UNARY_CLAMP_MAX});
constexpr codes kBinaryIntegerAndBool =
    code_list({TSR_BINARY_MAXIMUM, TSR_BINARY_MINIMUM, TSR_BINARY_FMAX, TSR_BINARY_FMIN,
               TSR_BINARY_BITWISE_AND, TSR_BINARY_BITWISE_OR, TSR_BINARY_BITWISE_XOR,
               TSR_BINARY_LOGICAL_AND, TSR_BINARY_LOGICAL_OR, TSR_BINARY_LOGICAL_XOR, TSR_BINARY_EQ,
               TSR_BINARY_NE, TSR_BINARY_LT, TSR_BINARY_LE, TSR_BINARY_GT, TSR_BINARY_GE});
constexpr codes kBinaryIntegerOnly =
    code_list({TSR_BINARY_POW, TSR_BINARY_REMAINDER, TSR_BINARY_FMOD, TSR_BINARY_DIV_TRUNC,
               TSR_BINARY_DIV_FLOOR, TSR_BINARY_LSHIFT, TSR_BINARY_RSHIFT});

const tsr_kernel_entry kKernels[] = {
    kernel("copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)",
           entry<copy_kernel>, {kReal, kReal}),
    kernel("fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)", entry<fill_kernel>,
           {kReal}),
    kernel("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", entry<add_kernel>,
           {kReal, kReal}),
    kernel("sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", entry<sub_kernel>,
           {kNumbers, kNumbers}),
    kernel("mul.Tensor(Tensor self, Tensor other) -> Tensor", entry<mul_kernel>, {kReal, kReal}),
    kernel("div.Tensor(Tensor self, Tensor other) -> Tensor", entry<div_kernel>,
           {kFloating, kFloating}),
    kernel("mm(Tensor self, Tensor mat2) -> Tensor", entry<mm_kernel>, {kNumbers, kNumbers}),
    kernel("bmm(Tensor self, Tensor mat2) -> Tensor", entry<bmm_kernel>, {kNumbers, kNumbers}),
    // _unary: floats get every code but BITWISE_NOT; integers and bool a subset.
    kernel(kUnary, entry<unary_kernel>, {kFloating},
           codes_below(TSR_UNARY_CODE_COUNT, {TSR_UNARY_BITWISE_NOT})),
    kernel(kUnary, entry<unary_kernel>, {kIntegers}, kUnaryIntegerOnly),
    kernel(kUnary, entry<unary_kernel>, {kIntegers | kBool}, kUnaryIntegerAndBool),
    // _binary: floats get every code but the bitwise ones and shifts.
    kernel(kBinary, entry<binary_kernel>, {kFloating, kFloating},
           codes_below(TSR_BINARY_CODE_COUNT,
                       {TSR_BINARY_BITWISE_AND, TSR_BINARY_BITWISE_OR, TSR_BINARY_BITWISE_XOR,
                        TSR_BINARY_LSHIFT, TSR_BINARY_RSHIFT})),
    kernel(kBinary, entry<binary_kernel>, {kIntegers, kIntegers}, kBinaryIntegerOnly),
    kernel(kBinary, entry<binary_kernel>, {kIntegers | kBool, kIntegers | kBool},
           kBinaryIntegerAndBool),
    kernel("where.self(Tensor condition, Tensor self, Tensor other) -> Tensor", entry<where_kernel>,
           {kBool, kReal, kReal}),
    kernel("_reduce(Tensor self, int op, int[] dim, bool keepdim=False) -> Tensor",
           entry<reduce_kernel>, {kReal}, codes_below(TSR_REDUCE_CODE_COUNT)),
    kernel("_arg_reduce(Tensor self, int op, int dim, bool keepdim=False) -> Tensor",
           entry<arg_reduce_kernel>, {kReal}, codes_below(TSR_ARG_REDUCE_CODE_COUNT)),
    kernel("_scan(Tensor self, int op, int dim) -> Tensor", entry<scan_kernel>, {kReal},
           codes_below(TSR_SCAN_CODE_COUNT)),
    kernel("_iota_(Tensor(a!) self, Scalar start, Scalar step, Scalar? end=None) -> Tensor(a!)",
           entry<iota_kernel>, {kNumbers}),
    kernel("gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor",
           entry<gather_kernel>, {kReal, kInt64}),
    kernel(kScatter, entry<scatter_kernel>, {kReal, kInt64, kReal},
           codes_below(TSR_SCATTER_CODE_COUNT)),
    kernel("nonzero(Tensor self) -> Tensor", entry<nonzero_kernel>, {kReal}, {},
           TSR_KERNEL_TWO_PHASE, nonzero_size_entry),
    kernel("sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) -> "
           "(Tensor values, Tensor indices)",
           entry<sort_kernel>, {kReal}),
    kernel("searchsorted.Tensor(Tensor sorted_sequence, Tensor self, *, bool out_int32=False, "
           "bool right=False, str? side=None, Tensor? sorter=None) -> Tensor",
           entry<searchsorted_kernel>, {kNumbers, kNumbers, kInt64}),
};

// random_fill and collectives stay NULL: the core fills random tensors on
// the host (the same Philox bits) and copies them in; there is no multi-device
// communication.
const tsr_plugin_api kTable = [] {
  tsr_plugin_api t{};
  t.struct_size = sizeof(tsr_plugin_api);
  t.abi_major = TSR_PLUGIN_ABI_MAJOR;
  t.abi_minor = TSR_PLUGIN_ABI_MINOR;
  t.name = kName;
  t.version = "0.1.0";
  t.device_type = "acme";
  t.init = acme_init;
  t.shutdown = acme_shutdown;
  t.device_count = acme_device_count;
  t.device_properties = acme_device_properties;
  t.alloc = acme_alloc;
  t.free = acme_free;
  t.memory_info = acme_memory_info;
  t.stream_create = acme_stream_create;
  t.stream_destroy = acme_stream_destroy;
  t.stream_synchronize = acme_stream_synchronize;
  t.stream_query = acme_stream_query;
  t.event_create = acme_event_create;
  t.event_destroy = acme_event_destroy;
  t.event_record = acme_event_record;
  t.stream_wait_event = acme_stream_wait_event;
  t.event_query = acme_event_query;
  t.event_synchronize = acme_event_synchronize;
  t.event_elapsed_ms = acme_event_elapsed_ms;
  t.copy_host_to_device = acme_copy_h2d;
  t.copy_device_to_host = acme_copy_d2h;
  t.copy_device_to_device = acme_copy_d2d;
  t.kernels = kKernels;
  t.kernel_count = std::size(kKernels);
  return t;
}();

}  // namespace
}  // namespace acme

// The one exported symbol. Refuses hosts of another ABI major (their table
// layout may differ); older and newer minors are fine.
extern "C" TSR_PLUGIN_EXPORT const tsr_plugin_api* tsr_plugin_query(const tsr_host_api* host) {
  if (host == nullptr || host->make_status == nullptr) return nullptr;
  if (host->abi_major != TSR_PLUGIN_ABI_MAJOR) {
    if (host->log != nullptr) {
      char message[160];
      std::snprintf(message, sizeof message,
                    "acme was built for plugin ABI major %d but the host speaks %u; rebuild acme "
                    "against this Tessera",
                    TSR_PLUGIN_ABI_MAJOR, static_cast<unsigned>(host->abi_major));
      host->log(TSR_LOG_ERROR, acme::kName, message);
    }
    return nullptr;
  }
  return &acme::kTable;
}
