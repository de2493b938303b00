//===- ASTCIntegerSequence.h - ASTC integer sequence encoding ----*- C++ -*-===//
//
// Private to AFMCompress: the bounded integer sequence encoding (ISE) of
// ASTC weights and color endpoints, and their unquantization, per the
// Khronos Data Format Specification (ASTC chapter, "Integer Sequence
// Encoding", "Color Endpoint Unquantization", "Weight Unquantization").
//
//===----------------------------------------------------------------------===//

#ifndef AFM_LIB_COMPRESS_ASTCINTEGERSEQUENCE_H
#define AFM_LIB_COMPRESS_ASTCINTEGERSEQUENCE_H

#include <cstdint>

namespace mlir::afm::astc {

/// One of the 21 ASTC ranges: 2^bits levels, times 3 with a trit or 5 with
/// a quint. Index 0 is 2 levels, 20 is 256 levels (spec order).
struct QuantRange {
  unsigned bits;
  bool trit;
  bool quint;
  unsigned levels() const { return (1u << bits) * (trit ? 3 : quint ? 5 : 1); }
};

inline constexpr unsigned kQuantRangeCount = 21;
QuantRange quantRange(unsigned index);

/// Bits taken by `count` values of range `index`.
unsigned iseBitCount(unsigned count, unsigned index);

/// Decodes `count` values of range `index` from `data` (little-endian bit
/// stream, bit i is bit i%8 of byte i/8) starting at bit `start`. Bits past
/// 128 read as zero, as the spec's zero-padding of partial groups implies.
void decodeISE(const uint8_t data[16], unsigned start, unsigned count,
               unsigned index, uint8_t *values);

/// A weight of range `index` (index < 12) to 0..64.
unsigned unquantizeWeight(uint8_t value, unsigned index);

/// A color endpoint value of range `index` to 0..255. Ranges 1 and 3
/// (3 and 5 levels) never carry colors and return 0.
unsigned unquantizeColor(uint8_t value, unsigned index);

} // namespace mlir::afm::astc

#endif // AFM_LIB_COMPRESS_ASTCINTEGERSEQUENCE_H
