//===- ASTCTranscode.cpp - ASTC to 4-bit block-affine for CPUs ------------===//

#include "afm/Compress/ASTCTranscode.h"
#include "afm/Compress/Bands.h"
#include "afm/Model/HalfFloat.h"

#include <algorithm>
#include <cmath>

using namespace mlir::afm;

namespace {
/// One block's f16 scale and bias and its codes for the real texels.
struct BlockFit {
  uint16_t scale = 0, bias = 0;
  uint8_t codes[kASTCBlockDim * kASTCBlockDim] = {};
  double error = INFINITY;
};
} // namespace

/// Codes for `v` under the rounded pair, each the q whose f32 value
/// scale*q + bias is nearest (checked on the neighbours of the rounded
/// quotient, since the f32 formula is what the kernels evaluate).
static BlockFit fitCodes(const float *v, unsigned n, uint16_t scaleBits,
                         uint16_t biasBits) {
  BlockFit fit;
  fit.scale = scaleBits;
  fit.bias = biasBits;
  fit.error = 0.0;
  float scale = f16ToF32(scaleBits), bias = f16ToF32(biasBits);
  for (unsigned i = 0; i < n; ++i) {
    int guess = scale > 0.0f
                    ? static_cast<int>(std::lround((v[i] - bias) / scale))
                    : 0;
    guess = std::clamp(guess, 0, 15);
    int best = guess;
    double bestErr = INFINITY;
    for (int q = std::max(guess - 1, 0); q <= std::min(guess + 1, 15); ++q) {
      double e = std::fabs(static_cast<double>(scale * q + bias) - v[i]);
      if (e < bestErr) {
        bestErr = e;
        best = q;
      }
    }
    double e = static_cast<double>(scale * best + bias) - v[i];
    fit.codes[i] = static_cast<uint8_t>(best);
    fit.error += e * e;
  }
  return fit;
}

static BlockFit fitBlock(const float *v, unsigned n) {
  float lo = *std::min_element(v, v + n), hi = *std::max_element(v, v + n);
  BlockFit best = fitCodes(v, n, f32ToF16((hi - lo) / 15.0f), f32ToF16(lo));
  // Refit scale and bias by least squares for the chosen codes: the
  // min/max grid wastes levels when the extremes are outliers.
  for (int it = 0; it < 3; ++it) {
    double sq = 0, sv = 0, sqq = 0, sqv = 0;
    for (unsigned i = 0; i < n; ++i) {
      sq += best.codes[i];
      sv += v[i];
      sqq += double(best.codes[i]) * best.codes[i];
      sqv += best.codes[i] * double(v[i]);
    }
    double det = n * sqq - sq * sq;
    if (det <= 0.0)
      break;
    double scale = (n * sqv - sq * sv) / det;
    double bias = (sv - scale * sq) / n;
    if (scale <= 0.0)
      break;
    BlockFit next = fitCodes(v, n, f32ToF16(static_cast<float>(scale)),
                             f32ToF16(static_cast<float>(bias)));
    if (next.error >= best.error)
      break;
    best = next;
  }
  return best;
}

ASTCTranscoded mlir::afm::transcodeAffine4(const float *w, size_t rows,
                                           size_t cols) {
  const size_t dim = kASTCBlockDim;
  ASTCTranscoded t;
  t.rows = rows;
  t.cols = cols;
  t.blockRows = (rows + dim - 1) / dim;
  t.blockCols = (cols + dim - 1) / dim;
  t.storedBlockCols = astcStoredBlockColumns(cols);
  t.codes.assign(t.blockRows * dim * (dim / 2) * t.storedBlockCols, 0);
  t.scales.assign(t.blockRows * t.storedBlockCols, 0);
  t.biases.assign(t.blockRows * t.storedBlockCols, 0);
  // Block rows in bands on several threads: a block row's codes, scales
  // and biases are its own bytes.
  auto fitRows = [&](size_t firstBlockRow, size_t endBlockRow,
                     unsigned) -> llvm::Error {
    float values[dim * dim];
    for (size_t nb = firstBlockRow; nb < endBlockRow; ++nb)
      for (size_t kb = 0; kb < t.blockCols; ++kb) {
        size_t height = std::min(dim, rows - nb * dim);
        size_t width = std::min(dim, cols - kb * dim);
        for (size_t r = 0; r < height; ++r)
          for (size_t j = 0; j < width; ++j)
            values[r * width + j] = w[(nb * dim + r) * cols + kb * dim + j];
        BlockFit fit =
            fitBlock(values, static_cast<unsigned>(height * width));
        t.scales[nb * t.storedBlockCols + kb] = fit.scale;
        t.biases[nb * t.storedBlockCols + kb] = fit.bias;
        for (size_t r = 0; r < height; ++r)
          for (size_t j = 0; j < width; ++j)
            t.codes[astcPlaneByteIndex(t.storedBlockCols, nb, r, kb, j)] |=
                static_cast<uint8_t>(fit.codes[r * width + j]
                                     << (4 * (j % 2)));
      }
    return llvm::Error::success();
  };
  llvm::cantFail(forEachBand(t.blockRows, kBandBlockRows, /*threads=*/0,
                             fitRows));
  return t;
}

uint8_t mlir::afm::transcodedCode(const ASTCTranscoded &t, size_t row,
                                  size_t col) {
  size_t byte = astcPlaneByteIndex(t.storedBlockCols, row / kASTCBlockDim,
                                    row % kASTCBlockDim, col / kASTCBlockDim,
                                    col % kASTCBlockDim);
  return (t.codes[byte] >> (4 * (col % kASTCBlockDim % 2))) & 0xf;
}

std::vector<float> mlir::afm::dequantizeTranscoded(const ASTCTranscoded &t) {
  std::vector<float> out(t.rows * t.cols);
  for (size_t r = 0; r < t.rows; ++r)
    for (size_t c = 0; c < t.cols; ++c) {
      size_t block =
          (r / kASTCBlockDim) * t.storedBlockCols + c / kASTCBlockDim;
      out[r * t.cols + c] = f16ToF32(t.scales[block]) *
                                static_cast<float>(transcodedCode(t, r, c)) +
                            f16ToF32(t.biases[block]);
    }
  return out;
}
