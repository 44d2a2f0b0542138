// Helpers shared by the tests written against the C++ frontend
// (autograd_test, autograd_extensions_test, custom_op_test).
#pragma once

#include <string>

#include "tessera/tessera.hpp"

namespace tsr_test {

// The message of the tessera::Error `fn` throws; "" when it throws none.
template <class Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const tessera::Error& e) {
    return e.what();
  }
  return "";
}

// Takes a status from a C call: "" for success, else its message (freed).
inline std::string status_message(tsr_status* st) {
  if (st == nullptr) return "";
  std::string m = tsr_status_message(st);
  tsr_status_free(st);
  return m.empty() ? "(error without message)" : m;
}

}  // namespace tsr_test
