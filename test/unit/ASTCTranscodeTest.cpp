//===- ASTCTranscodeTest.cpp - ASTC to 4-bit block-affine -----------------===//

#include "afm/Compress/ASTCTranscode.h"
#include "afm/Compress/Quality.h"
#include "afm/Model/HalfFloat.h"
#include "CompressTestSupport.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace mlir::afm;

TEST(ASTCTranscode, LayoutIsNb63KbWithLowNibbleForEvenColumns) {
  // An 8x8 matrix (2x2 blocks, padded) whose block-affine fit is exact:
  // w = 1/16 * q + bias_b with q chosen per weight.
  size_t rows = 8, cols = 8;
  std::vector<float> w(rows * cols);
  std::vector<uint8_t> q(rows * cols);
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < cols; ++c) {
      q[r * cols + c] = static_cast<uint8_t>((r * 5 + c * 3) % 16);
      if (r % 6 == 0 && c % 6 == 0) q[r * cols + c] = 0;   // Pin min and
      if (r % 6 == 1 && c % 6 == 1) q[r * cols + c] = 15;  // max per block.
      float bias = (r / 6 + c / 6) * 0.5f - 1.0f;
      w[r * cols + c] = q[r * cols + c] / 16.0f + bias;
    }
  ASTCTranscoded t = transcodeAffine4(w.data(), rows, cols);
  ASSERT_EQ(t.blockRows, 2u);
  ASSERT_EQ(t.blockCols, 2u);
  // Two block columns, stored padded to 16.
  const size_t kb = 16;
  ASSERT_EQ(t.storedBlockCols, kb);
  ASSERT_EQ(t.codes.size(), 2u * 6 * 3 * kb);
  ASSERT_EQ(t.scales.size(), 2u * kb);
  for (size_t nb = 0; nb < 2; ++nb)
    for (size_t c = 0; c < 2; ++c)
      EXPECT_EQ(t.scales[nb * kb + c], f32ToF16(1.0f / 16.0f));
  EXPECT_EQ(t.biases[kb + 1], f32ToF16(0.0f));
  EXPECT_EQ(t.biases[1], f32ToF16(-0.5f));
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < cols; ++c) {
      size_t nb = r / 6, br = r % 6, j = c % 6;
      // The layout, written out: byte [nb][br][j/2][kb], nibble j%2.
      uint8_t byte = t.codes[((nb * 6 + br) * 3 + j / 2) * kb + c / 6];
      uint8_t code = (byte >> (4 * (j % 2))) & 0xf;
      EXPECT_EQ(code, q[r * cols + c]) << r << "," << c;
      EXPECT_EQ(transcodedCode(t, r, c), code);
    }
  // Padding: block row 1 has two real rows; rows 2..5 of it are code 0;
  // block column 1 has two real columns, columns 2..5 (pairs 1 and 2) are
  // code 0; block columns 2..15 are code 0 with scale and bias 0.
  for (size_t br = 2; br < 6; ++br)
    for (size_t i = 0; i < 3 * kb; ++i)
      EXPECT_EQ(t.codes[(6 + br) * 3 * kb + i], 0);
  for (size_t br = 0; br < 6; ++br)
    for (size_t pair = 1; pair < 3; ++pair)
      EXPECT_EQ(t.codes[(br * 3 + pair) * kb + 1], 0);
  for (size_t row = 0; row < 12; ++row)
    for (size_t pair = 0; pair < 3; ++pair)
      for (size_t c = 2; c < kb; ++c)
        EXPECT_EQ(t.codes[(row * 3 + pair) * kb + c], 0);
  for (size_t nb = 0; nb < 2; ++nb)
    for (size_t c = 2; c < kb; ++c) {
      EXPECT_EQ(t.scales[nb * kb + c], 0);
      EXPECT_EQ(t.biases[nb * kb + c], 0);
    }
  EXPECT_EQ(dequantizeTranscoded(t), w);
}

