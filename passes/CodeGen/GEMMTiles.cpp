//===- GEMMTiles.cpp - register and cache tiles of a GEMM for a target ----===//

#include "passes/CodeGen/GEMMTiles.h"

#include "afm/Target/TargetDescription.h"

#include <algorithm>

using namespace mlir::afm;

int64_t mlir::afm::divisorAtMost(int64_t size, int64_t want) {
  if (want >= size)
    return size;
  for (int64_t t = want; t > 1; --t)
    if (size % t == 0)
      return t;
  return 1;
}

int64_t mlir::afm::registerRows(const TargetDescription &target, int64_t nr) {
  int64_t vectorsPerRow = std::max<int64_t>(1, nr / target.f32Lanes());
  int64_t available = int64_t(target.vectorRegisters) - vectorsPerRow - 1;
  return std::clamp<int64_t>(available / vectorsPerRow, 1, 8);
}

/// Packing pays for itself only when each packed panel is reused by
/// several register tiles of rows.
static constexpr int64_t kMinPackedRowTiles = 2;

std::optional<GEMMTiles>
mlir::afm::chooseGEMMTiles(const TargetDescription &target, int64_t m,
                           int64_t n, int64_t k, int64_t minMultiplyAdds) {
  GEMMTiles tiles;
  int64_t lanes = target.f32Lanes();
  tiles.nr = 2 * lanes;
  int64_t rows = registerRows(target, tiles.nr);
  tiles.mr = divisorAtMost(m, rows);
  // A register tile much shorter than the register file allows wastes the
  // broadcasts; such GEMMs stay on the unpacked path.
  if (2 * tiles.mr < rows || n % tiles.nr != 0 ||
      m < kMinPackedRowTiles * tiles.mr || m * n * k < minMultiplyAdds)
    return std::nullopt;
  tiles.kr = divisorAtMost(k, 4);
  int64_t kcWant = int64_t(target.l1dBytes / 2) /
                   ((tiles.mr + tiles.nr) * int64_t(sizeof(float)));
  tiles.kc = divisorAtMost(k, std::max<int64_t>(tiles.kr, kcWant));
  if (tiles.kc % tiles.kr != 0)
    tiles.kc = tiles.kr;
  int64_t ncWant = int64_t(target.l2Bytes / 2) /
                   (tiles.kc * int64_t(sizeof(float)));
  // Several column blocks, so the outer loop splits across threads.
  ncWant = std::min(ncWant, std::max(tiles.nr, n / 4));
  int64_t blocks = divisorAtMost(n / tiles.nr,
                                 std::max<int64_t>(1, ncWant / tiles.nr));
  tiles.nc = blocks * tiles.nr;
  // A is read once per micro-panel of B: 512 rows of it over a reduction
  // block (256 KiB at kc = 128) do not fit beside B's block in a 512 KiB
  // L2, so it came from L3 and the 512-row GEMM ran at 26-49% of the FMA
  // peak on AVX2 (1.5x faster with row blocks, afm-bench, 2026-12-08).
  int64_t mcWant = int64_t(target.l2Bytes / 4) /
                   (tiles.kc * int64_t(sizeof(float)));
  tiles.mc = tiles.mr * divisorAtMost(m / tiles.mr,
                                      std::max<int64_t>(1, mcWant / tiles.mr));
  return tiles;
}
