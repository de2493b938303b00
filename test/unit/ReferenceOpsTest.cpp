//===- ReferenceOpsTest.cpp - the reference math on hand-computed cases ---===//

#include "afm/Reference/ReferenceOps.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

using namespace mlir::afm::reference;
using ::testing::ElementsAre;
using ::testing::FloatNear;
using ::testing::Pointwise;

namespace {
constexpr float kTol = 1e-6f;

TEST(ReferenceOps, RmsNormOfASmallVector) {
  // mean(x^2) = (1 + 4 + 9 + 16) / 4 = 7.5; 1 / sqrt(7.5) = 0.36514837.
  std::vector<float> y = rmsNorm({1, 2, 3, 4}, {1, 1, 2, 0.5f}, 0.0);
  EXPECT_THAT(y, Pointwise(FloatNear(kTol),
                           {0.36514837f, 0.73029674f, 2.19089023f,
                            0.73029674f}));
}

TEST(ReferenceOps, RmsNormAddsEpsilonInsideTheRoot) {
  // mean(x^2) = 1, eps = 3: y = x / sqrt(4).
  EXPECT_THAT(rmsNorm({1, -1}, {1, 1}, 3.0), ElementsAre(0.5f, -0.5f));
  EXPECT_THAT(rmsNorm({0, 0}, {1, 1}, 1e-5), ElementsAre(0.0f, 0.0f));
}

TEST(ReferenceOps, LinearIsXTimesWTransposed) {
  // W = [[1, 0], [0, 1], [3, -1]] ([out = 3, in = 2]).
  EXPECT_THAT(linear({1, 2}, {1, 0, 0, 1, 3, -1}), ElementsAre(1, 2, 1));
}

TEST(ReferenceOps, Int8ActivationsRoundHalfToEvenOnTheRowScale) {
  // max|x| = 2, so code = round(x * 63.5): 31.75 -> 32, -127,
  // 63.5 -> 64 (the even neighbour), -31.75 -> -32; value = code * 2 / 127.
  std::vector<float> y = roundToInt8Activations({0.5f, -2, 1, -0.5f});
  EXPECT_THAT(y, Pointwise(FloatNear(kTol), {32 * 2 / 127.0f, -2.0f,
                                             64 * 2 / 127.0f,
                                             -32 * 2 / 127.0f}));
  // max|x| = 127, so code = x: the ties 1.5 and 2.5 both round to 2.
  std::vector<float> ties = roundToInt8Activations({1.5f, 2.5f, 127});
  EXPECT_THAT(ties, ElementsAre(2.0f, 2.0f, 127.0f));
}

TEST(ReferenceOps, Int8ActivationsOfAZeroRowAreZero) {
  EXPECT_THAT(roundToInt8Activations({0, 0, 0}), ElementsAre(0, 0, 0));
}

TEST(ReferenceOps, RopeAtPositionZeroIsTheIdentity) {
  std::vector<float> head = {0.5f, -1.25f, 3, 7, -2, 0.125f};
  std::vector<float> rotated = head;
  applyRope(rotated, /*position=*/0, /*theta=*/10000.0);
  EXPECT_EQ(rotated, head);
}

TEST(ReferenceOps, RopeRotatesPairIWithIPlusHalfByTheDocumentedAngle) {
  // hd = 4: pair (0, 2) turns by p * theta^0 = p radians, pair (1, 3) by
  // p * theta^(-1/2). With theta = (2 / pi)^2 and p = 1 that is a quarter
  // turn: (x1, x3) -> (-x3, x1).
  double theta = 4.0 / (M_PI * M_PI);
  std::vector<float> head = {1, 2, 3, 4};
  applyRope(head, /*position=*/1, theta);
  EXPECT_THAT(head, Pointwise(FloatNear(kTol),
                              {float(1 * cos(1.0) - 3 * sin(1.0)), -4.0f,
                               float(1 * sin(1.0) + 3 * cos(1.0)), 2.0f}));
  // Two quarter turns at p = 2 negate the pair.
  head = {1, 2, 3, 4};
  applyRope(head, /*position=*/2, theta);
  EXPECT_NEAR(head[1], -2.0f, kTol);
  EXPECT_NEAR(head[3], -4.0f, kTol);
}

TEST(ReferenceOps, SwigluGatesUpWithSilu) {
  // silu(1) = 1 / (1 + e^-1) = 0.73105858, silu(-1) = -0.26894142.
  EXPECT_THAT(swiglu({0, 1, -1}, {5, 2, 3}),
              Pointwise(FloatNear(kTol), {0.0f, 1.46211716f, -0.80682426f}));
}

TEST(ReferenceOps, GqaMapsConsecutiveQueryHeadsToOneKVHead) {
  // H = 8, G = 2: heads 0..3 read KV head 0, heads 4..7 KV head 1.
  std::vector<int64_t> mapping;
  for (int64_t h = 0; h < 8; ++h)
    mapping.push_back(kvHeadOf(h, 8, 2));
  EXPECT_THAT(mapping, ElementsAre(0, 0, 0, 0, 1, 1, 1, 1));
  EXPECT_EQ(kvHeadOf(3, 4, 4), 3) << "MHA: one KV head per query head";
}

TEST(ReferenceOps, AttentionOverOnePositionReturnsItsValues) {
  // H = 4, G = 2, hd = 2, one position: every head copies its KV head's v.
  std::vector<float> query = {0.3f, -2, 5, 1, -1, 0.5f, 9, 9};
  std::vector<float> keys = {1, 2, -3, 4};
  std::vector<float> values = {1.5f, -2.5f, 7, 8};
  std::vector<float> out = attention(query, keys, values, {4, 2, 2}, 0);
  EXPECT_THAT(out, ElementsAre(1.5f, -2.5f, 1.5f, -2.5f, 7, 8, 7, 8));
}

TEST(ReferenceOps, AttentionWeightsAreASoftmaxOfScaledScores) {
  // hd = 2, scale 1/sqrt(2): scores q.k / sqrt(2) = 0 and ln 3, weights
  // 1/4 and 3/4 of v0 = (4, 0) and v1 = (0, 8).
  float k1 = float(std::sqrt(2.0) * std::log(3.0));
  std::vector<float> out =
      attention({1, 0}, {0, 0, k1, 0}, {4, 0, 0, 8}, {1, 1, 2}, 0);
  EXPECT_THAT(out, Pointwise(FloatNear(kTol), {1.0f, 6.0f}));
}

TEST(ReferenceOps, AttentionSeesOnlyPositionsFromFirstVisible) {
  // A zero query weighs the visible positions equally.
  std::vector<float> keys = {1, 2, 3, 4, 5, 6};
  std::vector<float> values = {1, 10, 2, 20, 6, 60};
  EXPECT_THAT(attention({0, 0}, keys, values, {1, 1, 2}, 0),
              Pointwise(FloatNear(kTol), {3.0f, 30.0f}));
  EXPECT_THAT(attention({0, 0}, keys, values, {1, 1, 2}, 1),
              Pointwise(FloatNear(kTol), {4.0f, 40.0f}));
  EXPECT_THAT(attention({0, 0}, keys, values, {1, 1, 2}, 2),
              ElementsAre(6.0f, 60.0f));
}

TEST(ReferenceOps, SlidingWindowStartsWMinusOnePositionsBack) {
  EXPECT_EQ(firstVisiblePosition(10, 0), 0) << "global";
  EXPECT_EQ(firstVisiblePosition(10, 4), 7);
  EXPECT_EQ(firstVisiblePosition(3, 4), 0);
  EXPECT_EQ(firstVisiblePosition(10, 1), 10);
}
TEST(ReferenceOps, TopKTakesTheLargestAndBreaksTiesToTheLowerIndex) {
  EXPECT_THAT(topK({1, 3, 3, 2}, 2), ElementsAre(1, 2));
  EXPECT_THAT(topK({1, 3, 3, 2}, 3), ElementsAre(1, 2, 3));
  EXPECT_THAT(topK({-5, 0.5f, -1, 4}, 1), ElementsAre(3));
  EXPECT_THAT(topK({-5, 0.5f, -1, 4}, 4), ElementsAre(3, 1, 2, 0));
  // A zero router: all logits equal, the first k experts win.
  EXPECT_THAT(topK({0, 0, 0, 0}, 2), ElementsAre(0, 1));
  EXPECT_THAT(topK({2, 7, 7, 7}, 2), ElementsAre(1, 2));
  EXPECT_THAT(topK({2, 7}, 0), ElementsAre());
}

TEST(ReferenceOps, SoftmaxIsShiftInvariantAndSumsToOne) {
  // e^0 : e^(ln 3) = 1 : 3.
  EXPECT_THAT(softmax({0, float(std::log(3.0))}),
              Pointwise(testing::DoubleNear(1e-7), {0.25, 0.75}));
  EXPECT_THAT(softmax({1000, 1000}), ElementsAre(0.5, 0.5)) << "no overflow";
  EXPECT_THAT(softmax({-3}), ElementsAre(1.0));
}

/// silu(x) = x / (1 + e^-x).
double silu(double x) { return x / (1.0 + std::exp(-x)); }

TEST(ReferenceOps, MixtureOfExpertsWeighsTheTopKExpertsBySoftmax) {
  // d = 1, F = 1, E = 3: expert e computes down_e * silu(gate_e x) * up_e x.
  // Router logits for x = 1 are (1, 2, 0): k = 2 picks experts 1 and 0
  // with gates softmax(2, 1) = (e / (1 + e), 1 / (1 + e)).
  std::vector<float> router = {1, 2, 0};
  std::vector<float> gate = {1, 2, 100}, up = {1, 1, 100}, down = {1, -1, 100};
  MoEWeights weights = {router, gate, up, down, 3};
  std::vector<int64_t> selected;
  std::vector<float> y = mixtureOfExperts({1}, weights, 2, &selected);
  EXPECT_THAT(selected, ElementsAre(1, 0));
  double e = std::exp(1.0);
  double expected = e / (1 + e) * -silu(2) + 1 / (1 + e) * silu(1);
  EXPECT_THAT(y, Pointwise(FloatNear(kTol), {float(expected)}));
  // k = 1: expert 1 alone, with gate 1.
  EXPECT_THAT(mixtureOfExperts({1}, weights, 1),
              Pointwise(FloatNear(kTol), {float(-silu(2))}));
  // x = -1 flips the router logits to (-1, -2, 0): experts 2 and 0.
  EXPECT_EQ(mixtureOfExperts({-1}, weights, 2, &selected).size(), 1u);
  EXPECT_THAT(selected, ElementsAre(2, 0));
}

TEST(ReferenceOps, ZeroRouterAveragesTheFirstKExperts) {
  // d = 2, F = 1, E = 3, k = 2: gates 1/2 and 1/2 on experts 0 and 1.
  std::vector<float> router(6, 0.0f);
  std::vector<float> gate = {1, 0, 0, 1, 5, 5};
  std::vector<float> up = {1, 1, 1, 1, 5, 5};
  std::vector<float> down = {1, 0, 0, 1, 5, 5};
  std::vector<int64_t> selected;
  std::vector<float> y =
      mixtureOfExperts({1, 2}, {router, gate, up, down, 3}, 2, &selected);
  EXPECT_THAT(selected, ElementsAre(0, 1));
  // Expert 0: silu(1) * 3 on output 0; expert 1: silu(2) * 3 on output 1.
  EXPECT_THAT(y, Pointwise(FloatNear(kTol),
                           {float(silu(1) * 3 / 2), float(silu(2) * 3 / 2)}));
}
} // namespace
