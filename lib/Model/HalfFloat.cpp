//===- HalfFloat.cpp - 16-bit float formats to f32 ------------------------===//

#include "afm/Model/HalfFloat.h"

#include <cmath>
#include <cstring>

using namespace mlir::afm;

static float fromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

float mlir::afm::f16ToF32(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits >> 15) << 31;
  uint32_t exponent = (bits >> 10) & 0x1f;
  uint32_t mantissa = bits & 0x3ff;
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24, exact in f32.
    float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 0x1f) // Infinity or NaN (payload kept).
    return fromBits(sign | 0x7f800000u | (mantissa << 13));
  return fromBits(sign | ((exponent - 15 + 127) << 23) | (mantissa << 13));
}

float mlir::afm::bf16ToF32(uint16_t bits) {
  return fromBits(static_cast<uint32_t>(bits) << 16);
}
