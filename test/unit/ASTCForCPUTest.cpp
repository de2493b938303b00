//===- ASTCForCPUTest.cpp - ASTC weights encoded a band at a time ---------===//

#include "afm/Compress/ASTCForCPU.h"
#include "afm/Compress/ASTCTranscode.h"
#include "CompressTestSupport.h"

#include <gtest/gtest.h>

using namespace mlir::afm;

// Bands of block rows give the bytes and the measures of the whole matrix
// taken step by step (encode, transcode, repack, dequantize): 45 rows, so
// the last band's last block row is a partial one.
TEST(ASTCForCPU, BandsGiveTheWholeMatrixStepByStep) {
  const size_t rows = 45, cols = 50;
  std::vector<float> w = test::gaussian(rows * cols, 0.02f, 7);
  ASTCEncodeOptions options;
  llvm::Expected<ASTCMatrix> whole = encodeASTC(w.data(), rows, cols, options);
  ASSERT_TRUE(bool(whole)) << llvm::toString(whole.takeError());
  ASTCTranscoded t = transcodeASTC(*whole);
  ASTCKernelCodes k =
      packASTCKernelCodes(t.codes.data(), t.blockRows, t.storedBlockCols);
  std::vector<float> values = dequantizeTranscoded(t);

  std::vector<size_t> ends;
  llvm::Expected<ASTCForCPU> bands = encodeASTCForCPU(
      w.data(), rows, cols, options, /*keepValues=*/true,
      /*bandBlockRows=*/2, [&](size_t rowEnd) { ends.push_back(rowEnd); });
  ASSERT_TRUE(bool(bands)) << llvm::toString(bands.takeError());
  EXPECT_EQ(bands->blocks, whole->blocks);
  EXPECT_EQ(bands->offsets, whole->offsets);
  EXPECT_EQ(bands->kernelCodes.codes, k.codes);
  EXPECT_EQ(bands->kernelCodes.tailCodes, k.tailCodes);
  EXPECT_EQ(bands->scales, t.scales);
  EXPECT_EQ(bands->biases, t.biases);
  EXPECT_EQ(bands->values, values);
  EXPECT_DOUBLE_EQ(bands->astcQuality.db(),
                   snrDb(w.data(), whole->weights.data(), rows * cols));
  EXPECT_DOUBLE_EQ(bands->transcodeQuality.db(),
                   snrDb(w.data(), values.data(), rows * cols));
  // Each band reports the rows it is done with: 12, 24, 36, then all 45.
  EXPECT_EQ(ends, (std::vector<size_t>{12, 24, 36, 45}));
}

TEST(ASTCForCPU, ValuesOnlyWhenAsked) {
  std::vector<float> w = test::gaussian(12 * 12, 0.02f, 3);
  llvm::Expected<ASTCForCPU> m =
      encodeASTCForCPU(w.data(), 12, 12, {}, /*keepValues=*/false);
  ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
  EXPECT_TRUE(m->values.empty());
  EXPECT_FALSE(m->scales.empty());
}

TEST(ASTCForCPU, ZeroBlockRowsPerBandIsAnError) {
  std::vector<float> w(36, 0.5f);
  llvm::Expected<ASTCForCPU> m = encodeASTCForCPU(w.data(), 6, 6, {}, false,
                                                  /*bandBlockRows=*/0);
  ASSERT_FALSE(bool(m));
  EXPECT_EQ(llvm::toString(m.takeError()),
            "ASTC bands need at least one block row");
}
