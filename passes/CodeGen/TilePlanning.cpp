//===- TilePlanning.cpp - the tiles of a linalg op for a target -----------===//
//
// Every number here comes from the TargetDescription: the f32 lanes of a
// vector register and the number of registers. Tiles divide the static
// loop sizes, so every tile has a static shape and vectorizes without
// masks or peeling.
//
//===----------------------------------------------------------------------===//

#include "passes/CodeGen/TilePlanning.h"

#include "passes/CodeGen/GEMMTiles.h"
#include "passes/CodeGen/Int8DotProducts.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;
using namespace mlir::afm;

namespace {
/// The tile of one linalg op: a size per loop (0 = not tiled).
struct TilePlan {
  SmallVector<int64_t> tiles;
  bool contraction = false;
  bool int8Dot = false;
  /// Split-K partial sums: every reduction tiled by 1 under an innermost
  /// parallel output dimension (a GEMV's inner loop).
  bool splitK = false;
  /// The tile loops' order (dimensions, outermost first); empty: the op's.
  SmallVector<int64_t> interchange;
};
} // namespace

/// The most elements a non-contraction tile may have before its
/// reductions are tiled too.
static constexpr int64_t kMaxTileElements = 1024;

/// The bit width of the narrowest integer multiplication in `op`'s body,
/// 32 when there is none (or none narrower).
static int64_t narrowestIntegerProduct(linalg::LinalgOp op) {
  int64_t width = 32;
  op->walk([&](arith::MulIOp mul) {
    if (auto type = dyn_cast<IntegerType>(mul.getType()))
      width = std::min<int64_t>(width, std::max(8u, type.getWidth()));
  });
  return width;
}

