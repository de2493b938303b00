//===- ASTCDecoder.h - ASTC HDR luminance block decoder ----------*- C++ -*-===//
//
// A decoder written from the Khronos Data Format Specification's ASTC
// chapter for the subset libastcenc emits when it compresses one weight
// matrix as luminance: void-extent (constant) blocks, and single-partition,
// single-plane blocks with color endpoint mode 0 (LDR luminance), 2 (HDR
// luminance, large range), 3 (HDR luminance, small range) or 7 (HDR RGB base
// + scale, which libastcenc picks now and then for blocks with few distinct
// values even when R = G = B; only its first channel is kept), any weight grid
// up to the block size (bilinear infill) and any weight range (bits, trits
// or quints in the integer sequence encoding). It decodes as the HDR profile
// does and returns the f16 value of every texel's first channel: LNS
// endpoints through the LNS-to-f16 mapping, LDR endpoints as UNORM16 to f16.
// Anything outside the subset is an error naming the feature, never a guess.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_COMPRESS_ASTCDECODER_H
#define AFM_COMPRESS_ASTCDECODER_H

#include "llvm/Support/Error.h"

#include <cstdint>

namespace mlir::afm {

/// Bytes of one ASTC block.
inline constexpr unsigned kASTCBlockBytes = 16;

/// Decodes one `blockX` x `blockY` block (each 4..12) into blockX*blockY f16
/// bit patterns, texel (x, y) at outF16[y * blockX + x].
llvm::Error decodeASTCBlock(const uint8_t block[kASTCBlockBytes],
                            unsigned blockX, unsigned blockY,
                            uint16_t *outF16);

/// The HDR-profile mapping of a 16-bit LNS value to an f16 bit pattern
/// (piecewise-linear mantissa; results beyond the f16 range clamp to
/// 0x7BFF, the largest finite value).
uint16_t astcLnsToF16(uint16_t lns);

/// The HDR-profile conversion of an LDR (UNORM16) result to f16: 0xFFFF is
/// 1.0, everything else is value / 65536 with the mantissa truncated.
uint16_t astcUnorm16ToF16(uint16_t unorm);

} // namespace mlir::afm

#endif // AFM_COMPRESS_ASTCDECODER_H
