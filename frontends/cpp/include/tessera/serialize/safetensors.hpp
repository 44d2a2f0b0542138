// tessera/serialize/safetensors.hpp - state dicts in the safetensors format.
//
// Saves and loads ordered lists of (name, Tensor) in the format of Python's
// `safetensors` package, so checkpoints move between Tessera, safetensors and
// PyTorch in both directions:
//
//   u64 N (little-endian) | N bytes of UTF-8 JSON | data
//   JSON: {"__metadata__": {str: str},                          (optional)
//          name: {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...}
//
// Offsets count from the first byte after the header; each tensor's bytes are
// its elements row-major, little-endian. The header is padded with spaces so
// the data starts 8-byte aligned, as Python pads it.
//
// Note [safetensors layout written]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Writing: the header lists the tensors in
// the caller's order; the data is laid out by element size, largest first, so
// every tensor starts aligned to its element size (as Python's writer does).
// Non-contiguous tensors are written in logical row-major order; tensors on
// other devices are copied to the host one at a time. save_file() writes
// through AtomicFile: the previous file survives any failure.
//
// Note [safetensors aliases]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~
// Tied weights: when two names hold the same
// tensor (same storage, offset, sizes, strides and dtype) the data is stored
// once, under the first name, and the later name is recorded in
// __metadata__["tessera.aliases"], a JSON object {"alias": "stored name"}.
// Loading returns the alias as the SAME Tensor object as its target (appended
// after the stored tensors), so a module loading it stays tied. Python's
// safetensors refuses shared tensors too; it reads such a file fine and just
// does not see the alias. Partially overlapping views are saved as copies.
//
// Note [safetensors validation]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Reading trusts nothing: every field is
// checked, as Python's safetensors does, before anything is allocated beyond
// the header; malformed input throws tessera::Error with code DATA_LOSS and a
// message naming the file, the field and the value. The checks: file at least
// 8 bytes; header length within the file and at most 100 MB; header a JSON
// object starting with '{', at most 3 levels deep, no duplicate keys; each
// tensor has a known dtype, a shape of non-negative integers (at most
// TSR_MAX_DIMS), and data_offsets [begin, end] with end - begin equal to the
// shape's byte size (computed without overflow); the ranges, sorted, tile the
// data section exactly (no overlap, no hole, nothing past the end, nothing
// left over); metadata values are strings; BOOL bytes are 0 or 1. A tensor's
// buffer is bounded by the file's size, so a hostile file cannot make a load
// allocate more than the file holds.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "tessera/autograd.hpp"
#include "tessera/dtype.hpp"
#include "tessera/error.hpp"
#include "tessera/factories.hpp"
#include "tessera/runtime.hpp"
#include "tessera/serialize/atomic_file.hpp"
#include "tessera/tensor.hpp"

namespace tessera::serialize {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; this host is not, and byte swapping is not "
              "implemented");

// An ordered state dict: names are unique; the same Tensor may appear under
// several names (tied weights).
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;
// __metadata__: string keys to string values.
using Metadata = std::map<std::string, std::string>;

// The __metadata__ key holding the aliases of tied tensors (see the top of this file).
inline constexpr std::string_view kAliasesKey = "tessera.aliases";
// Python's safetensors refuses larger headers; so do we.
inline constexpr uint64_t kMaxHeaderSize = 100'000'000;

// The safetensors code of `dtype` ("F32", ...); nullptr when the format has
// none (complex128).
inline const char* safetensors_dtype(Dtype dtype) noexcept {
  switch (dtype) {
    case kBool:
      return "BOOL";
    case kUInt8:
      return "U8";
    case kInt8:
      return "I8";
    case kInt16:
      return "I16";
    case kInt32:
      return "I32";
    case kInt64:
      return "I64";
    case kFloat16:
      return "F16";
    case kBFloat16:
      return "BF16";
    case kFloat32:
      return "F32";
    case kFloat64:
      return "F64";
    case kComplex64:
      return "C64";
    case kComplex128:
      return nullptr;
  }
  return nullptr;
}

