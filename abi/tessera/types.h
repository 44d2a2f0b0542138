/*
 * tessera/types.h - plain value types shared by the application API and the
 * plugin ABI: dtypes, devices, scalars, tensor descriptors and the tagged values
 * of a boxed operator call.
 *
 * C99. Every enum value below is fixed forever (append-only); bit masks over
 * dtypes are 64 bits wide so new dtypes fit.
 */
#ifndef TESSERA_TYPES_H_
#define TESSERA_TYPES_H_

#include <stddef.h>
#include <stdint.h>

#include "tessera/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most dimensions a tensor may have; checked at the ABI. */
#define TSR_MAX_DIMS 8

/* Element types. Values are stable; they index 64-bit dtype masks. */
typedef enum tsr_dtype {
  TSR_BOOL = 0,
  TSR_UINT8 = 1,
  TSR_INT8 = 2,
  TSR_INT16 = 3,
  TSR_INT32 = 4,
  TSR_INT64 = 5,
  TSR_FLOAT16 = 6,
  TSR_BFLOAT16 = 7,
  TSR_FLOAT32 = 8,
  TSR_FLOAT64 = 9,
  TSR_COMPLEX64 = 10,  /* two float32: real, imaginary */
  TSR_COMPLEX128 = 11, /* two float64; the promotion of complex64 with float64 */
  TSR_DTYPE_COUNT = 12
} tsr_dtype;

/* Bit of `dtype` in a 64-bit dtype mask. */
#define TSR_DTYPE_BIT(dtype) ((uint64_t)1 << (unsigned)(dtype))
/* Mask of every dtype defined above. */
#define TSR_DTYPE_MASK_ALL (TSR_DTYPE_BIT(TSR_DTYPE_COUNT) - 1u)

/* Device types. The first ones are fixed; a plugin declaring another device
 * type name ("npu", say) gets an id >= TSR_DEVICE_TYPE_FIRST_DYNAMIC from the
 * runtime it is loaded into (see tsr_device_type_id in tessera.h). */
typedef enum tsr_device_type {
  TSR_DEVICE_CPU = 0,  /* so a zeroed tsr_device is cpu:0 */
  TSR_DEVICE_META = 1, /* built into the core: shapes without storage */
  TSR_DEVICE_VULKAN = 2,
  TSR_DEVICE_CUDA = 3,
  TSR_DEVICE_HIP = 4,
  TSR_DEVICE_TYPE_FIRST_DYNAMIC = 16,
  TSR_DEVICE_TYPE_MAX = 64 /* exclusive upper bound of device type ids */
} tsr_device_type;

/* A device is a plain value: (type, index). Zeroed = cpu:0. */
typedef struct tsr_device {
  int32_t type;  /* a tsr_device_type or a dynamic id */
  int32_t index; /* 0-based within the type */
} tsr_device;

/* Memory formats for contiguity queries and contiguous(). */
typedef enum tsr_memory_format {
  TSR_CONTIGUOUS_FORMAT = 0, /* row-major */
  TSR_CHANNELS_LAST = 1,     /* 4-d NHWC strides */
  TSR_CHANNELS_LAST_3D = 2,  /* 5-d NDHWC strides */
  TSR_PRESERVE_FORMAT = 3
} tsr_memory_format;

/* A scalar, as PyTorch's `Scalar`: a bool, an integer, a float or a complex.
 * `kind` is TSR_BOOL, TSR_INT64, TSR_FLOAT64 or TSR_COMPLEX128 and says which
 * member is valid. A zeroed scalar is the bool `false`. */
typedef struct tsr_scalar {
  int32_t kind;
  int32_t reserved_; /* zero */
  union {
    int64_t i; /* TSR_BOOL (0 or 1) and TSR_INT64 */
    double f;  /* TSR_FLOAT64 */
    struct {
      double re, im;
    } c; /* TSR_COMPLEX128 */
  } v;
} tsr_scalar;

