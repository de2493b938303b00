//===- TilePlanning.h - the tiles of a linalg op for a target ---*- C++ -*-===//
//
// The strategy half of tiling: which tile sizes, loop order and kind of
// vectorization each linalg op on buffers gets for a target. afm-select-
// tiles records the choice on each op as an `afm.tile_plan`; afm-tile-for-
// target applies it. (Packed GEMMs carry afm-pack-gemm's `afm.gemm_schedule`
// instead, which wins when it applies.)
//
//===----------------------------------------------------------------------===//

#ifndef AFM_PASSES_TILEPLANNING_H
#define AFM_PASSES_TILEPLANNING_H

#include "afm/Target/TargetDescription.h"
#include "dialects/afm/IR/AFMDialect.h"

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"

namespace mlir::afm {

/// The register tile of `op` for vector registers (no SME), or null when
/// the op is not tiled (dynamic sizes, several outputs).
TilePlanAttr planVectorTiles(linalg::LinalgOp op,
                             const TargetDescription &target);

/// Whether `op` is an f32 GEMM C(m, n) += A(m, k) * B(k, n), or the same
/// with B in [N, K] layout (afm.linear's form); `transposedB` says which.
bool isSMEGEMM(linalg::LinalgOp op, bool &transposedB);

/// The plan afm-select-tiles records: f32 GEMMs on ZA tiles on SME
/// targets, else planVectorTiles.
TilePlanAttr selectTilePlan(linalg::LinalgOp op,
                            const TargetDescription &target);

} // namespace mlir::afm

#endif // AFM_PASSES_TILEPLANNING_H
