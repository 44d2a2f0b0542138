/*
 * The tensor probe (views, strides, copies, versions) through the plain C API, in C99: the
 * same facts as seed_probe_test.cpp, proving tessera.h is usable from C.
 * Prints one line per failed check and a final "N passed, M failed" line;
 * exits 0 only when nothing failed.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tessera/tessera.h"

static int g_passed = 0;
static int g_failed = 0;

#define CHECK(cond)                                          \
  do {                                                       \
    if (cond) {                                              \
      ++g_passed;                                            \
    } else {                                                 \
      ++g_failed;                                            \
      printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); \
    }                                                        \
  } while (0)

/* Checks that `status` is NULL; on failure prints its message and frees it. */
#define CHECK_OK(call)                                                   \
  do {                                                                   \
    tsr_status* check_ok_status_ = (call);                               \
    if (check_ok_status_ == NULL) {                                      \
      ++g_passed;                                                        \
    } else {                                                             \
      ++g_failed;                                                        \
      printf("FAIL %s:%d: %s -> %s: %s\n", __FILE__, __LINE__, #call,    \
             tsr_status_code_name(tsr_status_code_of(check_ok_status_)), \
             tsr_status_message(check_ok_status_));                      \
      tsr_status_free(check_ok_status_);                                 \
    }                                                                    \
  } while (0)

static const char kOverlapMessage[] =
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location";

static tsr_runtime* g_runtime = NULL;
static const tsr_device kCpu = {TSR_DEVICE_CPU, 0};

/* Whether `tensor` has exactly these sizes and strides. */
static int has_layout(const tsr_tensor* tensor, int32_t ndim, const int64_t* sizes,
                      const int64_t* strides) {
  tsr_tensor_info info;
  tsr_status* status;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  status = tsr_tensor_get_info(tensor, &info);
  if (status != NULL) {
    tsr_status_free(status);
    return 0;
  }
  if (info.ndim != ndim) return 0;
  if (memcmp(info.sizes, sizes, sizeof(int64_t) * (size_t)ndim) != 0) return 0;
  return memcmp(info.strides, strides, sizeof(int64_t) * (size_t)ndim) == 0;
}

static int is_contiguous(const tsr_tensor* tensor) {
  bool contiguous = false;
  tsr_status* status = tsr_tensor_is_contiguous(tensor, TSR_CONTIGUOUS_FORMAT, &contiguous);
  if (status != NULL) {
    tsr_status_free(status);
    return -1;
  }
  return contiguous ? 1 : 0;
}

static int shares_storage(const tsr_tensor* a, const tsr_tensor* b) {
  uint64_t id_a = 0, id_b = 0;
  tsr_status* status = tsr_tensor_storage_id(a, &id_a);
  if (status == NULL) status = tsr_tensor_storage_id(b, &id_b);
  if (status != NULL) {
    tsr_status_free(status);
    return -1;
  }
  return id_a == id_b ? 1 : 0;
}

static uint64_t version_of(const tsr_tensor* tensor) {
  uint64_t version = UINT64_MAX;
  tsr_status* status = tsr_tensor_version(tensor, &version);
  tsr_status_free(status);
  return version;
}

static const tsr_op* find_op(const char* name) {
  const tsr_op* op = NULL;
  CHECK_OK(tsr_op_find(g_runtime, name, &op));
  return op;
}

static tsr_value tensor_value(tsr_tensor* tensor) {
  tsr_value value;
  memset(&value, 0, sizeof value);
  value.tag = TSR_VALUE_TENSOR;
  value.u.tensor = tensor;
  return value;
}

static tsr_value int_scalar_value(int64_t i) {
  tsr_value value;
  memset(&value, 0, sizeof value);
  value.tag = TSR_VALUE_SCALAR;
  value.u.scalar.kind = TSR_INT64;
  value.u.scalar.v.i = i;
  return value;
}

/* The float at [r][c] of a 2-d float32 tensor, via two selects and item(). */
static double element_2d(tsr_tensor* tensor, int64_t r, int64_t c) {
  tsr_tensor* row = NULL;
  tsr_tensor* element = NULL;
  tsr_scalar value;
  double result = -1.0;
  memset(&value, 0, sizeof value);
  CHECK_OK(tsr_tensor_select(tensor, 0, r, &row));
  if (row != NULL) CHECK_OK(tsr_tensor_select(row, 0, c, &element));
  if (element != NULL) {
    CHECK_OK(tsr_tensor_item(element, &value));
    if (value.kind == TSR_FLOAT64) result = value.v.f;
  }
  tsr_tensor_release(element);
  tsr_tensor_release(row);
  return result;
}

