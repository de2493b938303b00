//===- Octav.h - MSE-optimal clipping for uniform quantizers -----*- C++ -*-===//
//
// OCTAV (Sakr et al., "Optimal Clipping and Magnitude-aware Differentiation
// for Improved Quantization-aware Training", ICML 2022) finds the clip c that
// minimizes clipping noise + quantization noise by the fixed-point
// (Newton-Raphson) iteration
//
//   c <- E[|w| 1{|w|>c}] / (k * E[1{|w|<=c}] + E[1{|w|>c}])
//
// where k*c^2 models the in-range quantization noise. The paper's uniform
// grid of 2^B steps over [-c, c] gives k = 4^-B / 3.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_COMPRESS_OCTAV_H
#define AFM_COMPRESS_OCTAV_H

#include <cstddef>

namespace mlir::afm {

struct OctavResult {
  /// The last iterate (0 for an all-zero input).
  double clip = 0.0;
  unsigned iterations = 0;
  /// Whether the last step moved the clip by less than the tolerance.
  bool converged = false;
};

/// k = 4^-B / 3, the paper's noise coefficient for B bits.
double octavPaperNoise(unsigned bits);

/// k for a balanced grid whose outermost levels sit at +-c (2^B - 1 steps
/// over [-c, c], as the 2-bit levels {-1.5,-0.5,0.5,1.5}*c/1.5):
/// ((2c / (2^B - 1))^2 / 12) / c^2.
double octavBalancedGridNoise(unsigned bits);

/// Runs the OCTAV iteration on |w| from `start` (mean |w| when <= 0) for at
/// most `maxIterations` steps, stopping when a step moves the clip by less
/// than `relTolerance` times the clip.
OctavResult octavClip(const float *w, size_t n, double noiseCoefficient,
                      double start = 0.0, unsigned maxIterations = 100,
                      double relTolerance = 1e-7);

} // namespace mlir::afm

#endif // AFM_COMPRESS_OCTAV_H
