// golden_test - the operator library against PyTorch golden values.
//
// Reads conformance/golden/golden_ops.json (written by gen_golden.py; its
// format is described in conformance/README.md) and runs one test per case:
// the op is looked up by its registry name ("max.dim") with tsr_op_find, its
// arguments are rebuilt from the JSON (tensors from host data plus view steps,
// scalars, int lists, dtypes, strings, Tensor[] lists) and it is called with
// tsr_op_call on cpu:0. Then:
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
//
// The harness is generic: nothing here knows a particular op.
//
// Built three times: golden_ops_test checks values (suite Golden); with
// TESSERA_GOLDEN_GRADIENTS, golden_grad_test gradchecks the same cases
// (suite GoldenGrad, described above it). With TESSERA_CONFORMANCE_SUITE both
// suites run inside the conformance suite (conformance/suite/) on the device
// under test instead of cpu:0, as families "ops" and "autograd"; each case
// records its worst error in units of its tolerance (test property "error").
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "conformance/tolerances.hpp"
#include "tessera/tessera.h"

#ifdef TESSERA_CONFORMANCE_SUITE
#include "conformance/suite/target.h"
#endif

#ifndef TESSERA_GOLDEN_FILE
#error "TESSERA_GOLDEN_FILE must name golden_ops.json (set by conformance/CMakeLists.txt)"
#endif

namespace {

using json = nlohmann::json;
using tessera::conformance::Tolerance;

// ---------------------------------------------------------------------------
// Cases
// ---------------------------------------------------------------------------

struct GoldenFile {
  json cases = json::array();
  std::string error;  // why the file could not be read; empty when fine
};

const GoldenFile& golden_file() {
  static const GoldenFile file = [] {
    GoldenFile f;
    std::string path = TESSERA_GOLDEN_FILE;
#ifdef TESSERA_CONFORMANCE_SUITE
    // An installed suite reads the installed copy (share/tessera/conformance).
    const std::string installed = tessera::conformance::installed_golden_file();
    if (!installed.empty()) path = installed;
#endif
    std::ifstream in(path);
    if (!in) {
      f.error = "cannot open " + path +
                "; regenerate it with /usr/bin/python3 conformance/golden/gen_golden.py";
      return f;
    }
    try {
      json doc = json::parse(in);
      f.cases = std::move(doc.at("cases"));
    } catch (const std::exception& e) {
      f.error = path + " is not a golden file: " + e.what();
    }
    return f;
  }();
  return file;
}

// Test parameters: indices into the case array (-1: the file failed to load).
std::vector<int> case_indices() {
  const GoldenFile& f = golden_file();
  if (!f.error.empty()) return {-1};
  std::vector<int> indices(f.cases.size());
  for (size_t i = 0; i < indices.size(); ++i) indices[i] = static_cast<int>(i);
  return indices;
}

std::string case_name(const testing::TestParamInfo<int>& info) {
  if (info.param < 0) return "golden_file_unreadable";
  return golden_file().cases[static_cast<size_t>(info.param)].at("name").get<std::string>();
}

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
void check(tsr_status* status, const std::string& what) {
  if (status == nullptr) return;
  std::string message = std::string(tsr_status_code_name(tsr_status_code_of(status))) + ": " +
                        tsr_status_message(status);
  tsr_status_free(status);
  throw HarnessError(what + " failed: " + message);
}

#ifdef TESSERA_CONFORMANCE_SUITE
// The device under test (conformance/suite/target.h); a setup failure
// (plugin not loadable, no such device) fails each case with its reason.
tsr_runtime* runtime() {
  try {
    return tessera::conformance::runtime();
  } catch (const std::runtime_error& e) {
    throw HarnessError(e.what());
  }
}
// The dtype sweep (GoldenDtype, Note [Dtype sweep]): while `active`, inputs
// of dtype `from` in a converted argument are made in dtype `to` instead; in
// the reference pass they are rounded to `to` and widened to float64 on cpu:0.
struct Sweep {
  bool active = false;
  bool reference = false;    // building the float64 reference's inputs
  bool convert_arg = false;  // the argument being built is a value argument
  tsr_dtype from = TSR_FLOAT32;
  tsr_dtype to = TSR_FLOAT32;
};
Sweep& sweep() {
  static Sweep s;
  return s;
}

tsr_device target_device() {
  if (sweep().active && sweep().reference) return tsr_device{TSR_DEVICE_CPU, 0};
  return tessera::conformance::device();
}
#else
tsr_runtime* runtime() {
  static tsr_runtime* rt = [] {
    tsr_runtime* r = nullptr;
    check(tsr_runtime_default(&r), "tsr_runtime_default");
    return r;
  }();
  return rt;
}

tsr_device target_device() { return tsr_device{TSR_DEVICE_CPU, 0}; }
#endif

// The dtype gradchecks run in: float64, or float32 on a device under test
// that has no float64 (or when TESSERA_CONFORMANCE_GRAD_DTYPE=float32 asks
// for it), with the looser float32 settings of grad_settings().
tsr_dtype grad_dtype() {
#ifdef TESSERA_CONFORMANCE_SUITE
  static const tsr_dtype d = [] {
    const char* forced = std::getenv("TESSERA_CONFORMANCE_GRAD_DTYPE");
    if (forced != nullptr && std::string(forced) == "float32") return TSR_FLOAT32;
    try {
      return (tessera::conformance::properties().dtypes & TSR_DTYPE_BIT(TSR_FLOAT64)) != 0
                 ? TSR_FLOAT64
                 : TSR_FLOAT32;
    } catch (const std::exception&) {
      return TSR_FLOAT64;  // setup failed: every case reports it anyway
    }
  }();
  return d;
#else
  return TSR_FLOAT64;
#endif
}

// Finite-difference step and tolerances: the float64 defaults (eps
// 1e-6, atol 1e-4, rtol 1e-3), or for float32 eps 1e-3 (a central
// difference then errs by ~1e-6 times the third derivative, plus float32
// rounding of ~1e-7 / 1e-3 = 1e-4 relative), atol 1e-2 and rtol 1e-2.
struct GradSettings {
  double eps, atol, rtol;
};
GradSettings grad_settings() {
  return grad_dtype() == TSR_FLOAT64 ? GradSettings{1e-6, 1e-4, 1e-3}
                                     : GradSettings{1e-3, 1e-2, 1e-2};
}

// The worst error of the current case, in units of its tolerance
// (|actual - expected| / (atol + rtol |expected|); <= 1 passes), recorded as
// the test property "error" for the conformance report.
double& worst_error() {
  static double worst = 0;
  return worst;
}
void note_error(double ratio) {
  if (ratio <= worst_error()) return;
  worst_error() = ratio;
  testing::Test::RecordProperty("error", std::to_string(ratio));
}

tsr_dtype dtype_named(const std::string& name) {
  static const std::pair<const char*, tsr_dtype> kNames[] = {
      {"bool", TSR_BOOL},       {"uint8", TSR_UINT8},         {"int8", TSR_INT8},
      {"int16", TSR_INT16},     {"int32", TSR_INT32},         {"int64", TSR_INT64},
      {"float16", TSR_FLOAT16}, {"bfloat16", TSR_BFLOAT16},   {"float32", TSR_FLOAT32},
      {"float64", TSR_FLOAT64}, {"complex64", TSR_COMPLEX64}, {"complex128", TSR_COMPLEX128}};
  for (const auto& [text, dtype] : kNames)
    if (name == text) return dtype;
  throw HarnessError("unknown dtype '" + name + "' in the golden file");
}

bool is_float(tsr_dtype d) {
  return d == TSR_FLOAT16 || d == TSR_BFLOAT16 || d == TSR_FLOAT32 || d == TSR_FLOAT64;
}

// A JSON number, or "nan" / "inf" / "-inf".
double number(const json& v) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (s == "nan") return std::nan("");
    if (s == "inf") return INFINITY;
    if (s == "-inf") return -INFINITY;
  }
  throw HarnessError("expected a number or \"nan\"/\"inf\"/\"-inf\", got " + v.dump());
}

std::vector<int64_t> int_list(const json& v) {
  std::vector<int64_t> out;
  for (const json& e : v) out.push_back(e.get<int64_t>());
  return out;
}

template <class T>
void append_as(std::vector<unsigned char>& bytes, T value) {
  unsigned char raw[sizeof(T)];
  std::memcpy(raw, &value, sizeof(T));
  bytes.insert(bytes.end(), raw, raw + sizeof(T));
}

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
GradInputs& grad_inputs() {
  static GradInputs g;
  return g;
}

