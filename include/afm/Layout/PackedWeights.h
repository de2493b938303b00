//===- PackedWeights.h - the byte layouts of compressed weights -*- C++ -*-===//
//
// The one definition of how 2-bit, 4-bit and ASTC weights are laid out in
// memory: the constants and index functions that the dialect (its types'
// bound buffers), the kernels (passes/Conversion), the compressors
// (lib/Compress), the packager (lib/Package) and the ONNX importer all use.
// Header only and without MLIR or LLVM, so that every one of them can
// include it (CMake target AFMPackedWeights).
//
// 2-bit (!afm.q2): code q in 0..3 is the level q - 1.5; row-major rows,
// each padded to a whole byte, 4 codes per byte, lowest bits first:
// column k sits in byte k / 4 of its row at bits 2 * (k % 4).
//
// 4-bit (!afm.q4): signed codes in [-8, 7], two's complement nibbles,
// row-major rows padded to a whole byte, column k in byte k / 2, low nibble
// first. The kernels read a row's bytes interleaved 16 groups at a time
// when the row's groups come in whole sets of 16 and a group is whole 4-byte
// words:
//
//   group g = 16 * gq + gl, byte b of the group = 4 * w + m
//   sits at  gq * 16 * (G / 2) + (16 * w + gl) * 4 + m
//
// so word w of sixteen consecutive groups is one contiguous 64-byte vector,
// one i32 lane per group: a GEMV sums a whole group in one lane and
// multiplies by the group's scale once. Other shapes keep the plain order.
//
// ASTC (!afm.astc, CPU form): 6x6 blocks re-encoded as 4-bit codes with an
// f16 scale and bias per block. Nb = ceil(rows / 6) block rows; the block
// columns ceil(cols / 6) are stored padded to a multiple of 16 (Kb), so
// that kernels split K into vector-wide groups of whole block columns. The
// interchange (plane) form of the codes is [Nb, 6, 3, Kb] bytes: row r and
// column j of block (nb, kb) is nibble j % 2 of byte [nb][r][j / 2][kb].
// The kernels read the codes repacked by row pairs
// (packASTCKernelCodes): one byte holds column j of rows 2i (low nibble)
// and 2i + 1 of a block, so one nibble mask splits a byte into two rows'
// codes over the same activation, and a block row pair's columns 0..3 are
// one 32-bit lane, the four bytes an int8 dot-product instruction sums:
//
//   codes       [Nb, 3, Kb] u32: byte m (bits 8m..8m+7) is column m
//   tail codes  [Nb, 3, Kb] u16: byte m is column 4 + m
//
// (little-endian, as every target is).
//
//===----------------------------------------------------------------------===//

#ifndef AFM_LAYOUT_PACKEDWEIGHTS_H
#define AFM_LAYOUT_PACKEDWEIGHTS_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace mlir::afm {

//===----------------------------------------------------------------------===//
// 2-bit weights
//===----------------------------------------------------------------------===//

/// Codes in one byte of a packed 2-bit row.
inline constexpr int64_t kQ2CodesPerByte = 4;

/// Bytes per packed 2-bit row: ceil(cols / 4).
constexpr size_t q2RowBytes(size_t cols) {
  return (cols + kQ2CodesPerByte - 1) / kQ2CodesPerByte;
}

//===----------------------------------------------------------------------===//
// 4-bit tables
//===----------------------------------------------------------------------===//

/// Codes in one byte of a packed 4-bit row.
inline constexpr int64_t kQ4CodesPerByte = 2;

/// Bytes per packed 4-bit row: ceil(cols / 2).
constexpr size_t q4RowBytes(size_t cols) {
  return (cols + kQ4CodesPerByte - 1) / kQ4CodesPerByte;
}

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

//===----------------------------------------------------------------------===//
// ASTC weights (CPU form)
//===----------------------------------------------------------------------===//

/// The block footprint (square) that ASTC weights are encoded with and that
/// has a CPU form.
inline constexpr int64_t kASTCBlockDim = 6;

/// Stored block columns are a multiple of this.
inline constexpr int64_t kASTCBlockColumnAlign = 16;

/// Blocks covering `n` rows or columns: ceil(n / 6).
constexpr int64_t astcBlocks(int64_t n) {
  return (n + kASTCBlockDim - 1) / kASTCBlockDim;
}

/// The block columns a matrix of `cols` columns is stored with:
/// ceil(cols / 6) rounded up to kASTCBlockColumnAlign.
constexpr int64_t astcStoredBlockColumns(int64_t cols) {
  return (astcBlocks(cols) + kASTCBlockColumnAlign - 1) /
         kASTCBlockColumnAlign * kASTCBlockColumnAlign;
}

/// Byte index of block (nb, kb), block row r, column j (its pair j / 2) in
/// plane-form codes with `storedBlockCols` block columns.
constexpr size_t astcPlaneByteIndex(size_t storedBlockCols, size_t nb,
                                    size_t r, size_t kb, size_t j) {
  return ((nb * kASTCBlockDim + r) * (kASTCBlockDim / 2) + j / 2) *
             storedBlockCols +
         kb;
}

/// The kernels' form of the codes (see the top of this file).
struct ASTCKernelCodes {
  std::vector<uint32_t> codes;
  std::vector<uint16_t> tailCodes;
};

/// Repacks plane-form codes [blockRows, 6, 3, storedBlockCols] into the
/// kernels' row-pair form. (The ONNX importer repacks constant LinearASTC
/// codes with it, without linking the encoder.)
inline ASTCKernelCodes packASTCKernelCodes(const uint8_t *codes,
                                           size_t blockRows,
                                           size_t storedBlockCols) {
  const size_t dim = size_t(kASTCBlockDim), pairs = dim / 2;
  ASTCKernelCodes k;
  k.codes.assign(blockRows * pairs * storedBlockCols, 0);
  k.tailCodes.assign(blockRows * pairs * storedBlockCols, 0);
  auto code = [&](size_t nb, size_t r, size_t kb, size_t j) -> uint32_t {
    uint8_t byte = codes[astcPlaneByteIndex(storedBlockCols, nb, r, kb, j)];
    return (byte >> (4 * (j % 2))) & 0xf;
  };
  for (size_t nb = 0; nb < blockRows; ++nb)
    for (size_t i = 0; i < pairs; ++i)
      for (size_t kb = 0; kb < storedBlockCols; ++kb) {
        size_t lane = (nb * pairs + i) * storedBlockCols + kb;
        for (size_t j = 0; j < dim; ++j) {
          uint32_t byte = code(nb, 2 * i, kb, j) | code(nb, 2 * i + 1, kb, j)
                                                       << 4;
          if (j < 4)
            k.codes[lane] |= byte << (8 * j);
          else
            k.tailCodes[lane] |= static_cast<uint16_t>(byte << (8 * (j - 4)));
        }
      }
  return k;
}

} // namespace mlir::afm

#endif // AFM_LAYOUT_PACKEDWEIGHTS_H
