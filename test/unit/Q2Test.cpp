//===- Q2Test.cpp - 2-bit balanced weights --------------------------------===//

#include "afm/Compress/Octav.h"
#include "afm/Compress/Q2.h"
#include "afm/Compress/Quality.h"
#include "CompressTestSupport.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace mlir::afm;

/// Exact MSE of the balanced 4-level quantizer at clip c, written out
/// independently of the library: nearest of the levels {-1.5,..,1.5}*c/1.5.
static double bruteMse(const std::vector<float> &w, double c) {
  double s = c / 1.5, sum = 0.0;
  for (float x : w) {
    double best = INFINITY;
    for (double level : {-1.5, -0.5, 0.5, 1.5})
      best = std::min(best, std::fabs(level * s - x));
    sum += best * best;
  }
  return sum / w.size();
}

TEST(Q2, PackPutsColumnKAtByteKOver4Bits2KMod4) {
  // One row of 6 codes: bytes 0b11100100 (codes 0,1,2,3) and 0b00000111.
  std::vector<uint8_t> codes = {0, 1, 2, 3, 3, 1};
  std::vector<uint8_t> packed = packQ2(codes, 1, 6);
  ASSERT_EQ(packed.size(), 2u);
  EXPECT_EQ(packed[0], 0xe4);
  EXPECT_EQ(packed[1], 0x07);
}

