//===- HalfFloat.h - 16-bit float formats to f32 ----------------*- C++ -*-===//
//
// Exact widening of IEEE binary16 and bfloat16 bit patterns to f32. Every
// 16-bit value (including subnormals, infinities and NaN payloads) has an
// exact f32 counterpart, so these never round. Narrowing f32 to binary16
// rounds to nearest, ties to even, as a hardware fcvt does.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_MODEL_HALFFLOAT_H
#define AFM_MODEL_HALFFLOAT_H

#include <cstdint>

namespace mlir::afm {

/// The f32 value of the IEEE binary16 number with bit pattern `bits`.
float f16ToF32(uint16_t bits);

/// The f32 value of the bfloat16 number with bit pattern `bits` (the upper
/// half of an f32).
float bf16ToF32(uint16_t bits);

/// The IEEE binary16 bit pattern nearest to `value` (ties to even). Values
/// beyond the f16 range become infinities; NaNs stay NaNs (quiet).
uint16_t f32ToF16(float value);

/// The bfloat16 bit pattern nearest to `value` (ties to even): the upper
/// half of its f32 bits, rounded. NaNs stay NaNs (quiet).
uint16_t f32ToBF16(float value);

} // namespace mlir::afm

#endif // AFM_MODEL_HALFFLOAT_H
