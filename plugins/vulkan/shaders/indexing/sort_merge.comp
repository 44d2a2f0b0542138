// sort_merge.comp - sort.stable's MERGE passes (indexing/sort.cpp), split from
// sort.comp so that this shader has no shared memory and no barrier: on
// lavapipe a shader with barriers runs every workgroup as coroutines, whose
// setup would dominate these one-element-per-invocation passes. The
// parameter block and the merge are sort.comp's (see there); the two files
// must agree on Args.
#version 460
#include "common.glsl"

// The parameters, copied into the invocation once (main): on lavapipe every
// load through a buffer reference is a loop over the SIMD lanes, so fields
// are not re-read from the block inside loops.
struct Args {
  int64_t total;  // lines * n
  int64_t n;      // line length (>= 1)
  int64_t width;  // MERGE: length of the sorted runs read
  int64_t lines;
  int pad_;
  int descending;
  int direct;      // write values / indices (else keys_out / idx_out)
  int lines_ndim;  // dims in `sizes` (self's dims but `dim`)
  int64_t sizes[8];
  int64_t along[4];  // stride along dim: self, values, indices
  uint64_t keys_in, idx_in, keys_out, idx_out;  // uint64 / int64 arrays [total]
  Operand t[3];
};

struct Params {
  Args args;
};

layout(set = 0, binding = 0, std430) uniform ParamsBlock { Params params; } pc;

// Element offsets of line `line` in t[0..2] (row-major over `sizes`).
void line_offsets(Args p, int64_t line, out int64_t off[3]) {
  off[0] = 0L;
  off[1] = 0L;
  off[2] = 0L;
  int64_t rest = line;
  for (int d = p.lines_ndim - 1; d >= 0; --d) {
    const int64_t c = rest % p.sizes[d];
    rest /= p.sizes[d];
    off[0] += c * p.t[0].strides[d];
    off[1] += c * p.t[1].strides[d];
    off[2] += c * p.t[2].strides[d];
  }
}

// Final write: position `pos` of line `line` takes original element `j`.
void write_out(Args p, int64_t line, int64_t pos, int64_t j) {
  int64_t off[3];
  line_offsets(p, line, off);
  const int size = element_size(p.t[0].dtype);
  const uint64_t bits = load_bits(element_address(p.t[0], off[0] + j * p.along[0]), size);
  store_bits(element_address(p.t[1], off[1] + pos * p.along[1]), size, bits);
  B64(element_address(p.t[2], off[2] + pos * p.along[2])).v = uint64_t(j);
}

uint64_t key_in(Args p, int64_t e) { return B64(p.keys_in + uint64_t(e) * 8UL).v; }

void merge(Args p) {
  const int64_t n = p.n, w = p.width;
  const uint64_t threads = invocations();
  for (uint64_t u = global_index(); u < uint64_t(p.total); u += threads) {
    const int64_t e = int64_t(u);
    const int64_t line = e / n, c = e % n, base = line * n;
    const uint64_t key = key_in(p, e);
    const int64_t s = c - c % (2L * w);
    const int64_t aend = min(s + w, n), bend = min(s + 2L * w, n);
    int64_t dest;
    if (c < aend) {
      int64_t lo = aend, hi = bend;  // count B's keys below key
      while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2L;
        if (key_in(p, base + mid) < key) lo = mid + 1L; else hi = mid;
      }
      dest = c + (lo - aend);
    } else {
      int64_t lo = s, hi = aend;  // count A's keys at or below key
      while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2L;
        if (key_in(p, base + mid) <= key) lo = mid + 1L; else hi = mid;
      }
      dest = s + (c - aend) + (lo - s);
    }
    const int64_t j = int64_t(B64(p.idx_in + u * 8UL).v);
    if (p.direct != 0)
      write_out(p, line, dest, j);
    else {
      B64(p.keys_out + uint64_t(base + dest) * 8UL).v = key;
      B64(p.idx_out + uint64_t(base + dest) * 8UL).v = uint64_t(j);
    }
  }
}

void main() { merge(pc.params.args); }
