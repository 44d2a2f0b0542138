// sort_nonzero.comp - nonzero's count and fill phases, any strides, ndim <= 8.
//
// self's row-major element range is cut into `blocks` blocks of
// WORKGROUP * per_invocation consecutive elements; block b belongs to one
// workgroup, whose invocation k owns the per_invocation consecutive elements
// starting at b * WORKGROUP * per_invocation + k * per_invocation. "Non-zero"
// is x != 0 as the CPU plugin has it: NaN counts, -0.0 does not.
//
//  - COUNT: counts[b] = the non-zero elements of block b.
//  - SCAN (one workgroup): counts[0..blocks) becomes its exclusive prefix
//    sum and counts[blocks] the total (the host sizes the output by it).
//  - FILL (after COUNT and SCAN): every invocation recounts its elements,
//    the workgroup turns those counts into starting rows (from counts[b]),
//    and each invocation writes the coordinates of its non-zero elements,
//    in order, as int64 rows of `out` ([out_rows, ndim]). Rows at or past
//    out_rows are not written (self changed since the size phase).
#version 460
#include "common.glsl"

const int MODE_COUNT = 0, MODE_SCAN = 1, MODE_FILL = 2;

// The parameters, copied into the invocation once (main): on lavapipe every
// load through a buffer reference is a loop over the SIMD lanes, so fields
// are not re-read from the block inside loops.
struct Args {
  int64_t numel;
  int64_t per_invocation;  // elements per invocation (>= 1)
  int64_t blocks;
  int ndim;
  int mode;
  int64_t sizes[8];  // self's
  uint64_t counts;   // uint64 array [blocks + 1]
  int64_t out_rows;
  Operand self;  // strides: self's
  Operand dst;   // strides[0]: between rows, strides[1]: between coordinates
};

struct Params {
  Args args;
};

layout(set = 0, binding = 0, std430) uniform ParamsBlock { Params params; } pc;

shared uint64_t part[256];  // one value per invocation (WORKGROUP)

bool nonzero_bits(uint64_t bits, int dtype, int size) {
  if (!is_float(dtype)) return bits != 0UL;
  // Floating: any bit but the sign (so -0.0 is zero and NaN is not).
  const uint64_t magnitude = size == 8   ? 0x7fffffffffffffffUL
                             : size == 4 ? 0x7fffffffUL
                                         : 0x7fffUL;
  return (bits & magnitude) != 0UL;
}

// The first element and element count of invocation `lid` of block `b`.
void my_range(Args p, int64_t b, uint lid, out int64_t begin, out int64_t count) {
  begin = (b * int64_t(WORKGROUP) + int64_t(lid)) * p.per_invocation;
  count = max(0L, min(p.per_invocation, p.numel - begin));
}

// Coordinates and element offset of row-major position `e`.
void locate(Args p, int64_t e, out int64_t coords[8], out int64_t off) {
  off = 0L;
  int64_t rest = e;
  for (int d = 7; d >= 0; --d) coords[d] = 0L;
  for (int d = p.ndim - 1; d >= 0; --d) {
    coords[d] = rest % p.sizes[d];
    rest /= p.sizes[d];
    off += coords[d] * p.self.strides[d];
  }
}

// Moves (coords, off) to the next row-major position.
void advance(Args p, inout int64_t coords[8], inout int64_t off) {
  for (int d = p.ndim - 1; d >= 0; --d) {
    coords[d] += 1L;
    off += p.self.strides[d];
    if (coords[d] < p.sizes[d]) return;
    off -= coords[d] * p.self.strides[d];
    coords[d] = 0L;
  }
}

// The non-zero elements among invocation lid's elements of block b.
uint64_t count_mine(Args p, int64_t b, uint lid) {
  int64_t begin, count;
  my_range(p, b, lid, begin, count);
  if (count == 0L) return 0UL;
  const int dtype = p.self.dtype, size = element_size(dtype);
  int64_t coords[8];
  int64_t off;
  locate(p, begin, coords, off);
  uint64_t found = 0UL;
  for (int64_t i = 0L; i < count; ++i) {
    if (nonzero_bits(load_bits(element_address(p.self, off), size), dtype, size)) found += 1UL;
    advance(p, coords, off);
  }
  return found;
}

