// tessera/call_op.hpp - any registry op by name, for ops without a typed
// wrapper and for tests: `call_op("exp", {detail::value(t)})`. The op is
// looked up on every call (a map lookup); typed wrappers cache the handle
// instead (Note [Op handle cache] in boxed_call.hpp).
#pragma once

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "tessera/boxed_call.hpp"
#include "tessera/error.hpp"
#include "tessera/tensor.hpp"
#include "tessera/tessera.h"

namespace tessera {

// Returns every result of the op (an in-place op returns its target).
inline std::vector<Tensor> call_op_all(const char* name, std::initializer_list<tsr_value> args) {
  const tsr_op* handle = detail::find_op(name);
  tsr_value results[4] = {};
  check(tsr_op_call(handle, args.begin(), args.size(), results, 4));
  std::vector<Tensor> out;
  for (const tsr_value& r : results)
    if (r.tag == TSR_VALUE_TENSOR && r.u.tensor != nullptr)
      out.push_back(Tensor::adopt(r.u.tensor));
  return out;
}
// The first result of call_op_all.
inline Tensor call_op(const char* name, std::initializer_list<tsr_value> args) {
  std::vector<Tensor> r = call_op_all(name, args);
  if (r.empty())
    detail::throw_error(TSR_INTERNAL, std::string("op '") + name + "' returned no tensor");
  return std::move(r.front());
}

}  // namespace tessera
