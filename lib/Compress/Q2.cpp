//===- Q2.cpp - 2-bit balanced weight quantization ------------------------===//

#include "afm/Compress/Q2.h"
#include "afm/Compress/Octav.h"

#include <algorithm>
#include <cmath>

using namespace mlir::afm;

/// floor(w / s) clamped to [-2, 1], the level index of q2Code, without a
/// libm call: on a baseline x86-64 target std::floor is one, which keeps
/// the loops below from vectorizing. Truncation rounds toward zero; one
/// less when that went up is the floor (exact for the clamped range).
static inline float levelIndex(float w, float s) {
  float x = std::clamp(w / s, -4.0f, 4.0f);
  float t = static_cast<float>(static_cast<int>(x));
  t -= t > x ? 1.0f : 0.0f;
  return std::clamp(t, -2.0f, 1.0f);
}

uint8_t mlir::afm::q2Code(float w, float s) {
  // Decision thresholds between levels (q-1.5)*s sit at -s, 0 and s.
  return static_cast<uint8_t>(levelIndex(w, s) + 2.0f);
}

/// Mean squared error of quantizing `w` with clip `clip` (s = clip / 1.5).
/// It only ranks candidate clips, and a 3B model calls it about 150
/// billion times, so it is written to vectorize: 16 independent f32 lanes
/// of squared errors (no reassociation needed), lanes summed in double.
static double q2Mse(const float *w, size_t n, double clip) {
  float s = static_cast<float>(clip / 1.5);
  constexpr size_t kLanes = 16;
  float lanes[kLanes] = {};
  size_t whole = n / kLanes * kLanes;
  double sum = 0.0;
  for (size_t begin = 0; begin < whole; begin += kLanes) {
    for (size_t j = 0; j < kLanes; ++j) {
      float e = s * (levelIndex(w[begin + j], s) + 0.5f) - w[begin + j];
      lanes[j] += e * e;
    }
    // Flush the f32 lanes now and then so that they stay accurate.
    if ((begin / kLanes) % 64 == 63) {
      for (float &lane : lanes) {
        sum += lane;
        lane = 0.0f;
      }
    }
  }
  for (float lane : lanes)
    sum += lane;
  for (size_t i = whole; i < n; ++i) {
    double e = s * (levelIndex(w[i], s) + 0.5f) - w[i];
    sum += e * e;
  }
  return sum / static_cast<double>(n);
}

/// Refines the OCTAV clip on the exact MSE: a coarse scan of [0.7c, 1.3c]
/// brackets the minimum, then golden-section search narrows it. Bounded
/// work: 25 + 30 MSE evaluations.
static double refineClip(const float *w, size_t n, double clip) {
  constexpr int scanPoints = 25;
  double lo = 0.7 * clip, hi = 1.3 * clip;
  double step = (hi - lo) / (scanPoints - 1);
  int best = 0;
  double bestMse = INFINITY;
  for (int i = 0; i < scanPoints; ++i) {
    double mse = q2Mse(w, n, lo + i * step);
    if (mse < bestMse) {
      bestMse = mse;
      best = i;
    }
  }
  double a = lo + std::max(best - 1, 0) * step;
  double b = lo + std::min(best + 1, scanPoints - 1) * step;
  const double invPhi = (std::sqrt(5.0) - 1.0) / 2.0;
  double x1 = b - invPhi * (b - a), x2 = a + invPhi * (b - a);
  double f1 = q2Mse(w, n, x1), f2 = q2Mse(w, n, x2);
  for (int it = 0; it < 30; ++it) {
    if (f1 <= f2) {
      b = x2;
      x2 = x1;
      f2 = f1;
      x1 = b - invPhi * (b - a);
      f1 = q2Mse(w, n, x1);
    } else {
      a = x1;
      x1 = x2;
      f1 = f2;
      x2 = a + invPhi * (b - a);
      f2 = q2Mse(w, n, x2);
    }
  }
  // The scan point is a safe fallback if the MSE is not unimodal there.
  double golden = f1 <= f2 ? x1 : x2;
  return std::min(f1, f2) <= bestMse ? golden : lo + best * step;
}

