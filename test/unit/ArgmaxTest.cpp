//===- ArgmaxTest.cpp - the greedy scan over a row of logits --------------===//
//
// runtime/argmax.h against a plain reference loop: the lowest id of the
// largest logit that is not NaN, 0 when all are NaN. The scan keeps 16
// lanes, so the cases put ties, NaNs and -inf in different lanes, in the
// tail past the last full group of 16, and at a vocabulary of 150000.
//
//===----------------------------------------------------------------------===//

#include "runtime/argmax.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

/// One id at a time: a NaN never replaces a number, a number always
/// replaces a NaN, ties keep the lower id.
int32_t referenceArgmax(const std::vector<float> &x, int32_t count,
                        bool &sawNan) {
  int32_t best = 0;
  sawNan = false;
  for (int32_t id = 0; id < count; ++id) {
    sawNan |= std::isnan(x[id]);
    if (id > 0 &&
        (x[id] > x[best] || (std::isnan(x[best]) && !std::isnan(x[id]))))
      best = id;
  }
  return best;
}

void expectAsReference(const std::vector<float> &x, int32_t count,
                       const char *what) {
  bool refNan = false, nan = true;
  int32_t want = referenceArgmax(x, count, refNan);
  EXPECT_EQ(afm_argmax(x.data(), count, &nan), want) << what;
  EXPECT_EQ(nan, refNan) << what;
}

std::vector<float> randomRow(int32_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> x(count);
  for (float &v : x)
    v = normal(rng);
  return x;
}

TEST(ArgmaxTest, LowestIdOfTiedMaximaAtAVocabularyOf150000) {
  std::vector<float> x = randomRow(150000, 7);
  x[149999] = x[90003] = x[90001] = 100.0f; // three lanes, one in the tail
  expectAsReference(x, 150000, "ties");
  bool nan = true;
  EXPECT_EQ(afm_argmax(x.data(), 150000, &nan), 90001);
  EXPECT_FALSE(nan);
  // Ids at or past the count are not read.
  expectAsReference(x, 90001, "count stops before the maxima");
  expectAsReference(x, 149999, "count not a multiple of 16");
}

TEST(ArgmaxTest, NaNNeverWinsAndIsReported) {
  std::vector<float> x = randomRow(150000, 8);
  x[120000] = 50.0f;
  x[120001] = kNaN; // a NaN right after the maximum, same group of 16
  x[120016] = kNaN; // and one later in the maximum's own lane
  x[149998] = kNaN; // and one in the tail
  x[0] = kNaN;
  expectAsReference(x, 150000, "NaNs around the maximum");
  bool nan = false;
  EXPECT_EQ(afm_argmax(x.data(), 150000, &nan), 120000);
  EXPECT_TRUE(nan);
}

TEST(ArgmaxTest, NegativeInfinityAfterANaNWins) {
  // The session's semantics: all -inf but a leading NaN gives the first
  // -inf, not the NaN.
  std::vector<float> x(150000, -kInf);
  x[0] = kNaN;
  expectAsReference(x, 150000, "NaN then -inf");
  bool nan = false;
  EXPECT_EQ(afm_argmax(x.data(), 150000, &nan), 1);
  EXPECT_TRUE(nan);
  x.assign(150000, -kInf);
  EXPECT_EQ(afm_argmax(x.data(), 150000, &nan), 0);
  EXPECT_FALSE(nan);
}

TEST(ArgmaxTest, AllNaNGivesZero) {
  for (int32_t count : {1, 15, 16, 17, 150000}) {
    std::vector<float> x(count, kNaN);
    bool nan = false;
    EXPECT_EQ(afm_argmax(x.data(), count, &nan), 0) << count;
    EXPECT_TRUE(nan) << count;
  }
}

TEST(ArgmaxTest, ShortRowsAndInfinity) {
  for (int32_t count = 1; count <= 40; ++count) {
    std::vector<float> x = randomRow(count, 100 + count);
    expectAsReference(x, count, "random short row");
    x[count - 1] = kInf;
    expectAsReference(x, count, "+inf last");
  }
  bool nan = true;
  EXPECT_EQ(afm_argmax(nullptr, 0, &nan), 0);
  EXPECT_FALSE(nan);
}

} // namespace
