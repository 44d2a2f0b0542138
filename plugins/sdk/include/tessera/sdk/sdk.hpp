// tessera/sdk/sdk.hpp - the whole plugin SDK in one include (re-exports only).
//
//   status.hpp        statuses, status_error, guard (no exception crosses the ABI)
//   kernel_args.hpp   check_call, tensor_arg, out_arg, scalar_arg ... : reading a call
//   op_checks.hpp     op contracts: gather/scatter index shapes, searchsorted, layer_norm ...
//   kernel_entry.hpp  dtype masks, make_entry, trampoline<K>: the kernel table
//   primitives.hpp    the primitives' schema strings and function-code domains
//   plugin_table.hpp  plugin_table, query (tsr_plugin_query), entry guards, options
//   dtype_traits.hpp  tsr_dtype <-> C++ types, dispatch_dtype
//   strided.hpp       fast N-d strided iteration
//   elements.hpp      simple exact element access (load/store as double or int64)
//   half.hpp          float16 / bfloat16
//   philox.hpp        the Philox bits random_fill must produce
//   random_fill.hpp   checking a random_fill call (check_random_fill_call, random_fill_spec)
//   special.hpp       erfinv, digamma, a thread-safe lgamma, integer_pow (device code too)
//   device_code.hpp   TSR_SDK_HD: the mark of what GPU device code may call
#ifndef TESSERA_SDK_SDK_HPP_
#define TESSERA_SDK_SDK_HPP_

#include "tessera/sdk/device_code.hpp"
#include "tessera/sdk/dtype_traits.hpp"
#include "tessera/sdk/elements.hpp"
#include "tessera/sdk/half.hpp"
#include "tessera/sdk/kernel_args.hpp"
#include "tessera/sdk/kernel_entry.hpp"
#include "tessera/sdk/op_checks.hpp"
#include "tessera/sdk/philox.hpp"
#include "tessera/sdk/plugin_table.hpp"
#include "tessera/sdk/primitives.hpp"
#include "tessera/sdk/random_fill.hpp"
#include "tessera/sdk/special.hpp"
#include "tessera/sdk/status.hpp"
#include "tessera/sdk/strided.hpp"

#endif  // TESSERA_SDK_SDK_HPP_