uint64_t counts_at(Args p, int64_t i) { return B64(p.counts + uint64_t(i) * 8UL).v; }
void set_count(Args p, int64_t i, uint64_t v) { B64(p.counts + uint64_t(i) * 8UL).v = v; }

// part[0..WORKGROUP) becomes its exclusive prefix sum; returns the total.
// Call in uniform control flow (barriers).
uint64_t scan_parts(uint lid) {
  barrier();
  if (lid == 0u) {
    uint64_t sum = 0UL;
    for (uint k = 0u; k < uint(WORKGROUP); ++k) {
      const uint64_t v = part[k];
      part[k] = sum;
      sum += v;
    }
    part[0] = sum;  // temporarily: read below, then restored
  }
  barrier();
  const uint64_t total = part[0];
  barrier();
  if (lid == 0u) part[0] = 0UL;
  barrier();
  return total;
}

void count_blocks(Args p) {
  const uint lid = gl_LocalInvocationID.x;
  const int64_t groups = int64_t(gl_NumWorkGroups.x) * int64_t(gl_NumWorkGroups.y);
  for (int64_t b = int64_t(gl_WorkGroupID.y) * int64_t(gl_NumWorkGroups.x) +
                   int64_t(gl_WorkGroupID.x);
       b < p.blocks; b += groups) {  // uniform over the workgroup
    part[lid] = count_mine(p, b, lid);
    const uint64_t total = scan_parts(lid);
    if (lid == 0u) set_count(p, b, total);
  }
}

void scan_blocks(Args p) {
  if (gl_WorkGroupID.x != 0u || gl_WorkGroupID.y != 0u) return;  // one workgroup
  const uint lid = gl_LocalInvocationID.x;
  const int64_t per = (p.blocks + int64_t(WORKGROUP) - 1L) / int64_t(WORKGROUP);
  const int64_t first = int64_t(lid) * per, last = min(first + per, p.blocks);
  uint64_t sum = 0UL;
  for (int64_t i = first; i < last; ++i) sum += counts_at(p, i);
  part[lid] = sum;
  const uint64_t total = scan_parts(lid);
  uint64_t running = part[lid];
  for (int64_t i = first; i < last; ++i) {
    const uint64_t v = counts_at(p, i);
    set_count(p, i, running);
    running += v;
  }
  if (lid == 0u) set_count(p, p.blocks, total);
}

void fill_blocks(Args p) {
  const uint lid = gl_LocalInvocationID.x;
  const int64_t groups = int64_t(gl_NumWorkGroups.x) * int64_t(gl_NumWorkGroups.y);
  const int dtype = p.self.dtype, size = element_size(dtype);
  for (int64_t b = int64_t(gl_WorkGroupID.y) * int64_t(gl_NumWorkGroups.x) +
                   int64_t(gl_WorkGroupID.x);
       b < p.blocks; b += groups) {  // uniform over the workgroup
    part[lid] = count_mine(p, b, lid);
    scan_parts(lid);
    int64_t row = int64_t(counts_at(p, b) + part[lid]);
    barrier();  // part is rewritten by the next block
    int64_t begin, count;
    my_range(p, b, lid, begin, count);
    int64_t coords[8];
    int64_t off;
    if (count > 0L) locate(p, begin, coords, off);
    for (int64_t i = 0L; i < count && row < p.out_rows; ++i) {
      if (nonzero_bits(load_bits(element_address(p.self, off), size), dtype, size)) {
        for (int d = 0; d < p.ndim; ++d)
          B64(element_address(p.dst, row * p.dst.strides[0] + int64_t(d) * p.dst.strides[1])).v =
              uint64_t(coords[d]);
        row += 1L;
      }
      advance(p, coords, off);
    }
  }
}

void main() {
  const Args p = pc.params.args;
  if (p.mode == MODE_COUNT)
    count_blocks(p);
  else if (p.mode == MODE_SCAN)
    scan_blocks(p);
  else
    fill_blocks(p);
}
