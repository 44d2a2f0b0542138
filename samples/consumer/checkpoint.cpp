// An application of an installed Tessera's tessera::serialize (find_package
// component serialize): saves a state dict of two cpu:0 tensors in the
// safetensors format, in memory, loads it back and prints
//   checkpoint: bias 0.5 -1 | weight 1.5 -2 3.25 4
// Exits 1, naming what went wrong, when a call fails or a value differs.
#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <tessera/serialize/safetensors.hpp>
#include <tessera/tessera.hpp>

int main() {
  try {
    const auto on_cpu = tessera::dtype(tessera::kFloat32).device(tessera::kCPU);
    const tessera::serialize::NamedTensors state = {
        {"weight", tessera::tensor({1.5f, -2.0f, 3.25f, 4.0f}, on_cpu).reshape({2, 2})},
        {"bias", tessera::tensor({0.5f, -1.0f}, on_cpu)}};
    const std::vector<uint8_t> bytes = tessera::serialize::save(state);
    // The format: a little-endian u64 header length, then a JSON object.
    if (bytes.size() < 9 || bytes[8] != '{') {
      std::fprintf(stderr, "consumer: the saved bytes do not start a safetensors header\n");
      return 1;
    }
    tessera::serialize::NamedTensors loaded = tessera::serialize::load(bytes);
    if (loaded.size() != 2) {
      std::fprintf(stderr, "consumer: loaded %zu tensors, expected 2\n", loaded.size());
      return 1;
    }
    std::sort(loaded.begin(), loaded.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    const std::vector<std::pair<std::string, std::vector<float>>> expected = {
        {"bias", {0.5f, -1.0f}}, {"weight", {1.5f, -2.0f, 3.25f, 4.0f}}};
    std::printf("checkpoint:");
    for (size_t i = 0; i < loaded.size(); ++i) {
      const std::vector<float> values = loaded[i].second.to_vector<float>();
      std::printf("%s %s", i ? " |" : "", loaded[i].first.c_str());
      for (float value : values) std::printf(" %g", value);
      if (loaded[i].first != expected[i].first || values != expected[i].second) {
        std::fprintf(stderr, "\nconsumer: tensor %zu came back wrong\n", i);
        return 1;
      }
    }
    std::printf("\n");
    return 0;
  } catch (const tessera::Error& error) {
    std::fprintf(stderr, "consumer: %s: %s\n", error.code_name(), error.what());
    return 1;
  }
}