/* Copies a float32 tensor of `n` elements to the host in row-major order. */
static int read_floats(const tsr_tensor* tensor, float* out, size_t n) {
  tsr_status* status = tsr_tensor_copy_to_host(tensor, out, n * sizeof(float));
  if (status != NULL) {
    printf("copy_to_host: %s\n", tsr_status_message(status));
    tsr_status_free(status);
    return 0;
  }
  return 1;
}

static void probe_table(void) {
  float data[12];
  float values[12];
  int64_t i;
  const int64_t base_sizes[2] = {3, 4}, base_strides[2] = {4, 1};
  const int64_t columns_sizes[2] = {3, 2}, columns_strides[2] = {4, 2};
  const int64_t transposed_sizes[2] = {4, 3}, transposed_strides[2] = {1, 4};
  const int64_t flat_sizes[1] = {12}, flat_strides[1] = {1};
  const int64_t cloned_sizes[2] = {3, 2}, cloned_strides[2] = {2, 1};
  const int64_t minus_one[1] = {-1};
  tsr_tensor *base = NULL, *columns = NULL, *transposed = NULL, *flattened = NULL;
  tsr_tensor *cloned = NULL, *detached = NULL, *element = NULL, *row = NULL;
  tsr_value args[2];
  tsr_value out;
  const tsr_op* clone_op = find_op("clone");
  const tsr_op* fill_op = find_op("fill_.Scalar");

  /* base = torch.arange(12, dtype=torch.float32).reshape(3, 4) */
  for (i = 0; i < 12; ++i) data[i] = (float)i;
  CHECK_OK(
      tsr_tensor_from_host(g_runtime, data, sizeof data, 2, base_sizes, TSR_FLOAT32, kCpu, &base));
  if (base == NULL) return;
  CHECK_OK(tsr_tensor_slice(base, 1, 0, INT64_MAX, 2, &columns));
  CHECK_OK(tsr_tensor_transpose(base, 0, 1, &transposed));
  if (transposed != NULL) CHECK_OK(tsr_tensor_reshape(transposed, 1, minus_one, &flattened));
  if (columns != NULL && clone_op != NULL) {
    args[0] = tensor_value(columns);
    memset(&out, 0, sizeof out);
    CHECK_OK(tsr_op_call(clone_op, args, 1, &out, 1));
    CHECK(out.tag == TSR_VALUE_TENSOR);
    if (out.tag == TSR_VALUE_TENSOR) cloned = out.u.tensor;
  }
  CHECK_OK(tsr_tensor_detach(base, &detached));
  if (!columns || !transposed || !flattened || !cloned || !detached) goto done;

  /* The table: shape and stride, contiguous, shares base storage. */
  CHECK(has_layout(base, 2, base_sizes, base_strides));
  CHECK(is_contiguous(base) == 1);
  CHECK(shares_storage(base, base) == 1);

  CHECK(has_layout(columns, 2, columns_sizes, columns_strides));
  CHECK(is_contiguous(columns) == 0);
  CHECK(shares_storage(columns, base) == 1);

  CHECK(has_layout(transposed, 2, transposed_sizes, transposed_strides));
  CHECK(is_contiguous(transposed) == 0);
  CHECK(shares_storage(transposed, base) == 1);

  CHECK(has_layout(flattened, 1, flat_sizes, flat_strides));
  CHECK(is_contiguous(flattened) == 1);
  CHECK(shares_storage(flattened, base) == 0); /* reshape had to copy */

  CHECK(has_layout(cloned, 2, cloned_sizes, cloned_strides));
  CHECK(is_contiguous(cloned) == 1);
  CHECK(shares_storage(cloned, base) == 0);

  CHECK(has_layout(detached, 2, base_sizes, base_strides));
  CHECK(is_contiguous(detached) == 1);
  CHECK(shares_storage(detached, base) == 1);

  /* Values against base[r][c] = 4r + c. */
  if (read_floats(columns, values, 6)) {
    for (i = 0; i < 6; ++i) CHECK(values[i] == (float)(4 * (i / 2) + 2 * (i % 2)));
  }
  if (read_floats(flattened, values, 12)) {
    for (i = 0; i < 12; ++i) CHECK(values[i] == (float)(4 * (i % 3) + i / 3));
  }
  if (read_floats(cloned, values, 6)) {
    for (i = 0; i < 6; ++i) CHECK(values[i] == (float)(4 * (i / 2) + 2 * (i % 2)));
  }

  /* detached[0, 0] = 99 changes base[0, 0] and bumps the version 0 -> 1. */
  CHECK(version_of(base) == 0);
  CHECK_OK(tsr_tensor_select(detached, 0, 0, &row));
  if (row != NULL) CHECK_OK(tsr_tensor_select(row, 0, 0, &element));
  if (element != NULL && fill_op != NULL) {
    args[0] = tensor_value(element);
    args[1] = int_scalar_value(99);
    CHECK_OK(tsr_op_call(fill_op, args, 2, NULL, 0));
  }
  CHECK(element_2d(base, 0, 0) == 99.0);
  CHECK(version_of(base) == 1);
  CHECK(version_of(detached) == 1);
  CHECK(element_2d(cloned, 0, 0) == 0.0);

done:
  tsr_tensor_release(element);
  tsr_tensor_release(row);
  tsr_tensor_release(detached);
  tsr_tensor_release(cloned);
  tsr_tensor_release(flattened);
  tsr_tensor_release(transposed);
  tsr_tensor_release(columns);
  tsr_tensor_release(base);
}

