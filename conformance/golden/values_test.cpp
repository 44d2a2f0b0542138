// values_test.cpp - Ops/Golden: every golden case against PyTorch's values.
//
// Per case (harness.h builds and calls it):
//   - every output is compared with the expected one (null: a result
//     PyTorch leaves unspecified, only counted): dtype, shape (and
//     strides where the case asks) exactly, values with
//     conformance/tolerances.hpp (NaN == NaN, infinities exact, integers and
//     bool exact; tolerance(dtype), or loose(dtype) for cases marked "loose");
//   - inputs the op writes (in-place ops, batch_norm's running stats) are
//     compared with their expected values after the call, and every other
//     input must be left exactly as it was;
//   - an error case must fail with a non-OK status whose message names the op.
// An op missing from the registry is a failure, not a skip: the suite says
// what the library still lacks.
#include <string>
#include <vector>

#include "conformance/golden/harness.h"

namespace tessera::golden {
namespace {

class Golden : public testing::TestWithParam<int> {};

TEST_P(Golden, Case) {
  if (GetParam() < 0) FAIL() << golden_file().error;
  worst_error() = 0;
  const json& spec = golden_file().cases[static_cast<size_t>(GetParam())];
  const std::string op_name = spec.at("op").get<std::string>();
  const std::string base_name = op_name.substr(0, op_name.find('.'));
  SCOPED_TRACE("op " + op_name + "(" + describe_args(spec) + ")");

  try {
    const tsr_op* op = nullptr;
    if (tsr_status* status = tsr_op_find(runtime(), op_name.c_str(), &op)) {
      const std::string message = tsr_status_message(status);
      tsr_status_free(status);
      FAIL() << "op " << op_name << " is not in the registry (" << message << ")";
    }

    Call call;
    build_args(spec, call);
    place_factory_on_target(op, call);
    // Inputs before the call, to check that the op leaves them alone.
    std::vector<HostTensor> before(call.tensors.size());
    for (size_t i = 0; i < call.tensors.size(); ++i)
      if (call.tensors[i]) before[i] = read(call.tensors[i].get());

    constexpr size_t kMaxOuts = 16;
    tsr_value outs[kMaxOuts] = {};
    tsr_status* status = tsr_op_call(op, call.args.data(), call.args.size(), outs, kMaxOuts);
    std::vector<TensorPtr> results;
    for (const tsr_value& out : outs)
      if (out.tag == TSR_VALUE_TENSOR && out.u.tensor != nullptr)
        results.emplace_back(out.u.tensor);

    const json& expect = spec.at("expect");
    if (expect.value("raises", false)) {
      if (status == nullptr) {
        ADD_FAILURE() << "the call succeeded; PyTorch raises: "
                      << expect.value("pytorch_error", std::string("(no message)"));
        return;
      }
      const std::string message = tsr_status_message(status);
      const tsr_status_code code = tsr_status_code_of(status);
      tsr_status_free(status);
      EXPECT_TRUE(message.find(base_name) != std::string::npos)
          << "the error message does not name the op '" << base_name
          << "': " << tsr_status_code_name(code) << ": " << message;
      return;
    }
    if (status != nullptr) {
      const std::string message = tsr_status_message(status);
      const tsr_status_code code = tsr_status_code_of(status);
      tsr_status_free(status);
      FAIL() << "the call failed: " << tsr_status_code_name(code) << ": " << message;
    }

    const bool loose = spec.value("tolerance", std::string()) == "loose";
    const bool check_strides = spec.value("check_strides", false);
    const json& outputs = expect.at("outputs");
    ASSERT_EQ(results.size(), outputs.size()) << "number of tensor results";
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (outputs[i].is_null()) continue;  // a result PyTorch leaves unspecified
      const std::string why = compare(read(results[i].get()), outputs[i], loose, check_strides);
      if (!why.empty()) ADD_FAILURE() << "result " << i << ": " << why;
    }

    std::vector<bool> written(call.tensors.size(), false);
    if (expect.contains("mutated")) {
      for (const json& m : expect.at("mutated")) {
        const size_t arg = m.at("arg").get<size_t>();
        ASSERT_LT(arg, call.tensors.size());
        ASSERT_TRUE(call.tensors[arg]) << "mutated argument " << arg << " is not a tensor";
        written[arg] = true;
        const std::string why = compare(read(call.tensors[arg].get()), m.at("value"), loose, false);
        if (!why.empty()) ADD_FAILURE() << "argument " << arg << " after the call: " << why;
      }
    }
    for (size_t i = 0; i < call.tensors.size(); ++i) {
      if (!call.tensors[i] || written[i]) continue;
      EXPECT_TRUE(identical(read(call.tensors[i].get()), before[i]))
          << "argument " << i << " was modified by the call; the op must not write its inputs";
    }
  } catch (const HarnessError& e) {
    FAIL() << e.what();
  } catch (const std::exception& e) {
    FAIL() << "bad golden case: " << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, Golden, testing::ValuesIn(case_indices()), case_name);

}  // namespace
}  // namespace tessera::golden
