//===- TileForTarget.cpp - tile and vectorize for a target ----------------===//
//
// Every number here comes from the TargetDescription: the f32 lanes of a
// vector register and the number of registers. Tiles divide the static
// loop sizes, so every tile has a static shape and vectorizes without
// masks or peeling.
//
//===----------------------------------------------------------------------===//

#include "passes/Accumulators.h"
#include "passes/GEMMTiles.h"
#include "passes/Int8DotProducts.h"
#include "passes/Prefetch.h"
#include "passes/Passes.h"

#include "afm/Target/TargetDescription.h"
#include "dialects/afm/IR/AFMDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Hoisting.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

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
  bool splitK = !plan.contraction && !outDims.empty() &&
                outDims.back() == ranges.size() - 1;
  plan.splitK = splitK;
  if (splitK) {
    for (auto [i, iterator] : llvm::enumerate(iterators))
      if (iterator == utils::IteratorType::reduction)
        plan.tiles[i] = 1;
    // Loops the kernel asks to span one register tile (rows sharing their
    // activation vectors): whole, and every parallel loop outside the
    // reductions, so that the tile's accumulators are loop-invariant in
    // them and stay in registers.
    if (auto whole =
            op->getAttrOfType<DenseI64ArrayAttr>(kWholeTileDimsAttrName)) {
      for (int64_t dim : whole.asArrayRef())
        if (dim >= 0 && dim < static_cast<int64_t>(ranges.size()))
          plan.tiles[dim] = ranges[dim];
      for (auto kind : {utils::IteratorType::parallel,
                        utils::IteratorType::reduction})
        for (auto [dim, iterator] : llvm::enumerate(iterators))
          if (iterator == kind)
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

/// Marks the outermost tile loop over a parallel dimension with at least two
/// iterations `afm.parallel`, when the op is big enough to be worth a
/// dispatch to the runtime's threads. `tiles` are the op's tile sizes; the
/// loops come in the order of the dimensions tiled, permuted by
/// `interchange` when there is one.
static void markParallelLoop(const scf::SCFTilingResult &tiled,
                             ArrayRef<int64_t> tiles, linalg::LinalgOp op,
                             int64_t minWork,
                             ArrayRef<int64_t> interchange = {}) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t work = 1;
  for (int64_t r : ranges)
    work *= r;
  if (minWork <= 0 || work < minWork)
    return;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<int64_t> order(interchange);
  if (order.empty())
    order = llvm::to_vector(llvm::seq<int64_t>(0, tiles.size()));
  SmallVector<unsigned> tiledDims;
  for (int64_t dim : order)
    if (tiles[dim] != 0)
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

/// Vectorizes one tile; a contraction becomes a vector.contract.
static void vectorizeTile(RewriterBase &rewriter, Operation *tile,
                          bool contraction) {
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
    int64_t bytes = type.getNumElements() * type.getElementTypeBitWidth() / 8;
    if (bytes >= kStreamedBytes)
      streamed.push_back(input->getOperandNumber());
  }
  return streamed;
}

/// Tiles `op` with the plan planTiles chooses and vectorizes the tile.
static void tileAndVectorize(RewriterBase &rewriter, linalg::LinalgOp op,
                             const TargetDescription &target,
                             int64_t minParallelWork) {
  std::optional<TilePlan> plan = planTiles(op, target);
  auto tileable = dyn_cast<TilingInterface>(op.getOperation());
  if (!plan || !op.hasPureBufferSemantics() || !tileable)
    return;
  SmallVector<unsigned> streamed = streamedInputs(op);
  bool wholeTile = op->hasAttr(kWholeTileDimsAttrName);
  rewriter.setInsertionPoint(op);
  scf::SCFTilingOptions options;
  options.setTileSizes(getAsIndexOpFoldResult(op.getContext(), plan->tiles));
  options.setInterchange(plan->interchange);
  FailureOr<scf::SCFTilingResult> tiled =
      scf::tileUsingSCF(rewriter, tileable, options);
  if (failed(tiled))
    return;
  markParallelLoop(*tiled, plan->tiles, op, minParallelWork,
                   plan->interchange);
  rewriter.eraseOp(op);
  Operation *tile = tiled->tiledOps.front();
  // GEMV-like tiles stream their weights: prefetch them ahead.
  if (plan->splitK || plan->int8Dot) {
    rewriter.setInsertionPoint(tile);
    for (unsigned input : streamed)
      prefetchAhead(rewriter, tile->getLoc(),
                    cast<linalg::LinalgOp>(tile)
                        .getDpsInputOperand(input)
                        ->get());
  }
  if (plan->int8Dot &&
      succeeded(vectorizeInt8DotTile(rewriter, cast<linalg::GenericOp>(tile),
                                     target))) {
    finishInt8DotLoops(rewriter, tiled->loops);
    return;
  }
  // Contractions become vector.contract (lowered to FMAs later); the rest
  // element-wise vector ops and multi-reductions.
  vectorizeTile(rewriter, tile, plan->contraction);
  // A whole-tile split-K kernel's reductions are its innermost loops: its
  // accumulators become their iter_args (upstream's hoisting refuses a
  // buffer with views elsewhere, as the partial sums have).
  if (plan->splitK && wholeTile && !tiled->loops.empty()) {
    for (LoopLikeOpInterface loop : llvm::reverse(tiled->loops))
      moveLoopInvariantCode(loop);
    if (auto reduction = dyn_cast<scf::ForOp>(tiled->loops.back().getOperation()))
      hoistAccumulators(rewriter, reduction);
  }
}

/// Makes `op` read its `input`-th operand from an f32 copy laid out in the
/// loop order `order` (a linalg.transpose, itself tiled and vectorized),
/// allocated before `allocBefore` and freed before `deallocBefore`.
static void readInputFromCopy(RewriterBase &rewriter, linalg::LinalgOp op,
                              unsigned input, ArrayRef<int64_t> order,
                              Operation *allocBefore,
                              Operation *deallocBefore,
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
  rewriter.setInsertionPoint(op);
  auto copy = linalg::TransposeOp::create(rewriter, loc, operand->get(),
                                          buffer, permutation);
  rewriter.modifyOpInPlace(op, [&] {
    operand->set(buffer);
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    maps[operand->getOperandNumber()] =
        AffineMap::get(map.getNumDims(), 0, results, rewriter.getContext());
    op->setAttr("indexing_maps", rewriter.getAffineMapArrayAttr(maps));
  });
  tileAndVectorize(rewriter, cast<linalg::LinalgOp>(copy.getOperation()),
                   target, minParallelWork);
}

/// Whether `op` is an f32 GEMM C(m, n) += A(m, k) * B(k, n), or the same
/// with B in [N, K] layout (afm.linear's form); `transposedB` says which.
static bool isSMEGEMM(linalg::LinalgOp op, bool &transposedB) {
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
  if (transposedB)
    readInputFromCopy(rewriter, op, /*input=*/1, /*order=*/{2, 1},
                      /*allocBefore=*/op, /*deallocBefore=*/op->getNextNode(),
                      target, minParallelWork);
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
                                 ArrayRef<int64_t> cache,
                                 ArrayRef<int64_t> interchange,
                                 ArrayRef<int64_t> registers,
                                 int64_t minParallelWork) {
  auto tileable = dyn_cast<TilingInterface>(op.getOperation());
  if (!tileable || !op.hasPureBufferSemantics())
    return failure();
  auto packInput = op->getAttrOfType<IntegerAttr>("afm.pack_input");
  auto packOrder = op->getAttrOfType<DenseI64ArrayAttr>("afm.pack_order");
  rewriter.setInsertionPoint(op);
  scf::SCFTilingOptions cacheOptions;
  cacheOptions.setTileSizes(getAsIndexOpFoldResult(op.getContext(), cache));
  cacheOptions.setInterchange(interchange);
  FailureOr<scf::SCFTilingResult> blocks =
      scf::tileUsingSCF(rewriter, tileable, cacheOptions);
  if (failed(blocks))
    return failure();
  markParallelLoop(*blocks, cache, op, minParallelWork, interchange);
  rewriter.eraseOp(op);

  // B's kc x nc block is copied into contiguous nr-wide panels (in L2)
  // once per reduction block, whatever B's layout and leading dimension
  // (which would otherwise alias in the L1 sets). The buffer belongs to the
  // column-block loop, so each thread has its own.
  Operation *block = blocks->tiledOps.front();
  if (packInput && packOrder && blocks->loops.size() >= 2) {
    Block &columns = blocks->loops[blocks->loops.size() - 2]->getRegion(0).front();
    readInputFromCopy(rewriter, cast<linalg::LinalgOp>(block),
                      packInput.getInt(), packOrder.asArrayRef(),
                      &columns.front(), columns.getTerminator(), target,
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
      auto cache = op->getAttrOfType<DenseI64ArrayAttr>("afm.cache_tiles");
      auto order =
          op->getAttrOfType<DenseI64ArrayAttr>("afm.cache_interchange");
      auto registers =
          op->getAttrOfType<DenseI64ArrayAttr>("afm.register_tiles");
      if (cache && order && registers && !annotateOnly &&
          succeeded(tilePlanned(rewriter, op, *target, cache.asArrayRef(),
                                order.asArrayRef(), registers.asArrayRef(),
                                minParallelWork)))
        continue;
      if (annotateOnly) {
        if (std::optional<TilePlan> plan = planTiles(op, *target))
          op->setAttr("afm.tiles",
                      rewriter.getDenseI64ArrayAttr(plan->tiles));
        continue;
      }
      if (!tileForSME(rewriter, op, *target, minParallelWork))
        tileAndVectorize(rewriter, op, *target, minParallelWork);
    }
    if (!annotateOnly) {
      // Equal views must be the same values for hoisting to pair a
      // transfer_read with its transfer_write.
      DominanceInfo dominance(func);
      eliminateCommonSubExpressions(rewriter, dominance, func);
      linalg::hoistRedundantVectorTransfers(func);
    }
  }
};
} // namespace
