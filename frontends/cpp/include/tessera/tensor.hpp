// tessera/tensor.hpp - tessera::Tensor, complete: the class (tensor_body.hpp),
// the definitions of its members that go through the boxed call
// (tensor_methods.hpp) and printing (print.hpp). Include this, not the parts.
//
// Why the class is apart from those definitions: the boxed-call machinery
// (boxed_call.hpp) takes and returns Tensors, so it needs the class complete,
// and the members that call ops need the machinery. Each part includes the
// parts it needs (tensor_body.hpp <- boxed_call.hpp <- tensor_methods.hpp;
// print.hpp needs the class alone) and none includes this header, so the
// parts compile in any order, whichever a translation unit meets first. Op
// headers (ops/*.hpp) include this header and boxed_call.hpp.
#pragma once

#include "tessera/print.hpp"           // IWYU pragma: export
#include "tessera/tensor_body.hpp"     // IWYU pragma: export
#include "tessera/tensor_methods.hpp"  // IWYU pragma: export
