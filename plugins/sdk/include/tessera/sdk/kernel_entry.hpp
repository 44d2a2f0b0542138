// tessera/sdk/kernel_entry.hpp - building kernel table entries
// (tsr_kernel_entry, plugin.h) and the dtype masks most entries use.
//
//   out.push_back(make_entry("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
//                            {kRealDtypes, kRealDtypes}, add_kernel));
//   out.push_back(make_entry("_unary(...)", {kFloatingDtypes}, unary_kernel,
//                            {TSR_UNARY_EXP, TSR_UNARY_LOG}));
//
// `masks` are the per-tensor-argument dtype masks in schema order; `codes`
// the function codes a family entry implements (opcodes.h). Header-only.
#ifndef TESSERA_SDK_KERNEL_ENTRY_HPP_
#define TESSERA_SDK_KERNEL_ENTRY_HPP_

#include <cstddef>
#include <cstdint>
#include <initializer_list>

#include "tessera/plugin.h"

namespace tessera::sdk {

// The ten real dtypes (every dtype but the complex ones), and subsets.
inline constexpr uint64_t kRealDtypes = TSR_DTYPE_BIT(TSR_BOOL) | TSR_DTYPE_BIT(TSR_UINT8) |
                                        TSR_DTYPE_BIT(TSR_INT8) | TSR_DTYPE_BIT(TSR_INT16) |
                                        TSR_DTYPE_BIT(TSR_INT32) | TSR_DTYPE_BIT(TSR_INT64) |
                                        TSR_DTYPE_BIT(TSR_FLOAT16) | TSR_DTYPE_BIT(TSR_BFLOAT16) |
                                        TSR_DTYPE_BIT(TSR_FLOAT32) | TSR_DTYPE_BIT(TSR_FLOAT64);
inline constexpr uint64_t kNumericDtypes = kRealDtypes & ~TSR_DTYPE_BIT(TSR_BOOL);
inline constexpr uint64_t kFloatingDtypes = TSR_DTYPE_BIT(TSR_FLOAT16) |
                                            TSR_DTYPE_BIT(TSR_BFLOAT16) |
                                            TSR_DTYPE_BIT(TSR_FLOAT32) | TSR_DTYPE_BIT(TSR_FLOAT64);
inline constexpr uint64_t kIntegralDtypes = TSR_DTYPE_BIT(TSR_UINT8) | TSR_DTYPE_BIT(TSR_INT8) |
                                            TSR_DTYPE_BIT(TSR_INT16) | TSR_DTYPE_BIT(TSR_INT32) |
                                            TSR_DTYPE_BIT(TSR_INT64);

// A table entry: schema, per-tensor-argument dtype masks, the function, and
// for function-code families the codes it implements.
inline tsr_kernel_entry make_entry(const char* schema, std::initializer_list<uint64_t> masks,
                                   tsr_kernel_fn fn, std::initializer_list<int> codes = {},
                                   uint32_t flags = 0, tsr_kernel_size_fn size_fn = nullptr) {
  tsr_kernel_entry e{};
  e.struct_size = sizeof e;
  e.schema = schema;
  size_t k = 0;
  for (uint64_t m : masks)
    if (k < TSR_KERNEL_MAX_TENSOR_ARGS) e.dtype_masks[k++] = m;
  e.fn = fn;
  e.flags = flags;
  e.size_fn = size_fn;
  for (int c : codes)
    if (c >= 0 && c < 128) e.op_codes[c / 64] |= uint64_t{1} << (c % 64);
  return e;
}

}  // namespace tessera::sdk

#endif  // TESSERA_SDK_KERNEL_ENTRY_HPP_
