//===- SVDSplit.h - Top singular directions into a LoRA adapter --*- C++ -*-===//
//
// Before ASTC, the top-r singular directions of W move into the LoRA
// quality-recovery adapter and only the residual is compressed
// (docs/semantics.md section 5): W = B A + R with B = U_r Sigma_r, A = V_r^T.
// The adapter is y = x W^T + (alpha / r) (x A^T) B^T with alpha = r, so its
// factor is exactly 1 and B A is the rank-r truncation of W.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_COMPRESS_SVDSPLIT_H
#define AFM_COMPRESS_SVDSPLIT_H

#include <cstddef>
#include <vector>

namespace mlir::afm {

struct SVDSplit {
  size_t rows = 0, cols = 0;
  /// min(requested rank, rows, cols).
  size_t rank = 0;
  /// alpha = rank, so alpha / rank = 1.
  double alpha = 0.0;
  /// Top singular values, descending (rank of them).
  std::vector<double> singularValues;
  /// B [rows, rank] = U_r Sigma_r, A [rank, cols] = V_r^T, row-major f32.
  std::vector<float> b, a;
  /// R = W - B A [rows, cols], computed in double from the f32 factors so
  /// that B A + R reproduces W up to one f32 rounding.
  std::vector<float> residual;
  /// Subspace iterations used and whether the top-rank Ritz values settled.
  unsigned iterations = 0;
  bool converged = false;
};

/// Splits W [rows, cols] (row-major) at `rank` (default 32). Deterministic:
/// block subspace iteration in double on the smaller Gram side from a fixed
/// pseudo-random start, orthonormalized by modified Gram-Schmidt each step,
/// with 2*rank (at least rank + 8) vectors, then Rayleigh-Ritz with a Jacobi
/// eigensolver; stops when the top-rank Ritz values change by less than
/// 1e-13 relative, or after `maxIterations`.
SVDSplit splitSVD(const float *w, size_t rows, size_t cols, size_t rank = 32,
                  unsigned maxIterations = 500);

} // namespace mlir::afm

#endif // AFM_COMPRESS_SVDSPLIT_H
