//===- ASTCEncoderTest.cpp - Weight matrices as 6x6 HDR ASTC blocks -------===//

#include "afm/Compress/ASTC.h"
#include "afm/Compress/ASTCDecoder.h"
#include "afm/Compress/Quality.h"
#include "afm/Model/HalfFloat.h"
#include "CompressTestSupport.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace mlir::afm;

TEST(ASTCOffset, MinIsTheBlockMinimumRoundedDown) {
  std::vector<float> v = {0.0123f, -0.0371f, 0.05f};
  uint16_t bits = astcBlockOffset(v.data(), v.size(), ASTCOffsetMode::Min);
  float offset = f16ToF32(bits);
  EXPECT_LE(offset, -0.0371f);
  // The next f16 towards zero is above the minimum.
  EXPECT_GT(f16ToF32(static_cast<uint16_t>(bits - 1)), -0.0371f);
}

TEST(ASTCOffset, LinearSegmentPutsTheBlockInOneBinade) {
  std::vector<float> v = {0.0123f, -0.0371f, 0.05f};
  uint16_t bits =
      astcBlockOffset(v.data(), v.size(), ASTCOffsetMode::LinearSegment);
  // range 0.0871 -> 2^ceil(log2) = 0.125; offset = f16(-0.0371 - 0.125).
  EXPECT_EQ(bits, f32ToF16(-0.0371f - 0.125f));
  float offset = f16ToF32(bits);
  for (float x : v) {
    float d = x - offset;
    EXPECT_GE(d, 0.125f * (1 - 1e-3f));
    EXPECT_LE(d, 0.25f * (1 + 1e-3f));
  }
}

/// Encodes, then checks the stored weights are D + offset of our decoder
/// for every real texel, and returns the SNR.
static double encodeAndCheck(const std::vector<float> &w, size_t rows,
                             size_t cols, ASTCOffsetMode mode) {
  llvm::Expected<ASTCMatrix> m = encodeASTC(w.data(), rows, cols, mode);
  EXPECT_TRUE(static_cast<bool>(m)) << llvm::toString(m.takeError());
  if (!m)
    return 0;
  EXPECT_EQ(m->blockRows, (rows + 5) / 6);
  EXPECT_EQ(m->blockCols, (cols + 5) / 6);
  EXPECT_EQ(m->blocks.size(), m->blockRows * m->blockCols * 16);
  for (size_t nb = 0; nb < m->blockRows; ++nb)
    for (size_t kb = 0; kb < m->blockCols; ++kb) {
      size_t b = nb * m->blockCols + kb;
      uint16_t d[36];
      EXPECT_FALSE(static_cast<bool>(decodeASTCBlock(&m->blocks[b * 16], 6, 6, d)));
      for (size_t y = 0; y < 6 && nb * 6 + y < rows; ++y)
        for (size_t x = 0; x < 6 && kb * 6 + x < cols; ++x)
          EXPECT_EQ(m->weights[(nb * 6 + y) * cols + kb * 6 + x],
                    f16ToF32(d[y * 6 + x]) + f16ToF32(m->offsets[b]));
    }
  return snrDb(w.data(), m->weights.data(), w.size());
}

TEST(ASTCEncoder, GaussianQualityInBothOffsetModes) {
  std::vector<float> w = test::gaussian(96 * 96, 0.02f, 21);
  double minSnr = encodeAndCheck(w, 96, 96, ASTCOffsetMode::Min);
  double linSnr = encodeAndCheck(w, 96, 96, ASTCOffsetMode::LinearSegment);
  std::printf("[ astc ] 96x96 sigma 0.02: min %.2f dB, linear segment %.2f dB\n",
              minSnr, linSnr);
  EXPECT_GT(minSnr, 2.0);
  EXPECT_GT(linSnr, 11.0);
  EXPECT_GT(linSnr, minSnr);
}

TEST(ASTCEncoder, EdgeBlocksArePaddedNotDamaged) {
  // 7x13: the last block row and column hold 1 row / 1 column of data
  // (libastcenc answers such blocks with HDR RGB endpoints, mode 7), and
  // 10x16 leaves 4 rows / 4 columns.
  std::vector<float> w = test::gaussian(7 * 13, 0.02f, 22);
  EXPECT_GT(encodeAndCheck(w, 7, 13, ASTCOffsetMode::LinearSegment), 10.0);
  EXPECT_GT(encodeAndCheck(w, 7, 13, ASTCOffsetMode::Min), 2.0);
  w = test::gaussian(10 * 16, 0.02f, 23);
  EXPECT_GT(encodeAndCheck(w, 10, 16, ASTCOffsetMode::LinearSegment), 10.0);
  EXPECT_GT(encodeAndCheck(w, 10, 16, ASTCOffsetMode::Min), 2.0);
}

TEST(ASTCEncoder, BandsOnSeveralThreadsGiveTheBytesOfOneImage) {
  // 50 x 40: 9 block rows (the last holds 2 real rows) and 7 block columns
  // (the last holds 4). One image of all 9 block rows on one thread, then
  // bands of 2 block rows (the last band 1) on 3 threads.
  std::vector<float> w = test::gaussian(50 * 40, 0.02f, 24);
  ASTCEncodeOptions whole;
  whole.bandBlockRows = 1000;
  whole.threads = 1;
  ASTCEncodeOptions banded;
  banded.bandBlockRows = 2;
  banded.threads = 3;
  llvm::Expected<ASTCMatrix> one = encodeASTC(w.data(), 50, 40, whole);
  llvm::Expected<ASTCMatrix> bands = encodeASTC(w.data(), 50, 40, banded);
  ASSERT_TRUE(static_cast<bool>(one)) << llvm::toString(one.takeError());
  ASSERT_TRUE(static_cast<bool>(bands)) << llvm::toString(bands.takeError());
  EXPECT_EQ(one->blocks, bands->blocks);
  EXPECT_EQ(one->offsets, bands->offsets);
  EXPECT_EQ(one->weights, bands->weights);
  EXPECT_GT(snrDb(w.data(), bands->weights.data(), w.size()), 10.0);
}

TEST(ASTCEncoder, ConstantMatrixIsNearlyExact) {
  std::vector<float> w(12 * 12, 0.015625f);
  llvm::Expected<ASTCMatrix> m =
      encodeASTC(w.data(), 12, 12, ASTCOffsetMode::LinearSegment);
  ASSERT_TRUE(static_cast<bool>(m)) << llvm::toString(m.takeError());
  for (float v : m->weights)
    EXPECT_NEAR(v, 0.015625f, 1e-6f);
}
