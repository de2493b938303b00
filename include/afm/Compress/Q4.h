//===- Q4.h - 4-bit grouped tables for embeddings ----------------*- C++ -*-===//
//
// The embedding table at 4 bits per weight (docs/semantics.md section 5): symmetric
// signed codes in [-8, 7] with one f32 scale per `group` consecutive entries
// of a row; value = scale * code.
//
// Packed layout: row-major, each row padded to a whole byte, 2 codes per
// byte, low nibble first (column k in byte k/2, bits 4*(k%2)), each nibble
// the two's complement of its code.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_COMPRESS_Q4_H
#define AFM_COMPRESS_Q4_H

#include "afm/Layout/PackedWeights.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace mlir::afm {

struct Q4Table {
  size_t rows = 0, cols = 0, group = 0;
  /// One code in [-8, 7] per entry, row-major, unpacked.
  std::vector<int8_t> codes;
  /// [rows, cols / group] row-major.
  std::vector<float> scales;
};

/// Quantizes with, per group, the smallest scale that clips nothing:
/// max(maxPositive / 7, maxNegativeMagnitude / 8). This is never larger than
/// the textbook absmax / 7 and uses code -8 when the largest magnitude is
/// negative, so the grid is finer at no cost. Codes round half away from
/// zero. Fails unless 0 < group and group divides cols.
llvm::Expected<Q4Table> quantizeQ4(const float *w, size_t rows, size_t cols,
                                   size_t group);

/// Packs codes (each in [-8, 7]) into the layout above.
std::vector<uint8_t> packQ4(llvm::ArrayRef<int8_t> codes, size_t rows,
                            size_t cols);

/// The inverse of packQ4; fails when `packed` is not rows*q4RowBytes(cols).
llvm::Expected<std::vector<int8_t>> unpackQ4(llvm::ArrayRef<uint8_t> packed,
                                             size_t rows, size_t cols);

/// Packed codes (the layout above) in the order the kernels read them
/// (afm/Layout/PackedWeights.h): the same bytes, interleaved 16 groups at a time when the
/// shape allows, else unchanged.
std::vector<uint8_t> kernelOrderQ4Codes(llvm::ArrayRef<uint8_t> packed,
                                        size_t rows, size_t cols,
                                        size_t group);

/// scale * code for the `cols` entries of `row` (the embedding lookup).
void dequantizeQ4Row(const Q4Table &table, size_t row, float *out);

} // namespace mlir::afm

#endif // AFM_COMPRESS_Q4_H
