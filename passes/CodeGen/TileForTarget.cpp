//===- TileForTarget.cpp - tile and vectorize for a target ----------------===//
//
// Every number here comes from the TargetDescription: the f32 lanes of a
// vector register and the number of registers. Tiles divide the static
// loop sizes, so every tile has a static shape and vectorizes without
// masks or peeling.
//
//===----------------------------------------------------------------------===//

#include "passes/CodeGen/Accumulators.h"
#include "passes/CodeGen/GEMMTiles.h"
#include "passes/CodeGen/Int8DotProducts.h"
#include "passes/CodeGen/Prefetch.h"
#include "passes/CodeGen/StorageBytes.h"
#include "passes/CodeGen/TilePlanning.h"
#include "passes/Passes.h"

#include "afm/Target/TargetDescription.h"
#include "dialects/afm/IR/AFMDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Hoisting.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"
#include "llvm/Support/Debug.h"

namespace mlir::afm {
#define GEN_PASS_DEF_AFMTILEFORTARGETPASS
#include "passes/Passes.h.inc"
} // namespace mlir::afm

#define DEBUG_TYPE "afm-tile-for-target"

using namespace mlir;
using namespace mlir::afm;

/// Marks the outermost tile loop over a parallel dimension with at least two
/// iterations `afm.parallel`, when the op is big enough to be worth a
/// dispatch to the runtime's threads. `tiles` are the op's tile sizes; the
/// loops come in the order of the dimensions tiled, permuted by
/// `interchange` when there is one. Returns the loop marked and its
/// dimension, or a null loop.
static std::pair<LoopLikeOpInterface, int64_t>
markParallelLoop(const scf::SCFTilingResult &tiled, ArrayRef<int64_t> tiles,
                 linalg::LinalgOp op, int64_t minWork,
                 ArrayRef<int64_t> interchange = {}) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t work = 1;
  for (int64_t r : ranges)
    work *= r;
  if (minWork <= 0 || work < minWork)
    return {};
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<int64_t> order(interchange);
  if (order.empty())
    order = llvm::to_vector(llvm::seq<int64_t>(0, tiles.size()));
  SmallVector<unsigned> tiledDims;
  for (int64_t dim : order)
    if (tiles[dim] != 0)
      tiledDims.push_back(dim);
  if (tiledDims.size() != tiled.loops.size())
    return {};
  for (auto [dim, loop] : llvm::zip(tiledDims, tiled.loops)) {
    if (iterators[dim] != utils::IteratorType::parallel)
      return {};
    if (ranges[dim] / tiles[dim] >= 2) {
      LLVM_DEBUG(llvm::dbgs() << "the tile loop over dimension " << dim
                              << " runs on threads (" << work
                              << " iterations of work)\n");
      contracts(loop).getParallelAttrHelper().setAttr(
          loop, UnitAttr::get(loop->getContext()));
      return {loop, dim};
    }
  }
  return {};
}

/// Whether dimension `dim` of `op` walks the rows of one of its `streamed`
/// inputs: the leading index of that input's map.
static bool walksStreamedRows(linalg::LinalgOp op, int64_t dim,
                              ArrayRef<unsigned> streamed) {
  return llvm::any_of(streamed, [&](unsigned input) {
    AffineMap map = op.getMatchingIndexingMap(&op->getOpOperand(input));
    return map.getNumResults() > 0 &&
           map.getResult(0) == getAffineDimExpr(dim, op.getContext());
  });
}

