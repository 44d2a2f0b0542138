// tessera/print.hpp - PyTorch-like text for tensors.
//
//   tensor([[0., 1., 2.],
//           [3., 4., 5.]])
//   tensor([1, 2, 3])
//   tensor([0.5000, 1.2500], dtype=float64)
//
// Floating values print as integers with a trailing dot when they all are
// integral, else with 4 decimals (scientific when the magnitudes call for
// it); elements are right-aligned to a common width; tensors of more than
// 1000 elements show the first and last 3 entries per dim. The dtype is named
// unless it is the inferred one (float32, int64, bool), the device unless
// it is the CPU. The values are copied to the host (this synchronizes).
#pragma once

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "tessera/tensor_body.hpp"

namespace tessera {
namespace detail {

struct PrintFormat {
  enum class Mode { Integer, IntegralFloat, Fixed, Scientific } mode = Mode::Integer;
};

inline std::string format_real(double v, PrintFormat::Mode mode) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buffer[64];
  switch (mode) {
    case PrintFormat::Mode::Integer:
      std::snprintf(buffer, sizeof buffer, "%.0f", v);
      break;
    case PrintFormat::Mode::IntegralFloat:
      std::snprintf(buffer, sizeof buffer, "%.0f.", v);
      break;
    case PrintFormat::Mode::Fixed:
      std::snprintf(buffer, sizeof buffer, "%.4f", v);
      break;
    case PrintFormat::Mode::Scientific:
      std::snprintf(buffer, sizeof buffer, "%.4e", v);
      break;
  }
  return buffer;
}

// The mode PyTorch's formatter would pick for these floating values.
inline PrintFormat::Mode float_mode(const std::vector<double>& values) {
  bool integral = true;
  double max_abs = 0, min_abs = INFINITY;
  for (double v : values) {
    if (!std::isfinite(v)) continue;
    integral = integral && v == std::nearbyint(v);
    const double a = std::fabs(v);
    max_abs = std::max(max_abs, a);
    if (a != 0) min_abs = std::min(min_abs, a);
  }
  if (integral) {
    return max_abs > 1e8 ? PrintFormat::Mode::Scientific : PrintFormat::Mode::IntegralFloat;
  }
  if (max_abs > 1e8 || min_abs < 1e-4 || max_abs / min_abs > 1000) {
    return PrintFormat::Mode::Scientific;
  }
  return PrintFormat::Mode::Fixed;
}

// Element strings in row-major order.
inline std::vector<std::string> element_strings(const Tensor& t) {
  std::vector<std::string> out;
  const Dtype dtype = t.dtype();
  if (dtype == kBool) {
    for (bool b : t.to_vector<bool>()) out.emplace_back(b ? "True" : "False");
  } else if (is_integral(dtype)) {
    for (int64_t v : t.to_vector<int64_t>()) out.push_back(std::to_string(v));
  } else if (is_complex(dtype)) {
    const auto values = t.to_vector<std::complex<double>>();
    std::vector<double> parts;
    for (const auto& c : values) {
      parts.push_back(c.real());
      parts.push_back(c.imag());
    }
    const auto mode = float_mode(parts);
    for (const auto& c : values) {
      out.push_back(format_real(c.real(), mode) + (c.imag() < 0 ? "" : "+") +
                    format_real(c.imag(), mode) + "j");
    }
  } else {
    const auto values = t.to_vector<double>();
    const auto mode = float_mode(values);
    for (double v : values) out.push_back(format_real(v, mode));
  }
  return out;
}

inline void print_block(std::ostream& os, const std::vector<std::string>& items, const Dims& sizes,
                        size_t dim, size_t offset, size_t indent, size_t width, bool summarize) {
  if (dim == sizes.size()) {
    const std::string& s = items[offset];
    os << std::string(width - std::min(width, s.size()), ' ') << s;
    return;
  }
  size_t inner = 1;
  for (size_t d = dim + 1; d < sizes.size(); ++d) inner *= static_cast<size_t>(sizes[d]);
  const auto n = static_cast<size_t>(sizes[dim]);
  const bool cut = summarize && n > 6;
  const bool last_dim = dim + 1 == sizes.size();
  const std::string separator =
      last_dim ? ", "
               : "," + std::string(sizes.size() - dim - 1, '\n') + std::string(indent + 1, ' ');
  os << '[';
  for (size_t i = 0; i < n; ++i) {
    if (cut && i == 3) {
      if (last_dim) os << std::string(width - std::min<size_t>(width, 3), ' ');
      os << "..." << separator;
      i = n - 3;
    }
    print_block(os, items, sizes, dim + 1, offset + i * inner, indent + 1, width, summarize);
    if (i + 1 < n) os << separator;
  }
  os << ']';
}

}  // namespace detail

inline std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  if (!t.defined()) return os << "tensor(undefined)";
  const Dims sizes = t.sizes();
  const Dtype dtype = t.dtype();
  const Device device = t.device();
  os << "tensor(";
  if (device.is_meta()) {
    os << "..., size=" << sizes;
  } else if (t.numel() == 0) {
    os << "[]";
    if (sizes.size() != 1) os << ", size=" << sizes;
  } else {
    const Tensor host = t.cpu();
    const auto items = detail::element_strings(host);
    size_t width = 0;
    for (const auto& s : items) width = std::max(width, s.size());
    detail::print_block(os, items, sizes, 0, 0, 7, width, host.numel() > 1000);
  }
  if (!device.is_cpu()) os << ", device='" << device << '\'';
  if (dtype != kFloat32 && dtype != kInt64 && dtype != kBool) os << ", dtype=" << dtype;
  return os << ')';
}

inline std::string Tensor::str() const {
  std::ostringstream os;
  os << *this;
  return os.str();
}

}  // namespace tessera
