//===- ASTC.h - Weight matrices as 6x6 HDR ASTC blocks -----------*- C++ -*-===//
//
// The server model's weights (docs/semantics.md section 5): a [rows, cols] matrix is
// cut into 6x6 blocks in row-major block order; block (nb, kb) covers rows
// 6nb..6nb+5 and columns 6kb..6kb+5 and is stored at index nb * Kb + kb,
// Kb = ceil(cols / 6). Per block an f16 offset m_b is subtracted, the rest is
// encoded by libastcenc as one 128-bit HDR luminance block, and the weight is
// D + m_b where D is the decoded f16 value.
//
// Edge blocks are padded by cycling through the block's real values, so
// padding never widens the range the block must cover; offsets use real
// texels only.
//
// Measured on Gaussian weights (sigma 0.02, 96x96 to 4096x4096): Min gives
// ~3.5 dB SNR, LinearSegment ~13.2 dB. Min reaches 6.7-8.4 dB only when
// libastcenc may use 2-4 partitions, which decodeASTCBlock does not support;
// quality presets (60 vs 98/100) and G/B error weights change < 0.1 dB.
// Hence the fastest preset: against the medium one, on 3072 x 3072
// Gaussian and 8192 x 768 Laplacian weights, it loses 0.002-0.003 dB and
// encodes 1.5-1.6x as fast (2026-12-07, Zen 3, 2 threads: 1.3-1.4 ->
// 2.0-2.1 million weights a second; libastcenc is 74-82% of an encode).
//
//===----------------------------------------------------------------------===//

#ifndef AFM_COMPRESS_ASTC_H
#define AFM_COMPRESS_ASTC_H

#include "afm/Compress/Bands.h"
#include "afm/Layout/PackedWeights.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace mlir::afm {

enum class ASTCOffsetMode {
  /// m_b = the block minimum (the paper's choice), rounded down to f16 so
  /// that D = w - m_b is never negative. D then spans many binades of the
  /// logarithmic HDR encoding and values near 0 get most of the precision.
  Min,
  /// m_b = min - 2^ceil(log2(max - min)), rounded to nearest f16: D lies in
  /// [2^e, 2^(e+1)], one binade, where the HDR encoding is close to linear.
  LinearSegment,
};

struct ASTCEncodeOptions {
  ASTCOffsetMode offsetMode = ASTCOffsetMode::LinearSegment;
  /// libastcenc quality (0..100; 0 is ASTCENC_PRE_FASTEST, 60
  /// ASTCENC_PRE_MEDIUM). Below the presets' block-mode, candidate and
  /// refinement limits SNR drops: candidate and refinement limits of 1
  /// cost 0.03 dB, a block-mode limit of 25 1.3 dB.
  float quality = 0.0f;
  /// Put the value in R, G and B (true) or in R only with G = B = 0. R only
  /// makes libastcenc choose HDR RGB modes 11 and 15, which the decoder
  /// rejects: keep true.
  bool lumaInAllChannels = true;
  /// libastcenc's error weight of G and B (R has 1, A has 0: alpha is a
  /// constant 1 nobody reads).
  float greenBlueWeight = 0.0f;
  /// libastcenc's partition count limit (1 keeps the decoder's subset).
  unsigned partitionLimit = 1;
  /// Rows of blocks per band: the matrix is encoded a band at a time, each
  /// band's RGBA f32 image (16 bytes a weight) built, encoded and reused,
  /// so the staging memory is a few bands' and not the matrix's (a 150000
  /// x 3072 LM head's whole image took 7.4 GB). libastcenc encodes each
  /// block alone, so bands give the same bytes as one image.
  size_t bandBlockRows = kBandBlockRows;
  /// Threads that encode bands at once (0: one per hardware thread; never
  /// more than there are bands).
  unsigned threads = 0;
};

struct ASTCMatrix {
  size_t rows = 0, cols = 0;
  /// Nb = ceil(rows / 6), Kb = ceil(cols / 6).
  size_t blockRows = 0, blockCols = 0;
  /// 16 bytes per block, block (nb, kb) at byte (nb * Kb + kb) * 16.
  std::vector<uint8_t> blocks;
  /// One f16 bit pattern per block, same order.
  std::vector<uint16_t> offsets;
  /// f16ToF32(D) + f16ToF32(m_b) in f32, [rows, cols] row-major, with D from
  /// decodeASTCBlock.
  std::vector<float> weights;
};

/// The f16 offset of a block holding `n` real values under `mode`.
uint16_t astcBlockOffset(const float *values, size_t n, ASTCOffsetMode mode);

/// Encodes `w` ([rows, cols], row-major). Fails on libastcenc errors and on
/// blocks the decoder does not support (e.g. more partitions allowed).
llvm::Expected<ASTCMatrix> encodeASTC(const float *w, size_t rows,
                                      size_t cols,
                                      const ASTCEncodeOptions &options = {});

inline llvm::Expected<ASTCMatrix> encodeASTC(const float *w, size_t rows,
                                             size_t cols,
                                             ASTCOffsetMode mode) {
  ASTCEncodeOptions options;
  options.offsetMode = mode;
  return encodeASTC(w, rows, cols, options);
}

/// Fills `matrix.weights` (`D + offset` per texel) from its blocks and
/// offsets with our own decoder; an error names a block it cannot decode or
/// sizes that do not fit `rows x cols`.
llvm::Error decodeASTCWeights(ASTCMatrix &matrix);

} // namespace mlir::afm

#endif // AFM_COMPRESS_ASTC_H