/// Runs the iterations of `parallelLoop` (from 0, a constant step, an even
/// count N of at least 4; other loops are left alone) in the order 0, N/2,
/// 1, N/2 + 1, ...: a GEMV's row loop then reads its weights as two
/// streams half the matrix apart (TargetDescription's interleaveRowHalves). The iterations are independent (the loop is a
/// parallel one), so any order computes the same; the runtime's threads
/// claim runs of iterations, each then a run of rows in either half.
static void interleaveHalves(RewriterBase &rewriter,
                             LoopLikeOpInterface parallelLoop) {
  auto loop = dyn_cast_or_null<scf::ForOp>(parallelLoop.getOperation());
  if (!loop)
    return;
  std::optional<int64_t> lower = getConstantIntValue(loop.getLowerBound()),
                         upper = getConstantIntValue(loop.getUpperBound()),
                         step = getConstantIntValue(loop.getStep());
  if (!lower || !upper || !step || *lower != 0 || *step <= 0 ||
      *upper % *step != 0)
    return;
  int64_t trips = *upper / *step;
  if (trips < 4 || trips % 2 != 0)
    return;
  Location loc = loop.getLoc();
  Value iv = loop.getInductionVar();
  rewriter.setInsertionPointToStart(loop.getBody());
  auto constant = [&](int64_t value) {
    return arith::ConstantIndexOp::create(rewriter, loc, value).getResult();
  };
  // k = iv / step; k' = (k mod 2) * N/2 + k / 2; iv' = k' * step.
  Value k = *step == 1
                ? iv
                : arith::DivUIOp::create(rewriter, loc, iv, constant(*step))
                      .getResult();
  Value half = arith::RemUIOp::create(rewriter, loc, k, constant(2));
  Value within = arith::DivUIOp::create(rewriter, loc, k, constant(2));
  Value row = arith::AddIOp::create(
      rewriter, loc,
      arith::MulIOp::create(rewriter, loc, half, constant(trips / 2)), within);
  if (*step != 1)
    row = arith::MulIOp::create(rewriter, loc, row, constant(*step));
  // Every use of the induction variable now reads the permuted row, but
  // for the ops that compute it.
  SmallPtrSet<Operation *, 2> rowFromIv;
  if (k == iv)
    rowFromIv = {half.getDefiningOp(), within.getDefiningOp()};
  else
    rowFromIv = {k.getDefiningOp()};
  rewriter.replaceAllUsesExcept(iv, row, rowFromIv);
  LLVM_DEBUG(llvm::dbgs() << "the row loop of " << trips
                          << " iterations runs its halves interleaved\n");
}

/// Whether a reduction's yielded values are the same on every iteration:
/// nothing they compute from reads an input element or an iteration index
/// (a count, `out + 1`). Upstream's vectorizer combines such a value once
/// per tile instead of once per iteration (a sum of 15 ones gave 1), so
/// these stay scalar loops.
static bool reducesUniformValue(Operation *tile) {
  auto op = dyn_cast<linalg::LinalgOp>(tile);
  if (!op || op.getNumReductionLoops() == 0)
    return false;
  Block *body = op.getBlock();
  SmallVector<Value> worklist(body->getTerminator()->getOperands());
  DenseSet<Value> seen;
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (!seen.insert(value).second)
      continue;
    if (auto argument = dyn_cast<BlockArgument>(value)) {
      if (argument.getOwner() == body &&
          argument.getArgNumber() < op.getNumDpsInputs())
        return false;
      continue;
    }
    Operation *def = value.getDefiningOp();
    if (!def || def->getBlock() != body)
      continue;
    if (isa<linalg::IndexOp>(def))
      return false;
    llvm::append_range(worklist, def->getOperands());
  }
  return true;
}

/// Vectorizes one tile; a contraction becomes a vector.contract.
static void vectorizeTile(RewriterBase &rewriter, Operation *tile,
                          bool contraction) {
  if (reducesUniformValue(tile)) {
    LLVM_DEBUG(llvm::dbgs() << "not vectorizing " << tile->getLoc()
                            << ": its reduction combines a uniform value\n");
    return;
  }
  rewriter.setInsertionPoint(tile);
  if (succeeded(linalg::vectorize(
          rewriter, tile, /*inputVectorSizes=*/{},
          /*inputScalableVecDims=*/{}, /*vectorizeNDExtract=*/false,
          /*flatten1DDepthwiseConv=*/false,
          /*assumeDynamicDimsMatchVecSizes=*/false,
          /*createNamedContraction=*/contraction)))
    rewriter.eraseOp(tile);
}


/// The inputs a split-K kernel streams from memory: those of at least
/// kStreamedBytes (the weights of a GEMV, not its activations; the ASTC
/// kernels stream codes, tail codes and scales).
static SmallVector<unsigned> streamedInputs(linalg::LinalgOp op) {
  constexpr int64_t kStreamedBytes = 512 << 10;
  SmallVector<unsigned> streamed;
  for (OpOperand *input : op.getDpsInputOperands()) {
    auto type = dyn_cast<MemRefType>(input->get().getType());
    if (!type || !type.hasStaticShape())
      continue;
    if (storageBytes(type, op) >= kStreamedBytes)
      streamed.push_back(input->getOperandNumber());
  }
  return streamed;
}

