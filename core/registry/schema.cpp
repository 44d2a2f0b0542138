// A small recursive-descent parser for PyTorch's schema language (see schema.h).
#include "registry/schema.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "util/error.h"

namespace tsr {
namespace {

// The longest fixed-length list type, 'int[N]' (PyTorch's schemas use up to 3).
constexpr int32_t kMaxFixedListLength = 64;

class Parser {
 public:
  explicit Parser(std::string_view text) : s_(text) {}

  Schema parse() {
    Schema schema;
    std::string qualified = identifier("operator name");
    // Accept a namespace prefix "aten::" or "vendor::".
    if (peek_str("::")) {
      pos_ += 2;
      qualified += "::" + identifier("operator name");
    }
    schema.name = qualified;
    if (peek('.')) {
      ++pos_;
      schema.overload = identifier("overload name");
    }
    expect('(');
    bool kwarg_only = false;
    skip_ws();
    if (!peek(')')) {
      for (;;) {
        skip_ws();
        if (peek('*')) {
          ++pos_;
          kwarg_only = true;
        } else {
          SchemaArg arg = argument();
          arg.kwarg_only = kwarg_only;
          schema.args.push_back(std::move(arg));
        }
        skip_ws();
        if (peek(',')) {
          ++pos_;
          continue;
        }
        break;
      }
    }
    expect(')');
    skip_ws();
    expect_str("->");
    skip_ws();
    if (peek('(')) {
      ++pos_;
      skip_ws();
      if (!peek(')')) {
        for (;;) {
          schema.returns.push_back(ret());
          skip_ws();
          if (peek(',')) {
            ++pos_;
            continue;
          }
          break;
        }
      }
      expect(')');
    } else {
      schema.returns.push_back(ret());
    }
    skip_ws();
    if (pos_ != s_.size()) error("unexpected text after the returns");
    return schema;
  }