static void probe_expand(void) {
  const float one = 1.0f;
  const int64_t one_size[1] = {1}, four[1] = {4}, zero_stride[1] = {0};
  float values[4] = {0, 0, 0, 0};
  tsr_tensor *single = NULL, *expanded = NULL;
  tsr_value args[2];
  tsr_status* status;
  const tsr_op* add_op = find_op("add_.Scalar");

  CHECK_OK(
      tsr_tensor_from_host(g_runtime, &one, sizeof one, 1, one_size, TSR_FLOAT32, kCpu, &single));
  if (single != NULL) CHECK_OK(tsr_tensor_expand(single, 1, four, &expanded));
  if (expanded != NULL && add_op != NULL) {
    CHECK(has_layout(expanded, 1, four, zero_stride));
    args[0] = tensor_value(expanded);
    args[1] = int_scalar_value(1);
    status = tsr_op_call(add_op, args, 2, NULL, 0);
    CHECK(status != NULL);
    if (status != NULL) {
      CHECK(strstr(tsr_status_message(status), kOverlapMessage) != NULL);
      if (strstr(tsr_status_message(status), kOverlapMessage) == NULL) {
        printf("  message was: %s\n", tsr_status_message(status));
      }
      tsr_status_free(status);
    }
    if (read_floats(expanded, values, 4)) {
      CHECK(values[0] == 1.0f && values[1] == 1.0f && values[2] == 1.0f && values[3] == 1.0f);
    }
  }
  tsr_tensor_release(expanded);
  tsr_tensor_release(single);
}

