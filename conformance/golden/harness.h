// harness.h - the golden harness: PyTorch golden values (golden_ops.json) turned
// into op calls, and the results read back and compared.
//
// Reads conformance/golden/golden_ops.json (written by gen_golden.py; its
// format is described in conformance/README.md): each case names an op by
// its registry name ("max.dim"), looked up with tsr_op_find; its arguments
// are rebuilt from the JSON (tensors from host data plus view steps, scalars,
// int lists, dtypes, strings, Tensor[] lists) and it is called with
// tsr_op_call on the target device. The harness is generic: nothing here
// knows a particular op.
//
// The families built on it, one file each:
//   values_test.cpp          Ops/Golden: outputs against PyTorch's, inputs left alone
//   gradcheck_test.cpp       GoldenGrad: autograd against finite differences
//   dtype_sweep_test.cpp     Ops/GoldenDtype: the value cases in the other dtypes
//                            (conformance suite only, Note [Dtype sweep])
//   grad_reference_test.cpp  GoldenGradReference, GoldenGradCoverage: gradients
//                            against PyTorch's (golden_grads.json)
// and the targets they run on, one per kind of binary:
//   standalone_target.cpp    golden_ops_test, golden_grad_test: cpu:0 of the
//                            default runtime
//   suite_target.cpp         tessera-conformance-suite: the device under test
//                            (conformance/suite/target.h), families "ops" and
//                            "autograd"; each case records its worst error in
//                            units of its tolerance (test property "error")
// conformance/CMakeLists.txt says which binary links which.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "conformance/tolerances.hpp"
#include "tessera/tessera.h"

