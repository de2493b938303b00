//===- HalfFloatTest.cpp - f32 to f16 rounding ----------------------------===//
//
// Checked against the compiler's own _Float16 conversion (round to nearest
// even), an implementation independent of ours.

#include "afm/Model/HalfFloat.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

using namespace mlir::afm;

static uint16_t compilerF16(float value) {
  _Float16 h = static_cast<_Float16>(value);
  uint16_t bits;
  std::memcpy(&bits, &h, sizeof(bits));
  return bits;
}

TEST(HalfFloat, EveryF16RoundTrips) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    if ((bits & 0x7c00) == 0x7c00 && (bits & 0x3ff)) // NaNs: check class only.
      continue;
    EXPECT_EQ(f32ToF16(f16ToF32(static_cast<uint16_t>(bits))), bits) << bits;
  }
  EXPECT_TRUE(std::isnan(f16ToF32(f32ToF16(NAN))));
}

TEST(HalfFloat, MatchesCompilerRounding) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<uint32_t> dist;
  for (int i = 0; i < 2000000; ++i) {
    uint32_t bits = dist(rng);
    float value;
    std::memcpy(&value, &bits, sizeof(value));
    if (std::isnan(value))
      continue;
    ASSERT_EQ(f32ToF16(value), compilerF16(value)) << value;
  }
}

TEST(HalfFloat, TiesGoToEven) {
  // Halfway between 1 and the next f16 (1 + 2^-10): rounds down to even 1.
  EXPECT_EQ(f32ToF16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  // Halfway between 1 + 2^-10 and 1 + 2^-9: rounds up to even.
  EXPECT_EQ(f32ToF16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  // 2^-25 is halfway between 0 and the smallest subnormal: even 0.
  EXPECT_EQ(f32ToF16(std::ldexp(1.0f, -25)), 0x0000);
  EXPECT_EQ(f32ToF16(65520.0f), 0x7c00);
  EXPECT_EQ(f32ToF16(65519.0f), 0x7bff);
  EXPECT_EQ(f32ToF16(-0.0f), 0x8000);
}
