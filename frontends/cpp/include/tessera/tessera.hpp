// tessera/tessera.hpp - the C++ frontend of Tessera (header-only, over tessera.h).
//
//   #include <tessera/tessera.hpp>
//   auto base = tessera::arange(12, tessera::kFloat32).reshape({3, 4});
//   auto c = base + 1.0;
//   std::cout << c.t() << "\n";
//
// Only re-exports; each concept lives in its own header:
//   error.hpp           tessera::Error, check(tsr_status*)
//   runtime.hpp         default_runtime(), Device, devices(), plugin options
//   dtype.hpp           Dtype, kFloat32..., promote_types, dtype inference
//   scalar.hpp          Scalar
//   dims.hpp            IntList (arguments), Dims (sizes/strides results)
//   tensor_options.hpp  TensorOptions, dtype(), device()
//   tensor.hpp          Tensor: ownership, metadata, views, copies (the class in
//                       tensor_body.hpp, its op members in tensor_methods.hpp)
//   boxed_call.hpp      cached op handles, tsr_value arguments, the boxed call
//   ops/*.hpp           the typed ops, one header per family (list in ops.hpp)
//   call_op.hpp         any registry op by name
//   factories.hpp       empty, zeros, ones, full, tensor, arange, from_blob
//   print.hpp           operator<< for tensors
#pragma once

#include "tessera/boxed_call.hpp"      // IWYU pragma: export
#include "tessera/call_op.hpp"         // IWYU pragma: export
#include "tessera/dims.hpp"            // IWYU pragma: export
#include "tessera/dtype.hpp"           // IWYU pragma: export
#include "tessera/error.hpp"           // IWYU pragma: export
#include "tessera/factories.hpp"       // IWYU pragma: export
#include "tessera/ops/arithmetic.hpp"  // IWYU pragma: export
#include "tessera/ops/factory.hpp"     // IWYU pragma: export
#include "tessera/ops/indexing.hpp"    // IWYU pragma: export
#include "tessera/ops/linalg.hpp"      // IWYU pragma: export
#include "tessera/ops/nn.hpp"          // IWYU pragma: export
#include "tessera/ops/pointwise.hpp"   // IWYU pragma: export
#include "tessera/ops/random.hpp"      // IWYU pragma: export
#include "tessera/ops/reduction.hpp"   // IWYU pragma: export
#include "tessera/ops/shape.hpp"       // IWYU pragma: export
#include "tessera/print.hpp"           // IWYU pragma: export
#include "tessera/runtime.hpp"         // IWYU pragma: export
#include "tessera/scalar.hpp"          // IWYU pragma: export
#include "tessera/tensor.hpp"          // IWYU pragma: export
#include "tessera/tensor_options.hpp"  // IWYU pragma: export
#include "tessera/tessera.h"           // IWYU pragma: export
