//===- CompressTestSupport.h - Shared helpers for AFMCompress tests -------===//

#ifndef AFM_TEST_UNIT_COMPRESSTESTSUPPORT_H
#define AFM_TEST_UNIT_COMPRESSTESTSUPPORT_H

#include <random>
#include <vector>

namespace mlir::afm::test {

/// n samples of N(0, sigma^2), reproducible from `seed`.
inline std::vector<float> gaussian(size_t n, float sigma, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, sigma);
  std::vector<float> out(n);
  for (float &v : out)
    v = dist(rng);
  return out;
}

} // namespace mlir::afm::test

#endif // AFM_TEST_UNIT_COMPRESSTESTSUPPORT_H