// A contiguous tensor on cpu:0 from {"dtype", "shape", "data"}.
TensorPtr make_base(const json& spec) {
  const tsr_dtype dtype = dtype_named(spec.at("dtype").get<std::string>());
  const std::vector<int64_t> shape = int_list(spec.at("shape"));
  const json& data = spec.at("data");
  // float16/bfloat16 travel as float32 (their values are exact there) and are
  // converted on the device.
  const tsr_dtype host = (dtype == TSR_FLOAT16 || dtype == TSR_BFLOAT16) ? TSR_FLOAT32 : dtype;
  std::vector<unsigned char> bytes;
  for (const json& e : data) {
    switch (host) {
      case TSR_BOOL:
        append_as<uint8_t>(bytes, e.get<int64_t>() != 0);
        break;
      case TSR_UINT8:
        append_as<uint8_t>(bytes, static_cast<uint8_t>(e.get<int64_t>()));
        break;
      case TSR_INT8:
        append_as<int8_t>(bytes, static_cast<int8_t>(e.get<int64_t>()));
        break;
      case TSR_INT16:
        append_as<int16_t>(bytes, static_cast<int16_t>(e.get<int64_t>()));
        break;
      case TSR_INT32:
        append_as<int32_t>(bytes, static_cast<int32_t>(e.get<int64_t>()));
        break;
      case TSR_INT64:
        append_as<int64_t>(bytes, e.get<int64_t>());
        break;
      case TSR_FLOAT32:
        append_as<float>(bytes, static_cast<float>(number(e)));
        break;
      case TSR_FLOAT64:
        append_as<double>(bytes, number(e));
        break;
      default:
        throw HarnessError(std::string("the harness cannot build tensors of dtype ") +
                           tsr_dtype_name(dtype));
    }
  }
  tsr_tensor* out = nullptr;
  check(tsr_tensor_from_host(runtime(), bytes.data(), bytes.size(),
                             static_cast<int32_t>(shape.size()), shape.data(), host,
                             target_device(), &out),
        "tsr_tensor_from_host");
  TensorPtr tensor(out);
  GradInputs& g = grad_inputs();
  tsr_dtype target = g.active && is_float(dtype) ? grad_dtype() : dtype;
#ifdef TESSERA_CONFORMANCE_SUITE
  // The dtype sweep: the value in dtype `to`; for the reference, that value
  // widened to float64.
  const Sweep& sw = sweep();
  const bool swept = sw.active && sw.convert_arg && dtype == sw.from;
  if (swept) target = sw.to;
#endif
  if (host != target) {
    tsr_tensor* converted = nullptr;
    check(tsr_tensor_to_dtype(tensor.get(), target, &converted), "tsr_tensor_to_dtype");
    tensor.reset(converted);
  }
#ifdef TESSERA_CONFORMANCE_SUITE
  if (swept && sw.reference && is_float(sw.to) && sw.to != TSR_FLOAT64) {
    tsr_tensor* wide = nullptr;
    check(tsr_tensor_to_dtype(tensor.get(), TSR_FLOAT64, &wide), "tsr_tensor_to_dtype");
    tensor.reset(wide);
  }
#endif
  auto listed = [&](const std::vector<int64_t>& args) {
    return std::find(args.begin(), args.end(), g.arg) != args.end();
  };
  if (g.active && is_float(dtype) && !listed(g.no_grad)) {
    for (const json& e : data) g.non_finite |= !std::isfinite(number(e));
    check(tsr_tensor_set_requires_grad(tensor.get(), 1), "tsr_tensor_set_requires_grad");
    g.leaves.push_back(tensor.get());
    g.where.emplace_back(g.arg, g.entry);
    if (listed(g.written)) {  // an in-place op may not write a leaf that requires grad
      const tsr_op* clone = nullptr;
      check(tsr_op_find(runtime(), "clone", &clone), "tsr_op_find(clone)");
      tsr_value in{};
      in.tag = TSR_VALUE_TENSOR;
      in.u.tensor = tensor.get();
      tsr_value out{};
      check(tsr_op_call(clone, &in, 1, &out, 1), "clone");
      g.written_leaves.push_back(std::move(tensor));
      tensor.reset(out.u.tensor);
    }
  }
  return tensor;
}

// Replays one view step of the golden file ({"transpose": [d0, d1]}, ...).
TensorPtr apply_view(tsr_tensor* t, const json& step) {
  if (!step.is_object() || step.size() != 1)
    throw HarnessError("a view step must be an object with one key, got " + step.dump());
  const std::string kind = step.begin().key();
  const json& p = step.begin().value();
  tsr_tensor* out = nullptr;
  if (kind == "transpose") {
    check(tsr_tensor_transpose(t, p.at(0).get<int32_t>(), p.at(1).get<int32_t>(), &out),
          "tsr_tensor_transpose");
  } else if (kind == "permute") {
    const std::vector<int64_t> dims = int_list(p);
    check(tsr_tensor_permute(t, static_cast<int32_t>(dims.size()), dims.data(), &out),
          "tsr_tensor_permute");
  } else if (kind == "slice") {
    check(tsr_tensor_slice(t, p.at(0).get<int32_t>(), p.at(1).get<int64_t>(),
                           p.at(2).get<int64_t>(), p.at(3).get<int64_t>(), &out),
          "tsr_tensor_slice");
  } else if (kind == "expand") {
    const std::vector<int64_t> sizes = int_list(p);
    check(tsr_tensor_expand(t, static_cast<int32_t>(sizes.size()), sizes.data(), &out),
          "tsr_tensor_expand");
  } else if (kind == "as_strided") {
    const std::vector<int64_t> sizes = int_list(p.at("size"));
    const std::vector<int64_t> strides = int_list(p.at("stride"));
    int64_t offset = 0;
    check(tsr_tensor_storage_offset(t, &offset), "tsr_tensor_storage_offset");
    check(tsr_tensor_as_strided(t, static_cast<int32_t>(sizes.size()), sizes.data(), strides.data(),
                                offset + p.at("offset").get<int64_t>(), &out),
          "tsr_tensor_as_strided");
  } else {
    throw HarnessError("unknown view step '" + kind + "' in the golden file");
  }
  return TensorPtr(out);
}

// An input tensor: the base, then its view steps.
TensorPtr make_input(const json& spec) {
  TensorPtr t = make_base(spec);
  if (spec.contains("view"))
    for (const json& step : spec.at("view")) t = apply_view(t.get(), step);
  return t;
}

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

template <class T>
std::vector<T> copy_out(tsr_tensor* t, int64_t numel) {
  std::vector<T> out(static_cast<size_t>(numel));
  check(tsr_tensor_copy_to_host(t, out.data(), out.size() * sizeof(T)), "tsr_tensor_copy_to_host");
  return out;
}

HostTensor read(tsr_tensor* t) {
  tsr_tensor_info info{};
  info.struct_size = sizeof(info);
  check(tsr_tensor_get_info(t, &info), "tsr_tensor_get_info");
  HostTensor h;
  h.dtype = static_cast<tsr_dtype>(info.dtype);
  h.shape.assign(info.sizes, info.sizes + info.ndim);
  h.strides.assign(info.strides, info.strides + info.ndim);
  const int64_t n = info.numel;
  auto widen = [](const auto& v, auto& out) { out.assign(v.begin(), v.end()); };
  switch (h.dtype) {
    case TSR_BOOL:
    case TSR_UINT8:
      widen(copy_out<uint8_t>(t, n), h.ints);
      break;
    case TSR_INT8:
      widen(copy_out<int8_t>(t, n), h.ints);
      break;
    case TSR_INT16:
      widen(copy_out<int16_t>(t, n), h.ints);
      break;
    case TSR_INT32:
      widen(copy_out<int32_t>(t, n), h.ints);
      break;
    case TSR_INT64:
      h.ints = copy_out<int64_t>(t, n);
      break;
    case TSR_FLOAT32:
      widen(copy_out<float>(t, n), h.floats);
      break;
    case TSR_FLOAT64:
      h.floats = copy_out<double>(t, n);
      break;
    case TSR_FLOAT16:
    case TSR_BFLOAT16: {  // exact in float32
      tsr_tensor* wide = nullptr;
      check(tsr_tensor_to_dtype(t, TSR_FLOAT32, &wide), "tsr_tensor_to_dtype(float32)");
      TensorPtr owner(wide);
      widen(copy_out<float>(wide, n), h.floats);
      break;
    }
    default:
      throw HarnessError(std::string("the harness cannot read tensors of dtype ") +
                         tsr_dtype_name(h.dtype));
  }
  return h;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
  os << "]";
  return os.str();
}

// `value` as stored in `dtype` (the golden file writes float32 values in their
// shortest decimal form; float16/bfloat16 values are exact doubles).
double round_to(double value, tsr_dtype dtype) {
  return dtype == TSR_FLOAT32 ? static_cast<double>(static_cast<float>(value)) : value;
}

// Empty when `actual` matches the expected values (floats or ints, by the
// actual dtype), else why not. `normwise`: atol = rtol * max|expected|.
std::string compare_values(const HostTensor& actual, const std::vector<int64_t>& shape,
                           const std::vector<double>& floats, const std::vector<int64_t>& ints,
                           Tolerance tol, bool normwise) {
  std::ostringstream why;
  why << std::setprecision(10);
  if (actual.shape != shape) {
    why << "shape " << shape_text(actual.shape) << ", expected " << shape_text(shape);
    return why.str();
  }
  const bool fl = is_float(actual.dtype);
  const size_t n = fl ? actual.floats.size() : actual.ints.size();
  if ((fl ? floats.size() : ints.size()) != n) {
    why << "read " << n << " values, expected " << (fl ? floats.size() : ints.size());
    return why.str();
  }
  if (fl && normwise) {
    double scale = 0;
    for (double e : floats)
      if (std::isfinite(e)) scale = std::max(scale, std::fabs(e));
    tol.atol = std::max(tol.atol, tol.rtol * scale);
  }
  int bad = 0;
  size_t first_bad = 0;
  double worst = 0;
  for (size_t i = 0; i < n; ++i) {
    bool ok;
    if (fl) {
      const double a = actual.floats[i], e = floats[i];
      if (std::isnan(e) || std::isnan(a) || std::isinf(e) || std::isinf(a)) {
        ok = std::isnan(e) ? std::isnan(a) : a == e;
        if (!ok) {  // a NaN or infinity where it does not belong: no bound on the error
          note_error(std::numeric_limits<double>::infinity());
          worst = std::numeric_limits<double>::infinity();
        }
      } else {
        const double ratio = std::fabs(a - e) / (tol.atol + tol.rtol * std::fabs(e));
        ok = ratio <= 1;
        note_error(ratio);
        if (!ok) worst = std::max(worst, ratio);
      }
      if (!ok && bad < 5)
        why << "\n    element " << i << ": " << a << ", expected " << e << " (rtol " << tol.rtol
            << ", atol " << tol.atol << ")";
    } else {
      ok = actual.ints[i] == ints[i];
      if (!ok && bad < 5)
        why << "\n    element " << i << ": " << actual.ints[i] << ", expected " << ints[i];
    }
    if (!ok) {
      if (bad == 0) first_bad = i;
      ++bad;
    }
  }
  if (bad == 0) return {};
  std::ostringstream head;
  head << bad << " of " << n << " values differ (first at " << first_bad << ")";
  if (worst > 0) head << ", worst error " << worst << "x the tolerance";
  return head.str() + why.str();
}