TEST(ASTCTranscode, KernelCodesPairRowsInOneByte) {
  // 14x20: three block rows (the last two rows real), four block columns
  // (the last two columns real), stored padded to 16.
  size_t rows = 14, cols = 20;
  std::vector<float> w = test::gaussian(rows * cols, 0.02f, 33);
  ASTCTranscoded t = transcodeAffine4(w.data(), rows, cols);
  const size_t kb = t.storedBlockCols;
  ASTCKernelCodes k = packASTCKernelCodes(t.codes.data(), t.blockRows, kb);
  ASSERT_EQ(k.codes.size(), 3u * 3 * kb);
  ASSERT_EQ(k.tailCodes.size(), 3u * 3 * kb);
  for (size_t r = 0; r < 18; ++r)
    for (size_t c = 0; c < 6 * kb; ++c) {
      size_t nb = r / 6, pair = r % 6 / 2, j = c % 6;
      // Written out: lane [nb][pair][kb]; byte j of the codes for columns
      // 0..3, of the tail codes for 4 and 5; the low nibble the even row.
      size_t lane = (nb * 3 + pair) * kb + c / 6;
      uint32_t word = j < 4 ? k.codes[lane] : k.tailCodes[lane];
      uint32_t byte = (word >> (8 * (j < 4 ? j : j - 4))) & 0xff;
      uint32_t code = (byte >> (4 * (r % 2))) & 0xf;
      uint32_t expected = r < rows && c < cols ? transcodedCode(t, r, c) : 0;
      EXPECT_EQ(code, expected) << r << "," << c;
    }
}

TEST(ASTCTranscode, DequantizeIsScaleTimesCodePlusBias) {
  std::vector<float> w = test::gaussian(30 * 24, 0.02f, 31);
  ASTCTranscoded t = transcodeAffine4(w.data(), 30, 24);
  std::vector<float> back = dequantizeTranscoded(t);
  for (size_t r = 0; r < 30; ++r)
    for (size_t c = 0; c < 24; ++c) {
      size_t b = (r / 6) * t.storedBlockCols + c / 6;
      float expected = f16ToF32(t.scales[b]) * transcodedCode(t, r, c) +
                       f16ToF32(t.biases[b]);
      EXPECT_EQ(back[r * 24 + c], expected);
      // No code does better under the same rounded scale and bias.
      for (int q = 0; q < 16; ++q)
        EXPECT_LE(std::fabs(back[r * 24 + c] - w[r * 24 + c]),
                  std::fabs(f16ToF32(t.scales[b]) * q + f16ToF32(t.biases[b]) -
                            w[r * 24 + c]) * (1 + 1e-6f));
    }
}

TEST(ASTCTranscode, FollowsTheAstcDecodeClosely) {
  std::vector<float> w = test::gaussian(96 * 96, 0.02f, 32);
  for (ASTCOffsetMode mode :
       {ASTCOffsetMode::Min, ASTCOffsetMode::LinearSegment}) {
    llvm::Expected<ASTCMatrix> m = encodeASTC(w.data(), 96, 96, mode);
    ASSERT_TRUE(static_cast<bool>(m)) << llvm::toString(m.takeError());
    ASTCTranscoded t = transcodeASTC(*m);
    std::vector<float> back = dequantizeTranscoded(t);
    double vsAstc = snrDb(m->weights.data(), back.data(), back.size());
    double vsOriginal = snrDb(w.data(), back.data(), back.size());
    std::printf("[ transcode ] %s: %.2f dB vs ASTC decode, %.2f dB vs W\n",
                mode == ASTCOffsetMode::Min ? "min" : "linear segment",
                vsAstc, vsOriginal);
    // 4 bits of uniform noise on arbitrary data give ~22 dB; decoded ASTC
    // blocks hold few distinct values, so the transcode must do better.
    // (Measured: ~29 dB min, ~26 dB linear segment; the LNS-to-f16 pieces
    // bend the linear-segment levels off any 16-level grid.)
    EXPECT_GT(vsAstc, 24.0);
  }
}
