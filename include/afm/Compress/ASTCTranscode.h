//===- ASTCTranscode.h - ASTC to 4-bit block-affine for CPUs -----*- C++ -*-===//
//
// CPUs cannot sample ASTC, so the compiler re-encodes each decoded 6x6 block
// (offset included) as 4-bit codes with one f16 scale and one f16 bias:
//
//   w = f16ToF32(scale_b) * q + f16ToF32(bias_b)      (in f32, q in 0..15)
//
// where bias_b already contains the block's ASTC offset. Codes are chosen
// against the rounded f16 scale and bias, so this formula is exactly what
// the kernels compute. Layout, which the kernels rely on (plane-interleaved,
// so that one column pair of consecutive blocks is contiguous and a kernel
// splits K into vector-wide groups of whole blocks):
//
//   Nb = ceil(rows / 6), Kb = ceil(cols / 6) rounded up to a multiple of
//   kTranscodedBlockColumnAlign (the stored block columns)
//   codes   [Nb, 6, 3, Kb] bytes, row-major: row r (0..5) and column j (0..5)
//           of block (nb, kb) is nibble j % 2 (0 = low) of byte [nb][r][j/2][kb]
//   scales  [Nb, Kb] f16 bit patterns
//   biases  [Nb, Kb] f16 bit patterns
//
// Rows and columns past the matrix (edge-block padding) hold code 0; block
// columns past ceil(cols / 6) hold code 0 and scale and bias 0.
//
// That plane layout is the interchange form (the ONNX afm domain's
// LinearASTC takes it). The kernels read the codes repacked by row pairs
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

#ifndef AFM_COMPRESS_ASTCTRANSCODE_H
#define AFM_COMPRESS_ASTCTRANSCODE_H

#include "afm/Compress/ASTC.h"

#include <cstdint>
#include <vector>

namespace mlir::afm {

/// The stored block columns are a multiple of this (the compiler's
/// `kASTCBlockColumnAlign`, `dialects/afm/IR/AFMDialect.h`).
inline constexpr size_t kTranscodedBlockColumnAlign = 16;

struct ASTCTranscoded {
  size_t rows = 0, cols = 0;
  /// Blocks covering the matrix, and the block columns stored (padded).
  size_t blockRows = 0, blockCols = 0, storedBlockCols = 0;
  std::vector<uint8_t> codes;
  std::vector<uint16_t> scales, biases;
};

/// Byte index of block (nb, kb), block row r, column pair j/2 in `codes`
/// with `storedBlockCols` block columns.
inline size_t transcodedByteIndex(size_t storedBlockCols, size_t nb, size_t r,
                                  size_t kb, size_t j) {
  return ((nb * kASTCBlockDim + r) * (kASTCBlockDim / 2) + j / 2) *
             storedBlockCols +
         kb;
}

/// The kernels' form of the codes (see the top of this file).
struct ASTCKernelCodes {
  std::vector<uint32_t> codes;
  std::vector<uint16_t> tailCodes;
};

/// Repacks plane-layout codes [blockRows, 6, 3, storedBlockCols] into the
/// kernels' row-pair form. (Inline: the ONNX importer repacks constant
/// LinearASTC codes without linking the encoder.)
inline ASTCKernelCodes packASTCKernelCodes(const uint8_t *codes,
                                           size_t blockRows,
                                           size_t storedBlockCols) {
  const size_t dim = kASTCBlockDim, pairs = dim / 2;
  ASTCKernelCodes k;
  k.codes.assign(blockRows * pairs * storedBlockCols, 0);
  k.tailCodes.assign(blockRows * pairs * storedBlockCols, 0);
  auto code = [&](size_t nb, size_t r, size_t kb, size_t j) -> uint32_t {
    uint8_t byte = codes[transcodedByteIndex(storedBlockCols, nb, r, kb, j)];
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

/// Transcodes any [rows, cols] f32 matrix block by block (per block: min/max
/// start, then least-squares refits of scale and bias for the chosen codes,
/// keeping the best f16 pair by squared error).
ASTCTranscoded transcodeAffine4(const float *w, size_t rows, size_t cols);

/// Transcodes an encoded ASTC matrix from its decoded weights (D + offset).
inline ASTCTranscoded transcodeASTC(const ASTCMatrix &matrix) {
  return transcodeAffine4(matrix.weights.data(), matrix.rows, matrix.cols);
}

/// The code of weight (row, col), 0..15.
uint8_t transcodedCode(const ASTCTranscoded &t, size_t row, size_t col);

/// scale * q + bias for every weight, [rows, cols] row-major.
std::vector<float> dequantizeTranscoded(const ASTCTranscoded &t);

} // namespace mlir::afm

#endif // AFM_COMPRESS_ASTCTRANSCODE_H
