//===- Random.h - reproducible random numbers -------------------*- C++ -*-===//
//
// Random numbers that are the same bits on every machine and standard
// library: splitmix64 for the integers, and Box-Muller with a logarithm and
// cosine built from IEEE-exact operations (+, -, *, /, sqrt, floor, frexp)
// in a translation unit compiled without FMA contraction. The standard
// distributions (std::normal_distribution) and libm's log/cos are not
// specified bit for bit, so example weights must not depend on them.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_MODEL_RANDOM_H
#define AFM_MODEL_RANDOM_H

#include <cstdint>

namespace mlir::afm {

/// splitmix64 (Steele, Lea and Flood, 2014): a 64-bit state advanced by a
/// constant and mixed; every seed gives a full-period stream.
class SplitMix64 {
public:
  explicit SplitMix64(uint64_t seed) : state(seed) {}

  /// The next 64 random bits.
  uint64_t next();

  /// Moves on as `n` calls of `next` would (SplitMix64's state is a
  /// counter), so that a long stream can be generated in parallel pieces.
  void skip(uint64_t n) { state += n * 0x9e3779b97f4a7c15ull; }

  /// Uniform in [0, 1) with 53 random bits.
  double nextUniform();

  /// Standard normal N(0, 1) by Box-Muller (one output per pair of
  /// uniforms): sqrt(-2 ln u1) * cos(2 pi u2) with u1 in (0, 1].
  double nextNormal();

  /// N(mean, stddev^2): mean + stddev * nextNormal(), without contraction.
  double nextNormal(double mean, double stddev);

private:
  uint64_t state;
};

/// ln(x) for finite x > 0, from IEEE-exact operations only (within a few
/// ulps of the true value).
double reproducibleLog(double x);

/// cos(2 pi u) for finite u, from IEEE-exact operations only (within a few
/// ulps of the true value).
double reproducibleCos2Pi(double u);

} // namespace mlir::afm

#endif // AFM_MODEL_RANDOM_H
