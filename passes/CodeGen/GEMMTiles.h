//===- GEMMTiles.h - register and cache tiles of a GEMM for a target -*- C++ -*-===//
//
// One place that turns a TargetDescription into the blocking of a matrix
// multiply, shared by the pass that packs operands into register-tile panels
// and the pass that tiles and vectorizes.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_PASSES_GEMMTILES_H
#define AFM_PASSES_GEMMTILES_H

#include <cstdint>
#include <optional>

namespace mlir::afm {

struct TargetDescription;

/// The largest divisor of `size` that is at most `want` (at least 1).
int64_t divisorAtMost(int64_t size, int64_t want);

/// Rows of a register tile whose rows are `nr` floats wide: the
/// accumulators `mr * nr / lanes`, one register per B vector and one
/// broadcast A value must fit the target's register file.
int64_t registerRows(const TargetDescription &target, int64_t nr);

/// The blocking of C[M,N] += A[M,K] * B[K,N]:
///   mr x nr     the register tile (accumulators), nr = 2 vectors of f32;
///   kr          reduction steps per vectorized micro-kernel step;
///   kc          reduction block: an A and a B micro-panel (mr x kc and
///               kc x nr) fit half the L1 data cache;
///   nc          columns per cache block: a kc x nc block of B fits half
///               the L2 cache;
///   mc          rows per cache block: an mc x kc block of A fits a
///               quarter of the L2 cache, next to B's block, while every
///               micro-panel of B runs down it (M itself when it fits).
/// All divide their dimension, so every tile has a static shape.
struct GEMMTiles {
  int64_t mr, nr, kr, kc, nc, mc;
};

/// The blocking for `target`, or none when the GEMM has fewer than
/// `minMultiplyAdds` multiply-adds or fewer than two register tiles of rows,
/// or its sizes do not split into full register tiles (it then stays as it
/// is).
std::optional<GEMMTiles>
chooseGEMMTiles(const TargetDescription &target, int64_t m, int64_t n,
                int64_t k, int64_t minMultiplyAdds);

} // namespace mlir::afm

#endif // AFM_PASSES_GEMMTILES_H