/// The array a view reads: through subviews, reshapes and casts up to the
/// memref.view that places it in its buffer (the weights blob), or the
/// value that has no view op above it.
static Value viewedArray(Value view) {
  while (Operation *def = view.getDefiningOp()) {
    if (isa<memref::ViewOp>(def))
      return view;
    auto viewLike = dyn_cast<ViewLikeOpInterface>(def);
    if (!viewLike)
      return view;
    view = viewLike.getViewSource();
  }
  return view;
}

/// How far ahead each of `op`'s `streamed` inputs is prefetched: the
/// target's distance shared among the distinct arrays they read, which a
/// thread streams at once. The 4-bit head reads its code words and its
/// scales (and, on a target that interleaves row halves, each from two
/// places: four streams): with each 8 KiB ahead it read 75-79% of the
/// limit on a Granite Rapids VM, with each 4 KiB ahead 84-88%
/// (docs/bench/lm-head-prefetch-granite-rapids.txt; that target's distance
/// is now 2 KiB, so 1 KiB each); the 2-bit GEMV, one array, keeps the full
/// distance.
static int64_t prefetchBytesPerStream(linalg::LinalgOp op,
                                      ArrayRef<unsigned> streamed,
                                      const TargetDescription &target) {
  llvm::SmallPtrSet<void *, 4> arrays;
  for (unsigned input : streamed)
    arrays.insert(viewedArray(op->getOperand(input)).getAsOpaquePointer());
  return int64_t(target.prefetchBytes) /
         int64_t(std::max<size_t>(1, arrays.size()));
}

/// Tiles `op` with `plan` (of vector tiles) and vectorizes the tile.
static void tileAndVectorize(RewriterBase &rewriter, linalg::LinalgOp op,
                             TilePlanAttr plan,
                             const TargetDescription &target,
                             int64_t minParallelWork) {
  auto tileable = dyn_cast<TilingInterface>(op.getOperation());
  if (!plan || plan.getKind() == TileKind::SME ||
      !op.hasPureBufferSemantics() || !tileable) {
    LLVM_DEBUG(llvm::dbgs() << "not tiled: " << op->getName()
                            << (plan ? " (not on buffers, not tileable or SME)"
                                     : " (no plan)")
                            << "\n");
    return;
  }
  LLVM_DEBUG(llvm::dbgs() << "tiling " << op->getName() << " at "
                          << op.getLoc() << " as planned: " << plan << "\n");
  bool splitK = plan.getKind() == TileKind::SplitK;
  bool int8Dot = plan.getKind() == TileKind::Int8Dot;
  bool contraction = plan.getKind() == TileKind::Contraction ||
                     (int8Dot && linalg::isaContractionOpInterface(op));
  SmallVector<unsigned> streamed = streamedInputs(op);
  int64_t prefetchBytes = prefetchBytesPerStream(op, streamed, target);
  bool wholeTile =
      contracts(op).getWholeTileDimsAttrHelper().isAttrPresent(op);
  rewriter.setInsertionPoint(op);
  scf::SCFTilingOptions options;
  options.setTileSizes(getAsIndexOpFoldResult(op.getContext(), plan.getTiles()));
  options.setInterchange(plan.getInterchange());
  FailureOr<scf::SCFTilingResult> tiled =
      scf::tileUsingSCF(rewriter, tileable, options);
  if (failed(tiled))
    return;
  auto [parallelLoop, parallelDim] = markParallelLoop(
      *tiled, plan.getTiles(), op, minParallelWork, plan.getInterchange());
  if ((splitK || int8Dot) && target.interleaveRowHalves && parallelLoop &&
      walksStreamedRows(op, parallelDim, streamed))
    interleaveHalves(rewriter, parallelLoop);
  rewriter.eraseOp(op);
  Operation *tile = tiled->tiledOps.front();
  // GEMV-like tiles stream their weights: prefetch them ahead.
  // A split-K tile's loops may step by less than a line (8 f32 lanes on
  // AVX2): those prefetch at their line-starting steps only. The int8
  // kernels' unrolled copies are deduplicated in finishInt8DotLoops.
  if (splitK || int8Dot) {
    rewriter.setInsertionPoint(tile);
    SmallVector<scf::ForOp> loops;
    if (splitK)
      for (LoopLikeOpInterface loop : tiled->loops)
        if (auto forOp = dyn_cast<scf::ForOp>(loop.getOperation()))
          loops.push_back(forOp);
    for (unsigned input : streamed)
      prefetchAhead(
          rewriter, tile->getLoc(),
          cast<linalg::LinalgOp>(tile).getDpsInputOperand(input)->get(),
          prefetchBytes, target.streamPrefetchLocality, loops);
  }
  if (int8Dot &&
      succeeded(vectorizeInt8DotTile(rewriter, cast<linalg::GenericOp>(tile),
                                     target))) {
    finishInt8DotLoops(rewriter, tiled->loops);
    return;
  }
  // Contractions become vector.contract (lowered to FMAs later); the rest
  // element-wise vector ops and multi-reductions.
  vectorizeTile(rewriter, tile, contraction);
  // A whole-tile split-K kernel's reductions are its innermost loops: its
  // accumulators become their iter_args (upstream's hoisting refuses a
  // buffer with views elsewhere, as the partial sums have).
  if (splitK && wholeTile && !tiled->loops.empty()) {
    for (LoopLikeOpInterface loop : llvm::reverse(tiled->loops))
      moveLoopInvariantCode(loop);
    if (auto reduction =
            dyn_cast<scf::ForOp>(tiled->loops.back().getOperation()))
      liftLaneSumsOutOfLoop(rewriter, hoistAccumulators(rewriter, reduction));
  }
}

