// tessera/ops.hpp - every operator of the C++ frontend: the typed wrappers of
// each op family and call_op for any registry op by name. Only re-exports;
// each family lives in its own header:
//   ops/arithmetic.hpp  add, sub, mul, div, neg, their out= forms, operators
//   ops/factory.hpp     eye, linspace, logspace, empty in a memory format
//   ops/indexing.hpp    gather/scatter, index_select, index/index_put, sort, unique
//   ops/linalg.hpp      matmul, mm, bmm, products, einsum, convolutions, pooling
//   ops/nn.hpp          normalisation, dropout, embedding, attention, losses
//   ops/pointwise.hpp   elementwise math, activations, comparisons, where
//   ops/random.hpp      Generator and the random ops
//   ops/reduction.hpp   sum, mean, statistics, norms, scans, softmax
//   ops/shape.hpp       cat/stack, split/chunk, views and copies, clone
//   call_op.hpp         any registry op by name
// The machinery they are written with is boxed_call.hpp.
#pragma once

#include "tessera/call_op.hpp"         // IWYU pragma: export
#include "tessera/ops/arithmetic.hpp"  // IWYU pragma: export
#include "tessera/ops/factory.hpp"     // IWYU pragma: export
#include "tessera/ops/indexing.hpp"    // IWYU pragma: export
#include "tessera/ops/linalg.hpp"      // IWYU pragma: export
#include "tessera/ops/nn.hpp"          // IWYU pragma: export
#include "tessera/ops/pointwise.hpp"   // IWYU pragma: export
#include "tessera/ops/random.hpp"      // IWYU pragma: export
#include "tessera/ops/reduction.hpp"   // IWYU pragma: export
#include "tessera/ops/shape.hpp"       // IWYU pragma: export
