//===- TileForTarget.cpp - tile and vectorize for a target ----------------===//
//
// Every number here comes from the TargetDescription: the f32 lanes of a
// vector register and the number of registers. Tiles divide the static
// loop sizes, so every tile has a static shape and vectorizes without
// masks or peeling.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "afm/Target/TargetDescription.h"

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Hoisting.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::afm {
#define GEN_PASS_DEF_AFMTILEFORTARGETPASS
#include "passes/Passes.h.inc"
} // namespace mlir::afm

using namespace mlir;
using namespace mlir::afm;

namespace {
/// The tile of one linalg op: a size per loop (0 = not tiled).
struct TilePlan {
  SmallVector<int64_t> tiles;
  bool contraction = false;
};
} // namespace

/// The largest divisor of `size` that is at most `want`.
static int64_t divisorAtMost(int64_t size, int64_t want) {
  if (want >= size)
    return size;
  for (int64_t t = want; t > 1; --t)
    if (size % t == 0)
      return t;
  return 1;
}

/// Register-tile rows for a contraction whose output rows are `nr` wide:
/// accumulators `mr * nr / lanes` plus one register per B vector plus one
/// broadcast A value must fit the register file.
static int64_t registerRows(const TargetDescription &target, int64_t nr) {
  int64_t vectorsPerRow = std::max<int64_t>(1, nr / target.f32Lanes());
  int64_t available =
      int64_t(target.vectorRegisters) - vectorsPerRow - 1;
  return std::clamp<int64_t>(available / vectorsPerRow, 1, 8);
}

/// The most elements a non-contraction tile may have before its
/// reductions are tiled too.
static constexpr int64_t kMaxTileElements = 1024;

static std::optional<TilePlan> planTiles(linalg::LinalgOp op,
                                         const TargetDescription &target) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic) || op.getNumDpsInits() != 1)
    return std::nullopt;
  TilePlan plan;
  plan.contraction = linalg::isaContractionOpInterface(op);
  int64_t lanes = target.f32Lanes();
  plan.tiles.assign(ranges.size(), 1);
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (auto [i, iterator] : llvm::enumerate(iterators))
    if (iterator == utils::IteratorType::reduction)
      plan.tiles[i] =
          plan.contraction ? divisorAtMost(ranges[i], lanes) : ranges[i];

  // The output's innermost dimension is the vector dimension; for a
  // contraction the one before it holds the register rows.
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  SmallVector<unsigned> outDims;
  for (AffineExpr e : outMap.getResults())
    if (auto dim = dyn_cast<AffineDimExpr>(e))
      outDims.push_back(dim.getPosition());
  if (!outDims.empty()) {
    unsigned inner = outDims.back();
    int64_t nr = plan.contraction ? 2 * lanes : lanes;
    plan.tiles[inner] = divisorAtMost(ranges[inner], nr);
    if (plan.contraction && outDims.size() >= 2) {
      unsigned rows = outDims[outDims.size() - 2];
      plan.tiles[rows] =
          divisorAtMost(ranges[rows], registerRows(target, plan.tiles[inner]));
    }
  }
  // A non-contraction tile becomes one n-D vector op per body op: keep it
  // to a few registers' worth by tiling the reductions (outermost first),
  // which then accumulate tile by tile into the output.
  // Reductions outside an innermost parallel output dimension (split-K
  // partial sums) accumulate element-wise: tile them by 1, so each step is
  // one vector FMA into an accumulator that stays in registers.
  bool splitK = !plan.contraction && !outDims.empty() &&
                outDims.back() == ranges.size() - 1;
  if (splitK) {
    for (auto [i, iterator] : llvm::enumerate(iterators))
      if (iterator == utils::IteratorType::reduction)
        plan.tiles[i] = 1;
  } else if (!plan.contraction) {
    auto elements = [&] {
      int64_t product = 1;
      for (int64_t t : plan.tiles)
        product *= t;
      return product;
    };
    for (auto [i, iterator] : llvm::enumerate(iterators)) {
      if (iterator != utils::IteratorType::reduction)
        continue;
      int64_t others = elements() / plan.tiles[i];
      plan.tiles[i] = divisorAtMost(
          ranges[i], std::max<int64_t>(1, kMaxTileElements / others));
    }
  }
  return plan;
}