/// Quantizes one scale group (the whole tensor or one row).
static void quantizeGroup(const float *w, size_t n, uint8_t *codes,
                          Q2Tensor &out) {
  float maxAbs = 0.0f;
  for (size_t i = 0; i < n; ++i)
    maxAbs = std::max(maxAbs, std::fabs(w[i]));
  if (maxAbs == 0.0f) {
    std::fill(codes, codes + n, uint8_t{2});
    out.scales.push_back(0.0f);
    out.clips.push_back(0.0f);
    out.clipFractions.push_back(0.0f);
    out.octavClips.push_back(0.0f);
    return;
  }
  OctavResult octav = octavClip(w, n, octavBalancedGridNoise(2));
  double clip = refineClip(w, n, octav.clip);
  float s = static_cast<float>(clip / 1.5);
  for (size_t i = 0; i < n; ++i)
    codes[i] = q2Code(w[i], s);
  out.scales.push_back(s);
  out.clips.push_back(static_cast<float>(clip));
  out.clipFractions.push_back(static_cast<float>(clip / maxAbs));
  out.octavClips.push_back(static_cast<float>(octav.clip));
}

Q2Tensor mlir::afm::quantizeQ2(const float *w, size_t rows, size_t cols,
                               Q2ScaleMode mode) {
  Q2Tensor out;
  out.rows = rows;
  out.cols = cols;
  out.mode = mode;
  out.codes.resize(rows * cols);
  if (mode == Q2ScaleMode::PerTensor) {
    quantizeGroup(w, rows * cols, out.codes.data(), out);
    return out;
  }
  for (size_t r = 0; r < rows; ++r)
    quantizeGroup(w + r * cols, cols, out.codes.data() + r * cols, out);
  return out;
}

llvm::Expected<Q2Tensor> mlir::afm::importQ2(llvm::ArrayRef<uint8_t> codes,
                                             llvm::ArrayRef<float> scales,
                                             size_t rows, size_t cols) {
  if (codes.size() != rows * cols)
    return llvm::createStringError(
        "2-bit import: %zu codes for a %zux%zu tensor (expected %zu)",
        codes.size(), rows, cols, rows * cols);
  Q2Tensor out;
  out.rows = rows;
  out.cols = cols;
  if (scales.size() == 1)
    out.mode = Q2ScaleMode::PerTensor;
  else if (scales.size() == rows)
    out.mode = Q2ScaleMode::PerChannel;
  else
    return llvm::createStringError(
        "2-bit import: %zu scales for %zu rows (expected 1 or %zu)",
        scales.size(), rows, rows);
  for (size_t i = 0; i < codes.size(); ++i)
    if (codes[i] > 3)
      return llvm::createStringError("2-bit import: code %u at index %zu",
                                     unsigned(codes[i]), i);
  for (size_t i = 0; i < scales.size(); ++i)
    if (!std::isfinite(scales[i]))
      return llvm::createStringError("2-bit import: scale %zu is not finite",
                                     i);
  out.codes.assign(codes.begin(), codes.end());
  out.scales.assign(scales.begin(), scales.end());
  return out;
}

std::vector<float> mlir::afm::dequantizeQ2(const Q2Tensor &tensor) {
  std::vector<float> out(tensor.rows * tensor.cols);
  for (size_t r = 0; r < tensor.rows; ++r) {
    float s = tensor.scales[tensor.mode == Q2ScaleMode::PerChannel ? r : 0];
    for (size_t c = 0; c < tensor.cols; ++c) {
      size_t i = r * tensor.cols + c;
      out[i] = s * q2Level(tensor.codes[i]);
    }
  }
  return out;
}