TEST(Q2, PackUnpackRoundTripWithRowPadding) {
  std::mt19937 rng(3);
  size_t rows = 5, cols = 7;
  std::vector<uint8_t> codes(rows * cols);
  for (uint8_t &c : codes)
    c = rng() % 4;
  std::vector<uint8_t> packed = packQ2(codes, rows, cols);
  EXPECT_EQ(packed.size(), rows * 2);
  llvm::Expected<std::vector<uint8_t>> back = unpackQ2(packed, rows, cols);
  ASSERT_TRUE(static_cast<bool>(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(*back, codes);
  EXPECT_FALSE(static_cast<bool>(unpackQ2(packed, rows, cols + 2)));
  llvm::consumeError(unpackQ2(packed, rows, cols + 2).takeError());
}

TEST(Q2, DequantizeIsScaleTimesLevel) {
  std::vector<uint8_t> codes = {0, 1, 2, 3, 3, 2};
  llvm::Expected<Q2Tensor> t = importQ2(codes, {0.5f, 2.0f}, 2, 3);
  ASSERT_TRUE(static_cast<bool>(t)) << llvm::toString(t.takeError());
  EXPECT_EQ(t->mode, Q2ScaleMode::PerChannel);
  std::vector<float> w = dequantizeQ2(*t);
  std::vector<float> expected = {-0.75f, -0.25f, 0.25f, 3.0f, 3.0f, 1.0f};
  EXPECT_EQ(w, expected);
}

TEST(Q2, ImportRejectsBadShapesAndCodes) {
  std::vector<uint8_t> codes = {0, 1, 2, 3};
  auto expectError = [](llvm::Expected<Q2Tensor> t, const char *what) {
    ASSERT_FALSE(static_cast<bool>(t));
    EXPECT_NE(llvm::toString(t.takeError()).find(what), std::string::npos);
  };
  expectError(importQ2(codes, {1.0f}, 3, 2), "codes");
  expectError(importQ2(codes, {1.0f, 1.0f, 1.0f}, 2, 2), "scales");
  expectError(importQ2({0, 1, 4, 3}, {1.0f}, 2, 2), "code 4");
  expectError(importQ2(codes, {NAN}, 2, 2), "not finite");
}

TEST(Q2, OctavIterationReachesItsFixedPoint) {
  std::vector<float> w = test::gaussian(50000, 0.02f, 1);
  double k = octavPaperNoise(2);
  EXPECT_DOUBLE_EQ(k, 1.0 / 48.0);
  OctavResult r = octavClip(w.data(), w.size(), k);
  ASSERT_TRUE(r.converged);
  EXPECT_LT(r.iterations, 100u);
  // Evaluate the OCTAV update once more, written out here.
  double above = 0.0, sum = 0.0;
  for (float x : w)
    if (std::fabs(x) > r.clip) {
      above += 1.0;
      sum += std::fabs(x);
    }
  double n = w.size();
  double next = (sum / n) / (k * (n - above) / n + above / n);
  EXPECT_NEAR(next, r.clip, 1e-6 * r.clip);
  // For N(0, 1) the 2-bit OCTAV clip is about 1.74 sigma.
  EXPECT_NEAR(r.clip / 0.02, 1.74, 0.05);
}

TEST(Q2, ClipMatchesBruteForceMseOptimum) {
  std::vector<float> w = test::gaussian(40000, 0.02f, 2);
  double bestClip = 0.0, bestMse = INFINITY;
  for (int i = 1; i <= 2000; ++i) {
    double c = 0.08 * i / 2000.0;
    double mse = bruteMse(w, c);
    if (mse < bestMse) {
      bestMse = mse;
      bestClip = c;
    }
  }
  Q2Tensor t = quantizeQ2(w.data(), 200, 200);
  ASSERT_EQ(t.scales.size(), 1u);
  double clip = t.clips[0];
  EXPECT_NEAR(clip, bestClip, 0.02 * bestClip);
  EXPECT_LE(bruteMse(w, clip), 1.01 * bestMse);
  EXPECT_FLOAT_EQ(t.scales[0], static_cast<float>(clip / 1.5));
  float maxAbs = 0.0f;
  for (float x : w)
    maxAbs = std::max(maxAbs, std::fabs(x));
  EXPECT_FLOAT_EQ(t.clipFractions[0], static_cast<float>(clip / maxAbs));
  // The reconstruction is the nearest level of every weight.
  std::vector<float> back = dequantizeQ2(t);
  double mse = 0.0;
  for (size_t i = 0; i < w.size(); ++i)
    mse += double(back[i] - w[i]) * (back[i] - w[i]);
  EXPECT_NEAR(mse / w.size(), bruteMse(w, clip), 1e-6 * bestMse);
  // What plain OCTAV (both noise models) would have cost, for the record.
  double paper = octavClip(w.data(), w.size(), octavPaperNoise(2)).clip;
  std::printf("[ q2 ] brute clip %.5f, ours %.5f (OCTAV start %.5f); paper "
              "OCTAV %.5f: MSE +%.2f%%, grid OCTAV MSE +%.2f%%\n",
              bestClip, clip, double(t.octavClips[0]), paper,
              100 * (bruteMse(w, paper) / bestMse - 1),
              100 * (bruteMse(w, t.octavClips[0]) / bestMse - 1));
}

TEST(Q2, PerChannelHasOneScalePerRowAndNoMoreError) {
  size_t rows = 16, cols = 256;
  std::vector<float> w = test::gaussian(rows * cols, 0.02f, 4);
  for (size_t c = 0; c < cols; ++c) // Row r has standard deviation ~(r+1).
    for (size_t r = 0; r < rows; ++r)
      w[r * cols + c] *= static_cast<float>(r + 1);
  Q2Tensor perTensor = quantizeQ2(w.data(), rows, cols);
  Q2Tensor perChannel = quantizeQ2(w.data(), rows, cols, Q2ScaleMode::PerChannel);
  ASSERT_EQ(perChannel.scales.size(), rows);
  EXPECT_GT(perChannel.scales[rows - 1], 8 * perChannel.scales[0]);
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < cols; ++c)
      ASSERT_EQ(perChannel.codes[r * cols + c],
                q2Code(w[r * cols + c], perChannel.scales[r]));
  std::vector<float> a = dequantizeQ2(perTensor), b = dequantizeQ2(perChannel);
  EXPECT_GT(snrDb(w.data(), b.data(), w.size()),
            snrDb(w.data(), a.data(), w.size()));
}

TEST(Q2, AllZeroTensorDequantizesToZero) {
  std::vector<float> w(12, 0.0f);
  Q2Tensor t = quantizeQ2(w.data(), 3, 4);
  EXPECT_EQ(dequantizeQ2(t), w);
}
