// Tests of tessera/serialize/safetensors.hpp: state dicts in the safetensors
// format. Expected bytes and values are written out by hand here (the byte-exact
// file, the bit patterns of every dtype), never produced by the code under test.
//
// The two SafetensorsInterop tests are one half of frontend_safetensors_interop
// (safetensors_interop.py is the other): they run only when the environment
// names a directory in TESSERA_SAFETENSORS_INTEROP_DIR and skip otherwise.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <string>
#include <tessera/serialize/safetensors.hpp>
#include <tessera/tessera.hpp>
#include <vector>

namespace {

namespace fs = std::filesystem;
namespace st = tessera::serialize;
using tessera::Tensor;

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

// A safetensors buffer: the 8-byte little-endian length of `header`, the
// header, then `data`.
std::vector<uint8_t> make_file(const std::string& header, const std::string& data = "") {
  std::vector<uint8_t> out;
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i, n >>= 8) out.push_back(static_cast<uint8_t>(n & 0xff));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

// Only the 8-byte length field, claiming `n`, plus `rest`.
std::vector<uint8_t> length_then(uint64_t n, const std::string& rest) {
  std::vector<uint8_t> out;
  for (int i = 0; i < 8; ++i, n >>= 8) out.push_back(static_cast<uint8_t>(n & 0xff));
  out.insert(out.end(), rest.begin(), rest.end());
  return out;
}

// A tensor holding exactly these bytes (row-major) of `dtype`.
Tensor from_bytes(const std::vector<uint8_t>& bytes, std::vector<int64_t> shape,
                  tessera::Dtype dtype) {
  tsr_tensor* out = nullptr;
  tessera::check(tsr_tensor_from_host(tessera::default_runtime(), bytes.data(), bytes.size(),
                                      static_cast<int32_t>(shape.size()), shape.data(),
                                      tessera::to_c(dtype), tessera::kCPU.raw(), &out));
  return Tensor::adopt(out);
}

std::vector<uint8_t> bytes_of(const Tensor& t) {
  std::vector<uint8_t> out(t.nbytes());
  if (!out.empty()) t.copy_to_host(out.data(), out.size());
  return out;
}

// Little-endian bytes of each value.
template <class T>
std::vector<uint8_t> le(std::initializer_list<T> values) {
  std::vector<uint8_t> out;
  for (T v : values) {
    unsigned char raw[sizeof(T)];
    std::memcpy(raw, &v, sizeof(T));
    out.insert(out.end(), raw, raw + sizeof(T));
  }
  return out;
}

std::vector<uint8_t> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const fs::path& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

const Tensor& find(const st::NamedTensors& tensors, const std::string& name) {
  for (const auto& [n, t] : tensors) {
    if (n == name) return t;
  }
  throw std::runtime_error("no tensor named " + name);
}

std::vector<std::string> names_of(const st::NamedTensors& tensors) {
  std::vector<std::string> out;
  for (const auto& entry : tensors) out.push_back(entry.first);
  return out;
}

// Runs `fn`, expecting a tessera::Error with `code` whose message contains `part`.
void expect_error(const std::function<void()>& fn, tsr_status_code code, const std::string& part) {
  try {
    fn();
    ADD_FAILURE() << "no error; expected " << tsr_status_code_name(code) << " containing \"" << part
                  << "\"";
  } catch (const tessera::Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
        << "message \"" << e.what() << "\" lacks \"" << part << "\"";
  }
}

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "tessera-safetensors-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const fs::path& path() const { return path_; }
  std::vector<std::string> entries() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(path_)) out.push_back(e.path().filename());
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  fs::path path_;
};

// ---------------------------------------------------------------------------
// The format, byte for byte
// ---------------------------------------------------------------------------

TEST(SafetensorsFormat, SmallFileMatchesHandWrittenBytes) {
  const Tensor b = tessera::tensor({true, false, true});
  const Tensor w = tessera::tensor({1.0f, -2.0f, 0.5f, 3.0f}, {2, 2});
  const std::vector<uint8_t> bytes =
      st::save({{"b", b}, {"w", w}}, {{"format", "pt"}, {"x", "yz"}});

  // The header lists tensors in the caller's order; the data puts the 4-byte
  // elements first. 153 bytes of JSON, padded with 7 spaces to 160 (0xa0).
  const std::string json = R"({"__metadata__":{"format":"pt","x":"yz"},)"
                           R"("b":{"dtype":"BOOL","shape":[3],"data_offsets":[16,19]},)"
                           R"("w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}})"
                           "       ";
  std::vector<uint8_t> expected = {0xa0, 0, 0, 0, 0, 0, 0, 0};
  expected.insert(expected.end(), json.begin(), json.end());
  const std::vector<uint8_t> data = {
      0x00, 0x00, 0x80, 0x3f,  // 1.0f
      0x00, 0x00, 0x00, 0xc0,  // -2.0f
      0x00, 0x00, 0x00, 0x3f,  // 0.5f
      0x00, 0x00, 0x40, 0x40,  // 3.0f
      0x01, 0x00, 0x01,        // true, false, true
  };
  expected.insert(expected.end(), data.begin(), data.end());
  EXPECT_EQ(bytes, expected);
}

