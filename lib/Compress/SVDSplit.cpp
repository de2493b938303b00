//===- SVDSplit.cpp - Top singular directions into a LoRA adapter ---------===//
//
// Works on M = W or W^T, whichever has fewer columns (n <= m), so the
// subspace lives in the smaller dimension: X [n, p] converges to the top
// right singular vectors of M under X <- orth(M^T M X).
//
//===----------------------------------------------------------------------===//

#include "afm/Compress/SVDSplit.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>

using namespace mlir::afm;

namespace {
/// A dense row-major double matrix.
struct Matrix {
  size_t rows = 0, cols = 0;
  std::vector<double> data;
  Matrix(size_t rows, size_t cols) : rows(rows), cols(cols), data(rows * cols) {}
  double &at(size_t r, size_t c) { return data[r * cols + c]; }
  double at(size_t r, size_t c) const { return data[r * cols + c]; }
};
} // namespace

/// C = A * B.
static Matrix multiply(const Matrix &a, const Matrix &b) {
  Matrix c(a.rows, b.cols);
  for (size_t i = 0; i < a.rows; ++i)
    for (size_t k = 0; k < a.cols; ++k) {
      double aik = a.at(i, k);
      const double *brow = &b.data[k * b.cols];
      double *crow = &c.data[i * c.cols];
      for (size_t j = 0; j < b.cols; ++j)
        crow[j] += aik * brow[j];
    }
  return c;
}

/// C = A^T * B.
static Matrix multiplyTransposed(const Matrix &a, const Matrix &b) {
  Matrix c(a.cols, b.cols);
  for (size_t i = 0; i < a.rows; ++i)
    for (size_t k = 0; k < a.cols; ++k) {
      double aik = a.at(i, k);
      const double *brow = &b.data[i * b.cols];
      double *crow = &c.data[k * c.cols];
      for (size_t j = 0; j < b.cols; ++j)
        crow[j] += aik * brow[j];
    }
  return c;
}

/// A fixed 64-bit LCG mapped to [-1, 1): the start must be deterministic.
static double nextUniform(uint64_t &state) {
  state = state * 6364136223846793005ull + 1442695040888963407ull;
  return static_cast<double>(state >> 11) * 0x1.0p-52 - 1.0;
}

/// Orthonormalizes the columns of `x` in place by modified Gram-Schmidt,
/// twice ("twice is enough") for orthogonality at double precision. A
/// column that vanishes (rank deficiency) is replaced by a fresh random one.
static void orthonormalize(Matrix &x, uint64_t &seed) {
  for (size_t j = 0; j < x.cols; ++j) {
    for (int attempt = 0; attempt < 4; ++attempt) {
      double before = 0.0;
      for (size_t i = 0; i < x.rows; ++i)
        before += x.at(i, j) * x.at(i, j);
      for (int pass = 0; pass < 2; ++pass)
        for (size_t k = 0; k < j; ++k) {
          double dot = 0.0;
          for (size_t i = 0; i < x.rows; ++i)
            dot += x.at(i, k) * x.at(i, j);
          for (size_t i = 0; i < x.rows; ++i)
            x.at(i, j) -= dot * x.at(i, k);
        }
      double norm = 0.0;
      for (size_t i = 0; i < x.rows; ++i)
        norm += x.at(i, j) * x.at(i, j);
      if (norm > 1e-24 * std::max(before, 1e-300)) {
        norm = std::sqrt(norm);
        for (size_t i = 0; i < x.rows; ++i)
          x.at(i, j) /= norm;
        break;
      }
      for (size_t i = 0; i < x.rows; ++i)
        x.at(i, j) = nextUniform(seed);
    }
  }
}

