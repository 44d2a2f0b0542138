// harness.cpp - the golden harness (harness.h): reading golden_ops.json,
// building a case's arguments, reading results back and comparing them.
#include "conformance/golden/harness.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <limits>
#include <sstream>

namespace tessera::golden {
namespace {

template <class T>
void append_as(std::vector<unsigned char>& bytes, T value) {
  unsigned char raw[sizeof(T)];
  std::memcpy(raw, &value, sizeof(T));
  bytes.insert(bytes.end(), raw, raw + sizeof(T));
}

template <class T>
std::vector<T> copy_out(tsr_tensor* t, int64_t numel) {
  std::vector<T> out(static_cast<size_t>(numel));
  check(tsr_tensor_copy_to_host(t, out.data(), out.size() * sizeof(T)), "tsr_tensor_copy_to_host");
  return out;
}

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

}  // namespace

// ---------------------------------------------------------------------------
// Cases
// ---------------------------------------------------------------------------

// ---------------------------------------------------------------------------
// Cases
// ---------------------------------------------------------------------------

const GoldenFile& golden_file() {
  static const GoldenFile file = [] {
    GoldenFile f;
    const std::string path = golden_file_path();
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

void check(tsr_status* status, const std::string& what) {
  if (status == nullptr) return;
  std::string message = std::string(tsr_status_code_name(tsr_status_code_of(status))) + ": " +
                        tsr_status_message(status);
  tsr_status_free(status);
  throw HarnessError(what + " failed: " + message);
}

Sweep& sweep() {
  static Sweep s;
  return s;
}

std::vector<bool>& sweep_value_args() {
  static std::vector<bool> v;
  return v;
}

tsr_device target_device() {
  if (sweep().active && sweep().reference) return tsr_device{TSR_DEVICE_CPU, 0};
  return device_under_test();
}

GradSettings grad_settings() {
  return grad_dtype() == TSR_FLOAT64 ? GradSettings{1e-6, 1e-4, 1e-3}
                                     : GradSettings{1e-3, 1e-2, 1e-2};
}

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

GradInputs& grad_inputs() {
  static GradInputs g;
  return g;
}

double weight_of(size_t k, size_t i) {
  uint32_t s = static_cast<uint32_t>(k * 7919 + i * 104729 + 17);
  s = s * 1664525u + 1013904223u;
  return static_cast<double>(s >> 8) / static_cast<double>(1u << 24) - 0.5;
}

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
  // The dtype sweep: the value in dtype `to`; for the reference, that value
  // widened to float64.
  const Sweep& sw = sweep();
  const bool swept = sw.active && sw.convert_arg && dtype == sw.from;
  if (swept) target = sw.to;
  if (host != target) {
    tsr_tensor* converted = nullptr;
    check(tsr_tensor_to_dtype(tensor.get(), target, &converted), "tsr_tensor_to_dtype");
    tensor.reset(converted);
  }
  if (swept && sw.reference && is_float(sw.to) && sw.to != TSR_FLOAT64) {
    tsr_tensor* wide = nullptr;
    check(tsr_tensor_to_dtype(tensor.get(), TSR_FLOAT64, &wide), "tsr_tensor_to_dtype");
    tensor.reset(wide);
  }
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

double round_to(double value, tsr_dtype dtype) {
  return dtype == TSR_FLOAT32 ? static_cast<double>(static_cast<float>(value)) : value;
}

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
    sweep().convert_arg = i >= sweep_value_args().size() || sweep_value_args()[i];
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

}  // namespace tessera::golden
