//===- Q4.cpp - 4-bit grouped tables for embeddings -----------------------===//

#include "afm/Compress/Q4.h"
#include "afm/Layout/PackedWeights.h"

#include <algorithm>
#include <cmath>

using namespace mlir::afm;

llvm::Expected<Q4Table> mlir::afm::quantizeQ4(const float *w, size_t rows,
                                              size_t cols, size_t group) {
  if (group == 0 || cols % group != 0)
    return llvm::createStringError(
        "4-bit table: group %zu does not divide %zu columns", group, cols);
  Q4Table out;
  out.rows = rows;
  out.cols = cols;
  out.group = group;
  out.codes.resize(rows * cols);
  out.scales.reserve(rows * (cols / group));
  for (size_t start = 0; start < rows * cols; start += group) {
    float maxPos = 0.0f, maxNeg = 0.0f;
    for (size_t i = start; i < start + group; ++i) {
      maxPos = std::max(maxPos, w[i]);
      maxNeg = std::max(maxNeg, -w[i]);
    }
    float scale = std::max(maxPos / 7.0f, maxNeg / 8.0f);
    out.scales.push_back(scale);
    for (size_t i = start; i < start + group; ++i) {
      float q = scale == 0.0f ? 0.0f : std::round(w[i] / scale);
      out.codes[i] = static_cast<int8_t>(std::clamp(q, -8.0f, 7.0f));
    }
  }
  return out;
}

std::vector<uint8_t> mlir::afm::packQ4(llvm::ArrayRef<int8_t> codes,
                                       size_t rows, size_t cols) {
  size_t rowBytes = q4RowBytes(cols);
  std::vector<uint8_t> packed(rows * rowBytes, 0);
  for (size_t r = 0; r < rows; ++r)
    for (size_t k = 0; k < cols; ++k) {
      uint8_t nibble = static_cast<uint8_t>(codes[r * cols + k]) & 0xf;
      packed[r * rowBytes + k / 2] |= static_cast<uint8_t>(nibble << (4 * (k % 2)));
    }
  return packed;
}

llvm::Expected<std::vector<int8_t>>
mlir::afm::unpackQ4(llvm::ArrayRef<uint8_t> packed, size_t rows, size_t cols) {
  size_t rowBytes = q4RowBytes(cols);
  if (packed.size() != rows * rowBytes)
    return llvm::createStringError(
        "4-bit unpack: %zu bytes for a %zux%zu table (expected %zu)",
        packed.size(), rows, cols, rows * rowBytes);
  std::vector<int8_t> codes(rows * cols);
  for (size_t r = 0; r < rows; ++r)
    for (size_t k = 0; k < cols; ++k) {
      int nibble = (packed[r * rowBytes + k / 2] >> (4 * (k % 2))) & 0xf;
      codes[r * cols + k] = static_cast<int8_t>(nibble >= 8 ? nibble - 16 : nibble);
    }
  return codes;
}

std::vector<uint8_t> mlir::afm::kernelOrderQ4Codes(
    llvm::ArrayRef<uint8_t> packed, size_t rows, size_t cols, size_t group) {
  int64_t c = static_cast<int64_t>(cols), g = static_cast<int64_t>(group);
  if (!q4HasInterleavedCodes(c, g))
    return packed.vec();
  size_t rowBytes = q4RowBytes(cols);
  std::vector<uint8_t> ordered(packed.size());
  for (size_t r = 0; r < rows; ++r)
    for (size_t b = 0; b < rowBytes; ++b)
      ordered[r * rowBytes + q4CodeByteInRow(2 * b, c, g)] =
          packed[r * rowBytes + b];
  return ordered;
}

void mlir::afm::dequantizeQ4Row(const Q4Table &table, size_t row, float *out) {
  size_t groups = table.cols / table.group;
  for (size_t k = 0; k < table.cols; ++k)
    out[k] = table.scales[row * groups + k / table.group] *
             static_cast<float>(table.codes[row * table.cols + k]);
}