// Empty when `actual` matches `expected` (a golden tensor), else why not.
std::string compare(const HostTensor& actual, const json& expected, bool loose,
                    bool check_strides) {
  std::ostringstream why;
  why << std::setprecision(10);
  const tsr_dtype dtype = dtype_named(expected.at("dtype").get<std::string>());
  if (actual.dtype != dtype) {
    why << "dtype " << tsr_dtype_name(actual.dtype) << ", expected " << tsr_dtype_name(dtype);
    return why.str();
  }
  const std::vector<int64_t> shape = int_list(expected.at("shape"));
  if (actual.shape != shape) {
    why << "shape " << shape_text(actual.shape) << ", expected " << shape_text(shape);
    return why.str();
  }
  if (check_strides && expected.contains("strides")) {
    const std::vector<int64_t> strides = int_list(expected.at("strides"));
    if (actual.strides != strides) {
      why << "strides " << shape_text(actual.strides) << ", expected " << shape_text(strides);
      return why.str();
    }
  }
  const json& data = expected.at("data");
  const Tolerance tol =
      loose ? tessera::conformance::loose(dtype) : tessera::conformance::tolerance(dtype);
  std::vector<double> floats;
  std::vector<int64_t> ints;
  for (const json& v : data) {
    if (is_float(dtype)) {
      floats.push_back(round_to(number(v), dtype));
    } else {
      ints.push_back(v.get<int64_t>());
    }
  }
  return compare_values(actual, shape, floats, ints, tol, false);
}

// Exact comparison of two host tensors (inputs must be left untouched).
bool identical(const HostTensor& a, const HostTensor& b) {
  if (a.dtype != b.dtype || a.shape != b.shape || a.ints != b.ints) return false;
  if (a.floats.size() != b.floats.size()) return false;
  for (size_t i = 0; i < a.floats.size(); ++i) {
    const double x = a.floats[i], y = b.floats[i];
    if (!(x == y || (std::isnan(x) && std::isnan(y)))) return false;
  }
  return true;
}

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

tsr_scalar scalar_from(const std::string& kind, const json& v) {
  tsr_scalar s{};
  if (kind == "scalar_int") {
    s.kind = TSR_INT64;
    s.v.i = v.get<int64_t>();
  } else if (kind == "scalar_float") {
    s.kind = TSR_FLOAT64;
    s.v.f = number(v);
  } else {
    s.kind = TSR_BOOL;
    s.v.i = v.get<bool>() ? 1 : 0;
  }
  return s;
}

int64_t memory_format_named(const std::string& name) {
  if (name == "contiguous") return TSR_CONTIGUOUS_FORMAT;
  if (name == "channels_last") return TSR_CHANNELS_LAST;
  if (name == "channels_last_3d") return TSR_CHANNELS_LAST_3D;
  if (name == "preserve") return TSR_PRESERVE_FORMAT;
  throw HarnessError("unknown memory format '" + name + "'");
}

#ifdef TESSERA_CONFORMANCE_SUITE
// Per argument index: whether the dtype sweep converts its tensors (value
// arguments do; indices, sorters and class targets keep their dtype).
std::vector<bool>& sweep_value_args() {
  static std::vector<bool> v;
  return v;
}
#endif

void build_args(const json& spec, Call& call) {
  const json& args = spec.at("args");
  call.args.resize(args.size());
  call.tensors.resize(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const json& a = args[i];
    tsr_value& v = call.args[i];
    v = tsr_value{};
    if (a.is_null()) continue;  // None
    if (!a.is_object() || a.size() != 1)
      throw HarnessError("argument " + std::to_string(i) +
                         " must be null or an object with one key");
    const std::string kind = a.begin().key();
    const json& p = a.begin().value();
#ifdef TESSERA_CONFORMANCE_SUITE
    sweep().convert_arg = i >= sweep_value_args().size() || sweep_value_args()[i];
#endif
    grad_inputs().arg = static_cast<int32_t>(i);
    grad_inputs().entry = -1;
    if (kind == "tensor") {
      call.tensors[i] = make_input(p);
      v.tag = TSR_VALUE_TENSOR;
      v.u.tensor = call.tensors[i].get();
    } else if (kind == "tensors") {
      auto& handles = call.tensor_lists.emplace_back();
      for (const json& e : p) {
        grad_inputs().entry = static_cast<int32_t>(handles.size());
        if (e.is_null()) {
          handles.push_back(nullptr);
        } else {
          handles.push_back(call.list_members.emplace_back(make_input(e)).get());
        }
      }
      v.tag = TSR_VALUE_TENSOR_LIST;
      v.len = static_cast<int32_t>(handles.size());
      v.u.tensors = handles.data();
    } else if (kind == "int") {
      v.tag = TSR_VALUE_INT;
      v.u.i = p.get<int64_t>();
    } else if (kind == "float") {
      v.tag = TSR_VALUE_FLOAT;
      v.u.f = number(p);
    } else if (kind == "bool") {
      v.tag = TSR_VALUE_BOOL;
      v.u.b = p.get<bool>() ? 1 : 0;
    } else if (kind == "scalar_int" || kind == "scalar_float" || kind == "scalar_bool") {
      v.tag = TSR_VALUE_SCALAR;
      v.u.scalar = scalar_from(kind, p);
    } else if (kind == "ints") {
      auto& list = call.int_lists.emplace_back(int_list(p));
      v.tag = TSR_VALUE_INT_LIST;
      v.len = static_cast<int32_t>(list.size());
      v.u.ints = list.data();
    } else if (kind == "floats") {
      auto& list = call.float_lists.emplace_back();
      for (const json& e : p) list.push_back(number(e));
      v.tag = TSR_VALUE_FLOAT_LIST;
      v.len = static_cast<int32_t>(list.size());
      v.u.floats = list.data();
    } else if (kind == "bools") {
      auto& list = call.bool_lists.emplace_back();
      for (const json& e : p) list.push_back(e.get<bool>() ? 1 : 0);
      v.tag = TSR_VALUE_BOOL_LIST;
      v.len = static_cast<int32_t>(list.size());
      v.u.bools = list.data();
    } else if (kind == "dtype") {
      v.tag = TSR_VALUE_DTYPE;
      v.u.i = dtype_named(p.get<std::string>());
    } else if (kind == "memory_format") {
      v.tag = TSR_VALUE_MEMORY_FORMAT;
      v.u.i = memory_format_named(p.get<std::string>());
    } else if (kind == "str") {
      v.tag = TSR_VALUE_STRING;
      v.u.str = call.strings.emplace_back(p.get<std::string>()).c_str();
    } else {
      throw HarnessError("argument " + std::to_string(i) + " has an unknown kind '" + kind + "'");
    }
  }
}

// The schema's argument declarations ("Tensor self", "int dim=-1"), split at
// top-level commas; "*" is no argument and is left out.
std::vector<std::string> schema_args(const tsr_op* op) {
  const std::string schema = tsr_op_schema(op);
  const size_t open = schema.find('(');
  const size_t close = schema.find(") ->");
  if (open == std::string::npos || close == std::string::npos) return {};
  std::vector<std::string> args;
  int depth = 0;
  std::string current;
  for (size_t i = open + 1; i < close; ++i) {
    const char ch = schema[i];
    depth += ch == '[' || ch == '(';
    depth -= ch == ']' || ch == ')';
    if (ch == ',' && depth == 0) {
      args.push_back(current);
      current.clear();
    } else if (!(ch == ' ' && current.empty())) {
      current += ch;
    }
  }
  if (!current.empty()) args.push_back(current);
  std::vector<std::string> out;
  for (const std::string& a : args)
    if (a != "*") out.push_back(a);
  return out;
}