static void probe_dtypes_and_strides(void) {
  const int64_t ints[3] = {1, 2, 3};
  const float floats[2] = {1.0f, 2.0f};
  const int64_t three[1] = {3}, two[1] = {2};
  const int64_t sizes_4x5[2] = {4, 5}, sizes_2x3x4[3] = {2, 3, 4};
  const int64_t strided_sizes[2] = {2, 3}, strided_strides[2] = {10, 2};
  const int64_t strides_2x3x4[3] = {12, 4, 1};
  tsr_tensor *integers = NULL, *reals = NULL, *x = NULL, *rows = NULL, *every_second = NULL;
  tsr_tensor* cube = NULL;
  tsr_dtype dtype = TSR_BOOL;

  /* C has no literal inference: int64 data stays int64, float32 data float32,
   * and mixing the two promotes to float32 as PyTorch does. */
  CHECK_OK(
      tsr_tensor_from_host(g_runtime, ints, sizeof ints, 1, three, TSR_INT64, kCpu, &integers));
  CHECK_OK(
      tsr_tensor_from_host(g_runtime, floats, sizeof floats, 1, two, TSR_FLOAT32, kCpu, &reals));
  if (integers != NULL) {
    CHECK_OK(tsr_tensor_dtype(integers, &dtype));
    CHECK(dtype == TSR_INT64);
  }
  if (reals != NULL) {
    CHECK_OK(tsr_tensor_dtype(reals, &dtype));
    CHECK(dtype == TSR_FLOAT32);
  }
  CHECK_OK(tsr_dtype_promote(TSR_INT64, TSR_FLOAT32, &dtype));
  CHECK(dtype == TSR_FLOAT32);
  CHECK(strcmp(tsr_dtype_name(TSR_INT64), "int64") == 0);
  CHECK(strcmp(tsr_dtype_name(TSR_FLOAT32), "float32") == 0);

  /* x[::2, ::2] of a (4, 5) tensor has strides (10, 2); (2, 3, 4) has (12, 4, 1). */
  CHECK_OK(tsr_tensor_empty(g_runtime, 2, sizes_4x5, TSR_FLOAT32, kCpu, &x));
  if (x != NULL) CHECK_OK(tsr_tensor_slice(x, 0, 0, INT64_MAX, 2, &rows));
  if (rows != NULL) CHECK_OK(tsr_tensor_slice(rows, 1, 0, INT64_MAX, 2, &every_second));
  if (every_second != NULL) {
    CHECK(has_layout(every_second, 2, strided_sizes, strided_strides));
  }
  CHECK_OK(tsr_tensor_empty(g_runtime, 3, sizes_2x3x4, TSR_FLOAT32, kCpu, &cube));
  if (cube != NULL) CHECK(has_layout(cube, 3, sizes_2x3x4, strides_2x3x4));

  tsr_tensor_release(cube);
  tsr_tensor_release(every_second);
  tsr_tensor_release(rows);
  tsr_tensor_release(x);
  tsr_tensor_release(reals);
  tsr_tensor_release(integers);
}

static void probe_broadcast(void) {
  const float row_data[3] = {1, 2, 3};
  const float column_data[3] = {10, 20, 30};
  const int64_t row_sizes[1] = {3}, column_sizes[2] = {3, 1};
  const int64_t sum_sizes[2] = {3, 3}, sum_strides[2] = {3, 1};
  float values[9];
  tsr_tensor *row = NULL, *column = NULL;
  tsr_value args[2];
  tsr_value out;
  int i, j;
  const tsr_op* add_op = find_op("add.Tensor");

  CHECK_OK(tsr_tensor_from_host(g_runtime, row_data, sizeof row_data, 1, row_sizes, TSR_FLOAT32,
                                kCpu, &row));
  CHECK_OK(tsr_tensor_from_host(g_runtime, column_data, sizeof column_data, 2, column_sizes,
                                TSR_FLOAT32, kCpu, &column));
  if (row != NULL && column != NULL && add_op != NULL) {
    args[0] = tensor_value(row);
    args[1] = tensor_value(column);
    memset(&out, 0, sizeof out);
    CHECK_OK(tsr_op_call(add_op, args, 2, &out, 1));
    CHECK(out.tag == TSR_VALUE_TENSOR);
    if (out.tag == TSR_VALUE_TENSOR) {
      CHECK(has_layout(out.u.tensor, 2, sum_sizes, sum_strides));
      if (read_floats(out.u.tensor, values, 9)) {
        for (i = 0; i < 3; ++i) {
          for (j = 0; j < 3; ++j) CHECK(values[3 * i + j] == (float)(10 * (i + 1) + (j + 1)));
        }
      }
      tsr_tensor_release(out.u.tensor);
    }
  }
  tsr_tensor_release(column);
  tsr_tensor_release(row);
}

int main(void) {
  tsr_status* status = tsr_runtime_default(&g_runtime);
  if (status != NULL) {
    printf("FAIL tsr_runtime_default: %s\n", tsr_status_message(status));
    tsr_status_free(status);
    printf("0 passed, 1 failed\n");
    return 1;
  }
  probe_table();
  probe_expand();
  probe_dtypes_and_strides();
  probe_broadcast();
  printf("%d passed, %d failed\n", g_passed, g_failed);
  return g_failed == 0 ? 0 : 1;
}
