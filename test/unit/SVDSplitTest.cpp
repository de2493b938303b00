//===- SVDSplitTest.cpp - LoRA SVD split ----------------------------------===//
//
// W is built from known orthonormal factors and known singular values, so
// every expectation comes from the construction, not from the solver.

#include "afm/Compress/SVDSplit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace mlir::afm;

/// n x k matrix with orthonormal columns (Gram-Schmidt of Gaussians).
static std::vector<double> randomOrthonormal(size_t n, size_t k, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> dist;
  std::vector<double> q(n * k);
  for (double &v : q)
    v = dist(rng);
  for (size_t j = 0; j < k; ++j)
    for (int pass = 0; pass < 2; ++pass) {
      for (size_t p = 0; p < j; ++p) {
        double dot = 0;
        for (size_t i = 0; i < n; ++i)
          dot += q[i * k + p] * q[i * k + j];
        for (size_t i = 0; i < n; ++i)
          q[i * k + j] -= dot * q[i * k + p];
      }
      double norm = 0;
      for (size_t i = 0; i < n; ++i)
        norm += q[i * k + j] * q[i * k + j];
      for (size_t i = 0; i < n; ++i)
        q[i * k + j] /= std::sqrt(norm);
    }
  return q;
}

struct Known {
  std::vector<float> w;
  std::vector<double> sigma;
};

static Known build(size_t rows, size_t cols, unsigned seed) {
  size_t k = std::min(rows, cols);
  std::vector<double> u = randomOrthonormal(rows, k, seed);
  std::vector<double> v = randomOrthonormal(cols, k, seed + 100);
  Known known;
  for (size_t i = 0; i < k; ++i)
    known.sigma.push_back(3.0 * std::pow(0.8, double(i)));
  known.w.resize(rows * cols);
  for (size_t i = 0; i < rows; ++i)
    for (size_t j = 0; j < cols; ++j) {
      double sum = 0;
      for (size_t p = 0; p < k; ++p)
        sum += u[i * k + p] * known.sigma[p] * v[j * k + p];
      known.w[i * cols + j] = static_cast<float>(sum);
    }
  return known;
}

static void checkSplit(size_t rows, size_t cols, size_t rank, unsigned seed) {
  Known known = build(rows, cols, seed);
  SVDSplit s = splitSVD(known.w.data(), rows, cols, rank);
  ASSERT_EQ(s.rank, std::min({rank, rows, cols}));
  EXPECT_EQ(s.alpha, double(s.rank));
  EXPECT_TRUE(s.converged);
  for (size_t i = 0; i < s.rank; ++i)
    EXPECT_NEAR(s.singularValues[i], known.sigma[i], 1e-5 * known.sigma[i]) << i;
  // ||R||_F^2 is the energy of the dropped directions. W itself is f32, so
  // compare with a tolerance set by f32 rounding of W (~1e-7 relative).
  double dropped = 0, residual = 0, total = 0;
  for (size_t i = s.rank; i < known.sigma.size(); ++i)
    dropped += known.sigma[i] * known.sigma[i];
  for (float x : s.residual)
    residual += double(x) * x;
  for (float x : known.w)
    total += double(x) * x;
  EXPECT_NEAR(residual, dropped, 1e-5 * total + 1e-4 * dropped);
  // B A + R gives back W.
  for (size_t i = 0; i < rows; ++i)
    for (size_t j = 0; j < cols; ++j) {
      double ba = 0;
      for (size_t k = 0; k < s.rank; ++k)
        ba += double(s.b[i * s.rank + k]) * s.a[k * cols + j];
      EXPECT_NEAR(ba + s.residual[i * cols + j], known.w[i * cols + j], 1e-6);
    }
  // A has orthonormal rows (V_r^T).
  for (size_t p = 0; p < s.rank; ++p)
    for (size_t q = 0; q < s.rank; ++q) {
      double dot = 0;
      for (size_t j = 0; j < cols; ++j)
        dot += double(s.a[p * cols + j]) * s.a[q * cols + j];
      EXPECT_NEAR(dot, p == q ? 1.0 : 0.0, 1e-5);
    }
}

TEST(SVDSplit, TallMatrix) { checkSplit(60, 40, 8, 1); }
TEST(SVDSplit, WideMatrix) { checkSplit(36, 72, 8, 2); }
TEST(SVDSplit, DefaultRankOnLargerMatrix) { checkSplit(128, 96, 32, 3); }
TEST(SVDSplit, RankClampsToSmallerSide) { checkSplit(20, 12, 32, 4); }
