// copy_fill.cpp - copy_ (every dtype pair, any strides) and fill_.Scalar.
//
// copy_ writes outs[0] (which aliases `self`) from `src`, already broadcast to
// self's shape (stride 0 allowed), converting with convert.hpp's semantics. Same
// dtype: contiguous runs are memcpy'd, strided ones copied as raw elements (bit
// exact, NaN payloads included). Different dtypes: one of the 144 instantiated
// conversion loops, with contiguous and broadcast-source fast paths.
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "../convert.hpp"
#include "../half_convert.hpp"
#include "../kernels.hpp"
#include "../pointwise_loop.hpp"
#include "tessera/sdk/dtype_traits.hpp"
#include "tessera/sdk/kernel_args.hpp"

namespace tessera::cpu {
namespace {

struct bytes16 {
  unsigned char b[16];
};

// Raw element copy along one run.
template <class E>
void copy_raw_run(char* dst, const char* src, int64_t n, int64_t dst_stride, int64_t src_stride) {
  for (int64_t i = 0; i < n; ++i) {
    E value;
    std::memcpy(&value, src + i * src_stride, sizeof(E));
    std::memcpy(dst + i * dst_stride, &value, sizeof(E));
  }
}

void copy_same_dtype(const tsr_plugin_context& context, const tsr_tensor_desc& out,
                     const tsr_tensor_desc& src) {
  const size_t size = sdk::element_size(out.dtype);
  const tsr_tensor_desc* descs[2] = {&out, &src};
  const auto layout = sdk::make_layout(descs);
  const int64_t dst_stride = layout.inner_stride(0);
  const int64_t src_stride = layout.inner_stride(1);
  char* const base[2] = {base_address(out), base_address(src)};
  for_each_element_run(context, layout, base, [&](char* const(&p)[2], int64_t n) {
    if (p[0] == p[1] && dst_stride == src_stride) return;  // in-place copy of itself
    if (dst_stride == static_cast<int64_t>(size) && src_stride == dst_stride) {
      std::memcpy(p[0], p[1], static_cast<size_t>(n) * size);
      return;
    }
    switch (size) {
      case 1:
        copy_raw_run<uint8_t>(p[0], p[1], n, dst_stride, src_stride);
        break;
      case 2:
        copy_raw_run<uint16_t>(p[0], p[1], n, dst_stride, src_stride);
        break;
      case 4:
        copy_raw_run<uint32_t>(p[0], p[1], n, dst_stride, src_stride);
        break;
      case 8:
        copy_raw_run<uint64_t>(p[0], p[1], n, dst_stride, src_stride);
        break;
      default:
        copy_raw_run<bytes16>(p[0], p[1], n, dst_stride, src_stride);
        break;
    }
  });
}

template <class To, class From>
void convert_run(char* dst, const char* src, int64_t n, int64_t dst_stride, int64_t src_stride) {
  if (dst_stride == sizeof(To) && src_stride == sizeof(From)) {
    To* d = reinterpret_cast<To*>(dst);
    const From* s = reinterpret_cast<const From*>(src);
    if constexpr (std::is_same_v<From, float> && is_reduced_float_v<To>) {
      from_float(s, d, n);  // bulk (F16C for float16)
    } else if constexpr (is_reduced_float_v<From> && !is_reduced_float_v<To>) {
      // Widen blocks in bulk (exact), then convert from float32.
      constexpr int64_t kBlock = 256;
      float widened[kBlock];
      for (int64_t i0 = 0; i0 < n; i0 += kBlock) {
        const int64_t len = std::min(kBlock, n - i0);
        to_float(s + i0, widened, len);
        for (int64_t i = 0; i < len; ++i) d[i0 + i] = convert<To>(widened[i]);
      }
    } else {
      for (int64_t i = 0; i < n; ++i) d[i] = convert<To>(s[i]);
    }
  } else if (src_stride == 0) {
    const To value = convert<To>(*reinterpret_cast<const From*>(src));
    for (int64_t i = 0; i < n; ++i) *reinterpret_cast<To*>(dst + i * dst_stride) = value;
  } else {
    for (int64_t i = 0; i < n; ++i) {
      *reinterpret_cast<To*>(dst + i * dst_stride) =
          convert<To>(*reinterpret_cast<const From*>(src + i * src_stride));
    }
  }
}

void copy_converting(const tsr_plugin_context& context, const tsr_tensor_desc& out,
                     const tsr_tensor_desc& src) {
  const tsr_tensor_desc* descs[2] = {&out, &src};
  const auto layout = sdk::make_layout(descs);
  const int64_t dst_stride = layout.inner_stride(0);
  const int64_t src_stride = layout.inner_stride(1);
  char* const base[2] = {base_address(out), base_address(src)};
  sdk::dispatch_dtype(out.dtype, [&](auto to_tag) {
    sdk::dispatch_dtype(src.dtype, [&](auto from_tag) {
      using To = typename decltype(to_tag)::type;
      using From = typename decltype(from_tag)::type;
      for_each_element_run(context, layout, base, [&](char* const(&p)[2], int64_t n) {
        convert_run<To, From>(p[0], p[1], n, dst_stride, src_stride);
      });
    });
  });
}

}  // namespace

void copy_kernel(const tsr_plugin_context& context, const tsr_kernel_call* raw_call) {
  const tsr_kernel_call& call = sdk::check_call(raw_call, 3, 1);
  const tsr_tensor_desc& self = sdk::tensor_arg(call, 0, "self");
  const tsr_tensor_desc& src = sdk::tensor_arg(call, 1, "src");
  (void)sdk::bool_arg(call, 2, "non_blocking");  // every cpu copy is synchronous
  const tsr_tensor_desc& out = sdk::out_arg(call, 0);
  sdk::check_same_sizes(call, out, "out", self, "self");
  sdk::check_dtype(call, out, "out", self.dtype);
  sdk::check_same_sizes(call, src, "src", out, "self");
  if (out.dtype == src.dtype) {
    copy_same_dtype(context, out, src);
  } else {
    copy_converting(context, out, src);
  }
}

void fill_kernel(const tsr_plugin_context& context, const tsr_kernel_call* raw_call) {
  const tsr_kernel_call& call = sdk::check_call(raw_call, 2, 1);
  const tsr_tensor_desc& self = sdk::tensor_arg(call, 0, "self");
  const tsr_scalar& value = sdk::scalar_arg(call, 1, "value");
  const tsr_tensor_desc& out = sdk::out_arg(call, 0);
  sdk::check_same_sizes(call, out, "out", self, "self");
  sdk::check_dtype(call, out, "out", self.dtype);
  const tsr_tensor_desc* descs[1] = {&out};
  const auto layout = sdk::make_layout(descs);
  const int64_t stride = layout.inner_stride(0);
  char* const base[1] = {base_address(out)};
  sdk::dispatch_dtype(out.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T fill_value = scalar_convert<T>(value);
    for_each_element_run(context, layout, base, [&](char* const(&p)[1], int64_t n) {
      if (stride == sizeof(T)) {
        T* d = reinterpret_cast<T*>(p[0]);
        for (int64_t i = 0; i < n; ++i) d[i] = fill_value;
      } else {
        for (int64_t i = 0; i < n; ++i) *reinterpret_cast<T*>(p[0] + i * stride) = fill_value;
      }
    });
  });
}

}  // namespace tessera::cpu
