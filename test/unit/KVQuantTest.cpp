//===- KVQuantTest.cpp - int8 KV-cache vectors ----------------------------===//

#include "afm/Compress/KVQuant.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using namespace mlir::afm;

TEST(KVQuant, ZeroVectorHasZeroScaleAndCodes) {
  std::vector<float> v(64, 0.0f), back(64, 1.0f);
  std::vector<int8_t> codes(64, 5);
  float scale = quantizeKV(v.data(), v.size(), codes.data());
  EXPECT_EQ(scale, 0.0f);
  dequantizeKV(codes.data(), scale, codes.size(), back.data());
  for (size_t i = 0; i < v.size(); ++i) {
    EXPECT_EQ(codes[i], 0);
    EXPECT_EQ(back[i], 0.0f);
  }
}

TEST(KVQuant, TiesRoundAwayFromZero) {
  // absmax 127 gives scale 1, so v / scale is v and .5 cases are exact ties.
  std::vector<float> v = {127.0f, 0.5f, -0.5f, 1.5f, 2.5f, -2.5f, 0.49f};
  std::vector<int8_t> codes(v.size());
  float scale = quantizeKV(v.data(), v.size(), codes.data());
  EXPECT_EQ(scale, 1.0f);
  std::vector<int8_t> expected = {127, 1, -1, 2, 3, -3, 0};
  EXPECT_EQ(codes, expected);
}

TEST(KVQuant, ScaleIsAbsMaxOver127AndErrorIsHalfAStep) {
  std::vector<float> v = {0.3f, -1.7f, 0.01f, 1.2f, -0.8f, 1.69f};
  std::vector<int8_t> codes(v.size());
  std::vector<float> back(v.size());
  float scale = quantizeKV(v.data(), v.size(), codes.data());
  EXPECT_EQ(scale, 1.7f / 127.0f);
  EXPECT_EQ(codes[1], -127);
  dequantizeKV(codes.data(), scale, codes.size(), back.data());
  for (size_t i = 0; i < v.size(); ++i) {
    EXPECT_EQ(back[i], scale * codes[i]);
    EXPECT_LE(std::fabs(back[i] - v[i]), 0.5f * scale * 1.0001f);
    EXPECT_EQ(codes[i], static_cast<int8_t>(std::round(v[i] / scale)));
  }
}