static std::optional<TilePlan> planTiles(linalg::LinalgOp op,
                                         const TargetDescription &target) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic) || op.getNumDpsInits() != 1)
    return std::nullopt;
  TilePlan plan;
  plan.contraction = linalg::isaContractionOpInterface(op);
  int64_t lanes = target.f32Lanes();
  // An int8 dot product: one register of i32 lanes (four bytes each) per
  // step, every other loop stepped one by one so the accumulator stays in
  // a register (Int8DotProducts.h).
  if (matchInt8DotProduct(op)) {
    plan.tiles.assign(ranges.size(), 1);
    plan.tiles[ranges.size() - 2] =
        divisorAtMost(ranges[ranges.size() - 2], lanes);
    plan.tiles.back() = ranges.back();
    plan.int8Dot = true;
    // The reduction loops innermost, so the accumulator of one output
    // tile is loop-invariant in all of them.
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    for (auto kind : {utils::IteratorType::parallel,
                      utils::IteratorType::reduction})
      for (auto [dim, iterator] : llvm::enumerate(iterators))
        if (iterator == kind)
          plan.interchange.push_back(dim);
    return plan;
  }
  plan.tiles.assign(ranges.size(), 1);
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  SmallVector<unsigned> outDims;
  for (AffineExpr e : outMap.getResults())
    if (auto dim = dyn_cast<AffineDimExpr>(e))
      outDims.push_back(dim.getPosition());
  // A contraction whose innermost loop is a lane of every operand (x and W
  // split into [groups, lanes], summed over the groups) is split-K partial
  // sums, not a matmul: element-wise FMAs below.
  auto isLaneOfEveryOperand = [&](unsigned dim) {
    return llvm::all_of(op->getOpOperands(), [&](OpOperand &operand) {
      AffineMap map = op.getMatchingIndexingMap(&operand);
      return map.getNumResults() > 0 &&
             map.getResults().back() == getAffineDimExpr(dim, op.getContext());
    });
  };
  if (plan.contraction && !outDims.empty() &&
      outDims.back() == ranges.size() - 1 && isLaneOfEveryOperand(outDims.back()))
    plan.contraction = false;
  for (auto [i, iterator] : llvm::enumerate(iterators))
    if (iterator == utils::IteratorType::reduction)
      plan.tiles[i] =
          plan.contraction ? divisorAtMost(ranges[i], lanes) : ranges[i];

  // The output's innermost dimension is the vector dimension; for a
  // contraction the one before it holds the register rows. Integer
  // products narrower than f32 (i16 block sums) fill a
  // register with more lanes.
  if (!outDims.empty()) {
    unsigned inner = outDims.back();
    int64_t nr = plan.contraction ? 2 * lanes : lanes;
    if (!plan.contraction)
      nr *= 32 / narrowestIntegerProduct(op);
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
  // A kernel may also ask for its lanes whole in the register tile while
  // its output has none (the 4-bit LM head: each row's 16 lanes of group
  // sums): the same split-K tile, whose lane sums the loop over the other
  // reductions carries as a vector (liftLaneSumsOutOfLoop), with no
  // partial sums in memory.
  auto whole = contracts(op).getWholeTileDimsAttrHelper().getAttr(op);
  int64_t innermost = static_cast<int64_t>(ranges.size()) - 1;
  bool lanesReduced = whole &&
                      iterators.back() == utils::IteratorType::reduction &&
                      llvm::is_contained(whole.asArrayRef(), innermost);
  bool splitK = !plan.contraction && !outDims.empty() &&
                (outDims.back() == ranges.size() - 1 || lanesReduced);
  plan.splitK = splitK;
  if (splitK) {
    for (auto [i, iterator] : llvm::enumerate(iterators))
      if (iterator == utils::IteratorType::reduction)
        plan.tiles[i] = 1;
    // Loops the kernel asks to span one register tile (rows sharing their
    // activation vectors): whole, and every parallel loop outside the
    // reductions, so that the tile's accumulators are loop-invariant in
    // them and stay in registers.
    if (whole) {
      for (int64_t dim : whole.asArrayRef())
        if (dim >= 0 && dim < static_cast<int64_t>(ranges.size()))
          plan.tiles[dim] = ranges[dim];
      // Parallel loops, then whole reductions (one iteration each: the
      // lanes), then the others, so that the innermost loop is the one
      // that steps.
      auto isWhole = [&](int64_t dim) {
        return llvm::is_contained(whole.asArrayRef(), dim);
      };
      for (auto [dim, iterator] : llvm::enumerate(iterators))
        if (iterator == utils::IteratorType::parallel)
          plan.interchange.push_back(dim);
      for (bool wholeReduction : {true, false})
        for (auto [dim, iterator] : llvm::enumerate(iterators))
          if (iterator == utils::IteratorType::reduction &&
              isWhole(dim) == wholeReduction)
            plan.interchange.push_back(dim);
    }
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

TilePlanAttr afm::planVectorTiles(linalg::LinalgOp op,
                                  const TargetDescription &target) {
  std::optional<TilePlan> plan = planTiles(op, target);
  if (!plan)
    return {};
  TileKind kind = plan->int8Dot       ? TileKind::Int8Dot
                  : plan->splitK      ? TileKind::SplitK
                  : plan->contraction ? TileKind::Contraction
                                      : TileKind::Elementwise;
  return TilePlanAttr::get(op.getContext(), kind, plan->tiles,
                           plan->interchange);
}

/// Whether `op` is an f32 GEMM C(m, n) += A(m, k) * B(k, n), or the same
/// with B in [N, K] layout (afm.linear's form); `transposedB` says which.
bool afm::isSMEGEMM(linalg::LinalgOp op, bool &transposedB) {
  if (!linalg::isaContractionOpInterface(op) || op.getNumLoops() != 3 ||
      op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !op.hasPureBufferSemantics() ||
      llvm::any_of(op.getStaticLoopRanges(), ShapedType::isDynamic))
    return false;
  for (OpOperand &operand : op->getOpOperands())
    if (!getElementTypeOrSelf(operand.get().getType()).isF32())
      return false;
  MLIRContext *ctx = op.getContext();
  AffineExpr m, n, k;
  bindDims(ctx, m, n, k);
  auto map = [&](AffineExpr a, AffineExpr b) {
    return AffineMap::get(3, 0, {a, b}, ctx);
  };
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (maps[0] != map(m, k) || maps[2] != map(m, n))
    return false;
  transposedB = maps[1] == map(n, k);
  return transposedB || maps[1] == map(k, n);
}

TilePlanAttr afm::selectTilePlan(linalg::LinalgOp op,
                                 const TargetDescription &target) {
  bool transposedB = false;
  if (target.hasSME && isSMEGEMM(op, transposedB) &&
      isa<TilingInterface>(op.getOperation()))
    return TilePlanAttr::get(op.getContext(), TileKind::SME, {}, {});
  return planVectorTiles(op, target);
}