/// Makes `op` read its `input`-th operand from an f32 copy laid out in the
/// loop order `order` (a linalg.transpose, itself tiled and vectorized,
/// placed before `copyBefore`), allocated before `allocBefore` and freed
/// before `deallocBefore`. The operand must be defined before `copyBefore`.
static void readInputFromCopy(RewriterBase &rewriter, linalg::LinalgOp op,
                              unsigned input, ArrayRef<int64_t> order,
                              Operation *allocBefore,
                              Operation *deallocBefore,
                              Operation *copyBefore,
                              const TargetDescription &target,
                              int64_t minParallelWork) {
  OpOperand *operand = op.getDpsInputOperand(input);
  AffineMap map = op.getMatchingIndexingMap(operand);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<int64_t> shape, permutation;
  SmallVector<AffineExpr> results;
  for (int64_t dim : order) {
    std::optional<unsigned> position =
        map.getResultPosition(rewriter.getAffineDimExpr(dim));
    if (!position)
      return;
    shape.push_back(ranges[dim]);
    results.push_back(rewriter.getAffineDimExpr(dim));
    permutation.push_back(*position);
  }
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(allocBefore);
  Value buffer = memref::AllocOp::create(
      rewriter, loc, MemRefType::get(shape, rewriter.getF32Type()),
      rewriter.getI64IntegerAttr(64));
  rewriter.setInsertionPoint(deallocBefore);
  memref::DeallocOp::create(rewriter, loc, buffer);
  rewriter.setInsertionPoint(copyBefore);
  auto copy = linalg::TransposeOp::create(rewriter, loc, operand->get(),
                                          buffer, permutation);
  rewriter.modifyOpInPlace(op, [&] {
    operand->set(buffer);
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    maps[operand->getOperandNumber()] =
        AffineMap::get(map.getNumDims(), 0, results, rewriter.getContext());
    op->setAttr("indexing_maps", rewriter.getAffineMapArrayAttr(maps));
  });
  // The copy is this pass's own: planned here, as afm-select-tiles would.
  auto copyOp = cast<linalg::LinalgOp>(copy.getOperation());
  tileAndVectorize(rewriter, copyOp, planVectorTiles(copyOp, target), target,
                   minParallelWork);
}