// The Tessera dtype of a safetensors code; nullopt when Tessera has none
// (unsigned 16-64 bit, float8, float4/6) or the code is unknown.
inline std::optional<Dtype> dtype_from_safetensors(std::string_view code) noexcept {
  static constexpr Dtype all[] = {kBool,    kUInt8,    kInt8,    kInt16,   kInt32,    kInt64,
                                  kFloat16, kBFloat16, kFloat32, kFloat64, kComplex64};
  for (Dtype dtype : all) {
    if (code == safetensors_dtype(dtype)) return dtype;
  }
  return std::nullopt;
}

namespace detail {

using Json = nlohmann::ordered_json;
using tessera::detail::throw_error;

// Codes of the safetensors format that Tessera has no dtype for.
inline bool is_foreign_safetensors_dtype(std::string_view code) noexcept {
  static constexpr std::string_view foreign[] = {"U16",         "U32",     "U64",    "F8_E4M3",
                                                 "F8_E5M2",     "F8_E8M0", "F4",     "F8_E4M3FNUZ",
                                                 "F8_E5M2FNUZ", "F6_E2M3", "F6_E3M2"};
  return std::find(std::begin(foreign), std::end(foreign), code) != std::end(foreign);
}

// `s` as a JSON string literal, for messages ("'w'" would hide control bytes).
inline std::string json_quoted(const std::string& s) {
  return Json(s).dump(-1, ' ', false, Json::error_handler_t::replace);
}

inline std::string shape_str(std::span<const int64_t> shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

// ---------------------------------------------------------------------------
// Saving
// ---------------------------------------------------------------------------

// One tensor to write: `tensor` borrowed from the caller's list.
struct StoredTensor {
  const std::string* name;
  Tensor tensor;
  Dtype dtype;
  std::vector<int64_t> shape;
  uint64_t nbytes;
  uint64_t begin = 0;
};

// Everything save() writes, decided before the first byte is written.
struct SavePlan {
  std::string header;                // the JSON, padded; without the 8-byte length
  std::vector<StoredTensor> stored;  // in data order (Note [safetensors layout written])
  uint64_t data_size = 0;
};

inline void require_utf8(const std::string& s, const std::string& what) {
  try {
    (void)Json(s).dump();
  } catch (const nlohmann::json::exception&) {
    throw_error(TSR_INVALID_ARGUMENT, "save: " + what + " " + json_quoted(s) +
                                          " is not valid UTF-8; safetensors headers are UTF-8 "
                                          "JSON, so use UTF-8 names and metadata");
  }
}

inline SavePlan plan_save(const NamedTensors& tensors, const Metadata& metadata) {
  if (metadata.count(std::string(kAliasesKey)) != 0) [[unlikely]] {
    throw_error(TSR_INVALID_ARGUMENT, "save: metadata key '" + std::string(kAliasesKey) +
                                          "' is reserved for Tessera's tied-tensor aliases; "
                                          "rename it");
  }
  for (const auto& [key, value] : metadata) {
    require_utf8(key, "metadata key");
    require_utf8(value, "the value of metadata key " + json_quoted(key));
  }

  SavePlan plan;
  // Identity of a tensor's view (Note [safetensors aliases]) -> index into plan.stored.
  using ViewKey =
      std::tuple<uint64_t, int64_t, int32_t, std::vector<int64_t>, std::vector<int64_t>>;
  std::map<ViewKey, size_t> stored_by_view;
  std::set<std::string> names;
  Json aliases = Json::object();
  for (const auto& [name, tensor] : tensors) {
    if (!names.insert(name).second) [[unlikely]] {
      throw_error(TSR_INVALID_ARGUMENT, "save: the name " + json_quoted(name) +
                                            " appears twice; give every tensor a unique name");
    }
    if (name == "__metadata__") [[unlikely]] {
      throw_error(TSR_INVALID_ARGUMENT,
                  "save: '__metadata__' is reserved by the safetensors format; rename the tensor");
    }
    require_utf8(name, "tensor name");
    if (!tensor.defined()) [[unlikely]] {
      throw_error(TSR_INVALID_ARGUMENT, "save: tensor " + json_quoted(name) +
                                            " is undefined (default-constructed); give it a "
                                            "value or leave it out");
    }
    const tsr_tensor_info info = tensor.info();
    const Dtype dtype = from_c(static_cast<tsr_dtype>(info.dtype));
    if (safetensors_dtype(dtype) == nullptr) [[unlikely]] {
      throw_error(TSR_INVALID_ARGUMENT, "save: tensor " + json_quoted(name) + " has dtype " +
                                            tessera::name(dtype) +
                                            ", which the safetensors format cannot hold; "
                                            "convert it first (e.g. .to(kComplex64))");
    }
    if (Device(info.device).is_meta()) [[unlikely]] {
      throw_error(TSR_INVALID_ARGUMENT, "save: tensor " + json_quoted(name) +
                                            " is on the meta device and has no data; "
                                            "materialize it before saving");
    }
    std::vector<int64_t> shape(info.sizes, info.sizes + info.ndim);
    std::vector<int64_t> strides(info.strides, info.strides + info.ndim);
    ViewKey key{tensor.storage_id(), info.storage_offset, info.dtype, shape, std::move(strides)};
    const auto [it, inserted] = stored_by_view.emplace(std::move(key), plan.stored.size());
    if (!inserted) {
      aliases[name] = *plan.stored[it->second].name;
      continue;
    }
    const uint64_t nbytes = static_cast<uint64_t>(info.numel) * element_size(dtype);
    plan.stored.push_back({&name, tensor, dtype, std::move(shape), nbytes});
  }

  // Data order: largest elements first, so every tensor starts aligned to its
  // element size (the data section itself starts 8-aligned).
  std::vector<size_t> order(plan.stored.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return element_size(plan.stored[a].dtype) > element_size(plan.stored[b].dtype);
  });
  for (size_t i : order) {
    plan.stored[i].begin = plan.data_size;
    plan.data_size += plan.stored[i].nbytes;
  }

  Json header = Json::object();
  if (!metadata.empty() || !aliases.empty()) {
    Json meta = Json::object();
    for (const auto& [key, value] : metadata) meta[key] = value;
    if (!aliases.empty()) meta[std::string(kAliasesKey)] = aliases.dump();
    header["__metadata__"] = std::move(meta);
  }
  for (const StoredTensor& s : plan.stored) {  // the caller's order
    Json entry = Json::object();
    entry["dtype"] = safetensors_dtype(s.dtype);
    entry["shape"] = s.shape;
    entry["data_offsets"] = {s.begin, s.begin + s.nbytes};
    header[*s.name] = std::move(entry);
  }
  plan.header = header.dump();
  plan.header.append((8 - plan.header.size() % 8) % 8, ' ');

  std::vector<StoredTensor> in_data_order;
  in_data_order.reserve(order.size());
  for (size_t i : order) in_data_order.push_back(std::move(plan.stored[i]));
  plan.stored = std::move(in_data_order);
  return plan;
}

// Writes the plan through `sink(const void*, size_t)`, one tensor at a time.
template <class Sink>
void write_plan(const SavePlan& plan, Sink&& sink) {
  unsigned char length[8];
  uint64_t n = plan.header.size();
  for (unsigned char& byte : length) {
    byte = static_cast<unsigned char>(n & 0xff);
    n >>= 8;
  }
  sink(length, sizeof length);
  sink(plan.header.data(), plan.header.size());
  std::vector<unsigned char> buffer;
  for (const StoredTensor& s : plan.stored) {
    if (s.nbytes == 0) continue;
    buffer.resize(s.nbytes);
    s.tensor.copy_to_host(buffer.data(), buffer.size());
    sink(buffer.data(), buffer.size());
  }
}

// ---------------------------------------------------------------------------
// Loading
// ---------------------------------------------------------------------------

// Where the bytes of a safetensors file come from: a file or a buffer.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual uint64_t size() const = 0;
  // Reads exactly `n` bytes at `offset` (offset + n <= size()); throws
  // tessera::Error when that fails.
  virtual void read(uint64_t offset, void* dst, size_t n) const = 0;
  // "safetensors file 'x.safetensors'", for messages.
  virtual const std::string& description() const = 0;
};

