// pointwise_kernels.hpp - the kernels of the pointwise family
// (core/registry/defs/pointwise.def), listed in pointwise_table.cpp:
//   _unary(Tensor self, int op, Scalar p0=0, Scalar p1=0, Scalar p2=0) -> Tensor
//   _binary(Tensor self, Tensor other, int op, Scalar p0=0) -> Tensor
//   where.self(Tensor condition, Tensor self, Tensor other) -> Tensor
// Dtypes follow tessera/opcodes.h: inputs arrive in the computation dtype
// (16-bit floats compute in float32), broadcast to out's shape (stride 0).
#ifndef TESSERA_PLUGINS_CPU_POINTWISE_POINTWISE_KERNELS_HPP_
#define TESSERA_PLUGINS_CPU_POINTWISE_POINTWISE_KERNELS_HPP_

#include <cstdint>

#include "../context.hpp"
#include "tessera/plugin.h"

namespace tessera::cpu {

void unary_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call);
void binary_code_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call);
void where_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call);

namespace pointwise {

// _unary's code paths by dtype class (unary_float.cpp, unary_integer.cpp); each
// throws UNIMPLEMENTED for a (code, dtype) pair it does not define.
void unary_floating(const tsr_plugin_context& context, const tsr_kernel_call& call, int code,
                    const tsr_tensor_desc& out, const tsr_tensor_desc& in, const tsr_scalar* p);
void unary_integer(const tsr_plugin_context& context, const tsr_kernel_call& call, int code,
                   const tsr_tensor_desc& out, const tsr_tensor_desc& in, const tsr_scalar* p);

}  // namespace pointwise
}  // namespace tessera::cpu

#endif  // TESSERA_PLUGINS_CPU_POINTWISE_POINTWISE_KERNELS_HPP_