// The default of argument declaration `decl` ("float base=10.", "Scalar
// step=1", "ScalarType? dtype=None") as a boxed value.
tsr_value schema_default(const std::string& decl) {
  const size_t eq = decl.find('=');
  if (eq == std::string::npos)
    throw HarnessError("schema argument '" + decl + "' has no default to fill in");
  const std::string type = decl.substr(0, decl.find(' '));
  const std::string text = decl.substr(eq + 1);
  tsr_value v{};
  if (text == "None") return v;
  if (type == "int" || type == "SymInt") {
    v.tag = TSR_VALUE_INT;
    v.u.i = std::stoll(text);
  } else if (type == "float") {
    v.tag = TSR_VALUE_FLOAT;
    v.u.f = std::stod(text);
  } else if (type == "bool") {
    v.tag = TSR_VALUE_BOOL;
    v.u.b = text == "True" ? 1 : 0;
  } else if (type == "Scalar") {
    v.tag = TSR_VALUE_SCALAR;
    const bool integral = text.find_first_of(".eE") == std::string::npos;
    v.u.scalar.kind = integral ? TSR_INT64 : TSR_FLOAT64;
    if (integral) {
      v.u.scalar.v.i = std::stoll(text);
    } else {
      v.u.scalar.v.f = std::stod(text);
    }
  } else {
    throw HarnessError("cannot fill in the default of schema argument '" + decl + "'");
  }
  return v;
}

// A factory op (no tensor argument) makes its result where its `device`
// argument says, the CPU by default: on another device under test the
// argument is set to that device, so the device's own kernels make it.
void place_factory_on_target(const tsr_op* op, Call& call) {
  const tsr_device target = target_device();
  if (target.type == TSR_DEVICE_CPU) return;
  for (const TensorPtr& t : call.tensors)
    if (t) return;
  if (!call.list_members.empty()) return;
  size_t index = 0;
  const std::vector<std::string> decls = schema_args(op);
  for (const std::string& a : decls) {
    if (a.rfind("Device? device", 0) == 0) {
      if (call.args.size() <= index) {
        // Arguments between the given ones and `device` take their schema
        // defaults (logspace's `float base=10.` is no optional).
        const size_t given = call.args.size();
        call.args.resize(index + 1, tsr_value{});
        call.tensors.resize(index + 1);
        for (size_t k = given; k < index; ++k) call.args[k] = schema_default(decls[k]);
      }
      if (call.args[index].tag == TSR_VALUE_NONE) {
        call.args[index].tag = TSR_VALUE_DEVICE;
        call.args[index].u.device = target;
      }
      return;
    }
    ++index;
  }
}

// The arguments of a call in a readable form, for failure messages.
std::string describe_args(const json& spec) {
  std::ostringstream os;
  const json& args = spec.at("args");
  for (size_t i = 0; i < args.size(); ++i) {
    os << (i ? ", " : "");
    const json& a = args[i];
    if (a.is_null()) {
      os << "None";
      continue;
    }
    const std::string kind = a.begin().key();
    const json& p = a.begin().value();
    if (kind == "tensor") {
      os << p.at("dtype").get<std::string>() << shape_text(int_list(p.at("shape")));
      if (p.contains("view")) os << " view " << p.at("view").dump();
    } else if (kind == "tensors") {
      os << "[";
      for (size_t j = 0; j < p.size(); ++j) {
        os << (j ? ", " : "");
        if (p[j].is_null())
          os << "None";
        else
          os << p[j].at("dtype").get<std::string>() << shape_text(int_list(p[j].at("shape")));
      }
      os << "]";
    } else {
      os << kind << " " << p.dump();
    }
  }
  return os.str();
}

// ---------------------------------------------------------------------------
// The test
// ---------------------------------------------------------------------------

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

#if defined(TESSERA_CONFORMANCE_SUITE) || !defined(TESSERA_GOLDEN_GRADIENTS)
INSTANTIATE_TEST_SUITE_P(Ops, Golden, testing::ValuesIn(case_indices()), case_name);
#else
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Golden);
#endif

// ---------------------------------------------------------------------------
// Gradients: every differentiable golden case, gradchecked in float64
// ---------------------------------------------------------------------------
//
// The case's floating inputs become float64 leaves that require grad (views
// are then taken of them as the case says). f = sum_k <out_k, w_k> over the
// floating outputs, with fixed pseudo-random weights w_k; autograd's
// d f / d leaf is compared with central finite differences (eps 1e-6,
// atol 1e-4, rtol 1e-3: the gradcheck defaults). Skipped, with the
// reason: error cases, ops that write their inputs, out= overloads, ops with
// no floating input or output, random ops (two forward runs differ), inputs
// holding NaN/inf, and points where the op is not differentiable (listed
// below, each with why).

struct GradScope {
  GradScope() {
    grad_inputs() = GradInputs{};
    grad_inputs().active = true;
  }
  ~GradScope() { grad_inputs() = GradInputs{}; }
};

struct GradModeOff {
  int32_t previous = 1;
  GradModeOff() { tsr_status_free(tsr_grad_mode_set(0, &previous)); }
  ~GradModeOff() { tsr_status_free(tsr_grad_mode_set(previous, nullptr)); }
};

// Cases whose inputs sit exactly on a kink of the op (PyTorch's gradcheck
// fails there too): name -> why.
const std::pair<const char*, const char*> kNonSmooth[] = {
    {"binary_cross_entropy__sum_extremes_clamped",
     "inputs exactly 0 and 1, where log is clamped to -100 (one-sided there)"},
    {"kl_div__none_zero_target", "target 0, where xlogy(t, t) is not differentiable in t"},
    {"max_dim__ties_first_index", "tied maxima: the gradient goes to the reported index"},
    {"round__half_to_even", "inputs exactly at .5, where round jumps"},
    {"sort_stable__stable_ties_descending", "tied values: the order changes under perturbation"},
    {"lgamma__float64_negative", "inputs at the poles (0, -3), where lgamma is infinite"},
    {"copysign_Tensor__float32", "`other` holds +-0, where copysign jumps"},
    {"embedding__padding_idx",
     "the padding_idx row is read by forward, but PyTorch defines its gradient as 0 "
     "(GoldenGradReference checks that)"},
};

// In float32 gradchecks only: ops whose jumps lie within a float32
// finite-difference step of the test inputs (a central difference across a
// jump measures the jump, not the derivative).
const std::pair<const char*, const char*> kNonSmoothFloat32[] = {
    {"frac__float32_transposed", "frac jumps at integers, within 1e-3 of some inputs"},
    {"round_decimals__2", "round(x, 2) jumps every 0.01, finer than the float32 step"},
    {"logit__eps", "logit clamps at eps, within the float32 step of the inputs"},
    {"div_Tensor_mode__trunc_float32", "trunc(a / b) jumps within the float32 step"},
    {"div_Tensor_mode__floor_float32", "floor(a / b) jumps within the float32 step"},
    {"remainder_Tensor__float32", "remainder jumps where a / b crosses an integer"},
    {"fmod_Tensor__float32", "fmod jumps where a / b crosses an integer"},
    {"scatter_reduce_two__amin_exclude_self",
     "amin switches between values closer together than the float32 step"},
};

// Ops whose outputs' differentiability deliberately differs from PyTorch's
// (the "differentiable" flags of the golden file are not checked): op -> why.
const std::pair<const char*, const char*> kDifferentiabilityDiffers[] = {
    {"_unique2",
     "PyTorch's derivative is not_implemented (its output requires grad and backward raises); "
     "Tessera declares the op non-differentiable"},
};

// Derivatives not written yet: the case must still fail with a status naming
// the missing derivative; once it passes, the entry must go (like an XPASS).
// (Empty since scatter_reduce's amax/amin/prod/multiply derivatives landed.)
const std::vector<std::pair<const char*, const char*>> kNotYet = {};

double weight_of(size_t k, size_t i) {
  uint32_t s = static_cast<uint32_t>(k * 7919 + i * 104729 + 17);
  s = s * 1664525u + 1013904223u;
  return static_cast<double>(s >> 8) / static_cast<double>(1u << 24) - 0.5;
}

// f = sum_k <out_k, w_k> on the host (float64), for finite differences.
double objective(const std::vector<TensorPtr>& outs) {
  double f = 0;
  for (size_t k = 0; k < outs.size(); ++k) {
    const HostTensor h = read(outs[k].get());
    for (size_t i = 0; i < h.floats.size(); ++i) f += h.floats[i] * weight_of(k, i);
  }
  return f;
}

class GoldenGrad : public testing::TestWithParam<int> {};