class SpanSource final : public ByteSource {
 public:
  explicit SpanSource(std::span<const uint8_t> bytes) : bytes_(bytes) {}
  uint64_t size() const override { return bytes_.size(); }
  void read(uint64_t offset, void* dst, size_t n) const override {
    if (n > 0) std::memcpy(dst, bytes_.data() + offset, n);
  }
  const std::string& description() const override { return description_; }

 private:
  std::span<const uint8_t> bytes_;  // borrowed
  std::string description_ = "safetensors buffer";
};

class FileSource final : public ByteSource {
 public:
  explicit FileSource(const std::string& path) : description_("safetensors file '" + path + "'") {
    // O_NONBLOCK: opening a FIFO must not hang; it is refused below.
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd_ < 0) {
      const int error = errno;
      throw_error(error == ENOENT   ? TSR_NOT_FOUND
                  : error == EACCES ? TSR_PERMISSION_DENIED
                                    : TSR_INVALID_ARGUMENT,
                  "load " + description_ + ": cannot open it: " + std::strerror(error));
    }
    struct stat st {};
    if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd_);
      throw_error(TSR_INVALID_ARGUMENT,
                  "load " + description_ + ": not a regular file; name a .safetensors file");
    }
    size_ = static_cast<uint64_t>(st.st_size);
  }
  ~FileSource() override { ::close(fd_); }
  FileSource(const FileSource&) = delete;
  FileSource& operator=(const FileSource&) = delete;

  uint64_t size() const override { return size_; }
  void read(uint64_t offset, void* dst, size_t n) const override {
    auto* out = static_cast<unsigned char*>(dst);
    while (n > 0) {
      const ssize_t got = ::pread(fd_, out, n, static_cast<off_t>(offset));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        throw_error(TSR_DATA_LOSS, "load " + description_ + ": reading " + std::to_string(n) +
                                       " bytes at " + std::to_string(offset) + " failed (" +
                                       (got == 0 ? std::string("the file shrank while being read")
                                                 : std::string(std::strerror(errno))) +
                                       ")");
      }
      out += got;
      offset += static_cast<uint64_t>(got);
      n -= static_cast<size_t>(got);
    }
  }
  const std::string& description() const override { return description_; }

 private:
  std::string description_;
  int fd_ = -1;  // owned
  uint64_t size_ = 0;
};