 private:
  [[noreturn]] void error(const char* what) {
    fail(TSR_INVALID_ARGUMENT,
         "schema '{}': {} at column {}; expected PyTorch's schema syntax "
         "like 'add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor'",
         std::string(s_), what, pos_ + 1);
  }
  void skip_ws() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool peek(char c) { return pos_ < s_.size() && s_[pos_] == c; }
  bool peek_str(std::string_view t) { return s_.substr(pos_, t.size()) == t; }
  void expect(char c) {
    skip_ws();
    if (!peek(c)) {
      char msg[32];
      std::snprintf(msg, sizeof msg, "expected '%c'", c);
      error(msg);
    }
    ++pos_;
  }
  void expect_str(std::string_view t) {
    if (!peek_str(t)) error("expected '->'");
    pos_ += t.size();
  }
  std::string identifier(const char* what) {
    skip_ws();
    size_t start = pos_;
    while (pos_ < s_.size() &&
           (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_'))
      ++pos_;
    if (start == pos_) error(what);
    return std::string(s_.substr(start, pos_ - start));
  }

  // Parses a type with its annotations into the fields shared by args/returns.
  template <typename T>
  void type(T& out) {
    std::string base = identifier("a type");
    std::string text = base;
    if (base == "Tensor")
      out.kind = ArgKind::kTensor;
    else if (base == "int" || base == "SymInt")
      out.kind = ArgKind::kInt;
    else if (base == "float")
      out.kind = ArgKind::kFloat;
    else if (base == "bool")
      out.kind = ArgKind::kBool;
    else if (base == "Scalar")
      out.kind = ArgKind::kScalar;
    else if (base == "ScalarType")
      out.kind = ArgKind::kScalarType;
    else if (base == "Device")
      out.kind = ArgKind::kDevice;
    else if (base == "MemoryFormat")
      out.kind = ArgKind::kMemoryFormat;
    else if (base == "Layout")
      out.kind = ArgKind::kLayout;
    else if (base == "str")
      out.kind = ArgKind::kStr;
    else if (base == "Generator")
      out.kind = ArgKind::kGenerator;
    else
      error("an unknown type");
    if (peek('(')) {  // alias annotation
      ++pos_;
      skip_ws();
      if (pos_ >= s_.size() || !std::isalpha(static_cast<unsigned char>(s_[pos_])))
        error("an alias set letter");
      out.alias_set = s_[pos_++];
      text += "(";
      text += out.alias_set;
      if (peek('!')) {
        ++pos_;
        out.is_write = true;
        text += "!";
      }
      skip_ws();
      if (peek_str("->")) {  // (a -> *)
        pos_ += 2;
        skip_ws();
        if (!peek('*')) error("'*' after '->' in an alias annotation");
        ++pos_;
        text += " -> *";
      }
      expect(')');
      text += ")";
    }
    if (out.kind == ArgKind::kTensor && peek('?') && pos_ + 1 < s_.size() && s_[pos_ + 1] == '[') {
      ++pos_;  // Tensor?[]: a list whose entries may be None
      text += "?";
      if constexpr (requires { out.elem_optional; }) out.elem_optional = true;
    }
    if (peek('[')) {
      ++pos_;
      int32_t n = 0;
      const size_t digits_at = pos_;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
        n = n * 10 + (s_[pos_++] - '0');
        if (n > kMaxFixedListLength) {
          pos_ = digits_at;
          fail(TSR_INVALID_ARGUMENT,
               "schema '{}': the list length at column {} is above {}; a fixed-length list "
               "'int[N]' takes N from 1 to {} (write 'int[]' for any length)",
               std::string(s_), digits_at + 1, kMaxFixedListLength, kMaxFixedListLength);
        }
      }
      expect(']');
      text.push_back('[');
      if (n) text.append(std::to_string(n));
      text.push_back(']');
      if constexpr (requires { out.fixed_len; }) out.fixed_len = n;
      switch (out.kind) {
        case ArgKind::kTensor:
          out.kind = ArgKind::kTensorList;
          break;
        case ArgKind::kInt:
          out.kind = ArgKind::kIntList;
          break;
        case ArgKind::kFloat:
          out.kind = ArgKind::kFloatList;
          break;
        case ArgKind::kBool:
          out.kind = ArgKind::kBoolList;
          break;
        default:
          error("a list of an unsupported element type");
      }
    }
    if (peek('?')) {
      ++pos_;
      out.optional = true;
      text += "?";
    }
    out.type_text = text;
  }

  SchemaArg argument() {
    SchemaArg arg;
    type(arg);
    arg.name = identifier("an argument name");
    skip_ws();
    if (peek('=')) {
      ++pos_;
      skip_ws();
      size_t start = pos_;
      int depth = 0;
      bool in_str = false;
      while (pos_ < s_.size()) {
        char c = s_[pos_];
        if (in_str) {
          if (c == '\'' || c == '"') in_str = false;
        } else if (c == '\'' || c == '"') {
          in_str = true;
        } else if (c == '[') {
          ++depth;
        } else if (c == ']') {
          --depth;
        } else if ((c == ',' || c == ')') && depth == 0) {
          break;
        }
        ++pos_;
      }
      std::string_view d = s_.substr(start, pos_ - start);
      while (!d.empty() && std::isspace(static_cast<unsigned char>(d.back()))) d.remove_suffix(1);
      if (d.empty()) error("a default value");
      arg.has_default = true;
      arg.default_text = std::string(d);
      parse_default(arg);
    }
    return arg;
  }

  void parse_default(SchemaArg& arg) {
    const std::string& d = arg.default_text;
    tsr_value& v = arg.default_value;
    if (d == "None") {
      if (!arg.optional) error("None as the default of a non-optional argument");
      v.tag = TSR_VALUE_NONE;
      return;
    }
    switch (arg.kind) {
      case ArgKind::kInt:
        v.tag = TSR_VALUE_INT;
        v.u.i = parse_int(d);
        return;
      case ArgKind::kFloat:
        v.tag = TSR_VALUE_FLOAT;
        v.u.f = parse_float(d);
        return;
      case ArgKind::kBool:
        if (d != "True" && d != "False") error("True or False");
        v.tag = TSR_VALUE_BOOL;
        v.u.b = d == "True";
        return;
      case ArgKind::kScalar: {
        v.tag = TSR_VALUE_SCALAR;
        if (d.find_first_of(".eE") != std::string::npos && d.find("inf") == std::string::npos) {
          v.u.scalar.kind = TSR_FLOAT64;
          v.u.scalar.v.f = parse_float(d);
        } else if (d == "True" || d == "False") {
          v.u.scalar.kind = TSR_BOOL;
          v.u.scalar.v.i = d == "True";
        } else {
          v.u.scalar.kind = TSR_INT64;
          v.u.scalar.v.i = parse_int(d);
        }
        return;
      }
      case ArgKind::kIntList: {
        v.tag = TSR_VALUE_INT_LIST;
        if (d.front() == '[') {
          std::string inner = d.substr(1, d.size() - 2);
          size_t p = 0;
          while (p < inner.size()) {
            size_t q = inner.find(',', p);
            if (q == std::string::npos) q = inner.size();
            std::string item = inner.substr(p, q - p);
            if (item.find_first_not_of(" ") != std::string::npos)
              arg.default_ints.push_back(parse_int(item));
            p = q + 1;
          }
        } else {  // int[2] stride=1 means [1, 1]
          int64_t x = parse_int(d);
          arg.default_ints.assign(arg.fixed_len ? arg.fixed_len : 1, x);
        }
        v.len = static_cast<int32_t>(arg.default_ints.size());
        v.u.ints = nullptr;  // fixed up by the registry once the vector is final
        return;
      }
      case ArgKind::kStr:
        v.tag = TSR_VALUE_STRING;
        // 'text' or "text": the value is the text between the quotes.
        arg.default_str =
            d.size() >= 2 && (d.front() == '\'' || d.front() == '"') && d.back() == d.front()
                ? d.substr(1, d.size() - 2)
                : d;
        v.u.str = nullptr;  // fixed up by the registry (points into default_str)
        return;
      case ArgKind::kMemoryFormat:
        v.tag = TSR_VALUE_MEMORY_FORMAT;
        if (d == "contiguous_format")
          v.u.i = TSR_CONTIGUOUS_FORMAT;
        else if (d == "channels_last")
          v.u.i = TSR_CHANNELS_LAST;
        else if (d == "preserve_format")
          v.u.i = TSR_PRESERVE_FORMAT;
        else
          error("a memory format");
        return;
      default:
        error("a default for this type");
    }
  }

  int64_t parse_int(const std::string& t) {
    char* end = nullptr;
    errno = 0;
    long long x = std::strtoll(t.c_str(), &end, 10);
    if (end == t.c_str()) error("an integer default");
    if (errno == ERANGE) error("an integer default within int64");
    return x;
  }
  double parse_float(const std::string& t) {
    char* end = nullptr;
    double x = std::strtod(t.c_str(), &end);
    if (end == t.c_str()) error("a float default");
    return x;
  }

  SchemaReturn ret() {
    SchemaReturn r;
    type(r);
    skip_ws();
    if (pos_ < s_.size() && (std::isalpha(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_'))
      r.name = identifier("a return name");
    return r;
  }

  std::string_view s_;
  size_t pos_ = 0;
};

}  // namespace

Schema parse_schema(std::string_view text) { return Parser(text).parse(); }

std::string Schema::canonical() const {
  std::string out = full_name() + "(";
  bool kw = false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (i) out += ", ";
    if (args[i].kwarg_only && !kw) {
      out += "*, ";
      kw = true;
    }
    out += args[i].type_text + " " + args[i].name;
    if (args[i].has_default) out += "=" + args[i].default_text;
  }
  out += ") -> ";
  if (returns.size() == 1 && returns[0].name.empty()) {
    out += returns[0].type_text;
  } else {
    out += "(";
    for (size_t i = 0; i < returns.size(); ++i) {
      if (i) out += ", ";
      out += returns[i].type_text;
      if (!returns[i].name.empty()) out += " " + returns[i].name;
    }
    out += ")";
  }
  return out;
}

int32_t Schema::mutated_arg() const {
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].is_write) return static_cast<int32_t>(i);
  return -1;
}

int32_t Schema::tensor_arg_count() const {
  int32_t n = 0;
  for (const SchemaArg& a : args)
    if (a.kind == ArgKind::kTensor) ++n;
  return n;
}

}  // namespace tsr
