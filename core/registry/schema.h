// Operator schemas in PyTorch's schema language.
//
//   add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
//   add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)
//
// Supported: types Tensor, Tensor?, Tensor[], int, int?, int[], int[N], int[N]?,
// SymInt (as int), float, float?, float[], bool, bool?, bool[N], Scalar, Scalar?,
// ScalarType, ScalarType?, Device?, MemoryFormat, MemoryFormat?, Layout?, str,
// str?, Generator?, Tensor?[] (entries may be None); alias annotations (a), (a!), (a -> *);
// keyword-only marker `*`; defaults (numbers, True/False, None, [..], 'strings',
// contiguous_format); single, tuple and named returns. parse_schema throws INVALID_ARGUMENT naming
// the position on bad input. Schema::canonical() renders a schema with
// normalised spacing: two schemas describe the same op iff their canonical
// forms are equal (used to bind plugin kernels).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/types.h"

namespace tsr {

enum class ArgKind : uint8_t {
  kTensor,
  kTensorList,
  kInt,
  kIntList,
  kFloat,
  kFloatList,
  kBool,
  kBoolList,
  kScalar,
  kScalarType,
  kDevice,
  kMemoryFormat,
  kLayout,
  kStr,
  kGenerator
};

struct SchemaArg {
  std::string name;
  std::string type_text;  // as written, normalised ("int[1]?", "Tensor(a!)")
  ArgKind kind = ArgKind::kTensor;
  bool optional = false;       // T?
  bool elem_optional = false;  // Tensor?[]: entries may be None
  bool kwarg_only = false;
  int32_t fixed_len = 0;  // N of int[N]; 0 when unsized
  char alias_set = 0;     // 'a' of Tensor(a) / Tensor(a!); 0 if none
  bool is_write = false;  // (a!)
  bool has_default = false;
  std::string default_text;   // as written (a str default keeps its quotes)
  std::string default_str;    // a str default's value, without the quotes
  tsr_value default_value{};  // parsed (lists point into default_ints)
  std::vector<int64_t> default_ints;
  std::vector<double> default_floats;
};

struct SchemaReturn {
  std::string name;
  std::string type_text;
  ArgKind kind = ArgKind::kTensor;
  bool optional = false;
  char alias_set = 0;
  bool is_write = false;
};

struct Schema {
  std::string name;      // "add"
  std::string overload;  // "Tensor" ("" for the default overload)
  std::vector<SchemaArg> args;
  std::vector<SchemaReturn> returns;

  std::string full_name() const { return overload.empty() ? name : name + "." + overload; }
  std::string canonical() const;
  // Index of the first argument that is written to ((a!)), or -1.
  int32_t mutated_arg() const;
  int32_t tensor_arg_count() const;
};

Schema parse_schema(std::string_view text);

}  // namespace tsr