/// An f32 GEMM on an SME target: upstream's scalable recipe. The output
/// is tiled [4] x [4] (SVL x SVL f32, one ZA tile) and the reduction by 1,
/// so each reduction step is one fmopa outer product. B in [N, K] layout
/// is first copied to [K, N]: the outer product reads a row of B's tile,
/// which must be contiguous. Returns false for ops it leaves alone.
static bool tileForSME(RewriterBase &rewriter, linalg::LinalgOp op,
                       const TargetDescription &target,
                       int64_t minParallelWork) {
  bool transposedB = false;
  if (!target.hasSME || !isSMEGEMM(op, transposedB) ||
      !isa<TilingInterface>(op.getOperation()))
    return false;
  Location loc = op.getLoc();
  LLVM_DEBUG(llvm::dbgs() << "SME: tiling the GEMM at " << loc
                          << " [4]x[4]x1 on ZA tiles"
                          << (transposedB ? ", B copied to [K, N] first" : "")
                          << "\n");
  if (transposedB)
    readInputFromCopy(rewriter, op, /*input=*/1, /*order=*/{2, 1},
                      /*allocBefore=*/op, /*deallocBefore=*/op->getNextNode(),
                      /*copyBefore=*/op, target, minParallelWork);
  rewriter.setInsertionPoint(op);
  Value svl = arith::MulIOp::create(
      rewriter, loc, vector::VectorScaleOp::create(rewriter, loc),
      arith::ConstantIndexOp::create(rewriter, loc, 4));
  scf::SCFTilingOptions options;
  options.setTileSizes({svl, svl, rewriter.getIndexAttr(1)});
  FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
      rewriter, cast<TilingInterface>(op.getOperation()), options);
  if (failed(tiled))
    return false;
  rewriter.eraseOp(op);
  Operation *tile = tiled->tiledOps.front();
  rewriter.setInsertionPoint(tile);
  // A masked vector.contract straight away: a multi-reduction over the
  // unit k dimension would be canonicalized away before it became one.
  if (succeeded(linalg::vectorize(
          rewriter, tile, /*inputVectorSizes=*/{4, 4, 1},
          /*inputScalableVecDims=*/{true, true, false},
          /*vectorizeNDExtract=*/false, /*flatten1DDepthwiseConv=*/false,
          /*assumeDynamicDimsMatchVecSizes=*/false,
          /*createNamedContraction=*/true)))
    rewriter.eraseOp(tile);
  return true;
}

