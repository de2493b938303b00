//===- Q2Pack.cpp - 2-bit code packing ------------------------------------===//

#include "afm/Compress/Q2.h"

using namespace mlir::afm;

std::vector<uint8_t> mlir::afm::packQ2(llvm::ArrayRef<uint8_t> codes,
                                       size_t rows, size_t cols) {
  size_t rowBytes = q2RowBytes(cols);
  std::vector<uint8_t> packed(rows * rowBytes, 0);
  for (size_t r = 0; r < rows; ++r)
    for (size_t k = 0; k < cols; ++k)
      packed[r * rowBytes + k / 4] |=
          static_cast<uint8_t>((codes[r * cols + k] & 3) << (2 * (k % 4)));
  return packed;
}

llvm::Expected<std::vector<uint8_t>>
mlir::afm::unpackQ2(llvm::ArrayRef<uint8_t> packed, size_t rows, size_t cols) {
  size_t rowBytes = q2RowBytes(cols);
  if (packed.size() != rows * rowBytes)
    return llvm::createStringError(
        "2-bit unpack: %zu bytes for a %zux%zu tensor (expected %zu)",
        packed.size(), rows, cols, rows * rowBytes);
  std::vector<uint8_t> codes(rows * cols);
  for (size_t r = 0; r < rows; ++r)
    for (size_t k = 0; k < cols; ++k)
      codes[r * cols + k] = (packed[r * rowBytes + k / 4] >> (2 * (k % 4))) & 3;
  return codes;
}
