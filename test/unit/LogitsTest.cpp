//===- LogitsTest.cpp - logits files and their step-by-step comparison ----===//

#include "ModelTestSupport.h"

#include "afm/Reference/Logits.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

using namespace mlir::afm;
using namespace mlir::afm::test;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace {
TEST(Logits, CompareGivesMaxDiffOverMaxReferencePerStep) {
  // Two steps of V = 2; step 1 is off by 0.5 where max|ref| is 4.
  std::vector<float> reference = {1, 2, 1, -4};
  std::vector<float> actual = {1, 2, 1, -3.5f};
  llvm::Expected<std::vector<StepComparison>> steps =
      compareLogitSteps(reference, actual, 2);
  ASSERT_TRUE(bool(steps)) << errorText(steps);
  ASSERT_EQ(steps->size(), 2u);
  EXPECT_EQ((*steps)[0].relativeError, 0.0);
  EXPECT_EQ((*steps)[1].maxAbsDiff, 0.5);
  EXPECT_EQ((*steps)[1].maxAbsReference, 4.0);
  EXPECT_EQ((*steps)[1].relativeError, 0.125);
  EXPECT_TRUE(withinTolerance((*steps)[1], 0.125));
  EXPECT_FALSE(withinTolerance((*steps)[1], 0.1));
}

TEST(Logits, ZeroReferenceAndNaNAreHandled) {
  llvm::Expected<std::vector<StepComparison>> zeros =
      compareLogitSteps({0, 0, 0, 0}, {0, 0, 0, 1e-30f}, 2);
  ASSERT_TRUE(bool(zeros)) << errorText(zeros);
  EXPECT_EQ((*zeros)[0].relativeError, 0.0);
  EXPECT_TRUE(std::isinf((*zeros)[1].relativeError));
  llvm::Expected<std::vector<StepComparison>> nan =
      compareLogitSteps({1, 2}, {NAN, 2}, 2);
  ASSERT_TRUE(bool(nan)) << errorText(nan);
  EXPECT_TRUE(std::isnan((*nan)[0].relativeError));
  EXPECT_FALSE(withinTolerance((*nan)[0], 1e9));
  llvm::Expected<std::vector<StepComparison>> nanLater =
      compareLogitSteps({NAN, 2}, {1, 2}, 2);
  EXPECT_FALSE(withinTolerance((*nanLater)[0], 1e9));
}

TEST(Logits, CompareRejectsMismatchedSizes) {
  llvm::Expected<std::vector<StepComparison>> differ =
      compareLogitSteps({1, 2, 3, 4}, {1, 2}, 2);
  EXPECT_EQ(errorText(differ),
            "the reference has 4 logits but the actual file has 2");
  llvm::Expected<std::vector<StepComparison>> ragged =
      compareLogitSteps({1, 2, 3}, {1, 2, 3}, 2);
  EXPECT_EQ(errorText(ragged),
            "3 logits are not a whole number of steps of vocab size 2");
  llvm::Expected<std::vector<StepComparison>> empty =
      compareLogitSteps({}, {}, 2);
  EXPECT_EQ(errorText(empty), "there are no logits to compare");
  llvm::Expected<std::vector<StepComparison>> noVocab =
      compareLogitSteps({1}, {1}, 0);
  EXPECT_EQ(errorText(noVocab), "the vocabulary size must be positive, got 0");
}

TEST(Logits, FilesAreRawLittleEndianF32) {
  llvm::SmallString<128> path;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("afm-logits", "bin", path));
  ASSERT_EQ(errorText(writeLogitsFile(path, {1.0f, -2.5f})), "");
  uint64_t size = 0;
  ASSERT_FALSE(llvm::sys::fs::file_size(path, size));
  EXPECT_EQ(size, 8u);
  llvm::Expected<std::vector<float>> back = readLogitsFile(path);
  ASSERT_TRUE(bool(back)) << errorText(back);
  EXPECT_THAT(*back, ElementsAre(1.0f, -2.5f));
  {
    std::error_code ec;
    llvm::raw_fd_ostream out(path, ec);
    out.write("\x00\x00\x80\x3f\x01", 5); // 1.0f and a stray byte.
  }
  llvm::Expected<std::vector<float>> ragged = readLogitsFile(path);
  EXPECT_THAT(errorText(ragged),
              HasSubstr("5 bytes is not a whole number of f32 values"));
  llvm::sys::fs::remove(path);
}
} // namespace
