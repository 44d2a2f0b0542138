// Shared helpers for the core's ABI tests: a tsr_status taken into a value
// (code + message, the status freed), matchers on error messages, and owning
// pointers for runtimes and tensors.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <ostream>
#include <regex>
#include <string>

#include "tessera/tessera.h"

namespace tsr_test {

struct Outcome {
  tsr_status_code code = TSR_OK;
  std::string message;
};

inline std::ostream& operator<<(std::ostream& os, const Outcome& outcome) {
  return os << tsr_status_code_name(outcome.code) << ": \"" << outcome.message << "\"";
}

// Takes ownership of `status` and frees it.
inline Outcome Take(tsr_status* status) {
  Outcome outcome{tsr_status_code_of(status), tsr_status_message(status)};
  tsr_status_free(status);
  return outcome;
}

inline ::testing::AssertionResult Contains(const char* text_expr, const char* needle_expr,
                                           const std::string& text, const std::string& needle) {
  if (text.find(needle) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << text_expr << " does not mention " << needle_expr << "\n  text:   \"" << text
         << "\"\n  wanted: \"" << needle << "\"";
}

// True when `number` appears in `text` as a whole decimal number.
inline bool MentionsNumber(const std::string& text, long long number) {
  const std::regex pattern("(^|[^0-9])" + std::to_string(number) + "([^0-9]|$)");
  return std::regex_search(text, pattern);
}

struct RuntimeDeleter {
  void operator()(tsr_runtime* runtime) const { tsr_runtime_destroy(runtime); }
};
using RuntimePtr = std::unique_ptr<tsr_runtime, RuntimeDeleter>;

struct TensorDeleter {
  void operator()(tsr_tensor* tensor) const { tsr_tensor_release(tensor); }
};
using TensorPtr = std::unique_ptr<tsr_tensor, TensorDeleter>;

}  // namespace tsr_test

#define EXPECT_MENTIONS(text, needle) EXPECT_PRED_FORMAT2(::tsr_test::Contains, text, needle)
