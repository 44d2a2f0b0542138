// A minimal application of an installed Tessera, through the C++ frontend
// (tessera::cpp): adds two float32 tensors on cpu:0 and prints
//   sum: 11 22 33 44
// The default runtime searches plugins the default way; with no
// TESSERA_PLUGIN_PATH set, libtessera must find the CPU plugin installed next
// to itself. Exits 1, naming what went wrong, when a call fails or the sum is
// wrong.
#include <cstdio>
#include <vector>

#include <tessera/tessera.hpp>

int main() {
  try {
    const auto on_cpu = tessera::dtype(tessera::kFloat32).device(tessera::kCPU);
    const tessera::Tensor a = tessera::tensor({1.0f, 2.0f, 3.0f, 4.0f}, on_cpu);
    const tessera::Tensor b = tessera::tensor({10.0f, 20.0f, 30.0f, 40.0f}, on_cpu);
    const tessera::Tensor sum = a + b;

    const std::vector<float> values = sum.to_vector<float>();
    std::printf("sum:");
    for (float value : values) std::printf(" %g", value);
    std::printf("\n");

    const std::vector<float> expected = {11, 22, 33, 44};
    if (sum.device() != tessera::kCPU || values != expected) {
      std::fprintf(stderr, "consumer: expected sum 11 22 33 44 on cpu:0\n");
      return 1;
    }
    return 0;
  } catch (const tessera::Error& error) {
    std::fprintf(stderr, "consumer: %s: %s\n", error.code_name(), error.what());
    return 1;
  }
}
