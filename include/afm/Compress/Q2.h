//===- Q2.h - 2-bit balanced weight quantization -----------------*- C++ -*-===//
//
// The on-device model's 2-bit weights (docs/semantics.md section 5): code q in 0..3
// stands for the balanced level q - 1.5 in {-1.5, -0.5, 0.5, 1.5}, and the
// weight is s * level(q) with one scale s per tensor or per output channel
// (row). Balanced levels have no zero, so every code carries sign and
// magnitude and the grid is symmetric.
//
// Packed layout (what the kernels read): row-major, each row padded to a
// whole byte, 4 codes per byte, lowest bits first: the code of column k sits
// in byte k/4 of its row at bits 2*(k%4).
//
//===----------------------------------------------------------------------===//

#ifndef AFM_COMPRESS_Q2_H
#define AFM_COMPRESS_Q2_H

#include "afm/Layout/PackedWeights.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace mlir::afm {

enum class Q2ScaleMode { PerTensor, PerChannel };

/// The level of a 2-bit code: code - 1.5.
inline float q2Level(uint8_t code) { return static_cast<float>(code) - 1.5f; }

struct Q2Tensor {
  size_t rows = 0, cols = 0;
  Q2ScaleMode mode = Q2ScaleMode::PerTensor;
  /// One code (0..3) per weight, row-major, unpacked.
  std::vector<uint8_t> codes;
  /// One scale (PerTensor) or one per row (PerChannel).
  std::vector<float> scales;
  /// Post-training quantization only: per scale, the clip c = 1.5 * s and
  /// f = c / max|W| (the clip fraction of docs/semantics.md section 5.1), and OCTAV's own clip
  /// before refinement. Empty for imported tensors.
  std::vector<float> clips, clipFractions, octavClips;
};

/// Post-training quantization. Per scale group the clip starts from OCTAV
/// with the noise coefficient of this balanced grid (octavBalancedGridNoise;
/// the paper's 4^-B/3 assumes 2^B steps over [-c, c] and lands ~16% too high
/// on Gaussians) and is then refined by a bounded search on the exact MSE of
/// this quantizer around the OCTAV clip, because the uniform-noise model is
/// only approximate at 2 bits. s = c / 1.5; codes are the nearest level,
/// saturating. An all-zero group gets s = 0 and codes 2 (dequantize to 0).
Q2Tensor quantizeQ2(const float *w, size_t rows, size_t cols,
                    Q2ScaleMode mode = Q2ScaleMode::PerTensor);

/// Nearest-level code for `w` under scale `s` > 0 (ties go up).
uint8_t q2Code(float w, float s);

/// Imports already-quantized (QAT) data: `codes` one per weight (0..3),
/// `scales` of size 1 (per tensor) or `rows` (per channel), finite.
llvm::Expected<Q2Tensor> importQ2(llvm::ArrayRef<uint8_t> codes,
                                  llvm::ArrayRef<float> scales, size_t rows,
                                  size_t cols);

/// Packs one-per-weight codes (each 0..3) into the layout above.
std::vector<uint8_t> packQ2(llvm::ArrayRef<uint8_t> codes, size_t rows,
                            size_t cols);

/// The inverse of packQ2; fails when `packed` is not rows*q2RowBytes(cols).
llvm::Expected<std::vector<uint8_t>> unpackQ2(llvm::ArrayRef<uint8_t> packed,
                                              size_t rows, size_t cols);

/// s * level(q) for every weight, [rows, cols] row-major.
std::vector<float> dequantizeQ2(const Q2Tensor &tensor);

} // namespace mlir::afm

#endif // AFM_COMPRESS_Q2_H