/// Tiles chosen by an earlier pass (afm-pack-gemm): a cache level in the
/// given loop order, whose outermost parallel loop may run on threads,
/// then the register tile, vectorized. Loop-invariant views are hoisted so
/// that the accumulators can stay in registers across the reduction loop.
/// Fails only while `op` is still untouched.
static LogicalResult tilePlanned(RewriterBase &rewriter, linalg::LinalgOp op,
                                 const TargetDescription &target,
                                 GEMMScheduleAttr schedule,
                                 int64_t minParallelWork) {
  auto tileable = dyn_cast<TilingInterface>(op.getOperation());
  if (!tileable || !op.hasPureBufferSemantics())
    return failure();
  int64_t packInput = schedule.getPackInput();
  ArrayRef<int64_t> cache = schedule.getCacheTiles();
  ArrayRef<int64_t> interchange = schedule.getCacheInterchange();
  ArrayRef<int64_t> registers = schedule.getRegisterTiles();
  LLVM_DEBUG(llvm::dbgs() << "tiling " << op->getName() << " at "
                          << op.getLoc() << " as afm-pack-gemm planned: "
                          << schedule << "\n");
  rewriter.setInsertionPoint(op);
  scf::SCFTilingOptions cacheOptions;
  cacheOptions.setTileSizes(getAsIndexOpFoldResult(op.getContext(), cache));
  cacheOptions.setInterchange(interchange);
  FailureOr<scf::SCFTilingResult> blocks =
      scf::tileUsingSCF(rewriter, tileable, cacheOptions);
  if (failed(blocks))
    return failure();
  markParallelLoop(*blocks, cache, op, minParallelWork, interchange);
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  int64_t rowBlocks = 0; // cache loops inside the reduction block's
  for (int64_t dim : llvm::reverse(interchange)) {
    if (iterators[dim] == utils::IteratorType::reduction)
      break;
    rowBlocks += cache[dim] != 0;
  }
  rewriter.eraseOp(op);

  // B's kc x nc block is copied into contiguous nr-wide panels (in L2)
  // once per reduction block, whatever B's layout and leading dimension
  // (which would otherwise alias in the L1 sets), before the row blocks
  // if there are any. The buffer belongs to the column-block loop, so each
  // thread has its own.
  Operation *block = blocks->tiledOps.front();
  if (packInput >= 0 && blocks->loops.size() >= 2 + size_t(rowBlocks)) {
    size_t columnLoop = blocks->loops.size() - 2 - rowBlocks;
    Block &columns = blocks->loops[columnLoop]->getRegion(0).front();
    Operation *copyBefore = block;
    if (rowBlocks) {
      // B's views, which do not depend on the row blocks, move out of
      // them first.
      LoopLikeOpInterface rows = blocks->loops[columnLoop + 2];
      moveLoopInvariantCode(rows);
      copyBefore = rows.getOperation();
    }
    readInputFromCopy(rewriter, cast<linalg::LinalgOp>(block), packInput,
                      schedule.getPackOrder(), &columns.front(),
                      columns.getTerminator(), copyBefore, target,
                      /*minParallelWork=*/0);
  }
  rewriter.setInsertionPoint(block);
  scf::SCFTilingOptions registerOptions;
  // (`op` is erased: the context comes from the block.)
  registerOptions.setTileSizes(
      getAsIndexOpFoldResult(block->getContext(), registers));
  FailureOr<scf::SCFTilingResult> tiles = scf::tileUsingSCF(
      rewriter, cast<TilingInterface>(block), registerOptions);
  // `op` is gone: from here on, an untiled block stays a (correct) loop
  // nest for convert-linalg-to-loops rather than a failure.
  if (failed(tiles))
    return success();
  rewriter.eraseOp(block);
  vectorizeTile(rewriter, tiles->tiledOps.front(), /*contraction=*/true);

  // Views that only depend on outer loops move out, so the accumulators'
  // transfers are loop-invariant in the reduction loop.
  SmallVector<LoopLikeOpInterface> loops;
  blocks->loops.front()->walk(
      [&](LoopLikeOpInterface loop) { loops.push_back(loop); });
  for (LoopLikeOpInterface loop : loops) // innermost first
    moveLoopInvariantCode(loop);
  DominanceInfo dominance;
  eliminateCommonSubExpressions(rewriter, dominance, blocks->loops.front());
  hoistAccumulators(rewriter, cast<scf::ForOp>(tiles->loops.back()));
  return success();
}

namespace {
struct AFMTileForTargetPass
    : afm::impl::AFMTileForTargetPassBase<AFMTileForTargetPass> {
  using Base::Base;

  void runOnOperation() override {
    FailureOr<TargetDescription> target = getTargetDescription(getOperation());
    if (failed(target))
      return signalPassFailure();
    func::FuncOp func = getOperation();
    IRRewriter rewriter(&getContext());
    AFMDialect &afmAttrs = contracts(func);
    SmallVector<linalg::LinalgOp> ops;
    func.walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    for (linalg::LinalgOp op : ops) {
      // afm-pack-gemm's schedule first; the tile plan when it does not
      // apply (the op is then untouched).
      if (GEMMScheduleAttr schedule =
              afmAttrs.getGemmScheduleAttrHelper().getAttr(op))
        if (succeeded(tilePlanned(rewriter, op, *target, schedule,
                                  minParallelWork)))
          continue;
      TilePlanAttr plan = afmAttrs.getTilePlanAttrHelper().getAttr(op);
      if (!plan)
        continue; // left to convert-linalg-to-loops
      if (plan.getKind() == TileKind::SME &&
          tileForSME(rewriter, op, *target, minParallelWork))
        continue;
      if (plan.getKind() == TileKind::SME)
        plan = planVectorTiles(op, *target);
      tileAndVectorize(rewriter, op, plan, *target, minParallelWork);
    }
    // Equal views must be the same values for hoisting to pair a
    // transfer_read with its transfer_write.
    DominanceInfo dominance(func);
    eliminateCommonSubExpressions(rewriter, dominance, func);
    linalg::hoistRedundantVectorTransfers(func);
  }
};
} // namespace
