// acme.hpp - what the ACME plugin's files share: the plugin context and the
// kernels; the rest is the Tessera plugin SDK (tessera/sdk/*.hpp). A kernel
// is a plain C++ function that reads its arguments from the call
// (kernel_args.hpp), writes call.outs, and throws to fail; the table wraps it
// in sdk::trampoline, which turns every exception into a status. Deliberately
// simple: one element at a time in double or int64 (elements.hpp). A real
// device replaces the loops, not the contract.
#ifndef ACME_HPP_
#define ACME_HPP_

#include <cstdint>

#include "tessera/plugin.h"
#include "tessera/sdk/elements.hpp"
#include "tessera/sdk/kernel_args.hpp"
#include "tessera/sdk/op_checks.hpp"
#include "tessera/sdk/strided.hpp"

// One per successful init; the host hands it back to every entry. The SDK's
// trampolines read `host` (statuses are made by the host).
struct tsr_plugin_context {
  const tsr_host_api* host;
};

namespace acme {

// The SDK's readers, checks and element access, unqualified in ACME's code.
using namespace tessera::sdk;
namespace sdk = tessera::sdk;

inline constexpr const char* kName = "acme";

// kernels_pointwise.cpp
void copy_kernel(const tsr_kernel_call& call);
void fill_kernel(const tsr_kernel_call& call);
void add_kernel(const tsr_kernel_call& call);
void sub_kernel(const tsr_kernel_call& call);
void mul_kernel(const tsr_kernel_call& call);
void div_kernel(const tsr_kernel_call& call);
void unary_kernel(const tsr_kernel_call& call);
void binary_kernel(const tsr_kernel_call& call);
void where_kernel(const tsr_kernel_call& call);
// kernels_reduction.cpp
void reduce_kernel(const tsr_kernel_call& call);
void arg_reduce_kernel(const tsr_kernel_call& call);
void scan_kernel(const tsr_kernel_call& call);
// kernels_linalg.cpp
void mm_kernel(const tsr_kernel_call& call);
void bmm_kernel(const tsr_kernel_call& call);
// kernels_indexing.cpp
void iota_kernel(const tsr_kernel_call& call);
void gather_kernel(const tsr_kernel_call& call);
void scatter_kernel(const tsr_kernel_call& call);
void nonzero_count(const tsr_kernel_call& call, int32_t* out_ndims, int64_t* out_sizes);
void nonzero_kernel(const tsr_kernel_call& call);
void sort_kernel(const tsr_kernel_call& call);
void searchsorted_kernel(const tsr_kernel_call& call);

}  // namespace acme

#endif  // ACME_HPP_