namespace tessera::golden {

using json = nlohmann::json;
using tessera::conformance::Tolerance;

// ---------------------------------------------------------------------------
// The target: defined by standalone_target.cpp or suite_target.cpp
// ---------------------------------------------------------------------------

// The runtime the cases run in; a setup failure (plugin not loadable, no such
// device) throws HarnessError, which fails each case with its reason.
tsr_runtime* runtime();
// The device the cases run on: cpu:0, or the conformance suite's device under test.
tsr_device device_under_test();
// The dtype gradchecks run in: float64, or float32 on a device under test
// that has no float64 (or when TESSERA_CONFORMANCE_GRAD_DTYPE=float32 asks
// for it), with the looser float32 settings of grad_settings().
tsr_dtype grad_dtype();
// The golden_ops.json to read.
std::string golden_file_path();

// ---------------------------------------------------------------------------
// Cases
// ---------------------------------------------------------------------------

struct GoldenFile {
  json cases = json::array();
  std::string error;  // why the file could not be read; empty when fine
};

// golden_ops.json, read once.
const GoldenFile& golden_file();
// Test parameters: indices into the case array (-1: the file failed to load).
std::vector<int> case_indices();
std::string case_name(const testing::TestParamInfo<int>& info);

// ---------------------------------------------------------------------------
// Small helpers over the C API
// ---------------------------------------------------------------------------

struct TensorDeleter {
  void operator()(tsr_tensor* t) const { tsr_tensor_release(t); }
};
using TensorPtr = std::unique_ptr<tsr_tensor, TensorDeleter>;

// Thrown by the argument builders and readers; becomes a test failure.
struct HarnessError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Takes `status` (freed) and throws a HarnessError describing `what` when non-OK.
void check(tsr_status* status, const std::string& what);

// The dtype sweep (GoldenDtype, Note [Dtype sweep]): while `active`, inputs
// of dtype `from` in a converted argument are made in dtype `to` instead; in
// the reference pass they are rounded to `to` and widened to float64 on cpu:0.
// Inactive outside GoldenDtype.
struct Sweep {
  bool active = false;
  bool reference = false;    // building the float64 reference's inputs
  bool convert_arg = false;  // the argument being built is a value argument
  tsr_dtype from = TSR_FLOAT32;
  tsr_dtype to = TSR_FLOAT32;
};
Sweep& sweep();
// Per argument index: whether the dtype sweep converts its tensors (value
// arguments do; indices, sorters and class targets keep their dtype).
std::vector<bool>& sweep_value_args();

// Where the case's tensors are made: device_under_test(), or cpu:0 for the
// dtype sweep's float64 reference.
tsr_device target_device();

// Finite-difference step and tolerances: the float64 defaults (eps
// 1e-6, atol 1e-4, rtol 1e-3), or for float32 eps 1e-3 (a central
// difference then errs by ~1e-6 times the third derivative, plus float32
// rounding of ~1e-7 / 1e-3 = 1e-4 relative), atol 1e-2 and rtol 1e-2.
struct GradSettings {
  double eps, atol, rtol;
};
GradSettings grad_settings();

// The worst error of the current case, in units of its tolerance
// (|actual - expected| / (atol + rtol |expected|); <= 1 passes), recorded as
// the test property "error" for the conformance report.
double& worst_error();
void note_error(double ratio);

tsr_dtype dtype_named(const std::string& name);
bool is_float(tsr_dtype d);
// A JSON number, or "nan" / "inf" / "-inf".
double number(const json& v);
std::vector<int64_t> int_list(const json& v);

// Gradient mode of the harness (GoldenGrad): floating inputs are built as
// float64 leaves that require grad, collected here (borrowed from the Call).
// GoldenGradReference also notes where each leaf came from, builds the
// arguments the op writes as clones of their leaves, and leaves the
// arguments PyTorch refuses to differentiate without requires_grad.
struct GradInputs {
  bool active = false;
  bool non_finite = false;  // an input holds NaN or inf: no finite differences
  std::vector<tsr_tensor*> leaves;
  std::vector<std::pair<int32_t, int32_t>> where;  // (argument, Tensor[] entry or -1)
  int32_t arg = -1, entry = -1;                    // the input being built
  std::vector<int64_t> written, no_grad;           // argument indices
  std::vector<TensorPtr> written_leaves;           // leaves behind the clones
};
GradInputs& grad_inputs();

// Gradient mode for the scope of one case.
struct GradScope {
  GradScope() {
    grad_inputs() = GradInputs{};
    grad_inputs().active = true;
  }
  ~GradScope() { grad_inputs() = GradInputs{}; }
};

// The fixed pseudo-random weight w_k[i] of f = sum_k <out_k, w_k>
// (gen_golden_grads.py uses the same).
double weight_of(size_t k, size_t i);

// A contiguous tensor on the target device from {"dtype", "shape", "data"}.
TensorPtr make_base(const json& spec);
// Replays one view step of the golden file ({"transpose": [d0, d1]}, ...).
TensorPtr apply_view(tsr_tensor* t, const json& step);
// An input tensor: the base, then its view steps.
TensorPtr make_input(const json& spec);

// ---------------------------------------------------------------------------
// Reading tensors back
// ---------------------------------------------------------------------------

struct HostTensor {
  tsr_dtype dtype = TSR_FLOAT32;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  std::vector<double> floats;  // floating dtypes
  std::vector<int64_t> ints;   // integer and bool dtypes
};

HostTensor read(tsr_tensor* t);
std::string shape_text(const std::vector<int64_t>& shape);
// `value` as stored in `dtype` (the golden file writes float32 values in their
// shortest decimal form; float16/bfloat16 values are exact doubles).
double round_to(double value, tsr_dtype dtype);
// Empty when `actual` matches the expected values (floats or ints, by the
// actual dtype), else why not. `normwise`: atol = rtol * max|expected|.
std::string compare_values(const HostTensor& actual, const std::vector<int64_t>& shape,
                           const std::vector<double>& floats, const std::vector<int64_t>& ints,
                           Tolerance tol, bool normwise);
// Empty when `actual` matches `expected` (a golden tensor), else why not.
std::string compare(const HostTensor& actual, const json& expected, bool loose, bool check_strides);
// Exact comparison of two host tensors (inputs must be left untouched).
bool identical(const HostTensor& a, const HostTensor& b);

// ---------------------------------------------------------------------------
// Arguments
// ---------------------------------------------------------------------------

// The boxed arguments of one call and the storage they point into.
struct Call {
  std::vector<tsr_value> args;
  std::vector<TensorPtr> tensors;               // by argument index (null if not a tensor)
  std::deque<std::vector<int64_t>> int_lists;   // stable addresses
  std::deque<std::vector<double>> float_lists;  //
  std::deque<std::vector<int32_t>> bool_lists;  //
  std::deque<std::vector<tsr_tensor*>> tensor_lists;
  std::deque<TensorPtr> list_members;
  std::deque<std::string> strings;
};

void build_args(const json& spec, Call& call);
// The schema's argument declarations ("Tensor self", "int dim=-1"), split at
// top-level commas; "*" is no argument and is left out.
std::vector<std::string> schema_args(const tsr_op* op);
// A factory op (no tensor argument) makes its result where its `device`
// argument says, the CPU by default: on another device under test the
// argument is set to that device, so the device's own kernels make it.
void place_factory_on_target(const tsr_op* op, Call& call);
// The arguments of a call in a readable form, for failure messages.
std::string describe_args(const json& spec);

// ---------------------------------------------------------------------------
// Families instantiated by more than one binary (with different prefixes)
// ---------------------------------------------------------------------------

// Every differentiable golden case, gradchecked (gradcheck_test.cpp).
class GoldenGrad : public testing::TestWithParam<int> {};

}  // namespace tessera::golden
