//===- Quality.cpp - Error and size measures for compressed weights -------===//

#include "afm/Compress/Quality.h"
#include "afm/Compress/ASTCTranscode.h"

#include <cmath>
#include <limits>

using namespace mlir::afm;

void SNRSums::add(const float *ref, const float *approx, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    double r = ref[i];
    double e = r - static_cast<double>(approx[i]);
    signal += r * r;
    noise += e * e;
  }
}

double SNRSums::db() const {
  if (noise == 0.0)
    return std::numeric_limits<double>::infinity();
  if (signal == 0.0)
    return -std::numeric_limits<double>::infinity();
  return 10.0 * std::log10(signal / noise);
}

double mlir::afm::snrDb(const float *ref, const float *approx, size_t n) {
  SNRSums sums;
  sums.add(ref, approx, n);
  return sums.db();
}

static double perWeight(double bits, size_t rows, size_t cols) {
  return bits / (static_cast<double>(rows) * static_cast<double>(cols));
}

double mlir::afm::q2BitsPerWeight(size_t rows, size_t cols, bool perChannel) {
  double codeBits = 8.0 * rows * q2RowBytes(cols);
  double scaleBits = 32.0 * (perChannel ? rows : 1);
  return perWeight(codeBits + scaleBits, rows, cols);
}

double mlir::afm::q4BitsPerWeight(size_t rows, size_t cols, size_t group) {
  double codeBits = 8.0 * rows * q4RowBytes(cols);
  double scaleBits = 32.0 * rows * (cols / group);
  return perWeight(codeBits + scaleBits, rows, cols);
}

static double blockCount(size_t rows, size_t cols) {
  return static_cast<double>(astcBlocks(rows)) *
         static_cast<double>(astcBlocks(cols));
}

double mlir::afm::astcBitsPerWeight(size_t rows, size_t cols,
                                    bool withOffsets) {
  return perWeight(blockCount(rows, cols) * (withOffsets ? 144.0 : 128.0), rows,
                   cols);
}

double mlir::afm::astcTranscodeBitsPerWeight(size_t rows, size_t cols) {
  // 6 rows x 3 bytes of codes + f16 scale + f16 bias per stored block; the
  // block columns are stored padded to kASTCBlockColumnAlign.
  double blocks = static_cast<double>(astcBlocks(rows)) *
                  static_cast<double>(astcStoredBlockColumns(cols));
  return perWeight(blocks * (18 * 8 + 32), rows, cols);
}
