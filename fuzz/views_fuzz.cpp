// Fuzz target: tensors over caller memory and views of them - from_blob,
// empty_strided, DLPack import, as_strided, then a chain of view calls
// (slice, select, expand, unsqueeze, transpose, view) - each result read to
// the host. The blob is a heap buffer of exactly the bytes the input names, so
// AddressSanitizer sees any read past it; every refusal must be a status.
#include <dlpack/dlpack.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "fuzz_support.h"

namespace {

using tsr_fuzz::Input;

constexpr tsr_device kCpu{TSR_DEVICE_CPU, 0};

struct Dims {
  int32_t ndim = 0;
  int64_t sizes[TSR_MAX_DIMS + 1] = {};
  int64_t strides[TSR_MAX_DIMS + 1] = {};
};

Dims dims(Input& in) {
  Dims d;
  d.ndim = in.byte() % (TSR_MAX_DIMS + 2) - (in.byte() == 0xff ? 1 : 0);
  if (d.ndim < 0) d.ndim = 0;
  for (int32_t i = 0; i < d.ndim && i <= TSR_MAX_DIMS; ++i) {
    d.sizes[i] = in.size_like();
    d.strides[i] = in.size_like();
  }
  return d;
}

// Reads `t` to the host and releases it; a refusal is fine, a crash is not.
void read_and_release(tsr_tensor* t) {
  int64_t numel = 0;
  tsr_fuzz::expect_handled(tsr_tensor_numel(t, &numel), "tsr_tensor_numel");
  if (numel > 0 && numel <= (1 << 16)) {
    std::vector<float> host(static_cast<size_t>(numel));
    tsr_fuzz::expect_handled(tsr_tensor_copy_to_host(t, host.data(), host.size() * sizeof(float)),
                             "tsr_tensor_copy_to_host");
  }
  tsr_tensor_release(t);
}

// A chain of views of `base` chosen by the input.
void views_of(Input& in, tsr_tensor* base) {
  tsr_tensor_retain(base);
  tsr_tensor* t = base;
  for (int step = 0; step < 6 && !in.empty(); ++step) {
    tsr_tensor* next = nullptr;
    tsr_status* st = nullptr;
    const int64_t a = in.size_like(), b = in.size_like(), c = in.size_like();
    switch (in.byte() % 8) {
      case 0:
        st = tsr_tensor_slice(t, a, b, c, in.size_like(), &next);
        break;
      case 1:
        st = tsr_tensor_select(t, a, b, &next);
        break;
      case 2: {
        Dims d = dims(in);
        st = tsr_tensor_expand(t, d.ndim, d.sizes, &next);
        break;
      }
      case 3:
        st = tsr_tensor_unsqueeze(t, a, &next);
        break;
      case 4:
        st = tsr_tensor_transpose(t, a, b, &next);
        break;
      case 5: {
        Dims d = dims(in);
        st = tsr_tensor_view(t, d.ndim, d.sizes, &next);
        break;
      }
      case 6: {
        Dims d = dims(in);
        st = tsr_tensor_as_strided(t, d.ndim, d.sizes, d.strides, c, &next);
        break;
      }
      default:
        st = tsr_tensor_squeeze(t, a, &next);
        break;
    }
    if (st != nullptr) {
      tsr_fuzz::expect_handled(st, "a view call");
      continue;
    }
    tsr_tensor_release(t);
    t = next;
    tsr_tensor_retain(t);
    read_and_release(next);
  }
  tsr_tensor_release(t);
}

struct DlpackBox {
  DLManagedTensor managed{};
  int64_t shape[TSR_MAX_DIMS + 1] = {};
  int64_t strides[TSR_MAX_DIMS + 1] = {};
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in(data, size);
  tsr_runtime* rt = tsr_fuzz::runtime();
  const uint8_t how = in.byte() % 3;
  Dims d = dims(in);
  const bool with_strides = in.byte() & 1;
  // Small, or past any user address (2^48 and up): those must be refused.
  const uint64_t byte_offset =
      (in.byte() & 1) ? in.u64() | (uint64_t{1} << 48) : 4 * (in.byte() % 8);
  // The caller's buffer, exactly as large as the layout addresses (from_blob
  // and DLPack trust the caller there; nothing else could). A layout whose
  // extent overflows int64 gets a 1-float buffer: the core must refuse it,
  // and if it did not, ASan would see the read past that float.
  size_t floats = 1;
  {
    int64_t extent = 0;
    bool overflow = false, empty = false;
    int64_t st[TSR_MAX_DIMS + 1] = {};
    int64_t stride = 1;
    for (int32_t i = d.ndim - 1; i >= 0 && i <= TSR_MAX_DIMS; --i) {
      st[i] = with_strides || how == 1 ? d.strides[i] : stride;
      overflow =
          overflow || __builtin_mul_overflow(stride, d.sizes[i] > 1 ? d.sizes[i] : 1, &stride);
    }
    for (int32_t i = 0; i < d.ndim && i <= TSR_MAX_DIMS; ++i) {
      if (d.sizes[i] <= 0 || st[i] < 0) empty = true;
      int64_t term = 0;
      if (d.sizes[i] > 0)
        overflow = overflow || __builtin_mul_overflow(d.sizes[i] - 1, st[i], &term) ||
                   __builtin_add_overflow(extent, term, &extent);
    }
    const int64_t offset = how == 2 ? static_cast<int64_t>(byte_offset / 4) : 0;
    overflow = overflow || (how == 2 && byte_offset >= (uint64_t{1} << 48)) ||
               __builtin_add_overflow(extent, offset + 1, &extent);
    if (!overflow && !empty) {
      if (extent > (1 << 16)) return 0;  // valid but large: not this target's business
      floats = static_cast<size_t>(extent);
    }
  }
  std::vector<float>* blob = new std::vector<float>(floats, 1.0f);
  tsr_tensor* t = nullptr;
  tsr_status* st = nullptr;
  if (how == 0) {
    st = tsr_tensor_from_blob(
        rt, blob->empty() ? nullptr : blob->data(), d.ndim, d.sizes,
        with_strides ? d.strides : nullptr, TSR_FLOAT32, kCpu,
        [](void*, void* context) { delete static_cast<std::vector<float>*>(context); }, blob, &t);
    blob = nullptr;  // owned by the tensor, or already deleted on failure
  } else if (how == 1) {
    st = tsr_tensor_empty_strided(rt, d.ndim, d.sizes, d.strides, TSR_FLOAT32, kCpu, &t);
  } else {
    auto* box = new DlpackBox();
    DLTensor& dl = box->managed.dl_tensor;
    dl.data = blob->empty() ? nullptr : blob->data();
    dl.device = DLDevice{kDLCPU, 0};
    dl.ndim = d.ndim;
    dl.dtype = DLDataType{kDLFloat, 32, 1};
    for (int32_t i = 0; i <= TSR_MAX_DIMS; ++i) {
      box->shape[i] = d.sizes[i];
      box->strides[i] = d.strides[i];
    }
    dl.shape = box->shape;
    dl.strides = with_strides ? box->strides : nullptr;
    dl.byte_offset = byte_offset;
    box->managed.manager_ctx = box;
    box->managed.deleter = [](DLManagedTensor* m) {
      delete static_cast<DlpackBox*>(m->manager_ctx);
    };
    st = tsr_tensor_from_dlpack(rt, &box->managed, &t);
    // On failure the caller keeps ownership (tessera.h): free it here. The
    // blob outlives the tensor either way (freed below, after the views).
    if (st != nullptr) delete box;
  }
  if (st == nullptr) {
    views_of(in, t);
    read_and_release(t);
  } else {
    tsr_fuzz::expect_handled(st, "tensor creation");
  }
  delete blob;
  return 0;
}
