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

/// `mantissa >> shift`, rounded to nearest with ties to even.
static uint32_t shiftRightRoundEven(uint32_t mantissa, unsigned shift) {
  uint32_t quotient = mantissa >> shift;
  uint32_t remainder = mantissa & ((1u << shift) - 1);
  uint32_t half = 1u << (shift - 1);
  if (remainder > half || (remainder == half && (quotient & 1)))
    ++quotient;
  return quotient;
}

uint16_t mlir::afm::f32ToF16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) // NaN: keep the top payload bits, force quiet.
    return sign | 0x7e00 | static_cast<uint16_t>((magnitude >> 13) & 0x3ff);
  if (magnitude >= 0x477ff000u) // 65520 and above round to infinity.
    return sign | 0x7c00;
  uint32_t exponent = magnitude >> 23;
  if (exponent < 113) {
    // Below 2^-14: an f16 subnormal in units of 2^-24. Under 2^-25 all
    // values round to zero (2^-25 itself is a tie that goes to even zero).
    if (exponent < 102)
      return sign;
    uint32_t mantissa = (magnitude & 0x7fffffu) | 0x800000u;
    // Carrying into 0x400 gives the smallest normal, which is correct.
    return sign | static_cast<uint16_t>(
                      shiftRightRoundEven(mantissa, 126 - exponent));
  }
  // Normal: rebias the exponent, round the 13 dropped mantissa bits. A carry
  // out of the mantissa correctly bumps the exponent.
  uint32_t rebiased = magnitude - ((127u - 15u) << 23);
  return sign | static_cast<uint16_t>(shiftRightRoundEven(rebiased, 13));
}

uint16_t mlir::afm::f32ToBF16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  if ((bits & 0x7fffffffu) > 0x7f800000u) // NaN: keep it a quiet NaN.
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  // Rounding the dropped 16 bits may carry into the exponent, up to
  // infinity, which is the correctly rounded result.
  return static_cast<uint16_t>(shiftRightRoundEven(bits, 16));
}
