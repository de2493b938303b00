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
//   kASTCBlockColumnAlign (the stored block columns; afm/Layout/PackedWeights.h
//   defines the constants and index functions)
//   codes   [Nb, 6, 3, Kb] bytes, row-major: row r (0..5) and column j (0..5)
//           of block (nb, kb) is nibble j % 2 (0 = low) of byte [nb][r][j/2][kb]
//   scales  [Nb, Kb] f16 bit patterns
//   biases  [Nb, Kb] f16 bit patterns
//
// Rows and columns past the matrix (edge-block padding) hold code 0; block
// columns past ceil(cols / 6) hold code 0 and scale and bias 0.
//
// That plane layout is the interchange form (the ONNX afm domain's
// LinearASTC takes it); the kernels read the codes repacked by row pairs
// (packASTCKernelCodes, afm/Layout/PackedWeights.h).
//
//===----------------------------------------------------------------------===//

#ifndef AFM_COMPRESS_ASTCTRANSCODE_H
#define AFM_COMPRESS_ASTCTRANSCODE_H

#include "afm/Compress/ASTC.h"

#include <cstdint>
#include <vector>

namespace mlir::afm {

struct ASTCTranscoded {
  size_t rows = 0, cols = 0;
  /// Blocks covering the matrix, and the block columns stored (padded).
  size_t blockRows = 0, blockCols = 0, storedBlockCols = 0;
  std::vector<uint8_t> codes;
  std::vector<uint16_t> scales, biases;
};

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
