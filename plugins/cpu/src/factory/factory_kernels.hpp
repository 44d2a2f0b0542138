// factory/factory_kernels.hpp - kernels of the factory op family
// (core/registry/defs/factory.def), listed in factory_table.cpp.
#ifndef TESSERA_PLUGINS_CPU_FACTORY_FACTORY_KERNELS_HPP_
#define TESSERA_PLUGINS_CPU_FACTORY_FACTORY_KERNELS_HPP_

#include "../context.hpp"
#include "tessera/plugin.h"

namespace tessera::cpu {

// _iota_(Tensor(a!) self, Scalar start, Scalar step, Scalar? end=None): every
// real dtype but bool, any strides (iota.cpp).
void iota_kernel(const tsr_plugin_context& context, const tsr_kernel_call* call);

}  // namespace tessera::cpu

#endif  // TESSERA_PLUGINS_CPU_FACTORY_FACTORY_KERNELS_HPP_
