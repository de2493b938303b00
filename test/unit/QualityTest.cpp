//===- QualityTest.cpp - SNR and bits per weight --------------------------===//

#include "afm/Compress/Quality.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using namespace mlir::afm;

TEST(Quality, SnrOfKnownNoise) {
  // Signal power 4 per element, noise 0.04: ratio 100 = 20 dB.
  std::vector<float> ref = {2.0f, -2.0f, 2.0f, -2.0f};
  std::vector<float> approx = {2.2f, -2.2f, 1.8f, -1.8f};
  EXPECT_NEAR(snrDb(ref.data(), approx.data(), 4), 20.0, 1e-5);
}

TEST(Quality, SnrOfExactCopyIsInfinite) {
  std::vector<float> ref = {1.0f, 2.0f};
  EXPECT_EQ(snrDb(ref.data(), ref.data(), 2), INFINITY);
  std::vector<float> zero = {0.0f, 0.0f};
  EXPECT_EQ(snrDb(zero.data(), ref.data(), 2), -INFINITY);
}

TEST(Quality, BitsPerWeight) {
  EXPECT_DOUBLE_EQ(astcBitsPerWeight(96, 96, true), 4.0);
  EXPECT_DOUBLE_EQ(astcBitsPerWeight(96, 96, false), 128.0 / 36.0);
  EXPECT_DOUBLE_EQ(astcTranscodeBitsPerWeight(96, 96), 176.0 / 36.0);
  // The stored block columns are padded to 16: 12 columns store 16 blocks.
  EXPECT_DOUBLE_EQ(astcTranscodeBitsPerWeight(6, 12), 16 * 176.0 / 72.0);
  // 7x7 needs four 6x6 blocks for 49 weights.
  EXPECT_DOUBLE_EQ(astcBitsPerWeight(7, 7, true), 4 * 144.0 / 49.0);
  EXPECT_DOUBLE_EQ(q2BitsPerWeight(4096, 4096, false),
                   2.0 + 32.0 / (4096.0 * 4096.0));
  EXPECT_DOUBLE_EQ(q2BitsPerWeight(4096, 4096, true), 2.0 + 32.0 / 4096.0);
  EXPECT_LE(q2BitsPerWeight(4096, 4096, false), 2.1);
  // 5 columns pad to 2 bytes per row.
  EXPECT_DOUBLE_EQ(q2BitsPerWeight(1, 5, false), (16.0 + 32.0) / 5.0);
  EXPECT_DOUBLE_EQ(q4BitsPerWeight(10, 64, 32), 4.0 + 1.0);
}