[[noreturn]] inline void corrupt(const ByteSource& source, const std::string& what) {
  throw_error(TSR_DATA_LOSS, "load " + source.description() + ": " + what +
                                 "; the file is corrupt or not a safetensors file");
}

// First pass over the header (Note [safetensors validation]): JSON syntax,
// nesting depth and duplicate keys, stopping at the first problem so a
// hostile header never builds a deep or large document.
class HeaderStructureCheck final : public nlohmann::json_sax<Json> {
 public:
  explicit HeaderStructureCheck(size_t max_depth) : max_depth_(max_depth) {}

  const std::string& problem() const noexcept { return problem_; }

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(size_t) override { return enter(true); }
  bool end_object() override { return leave(); }
  bool start_array(size_t) override { return enter(false); }
  bool end_array() override { return leave(); }
  bool key(string_t& key) override {
    if (!containers_.back()->insert(key).second) {
      problem_ = "the key " + json_quoted(key) + " appears twice in one object";
      return false;
    }
    return true;
  }
  bool parse_error(size_t, const std::string&, const nlohmann::json::exception& e) override {
    problem_ = std::string("invalid JSON: ") + e.what();
    return false;
  }

 private:
  bool enter(bool object) {
    if (containers_.size() == max_depth_) {
      problem_ = "JSON nested deeper than the format's " + std::to_string(max_depth_) + " levels";
      return false;
    }
    containers_.push_back(object ? std::make_unique<std::set<std::string>>() : nullptr);
    return true;
  }
  bool leave() {
    containers_.pop_back();
    return true;
  }

  size_t max_depth_;
  // One entry per open container: the keys seen so far (objects), or null (arrays).
  std::vector<std::unique_ptr<std::set<std::string>>> containers_;
  std::string problem_;
};

// Parses `text` into a document after the structure check; throws DATA_LOSS.
inline Json parse_checked(const ByteSource& source, const std::string& text, size_t max_depth,
                          const std::string& what) {
  // nlohmann's lexer takes a NUL byte for the end of input; JSON has none.
  if (text.find('\0') != std::string::npos) corrupt(source, what + ": invalid JSON: a NUL byte");
  HeaderStructureCheck check(max_depth);
  if (!Json::sax_parse(text, &check)) corrupt(source, what + ": " + check.problem());
  try {
    return Json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    corrupt(source, what + ": invalid JSON: " + e.what());
  }
}

