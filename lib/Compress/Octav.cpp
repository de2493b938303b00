//===- Octav.cpp - MSE-optimal clipping for uniform quantizers ------------===//

#include "afm/Compress/Octav.h"

#include <algorithm>
#include <cmath>

using namespace mlir::afm;

double mlir::afm::octavPaperNoise(unsigned bits) {
  return std::ldexp(1.0, -2 * static_cast<int>(bits)) / 3.0;
}

double mlir::afm::octavBalancedGridNoise(unsigned bits) {
  double steps = std::ldexp(1.0, static_cast<int>(bits)) - 1.0;
  return 4.0 / (12.0 * steps * steps);
}

OctavResult mlir::afm::octavClip(const float *w, size_t n,
                                 double noiseCoefficient, double start,
                                 unsigned maxIterations, double relTolerance) {
  OctavResult result;
  if (n == 0)
    return result;
  double clip = start;
  if (clip <= 0.0) {
    double sum = 0.0;
    for (size_t i = 0; i < n; ++i)
      sum += std::fabs(static_cast<double>(w[i]));
    clip = sum / static_cast<double>(n);
  }
  if (clip == 0.0) { // All zeros: nothing to clip.
    result.converged = true;
    return result;
  }
  for (unsigned it = 0; it < maxIterations; ++it) {
    // Branch-free over 16 independent lanes, so that it vectorizes without
    // reassociating a float sum; lanes flushed to double every 1024.
    double aboveSum = 0.0;
    size_t above = 0;
    float clipF = static_cast<float>(clip);
    constexpr size_t kLanes = 16;
    size_t whole = n / kLanes * kLanes;
    for (size_t begin = 0; begin < whole; begin += 1024) {
      size_t end = std::min(whole, begin + 1024);
      float sums[kLanes] = {};
      int counts[kLanes] = {};
      for (size_t i = begin; i < end; i += kLanes)
        for (size_t j = 0; j < kLanes; ++j) {
          float a = std::fabs(w[i + j]);
          bool isAbove = a > clipF;
          sums[j] += isAbove ? a : 0.0f;
          counts[j] += isAbove;
        }
      for (size_t j = 0; j < kLanes; ++j) {
        aboveSum += sums[j];
        above += counts[j];
      }
    }
    for (size_t i = whole; i < n; ++i) {
      float a = std::fabs(w[i]);
      if (a > clipF) {
        aboveSum += a;
        ++above;
      }
    }
    double total = static_cast<double>(n);
    double denom = noiseCoefficient * static_cast<double>(n - above) / total +
                   static_cast<double>(above) / total;
    // No weight above the clip: the numerator is zero and the clip would
    // collapse; that only happens when the start exceeded max|w|, and the
    // best move is then down to the largest magnitude.
    double next;
    if (above == 0) {
      double maxAbs = 0.0;
      for (size_t i = 0; i < n; ++i)
        maxAbs = std::fmax(maxAbs, std::fabs(static_cast<double>(w[i])));
      next = maxAbs * (1.0 - 1e-9);
    } else {
      next = (aboveSum / total) / denom;
    }
    result.iterations = it + 1;
    bool small = std::fabs(next - clip) <= relTolerance * clip;
    clip = next;
    if (small) {
      result.converged = true;
      break;
    }
  }
  result.clip = clip;
  return result;
}
