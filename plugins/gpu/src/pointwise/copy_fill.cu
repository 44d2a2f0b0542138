// copy_fill.cu - copy_ (every dtype pair, any strides) and fill_.Scalar.
//
// A same-dtype copy between two contiguous ranges is one runtime memcpy
// (the copy engine, at the device's copy bandwidth); everything else is one
// functor per element over the coalesced Indexer (indexer.hpp).
#include "dtypes.hpp"
#include "indexer.hpp"
#include "kernel_util.hpp"

namespace tessera::gpu {
namespace {

template <class To, class From>
struct CopyOp {
  char* out;
  const char* src;
  Indexer<2> ix;
  TSR_HD void operator()(int64_t i) const {
    int64_t off[2];
    ix.offsets(i, off);
    *reinterpret_cast<To*>(out + off[0]) =
        convert<To>(*reinterpret_cast<const From*>(src + off[1]));
  }
};

template <class T>
struct FillOp {
  char* out;
  T value;
  Indexer<1> ix;
  TSR_HD void operator()(int64_t i) const { *reinterpret_cast<T*>(out + ix.offset(0, i)) = value; }
};

template <class T>
T scalar_as(const tsr_scalar& s) {
  if (s.kind == TSR_BOOL || s.kind == TSR_INT64) return convert<T>(s.v.i);
  const double f = scalar_double(s);
  if constexpr (is_integral_v<T>) {
    return static_cast<T>(static_cast<int64_t>(f));
  } else {
    return convert<T>(f);
  }
}

tsr_status* copy_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) noexcept {
  return run_kernel(context, call, [&](const Exec& exec) {
    tsr_tensor_desc& out = out_arg(*call, 0);
    const tsr_tensor_desc& src = tensor_arg(*call, 1, "src");
    const tsr_tensor_desc* descs[2] = {&out, &src};
    const Indexer<2> ix = make_indexer<2>(descs);
    if (ix.numel == 0) return;
    const int sizes[2] = {static_cast<int>(sdk::element_size(out.dtype)),
                          static_cast<int>(sdk::element_size(src.dtype))};
    if (out.dtype == src.dtype && ix.contiguous(sizes)) {
      copy_async(exec.device, data_of(out), data_of(src),
                 static_cast<size_t>(ix.numel) * static_cast<size_t>(sizes[0]),
                 CopyKind::kDeviceToDevice, exec.stream);
      return;
    }
    TSR_GPU_DISPATCH(out.dtype, "copy_", To, {
      TSR_GPU_DISPATCH(src.dtype, "copy_", From, {
        parallel_for(exec, ix.numel, CopyOp<To, From>{data_of(out), data_of(src), ix}, "copy_");
      });
    });
  });
}

tsr_status* fill_kernel(tsr_plugin_context* context, const tsr_kernel_call* call) noexcept {
  return run_kernel(context, call, [&](const Exec& exec) {
    tsr_tensor_desc& out = out_arg(*call, 0);
    const tsr_scalar value = scalar_arg(*call, 1, "value");
    const tsr_tensor_desc* descs[1] = {&out};
    const Indexer<1> ix = make_indexer<1>(descs);
    if (ix.numel == 0) return;
    TSR_GPU_DISPATCH(out.dtype, "fill_", T, {
      parallel_for(exec, ix.numel, FillOp<T>{data_of(out), scalar_as<T>(value), ix}, "fill_");
    });
  });
}

}  // namespace

void add_copy_fill_kernels(KernelList& out) {
  out.push_back(make_entry(sdk::schema::kCopy, {kRealDtypes, kRealDtypes}, copy_kernel));
  out.push_back(make_entry(sdk::schema::kFill, {kRealDtypes}, fill_kernel));
}

}  // namespace tessera::gpu