// One tensor entry of a validated header.
struct TensorRecord {
  std::string name;
  Dtype dtype;
  std::vector<int64_t> shape;
  uint64_t begin;  // relative to the data section
  uint64_t end;
};

// A validated header: every record's range lies inside the data section.
struct Header {
  std::vector<TensorRecord> tensors;                         // header order
  Metadata metadata;                                         // all of __metadata__
  std::vector<std::pair<std::string, std::string>> aliases;  // alias -> stored name
  uint64_t data_start = 0;                                   // 8 + header length
};

inline uint64_t read_unsigned(const ByteSource& source, const Json& value, const std::string& what,
                              uint64_t max) {
  if (!value.is_number_unsigned() || value.get<uint64_t>() > max) {
    corrupt(source,
            what + " is " + value.dump() + ", not an integer in [0, " + std::to_string(max) + "]");
  }
  return value.get<uint64_t>();
}

inline TensorRecord parse_tensor_entry(const ByteSource& source, const std::string& name,
                                       const Json& entry, uint64_t data_size) {
  const std::string where = "tensor " + json_quoted(name);
  if (!entry.is_object()) corrupt(source, where + " is " + entry.dump() + ", not an object");
  for (const char* field : {"dtype", "shape", "data_offsets"}) {
    if (!entry.contains(field)) corrupt(source, where + " has no \"" + field + "\" field");
  }
  const Json& code = entry["dtype"];
  if (!code.is_string()) corrupt(source, where + ": dtype " + code.dump() + " is not a string");
  const std::string code_text = code.get<std::string>();
  const std::optional<Dtype> dtype = dtype_from_safetensors(code_text);
  if (!dtype) {
    if (is_foreign_safetensors_dtype(code_text)) {
      throw_error(TSR_UNIMPLEMENTED, "load " + source.description() + ": " + where +
                                         " has safetensors dtype " + code_text +
                                         ", which Tessera has no dtype for; convert it in "
                                         "Python before saving");
    }
    corrupt(source, where + " has unknown dtype " + json_quoted(code_text));
  }

  const Json& shape_json = entry["shape"];
  if (!shape_json.is_array())
    corrupt(source, where + ": shape " + shape_json.dump() + " is not a list");
  if (shape_json.size() > TSR_MAX_DIMS) {
    throw_error(TSR_UNIMPLEMENTED, "load " + source.description() + ": " + where + " has " +
                                       std::to_string(shape_json.size()) +
                                       " dims; Tessera tensors have at most " +
                                       std::to_string(TSR_MAX_DIMS));
  }
  std::vector<int64_t> shape;
  uint64_t nbytes = element_size(*dtype);
  bool overflow = false;
  for (const Json& size : shape_json) {
    const uint64_t value =
        read_unsigned(source, size, where + ": a shape entry",
                      static_cast<uint64_t>(std::numeric_limits<int64_t>::max()));
    shape.push_back(static_cast<int64_t>(value));
    overflow = overflow || __builtin_mul_overflow(nbytes, value, &nbytes);
  }
  // Zero elements is zero bytes, whatever the other sizes are.
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) {
    overflow = false;
    nbytes = 0;
  }
  if (overflow)
    corrupt(source, where + ": the byte size of shape " + shape_str(shape) + " overflows");

  const Json& offsets = entry["data_offsets"];
  if (!offsets.is_array() || offsets.size() != 2) {
    corrupt(source, where + ": data_offsets " + offsets.dump() + " is not a [begin, end] pair");
  }
  const uint64_t max = std::numeric_limits<uint64_t>::max();
  const uint64_t begin = read_unsigned(source, offsets[0], where + ": data_offsets begin", max);
  const uint64_t end = read_unsigned(source, offsets[1], where + ": data_offsets end", max);
  const std::string range = "[" + std::to_string(begin) + ", " + std::to_string(end) + "]";
  if (begin > end) corrupt(source, where + ": data_offsets " + range + " end before they begin");
  if (end > data_size) {
    corrupt(source, where + ": data_offsets " + range + " run past the data section of " +
                        std::to_string(data_size) + " bytes");
  }
  if (end - begin != nbytes) {
    corrupt(source, where + ": data_offsets " + range + " hold " + std::to_string(end - begin) +
                        " bytes but dtype " + code_text + " and shape " + shape_str(shape) +
                        " need " + std::to_string(nbytes));
  }
  return {name, *dtype, std::move(shape), begin, end};
}