TEST_P(GoldenGrad, Case) {
  if (GetParam() < 0) FAIL() << golden_file().error;
  const json& spec = golden_file().cases[static_cast<size_t>(GetParam())];
  const std::string op_name = spec.at("op").get<std::string>();
  SCOPED_TRACE("op " + op_name + "(" + describe_args(spec) + ")");
  const json& expect = spec.at("expect");
  if (expect.value("raises", false)) GTEST_SKIP() << "error case";
  if (expect.contains("mutated")) GTEST_SKIP() << "writes its inputs";
  if (grad_dtype() == TSR_FLOAT32)
    for (const auto& [name, why] : kNonSmoothFloat32)
      if (spec.at("name").get<std::string>() == name) GTEST_SKIP() << "float32 gradcheck: " << why;
  for (const auto& [name, why] : kNonSmooth)
    if (spec.at("name").get<std::string>() == name) GTEST_SKIP() << why;
  const char* not_yet = nullptr;
  for (const auto& [name, what] : kNotYet)
    if (spec.at("name").get<std::string>() == name) not_yet = what;
  try {
    const tsr_op* op = nullptr;
    check(tsr_op_find(runtime(), op_name.c_str(), &op), "tsr_op_find");
    GradScope scope;
    Call call;
    build_args(spec, call);
    const std::vector<tsr_tensor*> leaves = grad_inputs().leaves;
    if (leaves.empty()) GTEST_SKIP() << "no floating input";
    if (grad_inputs().non_finite) GTEST_SKIP() << "an input holds NaN or inf";

    // Which outputs PyTorch differentiates (gen_golden.py records it):
    // only those enter f, and each must require grad exactly when PyTorch's
    // does (output_differentiability in derivatives.yaml).
    const json* differentiable =
        spec.contains("differentiable") ? &spec.at("differentiable") : nullptr;
    for (const auto& [op_prefix, why] : kDifferentiabilityDiffers)
      if (op_name == op_prefix) differentiable = nullptr;
    std::string flag_mismatch;
    auto run = [&](std::vector<TensorPtr>& float_outs) -> tsr_status* {
      constexpr size_t kMaxOuts = 16;
      tsr_value outs[kMaxOuts] = {};
      tsr_status* status = tsr_op_call(op, call.args.data(), call.args.size(), outs, kMaxOuts);
      size_t index = 0;
      for (const tsr_value& out : outs) {
        if (out.tag != TSR_VALUE_TENSOR || out.u.tensor == nullptr) continue;
        const size_t k = index++;
        TensorPtr t(out.u.tensor);
        tsr_tensor_info info{};
        info.struct_size = sizeof(info);
        check(tsr_tensor_get_info(t.get(), &info), "tsr_tensor_get_info");
        if (!is_float(static_cast<tsr_dtype>(info.dtype))) continue;
        bool pytorch = true;
        if (differentiable != nullptr && k < differentiable->size()) {
          pytorch = (*differentiable)[k].get<bool>();
          int32_t rg = 0;
          check(tsr_tensor_requires_grad(t.get(), &rg), "tsr_tensor_requires_grad");
          if ((rg != 0) != pytorch)
            flag_mismatch += "\n    output " + std::to_string(k) +
                             (rg ? " requires" : " does not require") + " grad; PyTorch's " +
                             (pytorch ? "does" : "does not");
        }
        if (pytorch) float_outs.push_back(std::move(t));
      }
      return status;
    };
    std::vector<TensorPtr> outs;
    if (tsr_status* status = run(outs)) {
      const std::string message = tsr_status_message(status);
      tsr_status_free(status);
      if (message.find("out=... arguments") != std::string::npos)
        GTEST_SKIP() << "out= overload (not differentiable, as in PyTorch)";
      FAIL() << "forward with inputs that require grad failed: " << message;
    }
    EXPECT_TRUE(flag_mismatch.empty())
        << "which outputs are differentiable differs from PyTorch:" << flag_mismatch;
    if (outs.empty()) GTEST_SKIP() << "no floating output";
    std::vector<tsr_tensor*> needs_grad;
    for (const TensorPtr& o : outs) {
      int32_t rg = 0;
      check(tsr_tensor_requires_grad(o.get(), &rg), "tsr_tensor_requires_grad");
      if (rg) needs_grad.push_back(o.get());
    }
    const double f0 = objective(outs);
    {
      // Same mode as the first run: with grad the fusable ops decompose,
      // without they run fused kernels, which round differently.
      std::vector<TensorPtr> again;
      check(run(again), "second forward");
      if (objective(again) != f0) GTEST_SKIP() << "random op (two forward runs differ)";
    }
    if (needs_grad.empty()) GTEST_SKIP() << "outputs do not depend differentiably on inputs";

    // Analytical: d f / d leaves through autograd, weights as grad_outputs.
    std::vector<TensorPtr> weights;
    std::vector<tsr_tensor*> weight_handles;
    for (size_t k = 0; k < outs.size(); ++k) {
      int32_t rg = 0;
      check(tsr_tensor_requires_grad(outs[k].get(), &rg), "tsr_tensor_requires_grad");
      if (!rg) continue;
      const HostTensor h = read(outs[k].get());
      std::vector<double> w(h.floats.size());
      for (size_t i = 0; i < w.size(); ++i) w[i] = weight_of(k, i);
      tsr_tensor* wt = nullptr;
      check(tsr_tensor_from_host(runtime(), w.data(), w.size() * sizeof(double),
                                 static_cast<int32_t>(h.shape.size()), h.shape.data(), TSR_FLOAT64,
                                 target_device(), &wt),
            "tsr_tensor_from_host");
      TensorPtr owned(wt);
      if (h.dtype != TSR_FLOAT64) {
        tsr_tensor* c = nullptr;
        check(tsr_tensor_to_dtype(wt, h.dtype, &c), "tsr_tensor_to_dtype");
        owned.reset(c);
      }
      weight_handles.push_back(owned.get());
      weights.push_back(std::move(owned));
    }
    std::vector<tsr_tensor*> grads(leaves.size(), nullptr);
    tsr_status* grad_status = tsr_autograd_grad(
        static_cast<int32_t>(needs_grad.size()), needs_grad.data(), weight_handles.data(),
        static_cast<int32_t>(leaves.size()), leaves.data(), 0, 0, 1, grads.data());
    if (not_yet != nullptr) {
      ASSERT_NE(grad_status, nullptr)
          << "the derivative of " << not_yet << " now works: remove the case from kNotYet";
      const std::string message = tsr_status_message(grad_status);
      tsr_status_free(grad_status);
      EXPECT_NE(message.find("not implemented"), std::string::npos) << message;
      return;
    }
    check(grad_status, "tsr_autograd_grad");
    std::vector<TensorPtr> grad_owner;
    for (tsr_tensor* g : grads) grad_owner.emplace_back(g);

    // Numerical, element by element of each leaf (at most 48 per leaf).
    const GradSettings gs = grad_settings();
    const double kEps = gs.eps, kAtol = gs.atol, kRtol = gs.rtol;
    GradModeOff off;
    // Writes host doubles into a leaf of the gradcheck dtype.
    auto write = [](tsr_tensor* leaf, const std::vector<double>& v) {
      if (grad_dtype() == TSR_FLOAT64) {
        check(tsr_tensor_copy_from_host(leaf, v.data(), v.size() * sizeof(double)),
              "tsr_tensor_copy_from_host");
        return;
      }
      const std::vector<float> f(v.begin(), v.end());
      check(tsr_tensor_copy_from_host(leaf, f.data(), f.size() * sizeof(float)),
            "tsr_tensor_copy_from_host");
    };
    for (size_t l = 0; l < leaves.size(); ++l) {
      const HostTensor x = read(leaves[l]);
      const HostTensor g = grads[l] ? read(grads[l]) : HostTensor{};
      const size_t n = x.floats.size();
      const size_t step = std::max<size_t>(1, n / 48);
      for (size_t i = 0; i < n; i += step) {
        auto at = [&](double delta) {
          std::vector<double> v = x.floats;
          v[i] += delta;
          write(leaves[l], v);
          std::vector<TensorPtr> o;
          check(run(o), "forward at a perturbed point");
          return objective(o);
        };
        // float32: the step is relative to the value (|x| ~ 100 would
        // otherwise lose the difference to rounding).
        const double h =
            grad_dtype() == TSR_FLOAT64 ? kEps : kEps * std::max(1.0, std::fabs(x.floats[i]));
        const double numerical = (at(h) - at(-h)) / (2 * h);
        write(leaves[l], x.floats);
        const double analytical = grads[l] ? g.floats[i] : 0.0;
        EXPECT_LE(std::fabs(analytical - numerical), kAtol + kRtol * std::fabs(numerical))
            << "input " << l << " element " << i << ": autograd " << analytical
            << ", finite differences " << numerical;
      }
    }
  } catch (const HarnessError& e) {
    FAIL() << e.what();
  } catch (const std::exception& e) {
    FAIL() << "bad golden case: " << e.what();
  }
}

#ifdef TESSERA_GOLDEN_GRADS_FILE
// ---------------------------------------------------------------------------
// Gradients against PyTorch's: every floating input of every golden case
// ---------------------------------------------------------------------------
//
// golden_grads.json (gen_golden_grads.py, Note [Golden gradients] there)
// holds PyTorch 2.15's gradient of f = sum_k <out_k, w_k> for each floating
// input of each case, plus its own cases with overlapping, repeated and
// padding indices. Finite differences (GoldenGrad) check that a gradient is
// a derivative; this suite checks that it is PyTorch's, which is what a
// convention (a written position of index_put gets nothing, padding_idx's
// row gets nothing, tied maxima share) or a silently missing gradient
// changes. Compared normwise: within 1e-7 of the largest expected element.

struct GradFile {
  json cases = json::array();
  std::string error;
  std::map<std::string, size_t> golden_by_name;  // golden_ops.json's cases
};

const GradFile& grad_file() {
  static const GradFile file = [] {
    GradFile f;
    const std::string path = TESSERA_GOLDEN_GRADS_FILE;
    std::ifstream in(path);
    if (!in) {
      f.error = "cannot open " + path +
                "; regenerate it with /root/.cache/tessera/torchpy "
                "conformance/golden/gen_golden_grads.py";
      return f;
    }
    try {
      f.cases = std::move(json::parse(in).at("cases"));
    } catch (const std::exception& e) {
      f.error = path + " is not a golden gradient file: " + e.what();
    }
    const json& golden = golden_file().cases;
    for (size_t i = 0; i < golden.size(); ++i) f.golden_by_name[golden[i].at("name")] = i;
    return f;
  }();
  return file;
}

