//===- Quality.h - Error and size measures for compressed weights -*- C++ -*-===//
//
// One place for the two numbers every format is judged by: signal-to-noise
// ratio against the original weights, and storage bits per weight including
// every scale, offset and padding byte the format stores.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_COMPRESS_QUALITY_H
#define AFM_COMPRESS_QUALITY_H

#include <cstddef>

namespace mlir::afm {

/// The sums `snrDb` is made of, accumulated piece by piece (a large
/// weight is quantized and measured a few rows at a time).
struct SNRSums {
  double signal = 0.0, noise = 0.0;
  void add(const float *ref, const float *approx, size_t n);
  double db() const;
};

/// 10*log10(sum ref^2 / sum (ref-approx)^2), accumulated in double. An exact
/// approximation has no noise and returns +infinity; a zero reference with a
/// nonzero error returns -infinity; n == 0 returns +infinity (nothing lost).
double snrDb(const float *ref, const float *approx, size_t n);

/// 2-bit balanced codes (rows padded to whole bytes) plus one f32 scale per
/// tensor, or per row when `perChannel`.
double q2BitsPerWeight(size_t rows, size_t cols, bool perChannel);

/// 4-bit codes (rows padded to whole bytes) plus one f32 scale per `group`
/// entries of a row.
double q4BitsPerWeight(size_t rows, size_t cols, size_t group);

/// 128 bits per 6x6 ASTC block (edge blocks padded), plus one f16 offset per
/// block when `withOffsets`: 4.0 and 3.56 bits when 6 divides both sizes.
double astcBitsPerWeight(size_t rows, size_t cols, bool withOffsets);

/// The CPU transcode of ASTC: 36 4-bit codes and an f16 scale and bias per
/// 6x6 block, 176 bits per 36 weights, over the stored (padded) blocks.
double astcTranscodeBitsPerWeight(size_t rows, size_t cols);

} // namespace mlir::afm

#endif // AFM_COMPRESS_QUALITY_H