inline Header parse_header(const ByteSource& source) {
  const uint64_t file_size = source.size();
  if (file_size < 8) {
    corrupt(source, "it is " + std::to_string(file_size) +
                        " bytes long, shorter than the 8-byte header length");
  }
  unsigned char length_bytes[8];
  source.read(0, length_bytes, sizeof length_bytes);
  uint64_t header_size = 0;
  for (int i = 7; i >= 0; --i) header_size = (header_size << 8) | length_bytes[i];
  if (header_size > kMaxHeaderSize) {
    corrupt(source, "header length " + std::to_string(header_size) + " exceeds the limit of " +
                        std::to_string(kMaxHeaderSize) + " bytes");
  }
  if (header_size > file_size - 8) {
    corrupt(source, "header length " + std::to_string(header_size) +
                        " runs past the end of the file (" + std::to_string(file_size) +
                        " bytes); it may be truncated");
  }
  std::string text(header_size, '\0');
  source.read(8, text.data(), text.size());
  if (text.empty() || text.front() != '{') {
    corrupt(source, "the header does not start with '{'");
  }
  // Top-level object > tensor entry > shape list.
  const Json header = parse_checked(source, text, 3, "header");
  if (!header.is_object()) corrupt(source, "the header is not a JSON object");

  Header result;
  result.data_start = 8 + header_size;
  const uint64_t data_size = file_size - result.data_start;
  std::set<std::string> tensor_names;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object())
        corrupt(source, "__metadata__ is " + entry.dump() + ", not an object");
      for (const auto& [key, value] : entry.items()) {
        if (!value.is_string()) {
          corrupt(source, "__metadata__ value of " + json_quoted(key) + " is " + value.dump() +
                              ", not a string");
        }
        result.metadata.emplace(key, value.get<std::string>());
      }
      continue;
    }
    result.tensors.push_back(parse_tensor_entry(source, name, entry, data_size));
    tensor_names.insert(name);
  }

  // The ranges, in order, must tile [0, data_size) exactly.
  std::vector<const TensorRecord*> by_offset;
  for (const TensorRecord& record : result.tensors) by_offset.push_back(&record);
  std::sort(by_offset.begin(), by_offset.end(), [](const TensorRecord* a, const TensorRecord* b) {
    return std::tie(a->begin, a->end) < std::tie(b->begin, b->end);
  });
  uint64_t covered = 0;
  for (const TensorRecord* record : by_offset) {
    if (record->begin != covered) {
      corrupt(source, "tensor " + json_quoted(record->name) + " starts at data offset " +
                          std::to_string(record->begin) + " but the previous tensor ends at " +
                          std::to_string(covered) +
                          (record->begin < covered ? " (overlapping data)" : " (a hole)"));
    }
    covered = record->end;
  }
  if (covered != data_size) {
    corrupt(source, "the tensors cover " + std::to_string(covered) + " bytes of data but " +
                        std::to_string(data_size) + " follow the header (trailing bytes)");
  }

  const auto aliases = result.metadata.find(std::string(kAliasesKey));
  if (aliases != result.metadata.end()) {
    const std::string what = "__metadata__[\"" + std::string(kAliasesKey) + "\"]";
    const Json map = parse_checked(source, aliases->second, 1, what);
    if (!map.is_object()) corrupt(source, what + " is not a JSON object");
    for (const auto& [alias, target] : map.items()) {
      if (!target.is_string() || tensor_names.count(target.get<std::string>()) == 0) {
        corrupt(source, what + ": alias " + json_quoted(alias) + " refers to " + target.dump() +
                            ", which is not a tensor of the file");
      }
      if (tensor_names.count(alias) != 0 || alias == "__metadata__") {
        corrupt(source, what + ": alias " + json_quoted(alias) + " is also the name of a tensor");
      }
      result.aliases.emplace_back(alias, target.get<std::string>());
    }
  }
  return result;
}

