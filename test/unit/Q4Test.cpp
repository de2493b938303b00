//===- Q4Test.cpp - 4-bit grouped tables ----------------------------------===//

#include "afm/Compress/Q4.h"
#include "CompressTestSupport.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace mlir::afm;

TEST(Q4, PackIsLowNibbleFirstTwosComplement) {
  std::vector<int8_t> codes = {-8, 7, -1, 0, 3};
  std::vector<uint8_t> packed = packQ4(codes, 1, 5);
  ASSERT_EQ(packed.size(), 3u);
  EXPECT_EQ(packed[0], 0x78);
  EXPECT_EQ(packed[1], 0x0f);
  EXPECT_EQ(packed[2], 0x03);
  llvm::Expected<std::vector<int8_t>> back = unpackQ4(packed, 1, 5);
  ASSERT_TRUE(static_cast<bool>(back));
  EXPECT_EQ(*back, codes);
}

TEST(Q4, RandomRoundTrip) {
  std::mt19937 rng(5);
  std::vector<int8_t> codes(9 * 33);
  for (int8_t &c : codes)
    c = static_cast<int8_t>(static_cast<int>(rng() % 16) - 8);
  llvm::Expected<std::vector<int8_t>> back =
      unpackQ4(packQ4(codes, 9, 33), 9, 33);
  ASSERT_TRUE(static_cast<bool>(back));
  EXPECT_EQ(*back, codes);
}

TEST(Q4, GroupScalesClipNothingAndErrorIsHalfAStep) {
  size_t rows = 8, cols = 64, group = 16;
  std::vector<float> w = test::gaussian(rows * cols, 0.02f, 6);
  llvm::Expected<Q4Table> t = quantizeQ4(w.data(), rows, cols, group);
  ASSERT_TRUE(static_cast<bool>(t)) << llvm::toString(t.takeError());
  ASSERT_EQ(t->scales.size(), rows * cols / group);
  std::vector<float> row(cols);
  for (size_t r = 0; r < rows; ++r) {
    dequantizeQ4Row(*t, r, row.data());
    for (size_t g = 0; g < cols / group; ++g) {
      float scale = t->scales[r * (cols / group) + g];
      float absMax = 0.0f;
      for (size_t k = g * group; k < (g + 1) * group; ++k)
        absMax = std::max(absMax, std::fabs(w[r * cols + k]));
      EXPECT_LE(scale, absMax / 7.0f);
      EXPECT_GE(scale, absMax / 8.0f);
      for (size_t k = g * group; k < (g + 1) * group; ++k) {
        int8_t q = t->codes[r * cols + k];
        EXPECT_GE(q, -8);
        EXPECT_LE(q, 7);
        EXPECT_EQ(row[k], scale * q);
        EXPECT_LE(std::fabs(row[k] - w[r * cols + k]), 0.5f * scale * 1.0001f);
      }
    }
  }
}

TEST(Q4, NegativeExtremeUsesCodeMinus8) {
  std::vector<float> w = {-0.8f, 0.1f, 0.7f, 0.0f};
  llvm::Expected<Q4Table> t = quantizeQ4(w.data(), 1, 4, 4);
  ASSERT_TRUE(static_cast<bool>(t));
  EXPECT_FLOAT_EQ(t->scales[0], 0.1f);
  EXPECT_EQ(t->codes, (std::vector<int8_t>{-8, 1, 7, 0}));
}

TEST(Q4, GroupMustDivideColumns) {
  std::vector<float> w(12, 1.0f);
  llvm::Expected<Q4Table> t = quantizeQ4(w.data(), 2, 6, 4);
  ASSERT_FALSE(static_cast<bool>(t));
  EXPECT_NE(llvm::toString(t.takeError()).find("does not divide"),
            std::string::npos);
}