/* How a kernel or a copy sees a tensor: a strided view of a plugin buffer.
 *   element (i0, ..., i{n-1}) lives at byte
 *     byte_offset + elem_size(dtype) * sum_d(i_d * strides[d])
 *   of `buffer`.
 * `buffer` is the plugin's own allocation handle (a VkBuffer for Vulkan; for
 * addressable memory it may equal the base address). `data` is the raw address
 * of element (0, ..., 0), i.e. base + byte_offset, where the memory is
 * addressable by the plugin's kernels (CPU, CUDA, HIP) and NULL otherwise. Never
 * assume `data` is dereferenceable by the host unless the device is the CPU.
 * Strides are in elements and may be zero (broadcast) or negative (flip).
 * Entries at and past `ndim` are unspecified. 0-d tensors have ndim 0 and one
 * element. */
typedef struct tsr_tensor_desc {
  int32_t dtype; /* tsr_dtype */
  int32_t ndim;  /* 0 .. TSR_MAX_DIMS */
  int64_t sizes[TSR_MAX_DIMS];
  int64_t strides[TSR_MAX_DIMS];
  void* buffer;
  int64_t byte_offset;
  void* data;
  tsr_device device;
} tsr_tensor_desc;

/* The application API's opaque tensor handle (tessera.h). */
typedef struct tsr_tensor tsr_tensor;
/* A random number generator (Philox4x32-10 state), tessera.h. */
typedef struct tsr_generator tsr_generator;

/* Tags of a boxed argument. */
typedef enum tsr_value_tag {
  TSR_VALUE_NONE = 0,           /* None, for optional arguments (`Tensor?`, `int?`) */
  TSR_VALUE_TENSOR = 1,         /* .tensor (application) / .desc (kernel call) */
  TSR_VALUE_INT = 2,            /* .i */
  TSR_VALUE_FLOAT = 3,          /* .f */
  TSR_VALUE_BOOL = 4,           /* .b (0 or 1) */
  TSR_VALUE_SCALAR = 5,         /* .scalar */
  TSR_VALUE_INT_LIST = 6,       /* .ints, count in .len */
  TSR_VALUE_FLOAT_LIST = 7,     /* .floats, count in .len */
  TSR_VALUE_BOOL_LIST = 8,      /* .bools, count in .len */
  TSR_VALUE_TENSOR_LIST = 9,    /* .tensors / .descs, count in .len */
  TSR_VALUE_STRING = 10,        /* .str, NUL-terminated */
  TSR_VALUE_DTYPE = 11,         /* .i holds a tsr_dtype (schema type ScalarType) */
  TSR_VALUE_DEVICE = 12,        /* .device */
  TSR_VALUE_MEMORY_FORMAT = 13, /* .i holds a tsr_memory_format */
  TSR_VALUE_GENERATOR = 14      /* .generator (application API only; schema type Generator) */
} tsr_value_tag;

/* One tagged argument or result of a boxed call. A zeroed value is None.
 * Pointers inside are borrowed for the duration of the call that receives
 * them. In the application API (tsr_op_call) tensors travel as `tensor`
 * handles; in a kernel call (plugin.h) as `desc` descriptors. */
typedef struct tsr_value {
  int32_t tag; /* tsr_value_tag */
  int32_t len; /* element count of list tags; 0 otherwise */
  union {
    tsr_tensor* tensor;
    const tsr_tensor_desc* desc;
    int64_t i;
    double f;
    int32_t b;
    tsr_scalar scalar;
    const int64_t* ints;
    const double* floats;
    const int32_t* bools;
    tsr_tensor* const* tensors;
    const tsr_tensor_desc* descs; /* array of .len descriptors */
    const char* str;
    tsr_device device;
    tsr_generator* generator;
  } u;
} tsr_value;

/* The shape rule of a custom operator (Note [Custom operators], tessera.h):
 * from the arguments - in schema order, defaults filled, tensors as
 * descriptors (TSR_VALUE_TENSOR with .desc) whose `data` and `buffer` are NULL,
 * because a shape rule sees metadata only - it writes each result's dtype
 * (out_dtypes[k]), ndim (out_ndims[k]) and sizes (out_sizes[k * TSR_MAX_DIMS
 * ...]) for k < nouts. Results are allocated contiguous on the device of the
 * op's tensor arguments. Bad arguments: return TSR_INVALID_ARGUMENT naming
 * the argument and the value. Must not throw; may run on any thread. */
typedef tsr_status* (*tsr_shape_rule_fn)(void* context, const tsr_value* args, int32_t nargs,
                                         int32_t nouts, int32_t* out_dtypes, int32_t* out_ndims,
                                         int64_t* out_sizes);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TESSERA_TYPES_H_ */
