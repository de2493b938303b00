//===- Q4Layout.h - where the kernels find a 4-bit table's codes -*- C++ -*-===//
//
// The one definition of the byte order of a bound `!afm.q4` table's codes,
// shared by the packager (lib/Package), which writes them, and the kernels
// (passes/conversion/Q4Matmul.cpp; the gather in CompressedKernels.cpp),
// which read them. Header only,
// no MLIR: both sides include it.
//
// Row-major rows of packed nibbles (Q4.h: column k in byte k / 2, low
// nibble first, two's complement). Within a row, when the row's groups
// come in whole sets of 16 and a group is whole 4-byte words, the bytes
// are interleaved 16 groups at a time:
//
//   group g = 16 * gq + gl, byte b of the group = 4 * w + m
//   sits at  gq * 16 * (G / 2) + (16 * w + gl) * 4 + m
//
// so word w of sixteen consecutive groups is one contiguous 64-byte
// vector: one i32 lane per group. A GEMV then sums a whole group in one
// lane (integer dot products, or f32 multiply-adds) and multiplies by the
// group's scale once per group, with the sixteen scales of those groups a
// contiguous vector too. (In the plain order a lane would hold a quarter
// of a group, and each scale would have to be spread over four lanes.)
// Other shapes (small test models) keep the plain order.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_COMPRESS_Q4LAYOUT_H
#define AFM_COMPRESS_Q4LAYOUT_H

#include <cstdint>

namespace mlir::afm {

/// Groups interleaved together: one 16-lane vector of i32 or f32.
inline constexpr int64_t kQ4InterleavedGroups = 16;

/// Whether a table of `cols` columns in groups of `group` stores its codes
/// interleaved.
constexpr bool q4HasInterleavedCodes(int64_t cols, int64_t group) {
  return group > 0 && group % 8 == 0 &&
         cols % (kQ4InterleavedGroups * group) == 0;
}

/// The byte of a row holding column `col`'s code (nibble `col % 2`).
constexpr int64_t q4CodeByteInRow(int64_t col, int64_t cols, int64_t group) {
  if (!q4HasInterleavedCodes(cols, group))
    return col / 2;
  int64_t g = col / group, gq = g / kQ4InterleavedGroups,
          gl = g % kQ4InterleavedGroups;
  int64_t b = (col % group) / 2, w = b / 4, m = b % 4;
  return gq * kQ4InterleavedGroups * (group / 2) +
         (kQ4InterleavedGroups * w + gl) * 4 + m;
}

} // namespace mlir::afm

#endif // AFM_COMPRESS_Q4LAYOUT_H
