//===- Q4Test.cpp - 4-bit grouped tables ----------------------------------===//

#include "afm/Compress/Q4.h"
#include "afm/Layout/PackedWeights.h"
#include "CompressTestSupport.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

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

// The kernels' order: word w of 16 consecutive groups is one 64-byte run,
// group by group; each byte moves exactly once.
TEST(Q4Layout, SixteenGroupsInterleaveByWord) {
  int64_t cols = 1024, group = 32; // 2 sets of 16 groups, 4 words a group
  ASSERT_TRUE(q4HasInterleavedCodes(cols, group));
  // Column 0 of group 0: byte 0; column 8 (word 1 of group 0): byte 64;
  // column 32 (group 1, word 0): byte 4; column 2 * 3 + 1 (byte 3 of word
  // 0, high nibble): byte 3; group 16 starts the second set at 256.
  EXPECT_EQ(q4CodeByteInRow(0, cols, group), 0);
  EXPECT_EQ(q4CodeByteInRow(8, cols, group), 64);
  EXPECT_EQ(q4CodeByteInRow(32, cols, group), 4);
  EXPECT_EQ(q4CodeByteInRow(7, cols, group), 3);
  EXPECT_EQ(q4CodeByteInRow(16 * 32, cols, group), 256);
  EXPECT_EQ(q4CodeByteInRow(15 * 32 + 31, cols, group), 3 * 64 + 15 * 4 + 3);
  std::set<int64_t> bytes;
  for (int64_t k = 0; k < cols; k += 2)
    bytes.insert(q4CodeByteInRow(k, cols, group));
  EXPECT_EQ(bytes.size(), size_t(cols / 2));
  EXPECT_EQ(*bytes.rbegin(), cols / 2 - 1);

  std::mt19937 rng(9);
  std::vector<uint8_t> packed(3 * cols / 2);
  for (uint8_t &b : packed)
    b = static_cast<uint8_t>(rng());
  std::vector<uint8_t> ordered = kernelOrderQ4Codes(packed, 3, cols, group);
  ASSERT_EQ(ordered.size(), packed.size());
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t k = 0; k < cols; k += 2)
      ASSERT_EQ(ordered[r * cols / 2 + q4CodeByteInRow(k, cols, group)],
                packed[r * cols / 2 + k / 2]);
}

// Rows without whole sets of 16 groups, or groups of a partial word, keep
// the plain order.
TEST(Q4Layout, OtherShapesKeepThePlainOrder) {
  EXPECT_FALSE(q4HasInterleavedCodes(64, 32));   // 2 groups
  EXPECT_FALSE(q4HasInterleavedCodes(640, 32));  // 20 groups
  EXPECT_TRUE(q4HasInterleavedCodes(1536, 32));  // 48 groups: 3 sets
  EXPECT_FALSE(q4HasInterleavedCodes(16 * 4, 4)); // half-word groups
  std::vector<uint8_t> packed = {1, 2, 3, 4};
  EXPECT_EQ(kernelOrderQ4Codes(packed, 1, 8, 4), packed);
  EXPECT_EQ(q4CodeByteInRow(5, 64, 32), 2);
}