// The case an entry of golden_grads.json checks: its own, or golden_ops.json's.
const json& grad_case_spec(const json& entry) {
  if (entry.contains("args")) return entry;
  const GradFile& f = grad_file();
  const auto it = f.golden_by_name.find(entry.at("name").get<std::string>());
  if (it == f.golden_by_name.end())
    throw HarnessError("golden_grads.json names case " + entry.at("name").dump() +
                       ", which golden_ops.json lacks; regenerate golden_grads.json with "
                       "conformance/golden/gen_golden_grads.py");
  return golden_file().cases[it->second];
}

std::vector<int64_t> int_list_or_empty(const json& entry, const char* key) {
  return entry.contains(key) ? int_list(entry.at(key)) : std::vector<int64_t>{};
}

// Gradients that still differ from PyTorch's, all at NaN, infinite or
// out-of-domain inputs (finite inputs agree): the case must keep differing;
// once it matches, the entry must go (like an XPASS). case -> what differs.
const std::pair<const char*, const char*> kGradDiffersFromPyTorch[] = {
    {"logit__float64_specials", "inputs outside [0, 1] and at +-inf: PyTorch's gradient is NaN"},
    {"remainder_Tensor__specials", "other's gradient at inf / 0 operands: PyTorch's NaN and 0"},
    {"pow_Tensor_Tensor__negative_base_fractional",
     "negative base with a fractional exponent: PyTorch gives 0 where Tessera's log is NaN"},
    {"atan2__signed_zeros_inf", "both operands 0 or infinite: PyTorch's gradient is 0"},
    {"max__nan_propagates", "a NaN maximum: PyTorch gives g to the NaN elements, not NaN to all"},
    {"min__nan_propagates", "a NaN minimum: PyTorch gives g to the NaN elements, not NaN to all"},
    {"cumprod__nan_inf", "infinite and NaN factors: PyTorch's formula divides differently"},
    {"scaled_dot_product_attention__fully_masked_row_nan",
     "a fully masked row: PyTorch's value gradient is finite"},
    {"binary_cross_entropy__sum_extremes_clamped",
     "inputs exactly 0 and 1: PyTorch's formula clamps the denominator at 1e-12"},
};

// Checks one entry; returns the number of inputs compared.
int check_grad_entry(const json& entry) {
  if (entry.contains("skip")) return 0;
  int checked = 0;
  try {
    const json& spec = grad_case_spec(entry);
    const std::string op_name = spec.at("op").get<std::string>();
    SCOPED_TRACE("op " + op_name + "(" + describe_args(spec) + ")");
    const tsr_op* op = nullptr;
    check(tsr_op_find(runtime(), op_name.c_str(), &op), "tsr_op_find");
    GradScope scope;
    grad_inputs().written = int_list_or_empty(entry, "written");
    grad_inputs().no_grad = int_list_or_empty(entry, "no_grad_args");
    Call call;
    build_args(spec, call);
    const std::vector<tsr_tensor*> leaves = grad_inputs().leaves;
    const json& inputs = entry.at("inputs");
    if (inputs.size() != leaves.size())
      throw HarnessError("golden_grads.json lists " + std::to_string(inputs.size()) +
                         " floating inputs, the harness built " + std::to_string(leaves.size()) +
                         "; regenerate golden_grads.json");
    for (size_t l = 0; l < leaves.size(); ++l) {
      const auto [arg, list_entry] = grad_inputs().where[l];
      if (inputs[l].at("arg").get<int32_t>() != arg || inputs[l].value("entry", -1) != list_entry)
        throw HarnessError("golden_grads.json's input " + std::to_string(l) +
                           " is another argument than the harness's; regenerate it");
    }

    constexpr size_t kMaxOuts = 16;
    tsr_value outs[kMaxOuts] = {};
    if (tsr_status* status = tsr_op_call(op, call.args.data(), call.args.size(), outs, kMaxOuts)) {
      const std::string message = tsr_status_message(status);
      tsr_status_free(status);
      ADD_FAILURE() << "forward with inputs that require grad failed: " << message;
      return 0;
    }
    // Output k of the flattened results gets weight_of(k, i), as in the
    // generator; only those that require grad are differentiated.
    std::vector<TensorPtr> owned, weights;
    std::vector<tsr_tensor*> roots, root_weights;
    size_t k = 0;
    for (const tsr_value& out : outs) {
      if (out.tag != TSR_VALUE_TENSOR || out.u.tensor == nullptr) continue;
      owned.emplace_back(out.u.tensor);
      const size_t index = k++;
      int32_t rg = 0;
      check(tsr_tensor_requires_grad(out.u.tensor, &rg), "tsr_tensor_requires_grad");
      if (!rg) continue;
      const HostTensor h = read(out.u.tensor);
      std::vector<double> w(h.floats.size());
      for (size_t i = 0; i < w.size(); ++i) w[i] = weight_of(index, i);
      tsr_tensor* wt = nullptr;
      check(tsr_tensor_from_host(runtime(), w.data(), w.size() * sizeof(double),
                                 static_cast<int32_t>(h.shape.size()), h.shape.data(), TSR_FLOAT64,
                                 target_device(), &wt),
            "tsr_tensor_from_host");
      TensorPtr weight(wt);
      if (h.dtype != TSR_FLOAT64) {
        tsr_tensor* cast = nullptr;
        check(tsr_tensor_to_dtype(wt, h.dtype, &cast), "tsr_tensor_to_dtype");
        weight.reset(cast);
      }
      roots.push_back(out.u.tensor);
      root_weights.push_back(weight.get());
      weights.push_back(std::move(weight));
    }
    std::vector<tsr_tensor*> grads(leaves.size(), nullptr);
    if (!roots.empty())
      check(tsr_autograd_grad(static_cast<int32_t>(roots.size()), roots.data(), root_weights.data(),
                              static_cast<int32_t>(leaves.size()), leaves.data(), 0, 0,
                              /*allow_unused=*/1, grads.data()),
            "tsr_autograd_grad");
    std::vector<TensorPtr> grad_owner;
    for (tsr_tensor* g : grads) grad_owner.emplace_back(g);

    // A wrong gradient is wrong by O(1); rounding differs between a formula
    // and a decomposition by far less than 1e-7 of the largest element.
    const Tolerance tol{1e-7, 1e-9};
    const char* differs = nullptr;
    for (const auto& [name, what] : kGradDiffersFromPyTorch)
      if (entry.at("name").get<std::string>() == name) differs = what;
    std::string mismatches;
    for (size_t l = 0; l < leaves.size(); ++l) {
      const json& expected = inputs[l];
      if (expected.contains("pytorch_error")) continue;  // no derivative in PyTorch
      ++checked;
      const std::string which = "input " + std::to_string(l) + " (argument " +
                                std::to_string(grad_inputs().where[l].first) + ")";
      const HostTensor shape_of_leaf = read(leaves[l]);
      HostTensor actual;
      if (grads[l] != nullptr) {
        actual = read(grads[l]);
      } else {  // no gradient: zeros
        actual.dtype = TSR_FLOAT64;
        actual.shape = shape_of_leaf.shape;
        actual.floats.assign(shape_of_leaf.floats.size(), 0.0);
      }
      const json& g = expected.at("grad");
      std::vector<double> want;
      std::vector<int64_t> want_shape = shape_of_leaf.shape;
      if (g.is_null()) {
        want.assign(shape_of_leaf.floats.size(), 0.0);
      } else {
        want_shape = int_list(g.at("shape"));
        for (const json& v : g.at("data")) want.push_back(number(v));
      }
      const std::string why = compare_values(actual, want_shape, want, {}, tol, /*normwise=*/true);
      if (!why.empty())
        mismatches += "\n  " + which + ": gradient differs from PyTorch's" +
                      (grads[l] == nullptr ? " (Tessera gives none)" : "") + ": " + why;
    }
    if (differs != nullptr) {
      EXPECT_FALSE(mismatches.empty()) << "the gradient now matches PyTorch's (" << differs
                                       << "): remove the case from kGradDiffersFromPyTorch";
    } else {
      EXPECT_TRUE(mismatches.empty()) << mismatches;
    }
  } catch (const HarnessError& e) {
    ADD_FAILURE() << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "bad golden gradient entry: " << e.what();
  }
  return checked;
}

// One test over all entries (each is a few milliseconds; a process per
// entry under ctest would cost more than the checks); a failure names its
// case. TESSERA_GOLDEN_GRAD_CASE=<substring> checks only matching cases.
TEST(GoldenGradReference, EveryInputMatchesPyTorch) {
  const GradFile& f = grad_file();
  ASSERT_TRUE(f.error.empty()) << f.error;
  const char* only = std::getenv("TESSERA_GOLDEN_GRAD_CASE");
  int checked = 0;
  for (const json& entry : f.cases) {
    const std::string name = entry.at("name").get<std::string>();
    if (only != nullptr && name.find(only) == std::string::npos) continue;
    SCOPED_TRACE("case " + name);
    checked += check_grad_entry(entry);
  }
  testing::Test::RecordProperty("inputs_checked", checked);
  if (only == nullptr) {
    EXPECT_GT(checked, 1000) << "golden_grads.json lost most of its inputs";
  }
}

