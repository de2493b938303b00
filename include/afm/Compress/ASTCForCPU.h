//===- ASTCForCPU.h - An ASTC weight encoded for the CPU kernels --*- C++ -*-===//
//
// The whole way from float weights to what an ASTC weight stores: the ASTC
// blocks and offsets (libastcenc, ASTC.h), our decode of them (D + offset),
// the CPU transcode of that (ASTCTranscode.h) and the kernels' row-pair
// codes (afm/Layout/PackedWeights.h), a band of block rows at a time. Every
// step works block by block and every output is in block-row order, so
// bands give the bytes of the whole matrix, while the float copies (the
// decode, the transcode's dequantized values) are one band's: a 150000 x
// 3072 LM head's were 1.8 GB each, and its compile peaked at 7.96 GB.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_COMPRESS_ASTCFORCPU_H
#define AFM_COMPRESS_ASTCFORCPU_H

#include "afm/Compress/ASTC.h"
#include "afm/Compress/Quality.h"
#include "afm/Layout/PackedWeights.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace mlir::afm {

/// Block rows per band of encodeASTCForCPU: 6144 weight rows, 75 MB of f32
/// for 3072 columns.
constexpr size_t kASTCForCPUBandBlockRows = 1024;

struct ASTCForCPU {
  /// The ASTC form: 16 bytes per block and one f16 offset, [Nb, Kb].
  std::vector<uint8_t> blocks;
  std::vector<uint16_t> offsets;
  /// The transcoded form the CPU kernels read: row-pair codes and f16
  /// scales and biases per stored block, [Nb, Kb'] (ASTCTranscode.h).
  ASTCKernelCodes kernelCodes;
  std::vector<uint16_t> scales, biases;
  /// The decoded ASTC weights and the transcode's, each against `w`.
  SNRSums astcQuality, transcodeQuality;
  /// The transcode's dequantized weights [rows, cols], when asked for.
  std::vector<float> values;
};

/// Encodes `w` ([rows, cols], row-major) `bandBlockRows` block rows at a
/// time; the bytes do not depend on the band size. `keepValues` keeps the
/// dequantized transcode. `done(rowEnd)` is called after each band with
/// the end of the rows it no longer reads (so a mapped source can drop
/// them). Fails as encodeASTC does.
llvm::Expected<ASTCForCPU>
encodeASTCForCPU(const float *w, size_t rows, size_t cols,
                 const ASTCEncodeOptions &options, bool keepValues,
                 size_t bandBlockRows = kASTCForCPUBandBlockRows,
                 llvm::function_ref<void(size_t rowEnd)> done = {});

} // namespace mlir::afm

#endif // AFM_COMPRESS_ASTCFORCPU_H