/// Marks the outermost tile loop over a parallel dimension with at least two
/// iterations `afm.parallel`, when the op is big enough to be worth a
/// dispatch to the runtime's threads. `tiles` are the op's tile sizes; the
/// loops come in the order of the dimensions tiled.
static void markParallelLoop(const scf::SCFTilingResult &tiled,
                             ArrayRef<int64_t> tiles, linalg::LinalgOp op,
                             int64_t minWork) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t work = 1;
  for (int64_t r : ranges)
    work *= r;
  if (minWork <= 0 || work < minWork)
    return;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<unsigned> tiledDims;
  for (auto [dim, tile] : llvm::enumerate(tiles))
    if (tile != 0)
      tiledDims.push_back(dim);
  if (tiledDims.size() != tiled.loops.size())
    return;
  for (auto [dim, loop] : llvm::zip(tiledDims, tiled.loops)) {
    if (iterators[dim] != utils::IteratorType::parallel)
      return;
    if (ranges[dim] / tiles[dim] >= 2) {
      loop->setAttr("afm.parallel", UnitAttr::get(loop->getContext()));
      return;
    }
  }
}

/// memref.copy -> linalg.copy, so copies are tiled and vectorized too.
static void copiesToLinalg(func::FuncOp func, RewriterBase &rewriter) {
  SmallVector<memref::CopyOp> copies;
  func.walk([&](memref::CopyOp op) { copies.push_back(op); });
  for (memref::CopyOp copy : copies) {
    rewriter.setInsertionPoint(copy);
    linalg::CopyOp::create(rewriter, copy.getLoc(), copy.getSource(),
                           copy.getTarget());
    rewriter.eraseOp(copy);
  }
}

namespace {
struct AFMTileForTargetPass
    : afm::impl::AFMTileForTargetPassBase<AFMTileForTargetPass> {
  using Base::Base;

  void runOnOperation() override {
    auto target = lookupTarget(this->target, targetOS);
    if (!target) {
      getOperation().emitError(llvm::toString(target.takeError()));
      return signalPassFailure();
    }
    func::FuncOp func = getOperation();
    IRRewriter rewriter(&getContext());
    if (!annotateOnly)
      copiesToLinalg(func, rewriter);

    SmallVector<linalg::LinalgOp> ops;
    func.walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    for (linalg::LinalgOp op : ops) {
      std::optional<TilePlan> plan = planTiles(op, *target);
      if (!plan)
        continue;
      if (annotateOnly) {
        op->setAttr("afm.tiles", rewriter.getDenseI64ArrayAttr(plan->tiles));
        continue;
      }
      if (!op.hasPureBufferSemantics())
        continue;
      auto tileable = dyn_cast<TilingInterface>(op.getOperation());
      if (!tileable)
        continue;
      rewriter.setInsertionPoint(op);
      scf::SCFTilingOptions options;
      options.setTileSizes(getAsIndexOpFoldResult(&getContext(), plan->tiles));
      FailureOr<scf::SCFTilingResult> tiled =
          scf::tileUsingSCF(rewriter, tileable, options);
      if (failed(tiled))
        continue;
      markParallelLoop(*tiled, plan->tiles, op, minParallelWork);
      rewriter.eraseOp(op);
      Operation *tile = tiled->tiledOps.front();
      rewriter.setInsertionPoint(tile);
      // Contractions become vector.contract (lowered to FMAs later); the
      // rest element-wise vector ops and multi-reductions.
      if (succeeded(linalg::vectorize(
              rewriter, tile, /*inputVectorSizes=*/{},
              /*inputScalableVecDims=*/{}, /*vectorizeNDExtract=*/false,
              /*flatten1DDepthwiseConv=*/false,
              /*assumeDynamicDimsMatchVecSizes=*/false,
              /*createNamedContraction=*/plan->contraction)))
        rewriter.eraseOp(tile);
    }
    if (!annotateOnly)
      linalg::hoistRedundantVectorTransfers(func);
  }
};
} // namespace