inline Tensor load_tensor(const ByteSource& source, const Header& header,
                          const TensorRecord& record, const Device& device) {
  const size_t nbytes = static_cast<size_t>(record.end - record.begin);
  const uint64_t offset = header.data_start + record.begin;
  auto check_bools = [&](const unsigned char* bytes) {
    if (record.dtype != kBool) return;
    for (size_t i = 0; i < nbytes; ++i) {
      if (bytes[i] > 1) {
        corrupt(source, "tensor " + json_quoted(record.name) + " (BOOL) holds byte " +
                            std::to_string(bytes[i]) + " at element " + std::to_string(i) +
                            "; BOOL elements are 0 or 1");
      }
    }
  };
  if (device.is_cpu()) {
    Tensor tensor = empty(IntList(record.shape), TensorOptions(record.dtype).device(device));
    if (nbytes > 0) {
      auto* data = static_cast<unsigned char*>(tensor.data_ptr());
      source.read(offset, data, nbytes);
      check_bools(data);
    }
    return tensor;
  }
  std::vector<unsigned char> staging(nbytes);
  if (nbytes > 0) source.read(offset, staging.data(), nbytes);
  check_bools(staging.data());
  tsr_tensor* out = nullptr;
  check(tsr_tensor_from_host(default_runtime(), staging.data(), staging.size(),
                             static_cast<int32_t>(record.shape.size()), record.shape.data(),
                             to_c(record.dtype), device.raw(), &out));
  return Tensor::adopt(out);
}

inline NamedTensors load_all(const ByteSource& source, const Device& device) {
  const Header header = parse_header(source);
  NamedTensors result;
  result.reserve(header.tensors.size() + header.aliases.size());
  std::map<std::string, size_t> index;
  for (const TensorRecord& record : header.tensors) {
    index.emplace(record.name, result.size());
    result.emplace_back(record.name, load_tensor(source, header, record, device));
  }
  for (const auto& [alias, target] : header.aliases) {
    Tensor same = result[index.at(target)].second;  // the same object, not a copy
    result.emplace_back(alias, std::move(same));
  }
  return result;
}

}  // namespace detail

// ---------------------------------------------------------------------------
// Saving. Each throws tessera::Error (INVALID_ARGUMENT) before writing
// anything when a name repeats or is "__metadata__", a tensor is undefined,
// on the meta device or of a dtype without a safetensors code (complex128),
// a string is not UTF-8, or metadata uses the key "tessera.aliases".
// ---------------------------------------------------------------------------

// The file's bytes.
inline std::vector<uint8_t> save(const NamedTensors& tensors, const Metadata& metadata = {}) {
  const detail::SavePlan plan = detail::plan_save(tensors, metadata);
  std::vector<uint8_t> bytes;
  bytes.reserve(8 + plan.header.size() + plan.data_size);
  detail::write_plan(plan, [&](const void* data, size_t size) {
    const auto* begin = static_cast<const uint8_t*>(data);
    bytes.insert(bytes.end(), begin, begin + size);
  });
  return bytes;
}

// Writes `path` atomically (AtomicFile): on any failure it throws and the
// previous file at `path`, if any, is unchanged.
inline void save_file(const NamedTensors& tensors, const std::string& path,
                      const Metadata& metadata = {}) {
  const detail::SavePlan plan = detail::plan_save(tensors, metadata);
  AtomicFile file(path);
  detail::write_plan(plan, [&](const void* data, size_t size) { file.write(data, size); });
  file.commit();
}

// ---------------------------------------------------------------------------
// Loading. Each throws tessera::Error: DATA_LOSS for malformed input (see the
// top of this file), UNIMPLEMENTED for a valid dtype Tessera lacks (U16,
// F8_E4M3, ...) or more than TSR_MAX_DIMS dims, NOT_FOUND for a missing file.
// ---------------------------------------------------------------------------

// The tensors, new and contiguous on `device`, in header order, followed by
// the aliases (each the same Tensor object as the tensor it names).
inline NamedTensors load(std::span<const uint8_t> bytes, const Device& device = kCPU) {
  return detail::load_all(detail::SpanSource(bytes), device);
}
inline NamedTensors load_file(const std::string& path, const Device& device = kCPU) {
  return detail::load_all(detail::FileSource(path), device);
}

// The whole __metadata__ (including "tessera.aliases" when present), after
// validating the header as load() does; reads no tensor data.
inline Metadata load_metadata(std::span<const uint8_t> bytes) {
  return detail::parse_header(detail::SpanSource(bytes)).metadata;
}
inline Metadata load_metadata(const std::string& path) {
  return detail::parse_header(detail::FileSource(path)).metadata;
}

