// Fuzz target: boxed tsr_op_call over every op of the registry. The input
// picks an op ("name.overload\n" first, else an index) and, per schema argument, a value:
// (small or int64-edge numbers, tensors from a fresh pool of odd layouts),
// sometimes of another type or None. Whatever the arguments, the call returns
// a status that is not INTERNAL, and never crashes (the sanitizers watch).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "registry/schema.h"
#include "util/error.h"

namespace {

using tsr_fuzz::Input;

constexpr tsr_device kCpu{TSR_DEVICE_CPU, 0};
constexpr tsr_device kMeta{TSR_DEVICE_META, 0};

tsr_tensor* zeros(std::vector<int64_t> sizes, tsr_dtype dtype, tsr_device device) {
  tsr_tensor* t = nullptr;
  tsr_status* st = tsr_tensor_zeros(tsr_fuzz::runtime(), static_cast<int32_t>(sizes.size()),
                                    sizes.data(), dtype, device, &t);
  if (st != nullptr) {
    std::fprintf(stderr, "fuzz: pool tensor: %s\n", tsr_status_message(st));
    std::abort();
  }
  return t;
}

// Tensors of every kind a kernel must cope with, made fresh for each input
// (ops may write to them) and released after it.
struct Pool {
  std::vector<tsr_tensor*> tensors;
  Pool() {
    tensors = {
        zeros({2, 3}, TSR_FLOAT32, kCpu),       zeros({5}, TSR_FLOAT32, kCpu),
        zeros({0, 3}, TSR_FLOAT32, kCpu),       zeros({}, TSR_FLOAT32, kCpu),
        zeros({1, 2, 4, 4}, TSR_FLOAT32, kCpu), zeros({4}, TSR_INT64, kCpu),
        zeros({2, 3}, TSR_BOOL, kCpu),          zeros({3, 4}, TSR_FLOAT32, kMeta),
        zeros({2, 2}, TSR_FLOAT64, kCpu),       zeros({3}, TSR_INT32, kCpu),
    };
    tsr_tensor* view = nullptr;  // a NULL status is success
    if (tsr_tensor_transpose(tensors[0], 0, 1, &view) == nullptr) tensors.push_back(view);
    const int64_t expand_to[2] = {4, 5};
    if (tsr_tensor_expand(tensors[1] /* [5] */, 2, expand_to, &view) == nullptr)
      tensors.push_back(view);
    // Zero elements with strides no real tensor has.
    const int64_t sizes[2] = {0, 4};
    const int64_t strides[2] = {1, int64_t{1} << 61};
    if (tsr_tensor_as_strided(tensors[1], 2, sizes, strides, 0, &view) == nullptr)
      tensors.push_back(view);
  }
  ~Pool() {
    for (tsr_tensor* t : tensors) tsr_tensor_release(t);
  }
  tsr_tensor* pick(Input& in) const { return tensors[in.byte() % tensors.size()]; }
};

// Storage for one call's list and string arguments (tsr_value points into it).
struct Arena {
  std::vector<std::vector<int64_t>> ints;
  std::vector<std::vector<double>> floats;
  std::vector<std::vector<int32_t>> bools;
  std::vector<std::vector<tsr_tensor*>> tensors;
  std::vector<std::string> strings;
};

// A list of sizes: its product stays small (<= 2^16 elements), or is huge
// (>= 2^59, or overflowing int64) - never gigabytes of real memory.
std::vector<int64_t> size_list(Input& in, int32_t len) {
  std::vector<int64_t> v;
  int64_t product = 1;
  bool overflow = false;
  for (int32_t i = 0; i < len; ++i) {
    v.push_back(in.size_like());
    const int64_t factor = v.back() > 1 ? v.back() : 1;
    overflow = overflow || __builtin_mul_overflow(product, factor, &product);
  }
  if (!overflow && product > (int64_t{1} << 16) && product < (int64_t{1} << 59))
    for (int64_t& x : v) x %= 4;
  return v;
}

tsr_value value_of_kind(Input& in, tsr::ArgKind kind, const Pool& pool, Arena& arena) {
  tsr_value v{};
  switch (kind) {
    case tsr::ArgKind::kTensor:
      v.tag = TSR_VALUE_TENSOR;
      v.u.tensor = pool.pick(in);
      break;
    case tsr::ArgKind::kTensorList: {
      auto& list = arena.tensors.emplace_back();
      const int n = in.byte() % 4;
      for (int i = 0; i < n; ++i) list.push_back(pool.pick(in));
      v.tag = TSR_VALUE_TENSOR_LIST;
      v.len = n;
      v.u.tensors = list.data();
      break;
    }
    case tsr::ArgKind::kInt:
      v.tag = TSR_VALUE_INT;
      v.u.i = in.size_like();
      break;
    case tsr::ArgKind::kIntList: {
      // Up to TSR_MAX_DIMS + 1 entries: one past the limit is refused.
      auto& list = arena.ints.emplace_back(size_list(in, in.byte() % (TSR_MAX_DIMS + 2)));
      v.tag = TSR_VALUE_INT_LIST;
      v.len = static_cast<int32_t>(list.size());
      v.u.ints = list.data();
      break;
    }
    case tsr::ArgKind::kFloat:
      v.tag = TSR_VALUE_FLOAT;
      v.u.f = in.real();
      break;
    case tsr::ArgKind::kFloatList: {
      auto& list = arena.floats.emplace_back();
      const int n = in.byte() % 4;
      for (int i = 0; i < n; ++i) list.push_back(in.real());
      v.tag = TSR_VALUE_FLOAT_LIST;
      v.len = n;
      v.u.floats = list.data();
      break;
    }
    case tsr::ArgKind::kBool:
      v.tag = TSR_VALUE_BOOL;
      v.u.b = in.byte() & 1;
      break;
    case tsr::ArgKind::kBoolList: {
      auto& list = arena.bools.emplace_back();
      const int n = in.byte() % 4;
      for (int i = 0; i < n; ++i) list.push_back(in.byte() & 1);
      v.tag = TSR_VALUE_BOOL_LIST;
      v.len = n;
      v.u.bools = list.data();
      break;
    }
    case tsr::ArgKind::kScalar:
      v.tag = TSR_VALUE_SCALAR;
      if (in.byte() & 1) {
        v.u.scalar.kind = TSR_INT64;
        v.u.scalar.v.i = in.size_like();
      } else {
        v.u.scalar.kind = TSR_FLOAT64;
        v.u.scalar.v.f = in.real();
      }
      break;
    case tsr::ArgKind::kScalarType:
      v.tag = TSR_VALUE_DTYPE;
      v.u.i = in.byte() % 16;  // inside tsr_dtype's C++ range; 12 and 15 are not dtypes
      break;
    case tsr::ArgKind::kDevice:
      v.tag = TSR_VALUE_DEVICE;
      v.u.device = (in.byte() & 1) ? kMeta : kCpu;
      if (in.byte() == 0xff) v.u.device.index = 3;
      break;
    case tsr::ArgKind::kMemoryFormat:
      v.tag = TSR_VALUE_MEMORY_FORMAT;
      v.u.i = in.byte() % 4;
      break;
    case tsr::ArgKind::kStr: {
      static const char* const kWords[] = {"mean", "sum", "none",    "tanh",  "floor",    "trunc",
                                           "ij",   "xy",  "reflect", "ii->i", "ij,jk->ik"};
      const uint8_t pick = in.byte();
      arena.strings.push_back(pick < 200 ? kWords[pick % 11] : in.text(12));
      v.tag = TSR_VALUE_STRING;
      v.u.str = arena.strings.back().c_str();
      break;
    }
    default:  // Layout?, Generator?: None
      v.tag = TSR_VALUE_NONE;
      break;
  }
  return v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in(data, size);
  tsr_runtime* rt = tsr_fuzz::runtime();
  static size_t op_count = [rt] {
    size_t n = 0;
    tsr_fuzz::expect_handled(tsr_op_count(rt, &n), "tsr_op_count");
    return n;
  }();
  // The op: "name.overload\n" first (stored inputs stay valid as the
  // registry grows), else an index into the registry.
  const tsr_op* op = nullptr;
  const void* newline = std::memchr(data, '\n', std::min<size_t>(size, 96));
  if (newline != nullptr) {
    const size_t len = static_cast<size_t>(static_cast<const uint8_t*>(newline) - data);
    const std::string name(reinterpret_cast<const char*>(data), len);
    tsr_status* found = tsr_op_find(rt, name.c_str(), &op);
    if (found == nullptr) {
      in = Input(data + len + 1, size - len - 1);
    } else {
      tsr_status_free(found);
      op = nullptr;
    }
  }
  if (op == nullptr) tsr_fuzz::expect_handled(tsr_op_at(rt, in.u16() % op_count, &op), "tsr_op_at");
  if (op == nullptr) return 0;
  const tsr::Schema schema = tsr::parse_schema(tsr_op_schema(op));
  Pool pool;
  Arena arena;
  // Reserve so pointers into the arena stay valid while values are added.
  arena.ints.reserve(64);
  arena.floats.reserve(64);
  arena.bools.reserve(64);
  arena.tensors.reserve(64);
  arena.strings.reserve(64);
  std::vector<tsr_value> args;
  const size_t nargs = std::min<size_t>(schema.args.size() + (in.byte() == 0xff ? 1 : 0), 60);
  for (size_t i = 0; i < nargs; ++i) {
    const uint8_t how = in.byte();
    if (i < schema.args.size() && how < 224) {
      const tsr::SchemaArg& arg = schema.args[i];
      // An optional argument is None a quarter of the time; a defaulted
      // trailing one may be left out.
      if (arg.optional && how % 4 == 0) {
        args.push_back(tsr_value{});
        continue;
      }
      args.push_back(value_of_kind(in, arg.kind, pool, arena));
    } else if (how < 240) {
      args.push_back(value_of_kind(in, static_cast<tsr::ArgKind>(how % 15), pool, arena));
    } else {
      args.push_back(tsr_value{});  // None anywhere
    }
    if (in.empty()) break;
  }
  tsr_value outs[8] = {};
  tsr_status* st = tsr_op_call(op, args.data(), args.size(), outs, 8);
  if (st == nullptr)
    for (tsr_value& out : outs)
      if (out.tag == TSR_VALUE_TENSOR) tsr_tensor_release(out.u.tensor);
  tsr_fuzz::expect_handled(st, tsr_op_name(op));
  return 0;
}