// Every golden case that succeeds and has a floating tensor input has an
// entry (a case added to gen_golden.py needs gen_golden_grads.py rerun);
// prints how many inputs are checked against PyTorch per op.
TEST(GoldenGradCoverage, EveryCaseWithAFloatingInputHasPyTorchGradients) {
  const GradFile& f = grad_file();
  ASSERT_TRUE(f.error.empty()) << f.error;
  std::map<std::string, const json*> entries;
  for (const json& e : f.cases) entries[e.at("name").get<std::string>()] = &e;
  auto floating = [](const json& spec) {
    if (spec.is_object() && spec.contains("dtype"))
      return is_float(dtype_named(spec.at("dtype").get<std::string>()));
    return false;
  };
  std::string missing;
  for (const json& c : golden_file().cases) {
    if (c.at("expect").value("raises", false)) continue;
    bool has_float = false;
    for (const json& a : c.at("args")) {
      if (!a.is_object()) continue;
      if (a.contains("tensor")) has_float |= floating(a.at("tensor"));
      if (a.contains("tensors"))
        for (const json& e : a.at("tensors")) has_float |= floating(e);
    }
    if (has_float && entries.count(c.at("name").get<std::string>()) == 0)
      missing += " " + c.at("name").get<std::string>();
  }
  EXPECT_TRUE(missing.empty()) << "golden cases without PyTorch gradients (rerun "
                                  "conformance/golden/gen_golden_grads.py):"
                               << missing;
  std::map<std::string, int> per_op;
  int total = 0, skipped = 0, no_derivative = 0;
  for (const json& e : f.cases) {
    if (e.contains("skip")) {
      ++skipped;
      continue;
    }
    const std::string op = grad_case_spec(e).at("op").get<std::string>();
    int& n = per_op[op];
    for (const json& in : e.at("inputs")) {
      if (in.contains("pytorch_error")) {
        ++no_derivative;
        continue;
      }
      ++n;
      ++total;
    }
  }
  std::cout << "golden gradients: " << total << " inputs of " << f.cases.size() - skipped
            << " cases checked against PyTorch over " << per_op.size() << " ops (" << skipped
            << " cases skipped, " << no_derivative
            << " inputs without a PyTorch derivative); inputs per op:\n";
  for (const auto& [op, n] : per_op) std::cout << "  " << op << " " << n << "\n";
  testing::Test::RecordProperty("inputs_checked", total);
}
#endif  // TESSERA_GOLDEN_GRADS_FILE

#if defined(TESSERA_CONFORMANCE_SUITE)
INSTANTIATE_TEST_SUITE_P(Autograd, GoldenGrad, testing::ValuesIn(case_indices()), case_name);
#elif defined(TESSERA_GOLDEN_GRADIENTS)
INSTANTIATE_TEST_SUITE_P(Ops, GoldenGrad, testing::ValuesIn(case_indices()), case_name);
#else
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GoldenGrad);
#endif

#ifdef TESSERA_CONFORMANCE_SUITE
// ---------------------------------------------------------------------------
// Dtypes: every golden value case again in the other dtypes of its kind
// ---------------------------------------------------------------------------
//
// Note [Dtype sweep]
// ~~~~~~~~~~~~~~~~~~
// The golden cases exercise each op in the dtypes PyTorch's test chose
// (mostly float32 and int64); a device claims more. GoldenDtype reruns every
// value case (not error cases, not ops that write their inputs) with its
// value inputs - the tensors of the case's first non-bool dtype `from`,
// except index-like arguments (index, indices, sorter, target, offsets) -
// made in each other dtype `to` of the same kind: float16, bfloat16, float32,
// float64 for floating cases; uint8, int8, int16, int32, int64 for integer
// ones. Case id ops/<case>__as_<to>. A dtype the device does not claim is a
// skip. What the result is compared with:
//  - floating `to` at least as wide as `from`, and every integer `to` (an
//    integer narrowing runs only when the inputs fit): PyTorch's golden
//    output, with the tolerance of the golden dtype (its rounding dominates);
//    integer results compare exactly after wrapping the golden value to the
//    result's width (two's complement, as the device computes);
//  - floating `to` narrower than `from`: the float64 reference - the same op
//    on cpu:0 in float64, on the inputs rounded to `to` - with `to`'s
//    tolerance applied normwise, atol = rtol * max|expected|: a result
//    computed in `to` carries intermediate roundings of the output's scale,
//    so an element that cancels to near zero is judged on that scale.
// The result dtype must be `to` where the golden result has `from`'s dtype
// (or, for integer cases, the golden int64 of ops that accumulate integers
// in int64), and the golden dtype otherwise.

struct DtypeParam {
  int index;
  tsr_dtype from;
  tsr_dtype to;
};

bool is_int(tsr_dtype d) {
  return d == TSR_UINT8 || d == TSR_INT8 || d == TSR_INT16 || d == TSR_INT32 || d == TSR_INT64;
}

int bit_width(tsr_dtype d) {
  switch (d) {
    case TSR_UINT8:
    case TSR_INT8:
      return 8;
    case TSR_INT16:
    case TSR_FLOAT16:
    case TSR_BFLOAT16:
      return 16;
    case TSR_INT32:
    case TSR_FLOAT32:
      return 32;
    default:
      return 64;
  }
}

// `v` wrapped to the width of integer dtype `d` (bool: v != 0).
int64_t wrap_to(int64_t v, tsr_dtype d) {
  const auto u = static_cast<uint64_t>(v);
  switch (d) {
    case TSR_BOOL:
      return v != 0;
    case TSR_UINT8:
      return static_cast<int64_t>(u & 0xffu);
    case TSR_INT8:
      return static_cast<int8_t>(static_cast<uint8_t>(u));
    case TSR_INT16:
      return static_cast<int16_t>(static_cast<uint16_t>(u));
    case TSR_INT32:
      return static_cast<int32_t>(static_cast<uint32_t>(u));
    default:
      return v;
  }
}

bool fits(int64_t v, tsr_dtype d) { return wrap_to(v, d) == v; }

// Significand bits (float) or width (integer): `to` is narrower than `from`
// when it holds fewer (bfloat16 is narrower than float16).
int precision_bits(tsr_dtype d) {
  switch (d) {
    case TSR_FLOAT16:
      return 11;
    case TSR_BFLOAT16:
      return 8;
    case TSR_FLOAT32:
      return 24;
    case TSR_FLOAT64:
      return 53;
    default:
      return bit_width(d);
  }
}

// Cases whose expected value depends on the dtype's range, not only on the
// values: the golden output is right for the golden dtype alone.
const std::pair<const char*, const char*> kDtypeRangeDependent[] = {
    {"nan_to_num__default", "inf becomes the largest value of the dtype"},
    {"nan_to_num__float16", "inf becomes the largest value of the dtype"},
};

// The result dtype of `op` for value inputs of dtype `to` whose golden case
// (in dtype `from`) gave `golden`.
tsr_dtype expected_result_dtype(const std::string& op, tsr_dtype from, tsr_dtype to,
                                tsr_dtype golden) {
  // PyTorch's legacy rule: any/all of uint8 give uint8, of any other dtype bool.
  if (op.rfind("any", 0) == 0 || op.rfind("all", 0) == 0)
    return to == TSR_UINT8 ? TSR_UINT8 : TSR_BOOL;
  return golden == from ? to : golden;
}

// Tensors of the case's top-level arguments and lists, each with its
// argument index.
std::vector<std::pair<size_t, const json*>> tensor_args(const json& spec) {
  std::vector<std::pair<size_t, const json*>> out;
  const json& args = spec.at("args");
  for (size_t i = 0; i < args.size(); ++i) {
    const json& a = args[i];
    if (!a.is_object() || a.size() != 1) continue;
    if (a.contains("tensor")) out.emplace_back(i, &a.at("tensor"));
    if (a.contains("tensors"))
      for (const json& t : a.at("tensors"))
        if (!t.is_null()) out.emplace_back(i, &t);
  }
  return out;
}

std::vector<DtypeParam> dtype_params() {
  std::vector<DtypeParam> out;
  const GoldenFile& f = golden_file();
  if (!f.error.empty()) return out;  // Ops/Golden reports the file
  constexpr tsr_dtype kFloats[] = {TSR_FLOAT16, TSR_BFLOAT16, TSR_FLOAT32, TSR_FLOAT64};
  constexpr tsr_dtype kInts[] = {TSR_UINT8, TSR_INT8, TSR_INT16, TSR_INT32, TSR_INT64};
  for (size_t i = 0; i < f.cases.size(); ++i) {
    const json& spec = f.cases[i];
    const json& expect = spec.at("expect");
    if (expect.value("raises", false) || expect.contains("mutated")) continue;
    std::vector<tsr_dtype> dtypes;
    for (const auto& [arg, t] : tensor_args(spec))
      dtypes.push_back(dtype_named(t->at("dtype").get<std::string>()));
    tsr_dtype from = TSR_BOOL;
    for (tsr_dtype d : dtypes)
      if (from == TSR_BOOL && d != TSR_BOOL) from = d;
    if (is_float(from)) {
      bool mixed = false;  // type promotion cases keep their dtypes
      for (tsr_dtype d : dtypes) mixed |= is_float(d) && d != from;
      if (mixed) continue;
      for (tsr_dtype to : kFloats)
        if (to != from) out.push_back({static_cast<int>(i), from, to});
    } else if (is_int(from)) {
      for (tsr_dtype to : kInts)
        if (to != from) out.push_back({static_cast<int>(i), from, to});
    }
  }
  return out;
}

std::string dtype_param_name(const testing::TestParamInfo<DtypeParam>& info) {
  return golden_file().cases[static_cast<size_t>(info.param.index)].at("name").get<std::string>() +
         "__as_" + tsr_dtype_name(info.param.to);
}

