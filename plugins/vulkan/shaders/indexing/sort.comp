// sort.comp - sort.stable: a stable merge sort of every line of `self` along
// `dim`, any strides, lines of any length, any number of lines.
//
// Every element gets a 64-bit order key (order_key below) such that unsigned
// key order is PyTorch's value order: -0.0 == +0.0, NaN above +inf (all NaNs
// equal), and the bitwise complement for descending. The line's original
// positions break ties, so the sort is stable in both directions. The sort is
// a bottom-up merge sort in which every element finds its own place: an
// element at position c of run A = [s, s + w) moves to c + |{b in B : b < key}|
// (B = [s + w, s + 2w), the run it merges with), an element of B to
// c - w + |{a in A : a <= key}|, each count a binary search. A's original
// positions all precede B's, so keys equal across the runs keep A first:
// stability with no index comparisons. No invocation loops over more than
// a tile or a binary search.
//
//  - LOCAL: one workgroup per tile of at most TILE elements of the flat
//    [lines, n] element order: a tile is TILE consecutive elements of one
//    line (n >= TILE) or the whole of TILE / n consecutive lines (n < TILE).
//    The tile's keys are merge-sorted in shared memory up to runs of TILE (or
//    whole lines), then written as (key, original position) pairs to
//    keys_out / idx_out at the tile's flat place, or, when `direct` (the
//    lines are then sorted), as values and indices into the outputs.
//  - MERGE (sort_merge.comp, a shader without barriers; same Args): one
//    invocation per element: merges runs of `width` of the flat pairs
//    keys_in / idx_in into keys_out / idx_out (2 * width), or into the
//    outputs when `direct` (the last pass).
// This file is the LOCAL pass.
// Operands: t[0] self, t[1] values, t[2] indices (int64), strides[0..] over
// the line dims (every dim but `dim`, `sizes`), along[k] the stride along dim.
#version 460
#include "common.glsl"

const uint TILE = 512u;  // LOCAL tile: two elements per invocation (indexing/sort.cpp: kTile)

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

shared uint64_t skey[2 * TILE];  // two buffers of TILE keys
shared uint spos[2 * TILE];      // each key's original tile-local position

// The unsigned order key of the element bits `bits` of `dtype` (ascending).
uint64_t order_key(uint64_t bits, int dtype) {
  if (!is_float(dtype)) return uint64_t(to_int(bits, dtype)) ^ 0x8000000000000000UL;
  const int size = element_size(dtype);
  uint64_t sign, inf, mask;
  if (size == 8) {
    sign = 0x8000000000000000UL;
    inf = 0x7ff0000000000000UL;
    mask = 0xffffffffffffffffUL;
  } else if (size == 4) {
    sign = 0x80000000UL;
    inf = 0x7f800000UL;
    mask = 0xffffffffUL;
  } else {
    sign = 0x8000UL;
    inf = dtype == FLOAT16 ? 0x7c00UL : 0x7f80UL;
    mask = 0xffffUL;
  }
  const uint64_t magnitude = bits & ~sign & mask;
  if (magnitude > inf) return 0xffffffffffffffffUL;  // NaN: above everything
  if (magnitude == 0UL) return sign;                 // -0.0 == +0.0
  // Sign-magnitude to unsigned order: negatives reversed below positives.
  return (bits & sign) != 0UL ? (~bits & mask) : (bits | sign);
}

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

uint64_t self_bits(Args p, int64_t line, int64_t j) {
  int64_t off[3];
  line_offsets(p, line, off);
  return load_bits(element_address(p.t[0], off[0] + j * p.along[0]), element_size(p.t[0].dtype));
}

uint64_t key_at(Args p, int64_t line, int64_t j) {
  const uint64_t key = order_key(self_bits(p, line, j), p.t[0].dtype);
  return p.descending != 0 ? ~key : key;
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

// The merged position of the element at run-relative position c of a
// segment of `len` keys at skey[base..], merging runs of w.
uint local_dest(uint base, uint len, uint c, uint w, uint64_t key) {
  const uint s = c - c % (2u * w);
  const uint aend = min(s + w, len), bend = min(s + 2u * w, len);
  if (c < aend) {
    // In A: count B's keys below `key`.
    uint lo = aend, hi = bend;
    while (lo < hi) {
      const uint mid = (lo + hi) / 2u;
      if (skey[base + mid] < key) lo = mid + 1u; else hi = mid;
    }
    return c + (lo - aend);
  }
  // In B: count A's keys at or below `key`.
  uint lo = s, hi = aend;
  while (lo < hi) {
    const uint mid = (lo + hi) / 2u;
    if (skey[base + mid] <= key) lo = mid + 1u; else hi = mid;
  }
  return s + (c - aend) + (lo - s);
}

void local_sort(Args p) {
  const int64_t n = p.n;
  const bool short_lines = n < int64_t(TILE);
  const int64_t per_tile = short_lines ? int64_t(TILE) / n : 0L;  // lines per tile
  const int64_t per_line = short_lines ? 0L : (n + int64_t(TILE) - 1L) / int64_t(TILE);
  const int64_t tiles = short_lines ? (p.lines + per_tile - 1L) / per_tile : p.lines * per_line;
  const uint seglen = short_lines ? uint(n) : TILE;  // sorted run length at the end
  const uint lid = gl_LocalInvocationID.x;
  const int64_t groups = int64_t(gl_NumWorkGroups.x) * int64_t(gl_NumWorkGroups.y);
  // The loop is uniform over the workgroup (it depends on the group only).
  for (int64_t g = int64_t(gl_WorkGroupID.y) * int64_t(gl_NumWorkGroups.x) +
                   int64_t(gl_WorkGroupID.x);
       g < tiles; g += groups) {
    int64_t start;  // flat position of the tile's first element
    uint count;     // elements in the tile
    if (short_lines) {
      start = g * per_tile * n;
      count = uint(min(per_tile, p.lines - g * per_tile) * n);
    } else {
      const int64_t j0 = (g % per_line) * int64_t(TILE);
      start = (g / per_line) * n + j0;
      count = uint(min(int64_t(TILE), n - j0));
    }
    for (uint i = lid; i < count; i += uint(WORKGROUP)) {
      const int64_t e = start + int64_t(i);
      skey[i] = key_at(p, e / n, e % n);
      spos[i] = i;
    }
    barrier();
    uint cur = 0u;
    for (uint w = 1u; w < seglen; w *= 2u) {
      for (uint i = lid; i < count; i += uint(WORKGROUP)) {
        const uint seg = i - i % seglen;
        const uint len = min(seglen, count - seg);
        const uint64_t key = skey[cur + i];
        const uint dest = (1u - cur / TILE) * TILE + seg +
                          local_dest(cur + seg, len, i - seg, w, key);
        skey[dest] = key;
        spos[dest] = spos[cur + i];
      }
      barrier();
      cur = TILE - cur;
    }
    for (uint i = lid; i < count; i += uint(WORKGROUP)) {
      const int64_t from = start + int64_t(spos[cur + i]);  // original flat position
      const int64_t to = start + int64_t(i);
      if (p.direct != 0)
        write_out(p, to / n, to % n, from % n);
      else {
        B64(p.keys_out + uint64_t(to) * 8UL).v = skey[cur + i];
        B64(p.idx_out + uint64_t(to) * 8UL).v = uint64_t(from % n);
      }
    }
    barrier();  // the next tile reuses the shared arrays
  }
}

void main() { local_sort(pc.params.args); }