TEST(SafetensorsFormat, ReadsHandWrittenFileWithPaddingAndEmptyTensors) {
  // As Python writes: alphabetical header, padded with spaces; a 0-d and an
  // empty tensor (zero bytes, sharing an offset with its neighbour).
  const std::string header = R"({"a":{"dtype":"I16","shape":[2],"data_offsets":[8,12]},)"
                             R"("e":{"dtype":"F64","shape":[0,3],"data_offsets":[8,8]},)"
                             R"("s":{"dtype":"F64","shape":[],"data_offsets":[0,8]}}   )";
  std::string data;
  for (uint8_t byte : le<double>({-0.25})) data.push_back(static_cast<char>(byte));
  for (uint8_t byte : le<int16_t>({-3, 300})) data.push_back(static_cast<char>(byte));
  const st::NamedTensors loaded = st::load(make_file(header, data));
  EXPECT_EQ(names_of(loaded), (std::vector<std::string>{"a", "e", "s"}));
  EXPECT_EQ(find(loaded, "a").to_vector<int16_t>(), (std::vector<int16_t>{-3, 300}));
  EXPECT_EQ(find(loaded, "e").sizes(), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(find(loaded, "s").dim(), 0);
  EXPECT_EQ(find(loaded, "s").item<double>(), -0.25);
  EXPECT_TRUE(st::load_metadata(make_file(header, data)).empty());
}

// ---------------------------------------------------------------------------
// Round trips
// ---------------------------------------------------------------------------

struct DtypeCase {
  tessera::Dtype dtype;
  const char* code;
  std::vector<uint8_t> bytes;  // the elements, little-endian
};

// Every dtype with a safetensors code, with special values as raw bits: NaN
// payloads, signed zero, infinities, subnormals, integer extremes.
std::vector<DtypeCase> every_dtype() {
  using tessera::Dtype;
  return {
      {Dtype::Bool, "BOOL", {1, 0, 0, 1}},
      {Dtype::UInt8, "U8", {0, 1, 128, 255}},
      {Dtype::Int8, "I8", le<int8_t>({-128, -1, 0, 127})},
      {Dtype::Int16, "I16", le<int16_t>({-32768, -1, 0, 32767})},
      {Dtype::Int32, "I32", le<int32_t>({std::numeric_limits<int32_t>::min(), -1, 0, 2147483647})},
      {Dtype::Int64, "I64",
       le<int64_t>(
           {std::numeric_limits<int64_t>::min(), -1, 0, std::numeric_limits<int64_t>::max()})},
      // NaN with payload, -0, -inf, smallest subnormal.
      {Dtype::Float16, "F16", le<uint16_t>({0x7e01, 0x8000, 0xfc00, 0x0001})},
      {Dtype::BFloat16, "BF16", le<uint16_t>({0x7fc1, 0x8000, 0xff80, 0x0001})},
      {Dtype::Float32, "F32", le<uint32_t>({0x7fc00001, 0x80000000, 0xff800000, 0x00000001})},
      {Dtype::Float64, "F64",
       le<uint64_t>({0x7ff8000000000001, 0x8000000000000000, 0xfff0000000000000, 1})},
      // (NaN payload, -0), (1, -inf) as (real, imag) float pairs.
      {Dtype::Complex64, "C64",
       le<uint32_t>(
           {0x7fc00002, 0x80000000, 0x3f800000, 0xff800000, 0, 0, 0x00000001, 0x3f800000})},
  };
}

TEST(SafetensorsRoundTrip, EveryDtypeKeepsItsBitsInBufferAndFile) {
  TempDir dir;
  st::NamedTensors tensors;
  for (const DtypeCase& c : every_dtype()) {
    const int64_t count = static_cast<int64_t>(c.bytes.size() / tessera::element_size(c.dtype));
    tensors.emplace_back(c.code, from_bytes(c.bytes, {2, count / 2}, c.dtype));
  }
  const fs::path path = dir.path() / "all.safetensors";
  st::save_file(tensors, path);
  for (const st::NamedTensors& loaded : {st::load(st::save(tensors)), st::load_file(path)}) {
    ASSERT_EQ(loaded.size(), every_dtype().size());
    for (const DtypeCase& c : every_dtype()) {
      const Tensor& t = find(loaded, c.code);
      EXPECT_EQ(t.dtype(), c.dtype) << c.code;
      EXPECT_EQ(t.dim(), 2) << c.code;
      EXPECT_EQ(bytes_of(t), c.bytes) << c.code;
      EXPECT_TRUE(t.is_contiguous()) << c.code;
    }
  }
  // The header names each dtype by its code.
  const std::vector<uint8_t> raw = read_file(path);
  const std::string text(raw.begin(), raw.end());
  for (const DtypeCase& c : every_dtype()) {
    EXPECT_NE(text.find(std::string("\"dtype\":\"") + c.code + "\""), std::string::npos) << c.code;
  }
}

TEST(SafetensorsRoundTrip, ZeroDimAndEmptyTensors) {
  const Tensor scalar = tessera::scalar_tensor(7.5, tessera::kFloat64);
  const Tensor empty = tessera::empty({0, 4}, tessera::kInt32);
  const st::NamedTensors loaded = st::load(st::save({{"scalar", scalar}, {"empty", empty}}));
  EXPECT_EQ(names_of(loaded), (std::vector<std::string>{"scalar", "empty"}));
  EXPECT_EQ(find(loaded, "scalar").dim(), 0);
  EXPECT_EQ(find(loaded, "scalar").item<double>(), 7.5);
  EXPECT_EQ(find(loaded, "empty").sizes(), (std::vector<int64_t>{0, 4}));
  EXPECT_EQ(find(loaded, "empty").dtype(), tessera::kInt32);
}

TEST(SafetensorsRoundTrip, NonContiguousInputIsSavedInRowMajorOrder) {
  const Tensor base = tessera::arange(12, tessera::kFloat32).reshape({3, 4});
  const Tensor transposed = base.t();             // 4 x 3, strides (1, 4)
  const Tensor strided = base.slice(1, 0, 4, 2);  // 3 x 2, columns 0 and 2
  ASSERT_FALSE(transposed.is_contiguous());
  ASSERT_FALSE(strided.is_contiguous());
  const std::vector<uint8_t> bytes = st::save({{"t", transposed}, {"s", strided}});
  const st::NamedTensors loaded = st::load(bytes);
  EXPECT_EQ(find(loaded, "t").sizes(), (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(find(loaded, "t").to_vector<float>(),
            (std::vector<float>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
  EXPECT_EQ(find(loaded, "s").to_vector<float>(), (std::vector<float>{0, 2, 4, 6, 8, 10}));
  // And in the file itself: "t" is stored first, as row-major floats.
  const std::vector<uint8_t> t_bytes = le<float>({0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});
  const uint64_t header = bytes[0] | (uint64_t{bytes[1]} << 8);
  ASSERT_GE(bytes.size(), 8 + header + t_bytes.size());
  EXPECT_TRUE(std::equal(t_bytes.begin(), t_bytes.end(), bytes.begin() + 8 + header));
}

TEST(SafetensorsRoundTrip, MetadataRoundTripsExactly) {
  const st::Metadata metadata = {
      {"format", "pt"}, {"note", "h\xc3\xa9llo \xe2\x9c\x93 \"quoted\"\n"}, {"empty", ""}};
  const std::vector<uint8_t> bytes = st::save({{"x", tessera::zeros({2})}}, metadata);
  EXPECT_EQ(st::load_metadata(bytes), metadata);
  TempDir dir;
  st::save_file({{"x", tessera::zeros({2})}}, dir.path() / "m.safetensors", metadata);
  EXPECT_EQ(st::load_metadata((dir.path() / "m.safetensors").string()), metadata);
}

TEST(SafetensorsRoundTrip, LoadsOntoTheRequestedDevice) {
  const st::NamedTensors loaded =
      st::load(st::save({{"x", tessera::tensor({1, 2, 3})}}), tessera::Device("cpu:0"));
  EXPECT_EQ(find(loaded, "x").device(), tessera::kCPU);
  EXPECT_EQ(find(loaded, "x").to_vector<int64_t>(), (std::vector<int64_t>{1, 2, 3}));
}

// ---------------------------------------------------------------------------
// Tied weights (Note [safetensors aliases])
// ---------------------------------------------------------------------------

TEST(SafetensorsAliases, TiedTensorsAreStoredOnceAndLoadAsOneObject) {
  const Tensor w = tessera::arange(6, tessera::kFloat32).reshape({2, 3});
  const Tensor detached = w.detach();  // another object, the same storage and view
  const Tensor row = w[0];             // overlapping but a different view: a copy
  const Tensor clone = w.clone();      // other storage
  const std::vector<uint8_t> bytes = st::save(
      {{"enc.weight", w}, {"dec.weight", w}, {"det", detached}, {"row", row}, {"clone", clone}});

  // enc.weight (24 bytes), row (12), clone (24): dec.weight and det share data.
  const st::Metadata metadata = st::load_metadata(bytes);
  EXPECT_EQ(metadata.at("tessera.aliases"), R"({"dec.weight":"enc.weight","det":"enc.weight"})");
  const uint64_t header = bytes[0] | (uint64_t{bytes[1]} << 8);
  EXPECT_EQ(bytes.size(), 8 + header + 24 + 12 + 24);

  const st::NamedTensors loaded = st::load(bytes);
  EXPECT_EQ(names_of(loaded),
            (std::vector<std::string>{"enc.weight", "row", "clone", "dec.weight", "det"}));
  const Tensor& enc = find(loaded, "enc.weight");
  EXPECT_TRUE(find(loaded, "dec.weight").is_same(enc));
  EXPECT_TRUE(find(loaded, "det").is_same(enc));
  EXPECT_FALSE(find(loaded, "row").is_same_storage(enc));
  EXPECT_EQ(enc.to_vector<float>(), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(find(loaded, "row").to_vector<float>(), (std::vector<float>{0, 1, 2}));
}

TEST(SafetensorsAliases, AliasRecordsAreValidated) {
  const std::string tensor = R"("a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]})";
  auto with_aliases = [&](const std::string& value) {
    return make_file(R"({"__metadata__":{"tessera.aliases":)" + value + "}," + tensor + "}",
                     std::string(1, '\x07'));
  };
  expect_error([&] { st::load(with_aliases(R"("not json")")); }, TSR_DATA_LOSS, "invalid JSON");
  expect_error([&] { st::load(with_aliases(R"("[1]")")); }, TSR_DATA_LOSS, "not a JSON object");
  expect_error([&] { st::load(with_aliases(R"("{\"b\":\"a\"}\u0000junk")")); }, TSR_DATA_LOSS,
               "a NUL byte");
  expect_error([&] { st::load(with_aliases(R"("{\"b\":\"zz\"}")")); }, TSR_DATA_LOSS,
               "not a tensor of the file");
  expect_error([&] { st::load(with_aliases(R"("{\"b\":1}")")); }, TSR_DATA_LOSS,
               "not a tensor of the file");
  expect_error([&] { st::load(with_aliases(R"("{\"a\":\"a\"}")")); }, TSR_DATA_LOSS,
               "also the name of a tensor");
  expect_error([&] { st::load(with_aliases(R"("{\"b\":\"a\",\"b\":\"a\"}")")); }, TSR_DATA_LOSS,
               "appears twice");
  const st::NamedTensors ok = st::load(with_aliases(R"("{\"b\":\"a\"}")"));
  EXPECT_TRUE(find(ok, "b").is_same(find(ok, "a")));
}

// ---------------------------------------------------------------------------
// Save-side errors: reported before anything is written
// ---------------------------------------------------------------------------

TEST(SafetensorsSaveErrors, NameTheOffendingArgument) {
  const Tensor x = tessera::zeros({2});
  expect_error(
      [&] {
        st::save({{"x", x}, {"x", x}});
      },
      TSR_INVALID_ARGUMENT, "\"x\" appears twice");
  expect_error([&] { st::save({{"__metadata__", x}}); }, TSR_INVALID_ARGUMENT, "reserved");
  expect_error([&] { st::save({{"u", Tensor()}}); }, TSR_INVALID_ARGUMENT, "\"u\" is undefined");
  expect_error(
      [&] {
        st::save({{"z", tessera::zeros({2}, tessera::kComplex128)}});
      },
      TSR_INVALID_ARGUMENT, "\"z\" has dtype complex128");
  expect_error(
      [&] {
        st::save({{"x", x}}, {{"tessera.aliases", "{}"}});
      },
      TSR_INVALID_ARGUMENT, "reserved for Tessera");
  expect_error([&] { st::save({{"bad\xff", x}}); }, TSR_INVALID_ARGUMENT, "not valid UTF-8");
  expect_error(
      [&] {
        st::save({{"x", x}}, {{"k", "\xc3"}});
      },
      TSR_INVALID_ARGUMENT, "not valid UTF-8");
  // (dtype given explicitly: GCC 12 under -fsanitize warns about the unset optional)
  const tessera::TensorOptions meta =
      tessera::TensorOptions(tessera::kFloat32).device(tessera::kMeta);
  expect_error(
      [&] {
        st::save({{"m", tessera::empty({2}, meta)}});
      },
      TSR_INVALID_ARGUMENT, "meta device");
}

// ---------------------------------------------------------------------------
// Hostile and malformed input (Note [safetensors validation])
// ---------------------------------------------------------------------------

struct HostileCase {
  const char* name;
  std::vector<uint8_t> bytes;
  tsr_status_code code;
  const char* message_part;
  bool header_only = true;  // also rejected by load_metadata (no data read)
};

std::string entry(const std::string& name, const std::string& dtype, const std::string& shape,
                  const std::string& offsets) {
  return "\"" + name + "\":{\"dtype\":" + dtype + ",\"shape\":" + shape +
         ",\"data_offsets\":" + offsets + "}";
}

std::vector<HostileCase> hostile_cases() {
  const std::string four(4, '\0');
  const std::string f32 = R"("F32")";
  return {
      {"empty file", {}, TSR_DATA_LOSS, "shorter than the 8-byte header length"},
      {"seven bytes", {1, 0, 0, 0, 0, 0, 0}, TSR_DATA_LOSS, "shorter than the 8-byte"},
      {"header past end", length_then(100, "{}"), TSR_DATA_LOSS, "runs past the end of the file"},
      {"header over cap", length_then(100'000'001, "{}"), TSR_DATA_LOSS, "exceeds the limit"},
      {"header length 2^64-1", length_then(~uint64_t{0}, "{}"), TSR_DATA_LOSS, "exceeds the limit"},
      {"header length 0", length_then(0, ""), TSR_DATA_LOSS, "does not start with '{'"},
      {"leading space", make_file(" {}"), TSR_DATA_LOSS, "does not start with '{'"},
      {"not json", make_file("{abc"), TSR_DATA_LOSS, "invalid JSON"},
      {"trailing garbage", make_file("{} x"), TSR_DATA_LOSS, "invalid JSON"},
      {"nul padding", make_file(std::string("{}\0\0", 4)), TSR_DATA_LOSS, "a NUL byte"},
      {"nul then garbage", make_file(std::string("{}\0junk", 7)), TSR_DATA_LOSS, "a NUL byte"},
      {"invalid utf-8", make_file("{\"\xff\":1}"), TSR_DATA_LOSS, "invalid JSON"},
      {"deep nesting", make_file(R"({"a":[[[1]]]})"), TSR_DATA_LOSS, "nested deeper"},
      {"very deep nesting", make_file("{\"a\":" + std::string(1'000'000, '[')), TSR_DATA_LOSS,
       "nested deeper"},
      {"entry not object", make_file(R"({"a":5})"), TSR_DATA_LOSS, "\"a\" is 5, not an object"},
      {"missing dtype", make_file(R"({"a":{"shape":[1],"data_offsets":[0,4]}})", four),
       TSR_DATA_LOSS, "has no \"dtype\" field"},
      {"missing shape", make_file(R"({"a":{"dtype":"F32","data_offsets":[0,4]}})", four),
       TSR_DATA_LOSS, "has no \"shape\" field"},
      {"missing offsets", make_file(R"({"a":{"dtype":"F32","shape":[1]}})", four), TSR_DATA_LOSS,
       "has no \"data_offsets\" field"},
      {"dtype not string", make_file("{" + entry("a", "4", "[1]", "[0,4]") + "}", four),
       TSR_DATA_LOSS, "is not a string"},
      {"unknown dtype", make_file("{" + entry("a", R"("F128")", "[1]", "[0,4]") + "}", four),
       TSR_DATA_LOSS, "unknown dtype \"F128\""},
      {"dtype tessera lacks", make_file("{" + entry("a", R"("U16")", "[2]", "[0,4]") + "}", four),
       TSR_UNIMPLEMENTED, "safetensors dtype U16"},
      {"negative shape", make_file("{" + entry("a", f32, "[-1]", "[0,4]") + "}", four),
       TSR_DATA_LOSS, "shape entry is -1"},
      {"fractional shape", make_file("{" + entry("a", f32, "[1.5]", "[0,4]") + "}", four),
       TSR_DATA_LOSS, "shape entry is 1.5"},
      {"string shape entry", make_file("{" + entry("a", f32, R"(["1"])", "[0,4]") + "}", four),
       TSR_DATA_LOSS, "shape entry is \"1\""},
      {"shape not list", make_file("{" + entry("a", f32, "1", "[0,4]") + "}", four), TSR_DATA_LOSS,
       "shape 1 is not a list"},
      {"shape beyond int64",
       make_file("{" + entry("a", f32, "[9223372036854775808]", "[0,4]") + "}", four),
       TSR_DATA_LOSS, "not an integer in [0, 9223372036854775807]"},
      {"too many dims",
       make_file("{" + entry("a", f32, "[1,1,1,1,1,1,1,1,1]", "[0,4]") + "}", four),
       TSR_UNIMPLEMENTED, "has 9 dims"},
      {"shape product overflow",
       make_file("{" + entry("a", f32, "[4611686018427387904,4]", "[0,4]") + "}", four),
       TSR_DATA_LOSS, "overflows"},
      {"size mismatch", make_file("{" + entry("a", f32, "[2]", "[0,4]") + "}", four), TSR_DATA_LOSS,
       "hold 4 bytes but dtype F32 and shape [2] need 8"},
      {"offsets past data", make_file("{" + entry("a", f32, "[2]", "[0,8]") + "}", four),
       TSR_DATA_LOSS, "run past the data section of 4 bytes"},
      {"begin after end", make_file("{" + entry("a", f32, "[1]", "[4,0]") + "}", four),
       TSR_DATA_LOSS, "end before they begin"},
      {"offsets not a pair", make_file("{" + entry("a", f32, "[1]", "[0,4,8]") + "}", four),
       TSR_DATA_LOSS, "is not a [begin, end] pair"},
      {"negative offset", make_file("{" + entry("a", f32, "[1]", "[-4,0]") + "}", four),
       TSR_DATA_LOSS, "data_offsets begin is -4"},
      {"overlap",
       make_file("{" + entry("a", f32, "[1]", "[0,4]") + "," +
                     entry("b", R"("I16")", "[2]", "[2,6]") + "}",
                 std::string(6, '\0')),
       TSR_DATA_LOSS, "overlapping"},
      {"hole",
       make_file(
           "{" + entry("a", f32, "[1]", "[0,4]") + "," + entry("b", f32, "[1]", "[8,12]") + "}",
           std::string(12, '\0')),
       TSR_DATA_LOSS, "(a hole)"},
      {"not starting at 0",
       make_file("{" + entry("a", f32, "[1]", "[4,8]") + "}", std::string(8, '\0')), TSR_DATA_LOSS,
       "(a hole)"},
      {"trailing data",
       make_file("{" + entry("a", f32, "[1]", "[0,4]") + "}", std::string(8, '\0')), TSR_DATA_LOSS,
       "trailing bytes"},
      {"duplicate name",
       make_file(
           "{" + entry("a", f32, "[1]", "[0,4]") + "," + entry("a", f32, "[1]", "[4,8]") + "}",
           std::string(8, '\0')),
       TSR_DATA_LOSS, "\"a\" appears twice"},
      {"duplicate field",
       make_file(R"({"a":{"dtype":"F32","dtype":"F32","shape":[1],"data_offsets":[0,4]}})", four),
       TSR_DATA_LOSS, "\"dtype\" appears twice"},
      {"metadata value not string", make_file(R"({"__metadata__":{"k":1}})"), TSR_DATA_LOSS,
       "value of \"k\" is 1, not a string"},
      {"metadata not object", make_file(R"({"__metadata__":"x"})"), TSR_DATA_LOSS,
       "__metadata__ is \"x\", not an object"},
      {"bool byte 2", make_file("{" + entry("a", R"("BOOL")", "[2]", "[0,2]") + "}", "\x01\x02"),
       TSR_DATA_LOSS, "holds byte 2 at element 1", false},
  };
}

TEST(SafetensorsHostile, EveryMalformedBufferIsRejectedWithAClearError) {
  for (const HostileCase& c : hostile_cases()) {
    SCOPED_TRACE(c.name);
    expect_error([&] { st::load(c.bytes); }, c.code, c.message_part);
    if (c.header_only) expect_error([&] { st::load_metadata(c.bytes); }, c.code, c.message_part);
  }
}

TEST(SafetensorsHostile, MalformedFilesAreRejectedWithTheirPath) {
  TempDir dir;
  for (const HostileCase& c : hostile_cases()) {
    SCOPED_TRACE(c.name);
    const fs::path path = dir.path() / "hostile.safetensors";
    write_file(path, c.bytes);
    expect_error([&] { st::load_file(path); }, c.code, c.message_part);
    expect_error([&] { st::load_file(path); }, c.code, path.string());
  }
}

TEST(SafetensorsHostile, TruncatedRealFileIsRejected) {
  const std::vector<uint8_t> good = st::save({{"x", tessera::arange(10, tessera::kInt64)}});
  for (size_t keep : {size_t{0}, size_t{5}, size_t{8}, size_t{20}, good.size() - 1}) {
    SCOPED_TRACE(keep);
    const std::vector<uint8_t> cut(good.begin(), good.begin() + static_cast<long>(keep));
    EXPECT_THROW(st::load(cut), tessera::Error);
  }
  std::vector<uint8_t> longer = good;
  longer.push_back(0);
  expect_error([&] { st::load(longer); }, TSR_DATA_LOSS, "trailing bytes");
}

TEST(SafetensorsHostile, ZeroSizeTensorWithHugeDimsNeverAllocates) {
  // Zero elements but strides that overflow int64: refused (as PyTorch's
  // "Stride calculation overflowed"), nothing allocated.
  const std::vector<uint8_t> bytes =
      make_file(R"({"z":{"dtype":"F64","shape":[0,4611686018427387904,4611686018427387904],)"
                R"("data_offsets":[0,0]}})");
  expect_error([&] { st::load(bytes); }, TSR_INVALID_ARGUMENT, "stride calculation overflowed");
  // Zero elements with representable strides load as empty tensors.
  const std::vector<uint8_t> fine =
      make_file(R"({"z":{"dtype":"F64","shape":[0,1048576,1048576],"data_offsets":[0,0]}})");
  const st::NamedTensors loaded = st::load(fine);
  EXPECT_EQ(find(loaded, "z").numel(), 0);
  EXPECT_EQ(find(loaded, "z").sizes(), (std::vector<int64_t>{0, 1048576, 1048576}));
}

TEST(SafetensorsHostile, MissingFileAndDirectoryAreNamed) {
  TempDir dir;
  expect_error([&] { st::load_file(dir.path() / "absent.safetensors"); }, TSR_NOT_FOUND,
               "absent.safetensors");
  expect_error([&] { st::load_file(dir.path()); }, TSR_INVALID_ARGUMENT, "not a regular file");
}

// ---------------------------------------------------------------------------
// Atomic writes
// ---------------------------------------------------------------------------

TEST(SafetensorsAtomicWrite, SaveReplacesTheFileAndLeavesNoTemporaryFiles) {
  TempDir dir;
  const fs::path path = dir.path() / "ckpt.safetensors";
  st::save_file({{"v", tessera::tensor({1, 2})}}, path);
  st::save_file({{"v", tessera::tensor({3, 4, 5})}}, path);
  EXPECT_EQ(find(st::load_file(path), "v").to_vector<int64_t>(), (std::vector<int64_t>{3, 4, 5}));
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"ckpt.safetensors"}));
}

TEST(SafetensorsAtomicWrite, FailureBeforeWritingKeepsTheOldFile) {
  TempDir dir;
  const fs::path path = dir.path() / "ckpt.safetensors";
  st::save_file({{"v", tessera::tensor({1, 2})}}, path);
  const std::vector<uint8_t> old_bytes = read_file(path);
  expect_error(
      [&] {
        st::save_file(
            {{"v", tessera::tensor({7, 8})}, {"bad", tessera::zeros({2}, tessera::kComplex128)}},
            path);
      },
      TSR_INVALID_ARGUMENT, "complex128");
  EXPECT_EQ(read_file(path), old_bytes);
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"ckpt.safetensors"}));
}

TEST(SafetensorsAtomicWrite, WriteFailingMidwayKeepsTheOldFile) {
  // A real mid-write failure that works as root too: a file size limit
  // (RLIMIT_FSIZE) smaller than the new file makes write() fail with EFBIG
  // after the header and part of the data are written.
  TempDir dir;
  const fs::path path = dir.path() / "ckpt.safetensors";
  st::save_file({{"v", tessera::tensor({1, 2})}}, path);
  const std::vector<uint8_t> old_bytes = read_file(path);
  const Tensor big = tessera::zeros({64 * 1024}, tessera::kFloat32);  // 256 KiB

  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  rlimit small = saved;
  small.rlim_cur = 64 * 1024;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  const auto old_handler = ::signal(SIGXFSZ, SIG_IGN);
  std::string message;
  try {
    st::save_file({{"big", big}}, path);
  } catch (const tessera::Error& e) {
    message = e.what();
  }
  ::signal(SIGXFSZ, old_handler);
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &saved), 0);

  EXPECT_NE(message.find("writing the temporary file"), std::string::npos) << message;
  EXPECT_NE(message.find("unchanged"), std::string::npos) << message;
  EXPECT_EQ(read_file(path), old_bytes);
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"ckpt.safetensors"}));
}

TEST(SafetensorsAtomicWrite, MissingDirectoryFailsWithNotFound) {
  TempDir dir;
  expect_error(
      [&] {
        st::save_file({{"v", tessera::zeros({1})}}, dir.path() / "no" / "x.safetensors");
      },
      TSR_NOT_FOUND, "cannot create a temporary file");
}

// ---------------------------------------------------------------------------
// load_into: loading into existing tensors
// ---------------------------------------------------------------------------

TEST(SafetensorsLoadInto, CopiesIntoTheSameTensorObjects) {
  const Tensor weight = tessera::zeros({2, 2});
  const Tensor bias = tessera::zeros({2}).requires_grad_();  // a leaf that requires grad
  const st::NamedTensors dest = {{"weight", weight}, {"bias", bias}};
  const std::vector<uint8_t> bytes =
      st::save({{"weight", tessera::tensor({1.f, 2.f, 3.f, 4.f}, {2, 2})},
                {"bias", tessera::tensor({-1.f, -2.f})}});
  const st::LoadResult result = st::load_into(dest, st::load(bytes));
  EXPECT_TRUE(result.missing_keys.empty());
  EXPECT_TRUE(result.unexpected_keys.empty());
  EXPECT_EQ(weight.to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(bias.to_vector<float>(), (std::vector<float>{-1, -2}));
  EXPECT_TRUE(bias.requires_grad());
  EXPECT_TRUE(bias.is_leaf());
}

TEST(SafetensorsLoadInto, ShapeOrDtypeMismatchNamesKeyExpectedAndGotAndLoadsNothing) {
  const Tensor a = tessera::zeros({2});
  const Tensor b = tessera::zeros({2, 3});
  const Tensor c = tessera::zeros({2});
  const st::NamedTensors dest = {{"a", a}, {"b", b}, {"c", c}};
  const st::NamedTensors source = {{"a", tessera::ones({2})},
                                   {"b", tessera::ones({3, 2})},
                                   {"c", tessera::ones({2}, tessera::kInt64)}};
  expect_error([&] { st::load_into(dest, source); }, TSR_INVALID_ARGUMENT,
               "\"b\": expected float32 (2, 3), got float32 (3, 2)");
  expect_error([&] { st::load_into(dest, source); }, TSR_INVALID_ARGUMENT,
               "\"c\": expected float32 (2,), got int64 (2,)");
  EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{0, 0}));  // not even "a" was loaded
}

TEST(SafetensorsLoadInto, StrictListsMissingAndUnexpectedKeys) {
  const Tensor a = tessera::zeros({1});
  const Tensor m = tessera::zeros({1});
  const st::NamedTensors dest = {{"a", a}, {"m", m}};
  const st::NamedTensors source = {{"a", tessera::ones({1})}, {"u", tessera::ones({1})}};
  expect_error([&] { st::load_into(dest, source); }, TSR_INVALID_ARGUMENT,
               "missing keys: \"m\"; unexpected keys: \"u\"");
  EXPECT_EQ(a.item<float>(), 0.f);

  const st::LoadResult result = st::load_into(dest, source, /*strict=*/false);
  EXPECT_EQ(result.missing_keys, (std::vector<std::string>{"m"}));
  EXPECT_EQ(result.unexpected_keys, (std::vector<std::string>{"u"}));
  EXPECT_EQ(a.item<float>(), 1.f);
  EXPECT_EQ(m.item<float>(), 0.f);
}

TEST(SafetensorsLoadInto, FromFileKeepsTiedDestinationTied) {
  TempDir dir;
  const fs::path path = dir.path() / "tied.safetensors";
  const Tensor saved = tessera::tensor({5.f, 6.f});
  st::save_file({{"emb", saved}, {"head", saved}}, path);
  const Tensor tied = tessera::zeros({2});
  const st::NamedTensors dest = {{"emb", tied}, {"head", tied}};
  const st::LoadResult result = st::load_into(dest, path.string());
  EXPECT_TRUE(result.missing_keys.empty());
  EXPECT_TRUE(result.unexpected_keys.empty());
  EXPECT_EQ(tied.to_vector<float>(), (std::vector<float>{5, 6}));
}

// ---------------------------------------------------------------------------
// Interop with Python's safetensors (driven by safetensors_interop.py)
// ---------------------------------------------------------------------------

const char* interop_dir() { return std::getenv("TESSERA_SAFETENSORS_INTEROP_DIR"); }

// Writes from_tessera.safetensors; safetensors_interop.py states the same
// values independently and compares.
TEST(SafetensorsInterop, WriteForPython) {
  if (interop_dir() == nullptr) GTEST_SKIP() << "run by frontend_safetensors_interop";
  using namespace tessera;
  const Tensor tied = tensor({1.f, 2.f});
  st::NamedTensors tensors = {
      {"f32", arange(6, kFloat32).mul(0.25).sub(0.5).reshape({2, 3})},
      {"f64", from_bytes(le<uint64_t>({0x3ff8000000000000,    // 1.5
                                       0x8000000000000000,    // -0.0
                                       0x7ff0000000000000,    // inf
                                       0x7ff8000000000001}),  // NaN with payload 1
                         {4}, kFloat64)},
      {"f16", tensor({1.0, -2.5, 65504.0}).to(kFloat16)},
      {"bf16", tensor({1.0, -2.0, 0.5, 3.140625}, {2, 2}).to(kBFloat16)},
      {"i64", tensor({std::numeric_limits<int64_t>::min(), int64_t{0},
                      std::numeric_limits<int64_t>::max()})},
      {"i32", tensor({-2147483648LL, 2147483647LL}).to(kInt32)},
      {"i16", tensor({-32768, 32767}).to(kInt16)},
      {"i8", tensor({-128, 0, 127}).to(kInt8)},
      {"u8", tensor({0, 255}).to(kUInt8)},
      {"bool", tensor({true, false, false, true})},
      {"c64", tensor({std::complex<float>(1, 2), std::complex<float>(-0.5, 0)})},
      {"noncontig", arange(6, kFloat32).reshape({2, 3}).t()},
      {"scalar", scalar_tensor(7.0, kFloat32)},
      {"empty", zeros({0, 3})},
      {"tied_a", tied},
      {"tied_b", tied},
  };
  st::save_file(tensors, std::string(interop_dir()) + "/from_tessera.safetensors",
                {{"framework", "tessera"},
                 {"note",
                  "\xc3\xbcnic\xc3\xb6"
                  "de"}});
}

// Reads the files safetensors_interop.py wrote with Python's safetensors
// (safetensors.numpy.save_file, and safetensors.serialize_file for bfloat16,
// which numpy lacks) and checks them against values stated here.
TEST(SafetensorsInterop, ReadFromPython) {
  if (interop_dir() == nullptr) GTEST_SKIP() << "run by frontend_safetensors_interop";
  using namespace tessera;
  const std::string path = std::string(interop_dir()) + "/from_python.safetensors";
  const st::NamedTensors loaded = st::load_file(path);
  EXPECT_EQ(st::load_metadata(path), (st::Metadata{{"source", "numpy"}}));
  EXPECT_EQ(loaded.size(), 13u);
  auto check = [](const st::NamedTensors& tensors, const std::string& name, Dtype dtype,
                  std::vector<int64_t> shape, const std::vector<uint8_t>& bytes) {
    SCOPED_TRACE(name);
    const Tensor& t = find(tensors, name);
    EXPECT_EQ(t.dtype(), dtype);
    EXPECT_EQ(t.sizes(), shape);
    EXPECT_EQ(bytes_of(t), bytes);
  };
  check(loaded, "f64", kFloat64, {3},
        le<double>({2.5, -0.0, std::numeric_limits<double>::infinity()}));
  check(loaded, "f32", kFloat32, {2, 3}, le<float>({-1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f}));
  check(loaded, "f16", kFloat16, {3}, le<uint16_t>({0x3c00, 0xc100, 0x7bff}));  // 1, -2.5, 65504
  check(loaded, "i64", kInt64, {3},
        le<int64_t>({std::numeric_limits<int64_t>::min(), 1, std::numeric_limits<int64_t>::max()}));
  check(loaded, "i32", kInt32, {2}, le<int32_t>({std::numeric_limits<int32_t>::min(), 2147483647}));
  check(loaded, "i16", kInt16, {2}, le<int16_t>({-32768, 32767}));
  check(loaded, "i8", kInt8, {2, 2}, le<int8_t>({-128, -1, 0, 127}));
  check(loaded, "u8", kUInt8, {3}, {0, 128, 255});
  check(loaded, "bool", kBool, {3}, {1, 0, 1});
  check(loaded, "c64", kComplex64, {2}, le<float>({1.0f, 2.0f, 0.0f, -0.5f}));
  check(loaded, "scalar", kFloat32, {}, le<float>({7.0f}));
  check(loaded, "empty", kFloat32, {0, 3}, {});
  check(loaded, "transposed", kFloat32, {3, 2}, le<float>({0, 3, 1, 4, 2, 5}));

  const st::NamedTensors bf16 =
      st::load_file(std::string(interop_dir()) + "/from_python_bf16.safetensors");
  EXPECT_EQ(bf16.size(), 2u);
  check(bf16, "bf16", kBFloat16, {2}, le<uint16_t>({0x3f80, 0xc049}));  // 1, -3.140625
  check(bf16, "x", kFloat32, {1}, le<float>({0.25f}));
}

}  // namespace