// ---------------------------------------------------------------------------
// Loading into existing tensors (what Module::load_state_dict builds on)
// ---------------------------------------------------------------------------

struct LoadResult {
  std::vector<std::string> missing_keys;     // in `dest`, absent from the source (dest order)
  std::vector<std::string> unexpected_keys;  // in the source, absent from `dest` (source order)
};

// Copies each source tensor into the `dest` tensor of the same name (in
// place, without recording autograd history, across devices). All checks run
// before the first copy, so on a throw no tensor has changed:
// - a name whose dtype or shape differ throws INVALID_ARGUMENT naming every
//   such key with the expected (dest) and the found (source) dtype and shape;
// - strict: any missing or unexpected key throws INVALID_ARGUMENT listing them;
//   otherwise they are returned and the matching names are loaded.
// `dest` lists the tensors to write: Tensor copies share the object, so the
// writes reach every holder. A name repeated in `source` throws.
inline LoadResult load_into(const NamedTensors& dest, const NamedTensors& source,
                            bool strict = true) {
  std::map<std::string, const Tensor*> by_name;
  for (const auto& [name, tensor] : source) {
    if (!by_name.emplace(name, &tensor).second) {
      tessera::detail::throw_error(TSR_INVALID_ARGUMENT,
                                   "load_into: the source has two tensors named " +
                                       detail::json_quoted(name) + "; names must be unique");
    }
  }
  LoadResult result;
  std::set<std::string> dest_names;
  std::vector<std::pair<Tensor, const Tensor*>> copies;
  std::string mismatches;
  for (const auto& [name, tensor] : dest) {
    dest_names.insert(name);
    const auto found = by_name.find(name);
    if (found == by_name.end()) {
      result.missing_keys.push_back(name);
      continue;
    }
    const Tensor& value = *found->second;
    if (!tensor.defined() || !value.defined()) {
      tessera::detail::throw_error(TSR_INVALID_ARGUMENT,
                                   "load_into: the tensor " + detail::json_quoted(name) +
                                       " is undefined in " +
                                       (tensor.defined() ? "the source" : "dest"));
    }
    const Dims want = tensor.sizes();
    const Dims got = value.sizes();
    const Dtype want_dtype = tensor.dtype();
    const Dtype got_dtype = value.dtype();
    if (want != got || want_dtype != got_dtype) {
      mismatches += "\n  " + detail::json_quoted(name) + ": expected " + tessera::name(want_dtype) +
                    " " + want.str() + ", got " + tessera::name(got_dtype) + " " + got.str();
      continue;
    }
    copies.emplace_back(tensor, &value);
  }
  for (const auto& [name, tensor] : source) {
    if (dest_names.count(name) == 0) result.unexpected_keys.push_back(name);
  }
  if (!mismatches.empty()) {
    tessera::detail::throw_error(TSR_INVALID_ARGUMENT,
                                 "load_into: dtype or shape differ for" + mismatches +
                                     "\nconvert the checkpoint or the model so they match; nothing "
                                     "was loaded");
  }
  if (strict && (!result.missing_keys.empty() || !result.unexpected_keys.empty())) {
    auto list = [](const std::vector<std::string>& keys) {
      std::string out;
      for (const std::string& key : keys)
        out += (out.empty() ? "" : ", ") + detail::json_quoted(key);
      return out.empty() ? std::string("none") : out;
    };
    tessera::detail::throw_error(
        TSR_INVALID_ARGUMENT, "load_into: missing keys: " + list(result.missing_keys) +
                                  "; unexpected keys: " + list(result.unexpected_keys) +
                                  "; pass strict = false to load the keys that match; nothing was "
                                  "loaded");
  }
  autograd::NoGradGuard no_grad;
  for (auto& [tensor, value] : copies) {
    if (!tensor.is_same(*value)) tensor.copy_(*value);
  }
  return result;
}

// load_into from a file (loaded on the CPU, then copied to each tensor's device).
inline LoadResult load_into(const NamedTensors& dest, const std::string& path, bool strict = true) {
  return load_into(dest, load_file(path), strict);
}

}  // namespace tessera::serialize

namespace tessera {
using serialize::load_file;
using serialize::save_file;
}  // namespace tessera