/// Eigen-decomposition of the symmetric `g` by cyclic Jacobi rotations:
/// returns eigenvalues and overwrites `q` with the eigenvectors (columns),
/// both sorted by descending eigenvalue.
static std::vector<double> symmetricEigen(Matrix g, Matrix &q) {
  size_t p = g.rows;
  q = Matrix(p, p);
  for (size_t i = 0; i < p; ++i)
    q.at(i, i) = 1.0;
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0.0, total = 0.0;
    for (size_t i = 0; i < p; ++i)
      for (size_t j = 0; j < p; ++j) {
        total += g.at(i, j) * g.at(i, j);
        if (i != j)
          off += g.at(i, j) * g.at(i, j);
      }
    if (off <= 1e-30 * total)
      break;
    for (size_t i = 0; i + 1 < p; ++i)
      for (size_t j = i + 1; j < p; ++j) {
        double gij = g.at(i, j);
        if (gij == 0.0)
          continue;
        double theta = (g.at(j, j) - g.at(i, i)) / (2.0 * gij);
        double t = (theta >= 0 ? 1.0 : -1.0) /
                   (std::fabs(theta) + std::sqrt(theta * theta + 1.0));
        double c = 1.0 / std::sqrt(t * t + 1.0), s = t * c;
        for (size_t k = 0; k < p; ++k) { // Columns i, j.
          double gki = g.at(k, i), gkj = g.at(k, j);
          g.at(k, i) = c * gki - s * gkj;
          g.at(k, j) = s * gki + c * gkj;
        }
        for (size_t k = 0; k < p; ++k) { // Rows i, j.
          double gik = g.at(i, k), gjk = g.at(j, k);
          g.at(i, k) = c * gik - s * gjk;
          g.at(j, k) = s * gik + c * gjk;
        }
        for (size_t k = 0; k < p; ++k) {
          double qki = q.at(k, i), qkj = q.at(k, j);
          q.at(k, i) = c * qki - s * qkj;
          q.at(k, j) = s * qki + c * qkj;
        }
      }
  }
  std::vector<size_t> order(p);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return g.at(a, a) > g.at(b, b);
  });
  std::vector<double> values(p);
  Matrix sorted(p, p);
  for (size_t j = 0; j < p; ++j) {
    values[j] = g.at(order[j], order[j]);
    for (size_t i = 0; i < p; ++i)
      sorted.at(i, j) = q.at(i, order[j]);
  }
  q = std::move(sorted);
  return values;
}

SVDSplit mlir::afm::splitSVD(const float *w, size_t rows, size_t cols,
                             size_t rank, unsigned maxIterations) {
  SVDSplit out;
  out.rows = rows;
  out.cols = cols;
  out.rank = std::min({rank, rows, cols});
  out.alpha = static_cast<double>(out.rank);
  size_t r = out.rank;
  bool transposed = cols > rows;
  size_t m = transposed ? cols : rows, n = transposed ? rows : cols;
  Matrix mat(m, n);
  for (size_t i = 0; i < rows; ++i)
    for (size_t j = 0; j < cols; ++j)
      (transposed ? mat.at(j, i) : mat.at(i, j)) = w[i * cols + j];

  // Right singular vectors of M: n x p, sorted ascending by nothing yet.
  size_t p = std::min(n, std::max(2 * r, r + 8));
  uint64_t seed = 0x5eed5eedull;
  Matrix x(n, p);
  for (double &v : x.data)
    v = nextUniform(seed);
  orthonormalize(x, seed);

  Matrix q(p, p);
  std::vector<double> eigen, previous;
  for (unsigned it = 1; p > 0; ++it) {
    Matrix y = multiply(mat, x);
    eigen = symmetricEigen(multiplyTransposed(y, y), q);
    out.iterations = it;
    if (!previous.empty()) {
      bool settled = true;
      for (size_t i = 0; i < r; ++i)
        settled &= std::fabs(eigen[i] - previous[i]) <=
                   1e-13 * std::max(eigen[0], 1e-300);
      if (settled || p == n) { // A full basis is exact after one step.
        out.converged = true;
        break;
      }
    }
    if (it >= maxIterations)
      break;
    previous = eigen;
    x = multiplyTransposed(mat, y);
    orthonormalize(x, seed);
  }

  // Ritz vectors V = X Q; M V = U Sigma.
  Matrix v = multiply(x, q);
  Matrix mv = multiply(mat, v);
  out.singularValues.resize(r);
  for (size_t k = 0; k < r; ++k)
    out.singularValues[k] = std::sqrt(std::max(eigen[k], 0.0));
  out.b.resize(rows * r);
  out.a.resize(r * cols);
  for (size_t k = 0; k < r; ++k) {
    if (!transposed) { // W = M: B = M V_r, A = V_r^T.
      for (size_t i = 0; i < rows; ++i)
        out.b[i * r + k] = static_cast<float>(mv.at(i, k));
      for (size_t j = 0; j < cols; ++j)
        out.a[k * cols + j] = static_cast<float>(v.at(j, k));
    } else { // W = M^T = V Sigma U^T: B = V_r Sigma_r, A = (M V_r / sigma)^T.
      double sigma = out.singularValues[k];
      for (size_t i = 0; i < rows; ++i)
        out.b[i * r + k] = static_cast<float>(v.at(i, k) * sigma);
      for (size_t j = 0; j < cols; ++j)
        out.a[k * cols + j] =
            static_cast<float>(sigma > 0.0 ? mv.at(j, k) / sigma : 0.0);
    }
  }
  out.residual.resize(rows * cols);
  for (size_t i = 0; i < rows; ++i)
    for (size_t j = 0; j < cols; ++j) {
      double ba = 0.0;
      for (size_t k = 0; k < r; ++k)
        ba += static_cast<double>(out.b[i * r + k]) * out.a[k * cols + j];
      out.residual[i * cols + j] = static_cast<float>(w[i * cols + j] - ba);
    }
  return out;
}
