//===- Random.cpp - reproducible random numbers ---------------------------===//
//
// Compiled with -ffp-contract=off (see CMakeLists.txt): a fused multiply-add
// rounds once where a * b + c rounds twice, so contraction would make the
// results depend on the target.
//
//===----------------------------------------------------------------------===//

#include "afm/Model/Random.h"

#include <cmath>

using namespace mlir::afm;

uint64_t SplitMix64::next() {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double SplitMix64::nextUniform() {
  return static_cast<double>(next() >> 11) * 0x1.0p-53;
}

double SplitMix64::nextNormal() {
  double u1 = 1.0 - nextUniform(); // (0, 1]: the logarithm stays finite.
  double u2 = nextUniform();
  return std::sqrt(-2.0 * reproducibleLog(u1)) * reproducibleCos2Pi(u2);
}

double SplitMix64::nextNormal(double mean, double stddev) {
  double scaled = stddev * nextNormal();
  return mean + scaled;
}

double mlir::afm::reproducibleLog(double x) {
  // x = m * 2^e with m in [sqrt(1/2), sqrt(2)); ln m = 2 atanh(s) with
  // s = (m - 1) / (m + 1), |s| < 0.172, summed as an odd series.
  int exponent;
  double m = std::frexp(x, &exponent);
  if (m < 0.70710678118654752) {
    m *= 2.0;
    exponent -= 1;
  }
  double s = (m - 1.0) / (m + 1.0);
  double s2 = s * s;
  double series = 0.0;
  for (int k = 14; k >= 0; --k)
    series = series * s2 + 1.0 / (2 * k + 1);
  constexpr double ln2 = 0.69314718055994530942;
  return exponent * ln2 + 2.0 * s * series;
}

double mlir::afm::reproducibleCos2Pi(double u) {
  // Reduce to a in [0, 1/4] using cos(2 pi r) = cos(2 pi (1 - r)) and
  // cos(2 pi a) = -cos(2 pi (1/2 - a)); each subtraction is exact.
  double r = u - std::floor(u);
  double a = r > 0.5 ? 1.0 - r : r;
  double sign = 1.0;
  if (a > 0.25) {
    a = 0.5 - a;
    sign = -1.0;
  }
  constexpr double twoPi = 6.28318530717958647692;
  double x = twoPi * a; // [0, pi/2]: the Taylor series converges fast.
  double x2 = x * x;
  double term = 1.0, sum = 1.0;
  for (int k = 1; k <= 13; ++k) {
    term *= -x2 / ((2.0 * k - 1.0) * (2.0 * k));
    sum += term;
  }
  return sign * sum;
}