// Whether argument declaration `decl` ("Tensor index", "Tensor? sorter=None")
// names an index-like tensor, which keeps its dtype.
bool index_like(const std::string& decl) {
  std::string name = decl.substr(0, decl.find('='));
  name = name.substr(name.rfind(' ') + 1);
  static const char* const kNames[] = {"index", "indices", "sorter", "target", "offsets"};
  for (const char* n : kNames)
    if (name == n) return true;
  return false;
}

struct SweepScope {
  SweepScope(tsr_dtype from, tsr_dtype to) {
    sweep() = Sweep{};
    sweep().active = true;
    sweep().from = from;
    sweep().to = to;
  }
  ~SweepScope() {
    sweep() = Sweep{};
    sweep_value_args().clear();
  }
};

// Calls `op` and returns its tensor results; a failed call throws.
std::vector<TensorPtr> call_op(const tsr_op* op, Call& call, const std::string& what) {
  constexpr size_t kMaxOuts = 16;
  tsr_value outs[kMaxOuts] = {};
  tsr_status* status = tsr_op_call(op, call.args.data(), call.args.size(), outs, kMaxOuts);
  std::vector<TensorPtr> results;
  for (const tsr_value& out : outs)
    if (out.tag == TSR_VALUE_TENSOR && out.u.tensor != nullptr) results.emplace_back(out.u.tensor);
  check(status, what);
  return results;
}

class GoldenDtype : public testing::TestWithParam<DtypeParam> {};

TEST_P(GoldenDtype, Case) {
  const DtypeParam p = GetParam();
  worst_error() = 0;
  const json& spec = golden_file().cases[static_cast<size_t>(p.index)];
  const std::string op_name = spec.at("op").get<std::string>();
  SCOPED_TRACE("op " + op_name + "(" + describe_args(spec) + ") with its " +
               tsr_dtype_name(p.from) + " inputs as " + tsr_dtype_name(p.to));
  try {
    if (!(tessera::conformance::properties().dtypes & TSR_DTYPE_BIT(p.to)))
      GTEST_SKIP() << "the device does not claim " << tsr_dtype_name(p.to);
    for (const auto& [name, why] : kDtypeRangeDependent)
      if (spec.at("name").get<std::string>() == name) GTEST_SKIP() << why;
    const tsr_op* op = nullptr;
    check(tsr_op_find(runtime(), op_name.c_str(), &op), "tsr_op_find");
    const std::vector<std::string> decls = schema_args(op);
    std::vector<bool> value_args;
    for (size_t i = 0; i < spec.at("args").size(); ++i)
      value_args.push_back(is_float(p.from) || i >= decls.size() || !index_like(decls[i]));
    if (is_int(p.to)) {
      for (const auto& [arg, t] : tensor_args(spec)) {
        if (!value_args[arg] || dtype_named(t->at("dtype").get<std::string>()) != p.from) continue;
        for (const json& v : t->at("data"))
          if (!fits(v.get<int64_t>(), p.to))
            GTEST_SKIP() << "input value " << v.get<int64_t>() << " does not fit "
                         << tsr_dtype_name(p.to);
      }
    }
    SweepScope scope(p.from, p.to);
    sweep_value_args() = value_args;
    Call call;
    build_args(spec, call);
    place_factory_on_target(op, call);
    const std::vector<TensorPtr> results = call_op(op, call, "the call");

    const json& outputs = spec.at("expect").at("outputs");
    ASSERT_EQ(results.size(), outputs.size()) << "number of tensor results";
    const bool loose = spec.value("tolerance", std::string()) == "loose";
    const bool narrowing = is_float(p.from) && precision_bits(p.to) < precision_bits(p.from);
    std::vector<TensorPtr> reference;
    if (narrowing) {
      sweep().reference = true;
      Call ref_call;
      build_args(spec, ref_call);
      reference = call_op(op, ref_call, "the float64 reference on cpu:0");
      sweep().reference = false;
      ASSERT_EQ(reference.size(), results.size()) << "number of reference results";
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (outputs[i].is_null()) continue;
      const HostTensor actual = read(results[i].get());
      const tsr_dtype golden = dtype_named(outputs[i].at("dtype").get<std::string>());
      const tsr_dtype want = expected_result_dtype(op_name, p.from, p.to, golden);
      if (actual.dtype != want && !(is_int(p.from) && actual.dtype == golden)) {
        ADD_FAILURE() << "result " << i << ": dtype " << tsr_dtype_name(actual.dtype)
                      << ", expected " << tsr_dtype_name(want);
        continue;
      }
      if (is_float(actual.dtype) != is_float(golden)) continue;  // reported above
      std::vector<int64_t> shape = int_list(outputs[i].at("shape"));
      std::vector<double> floats;
      std::vector<int64_t> ints;
      Tolerance tol{0, 0};
      if (narrowing) {
        const HostTensor ref = read(reference[i].get());
        floats = ref.floats;
        ints = ref.ints;
        shape = ref.shape;
        tol = loose ? tessera::conformance::loose(actual.dtype)
                    : tessera::conformance::tolerance(actual.dtype);
      } else {
        for (const json& v : outputs[i].at("data")) {
          if (is_float(golden)) {
            floats.push_back(round_to(number(v), golden));
          } else {
            ints.push_back(wrap_to(v.get<int64_t>(), actual.dtype));
          }
        }
        // Golden integers computed in a narrower `from` wrapped there: compare
        // the result's low bits, wrapped the same way (two's complement ring
        // ops commute with the wrap; other ops only meet it when the golden
        // did not overflow, and then the wrap changes nothing).
        if (golden == p.from && is_int(golden) && is_int(actual.dtype) &&
            bit_width(actual.dtype) > bit_width(golden)) {
          HostTensor low = actual;
          for (int64_t& v : low.ints) v = wrap_to(v, golden);
          for (size_t k = 0; k < ints.size(); ++k)
            ints[k] = outputs[i].at("data")[k].get<int64_t>();
          const std::string why = compare_values(low, shape, floats, ints, tol, false);
          if (!why.empty())
            ADD_FAILURE() << "result " << i << " (wrapped to " << tsr_dtype_name(golden)
                          << "): " << why;
          continue;
        }
        tol = loose ? tessera::conformance::loose(golden) : tessera::conformance::tolerance(golden);
      }
      const std::string why = compare_values(actual, shape, floats, ints, tol, narrowing);
      if (!why.empty()) ADD_FAILURE() << "result " << i << ": " << why;
    }
  } catch (const HarnessError& e) {
    FAIL() << e.what();
  } catch (const std::exception& e) {
    FAIL() << "bad golden case: " << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, GoldenDtype, testing::ValuesIn(dtype_params()), dtype_param_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GoldenDtype);
#endif

}  // namespace

#ifdef TESSERA_CONFORMANCE_SUITE
namespace tessera::conformance {

// What the report needs to know of golden case `name`: its op, the dtype it
// exercises (first tensor argument's, else a dtype argument's, else the
// first result's) and its shape class: "empty" (an input with no elements),
// "0-d", "non-contiguous" (a transposed, permuted, sliced or strided input),
// "broadcast" (inputs of different shapes, or an expanded one), else
// "plain". Null when there is no such case.
nlohmann::json golden_case_info(const std::string& name) {
  for (const json& spec : golden_file().cases) {
    if (spec.at("name").get<std::string>() != name) continue;
    std::string dtype;
    bool empty = false, scalar = false, strided = false, broadcast = false;
    std::vector<std::vector<int64_t>> shapes;
    auto look = [&](const json& t) {
      if (dtype.empty()) dtype = t.at("dtype").get<std::string>();
      const std::vector<int64_t> shape = int_list(t.at("shape"));
      int64_t numel = 1;
      for (int64_t d : shape) numel *= d;
      empty |= numel == 0;
      scalar |= shape.empty();
      if (t.contains("view")) {
        for (const json& step : t.at("view")) {
          const std::string kind = step.begin().key();
          if (kind == "expand") {
            broadcast = true;
          } else {
            strided = true;
          }
        }
      }
      shapes.push_back(shape);
    };
    for (const json& a : spec.at("args")) {
      if (!a.is_object() || a.size() != 1) continue;
      if (a.contains("tensor")) look(a.at("tensor"));
      if (a.contains("tensors"))
        for (const json& t : a.at("tensors"))
          if (!t.is_null()) look(t);
    }
    for (const json& a : spec.at("args"))
      if (dtype.empty() && a.is_object() && a.contains("dtype")) dtype = a.at("dtype");
    const json& expect = spec.at("expect");
    if (dtype.empty() && expect.contains("outputs") && !expect.at("outputs").empty() &&
        expect.at("outputs")[0].is_object())
      dtype = expect.at("outputs")[0].at("dtype").get<std::string>();
    for (const auto& shape : shapes) broadcast |= shape != shapes.front() && !shape.empty();
    std::string shape_class = "plain";
    if (empty) {
      shape_class = "empty";
    } else if (scalar) {
      shape_class = "0-d";
    } else if (strided) {
      shape_class = "non-contiguous";
    } else if (broadcast) {
      shape_class = "broadcast";
    }
    return json{{"op", spec.at("op")},
                {"dtype", dtype.empty() ? "none" : dtype},
                {"shape_class", shape_class},
                {"error_case", expect.value("raises", false)}};
  }
  return nullptr;
}

}  // namespace tessera::conformance
#endif
