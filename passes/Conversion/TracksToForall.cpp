//===- TracksToForall.cpp - track blocks as parallel work items -----------===//

#include "passes/Passes.h"

#include "dialects/afm/IR/AFMOps.h"
#include "passes/Conversion/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/Support/Debug.h"

namespace mlir::afm {
#define GEN_PASS_DEF_AFMLOWERTRACKSPASS
#include "passes/Passes.h.inc"
} // namespace mlir::afm

#define DEBUG_TYPE "afm-lower-tracks"

using namespace mlir;
using namespace mlir::afm;

/// Moves the body of `track` into `dest`, feeding it `input`; returns what
/// the track yields.
static Value inlineTrack(OpBuilder &b, Region &track, Block &dest,
                         Value input) {
  Block &body = track.front();
  auto yield = cast<YieldOp>(body.getTerminator());
  Value result = yield.getValue();
  body.getArgument(0).replaceAllUsesWith(input);
  yield.erase();
  dest.getOperations().splice(dest.end(), body.getOperations());
  return result;
}

static LogicalResult lowerTrackBlock(TrackBlockOp op) {
  auto type = cast<RankedTensorType>(op.getType());
  if (!type.hasStaticShape())
    return op.emitOpError("needs a static residual shape to run its tracks "
                          "in parallel, got ")
           << type;
  int64_t tracks = op.getNumTracks();
  Location loc = op.getLoc();
  LLVM_DEBUG(llvm::dbgs() << "lowering " << tracks << " tracks over " << type
                          << " at " << loc
                          << " to an scf.forall and their mean\n");
  OpBuilder b(op);
  SmallVector<int64_t> stackedShape = {tracks};
  llvm::append_range(stackedShape, type.getShape());
  Value init = tensor::EmptyOp::create(b, loc, stackedShape,
                                       type.getElementType());
  int64_t rank = type.getRank();

  auto forall = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(tracks)},
      ValueRange{init}, std::nullopt);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(forall.getBody());
    Value track = forall.getInductionVar(0);
    // The track's slice of the stacked result.
    SmallVector<OpFoldResult> offsets(rank + 1, b.getIndexAttr(0));
    offsets[0] = track;
    SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1)};
    for (int64_t d : type.getShape())
      sizes.push_back(b.getIndexAttr(d));
    SmallVector<OpFoldResult> strides(rank + 1, b.getIndexAttr(1));
    Value slice = tensor::ExtractSliceOp::create(
        b, loc, type, forall.getRegionIterArgs()[0], offsets, sizes, strides);
    SmallVector<int64_t> cases;
    for (int64_t t = 0; t + 1 < tracks; ++t)
      cases.push_back(t);
    auto select = scf::IndexSwitchOp::create(b, loc, TypeRange{type}, track,
                                             cases, cases.size());
    for (int64_t t = 0; t < tracks; ++t) {
      Region &region = t + 1 < tracks ? select.getCaseRegions()[t]
                                      : select.getDefaultRegion();
      Block *dest = b.createBlock(&region);
      Value yielded = inlineTrack(b, op.getTracks()[t], *dest, op.getInput());
      b.setInsertionPointToEnd(dest);
      // Every case writes its stream into the track's slice itself, so the
      // switch's result is that slice's buffer, not a fresh allocation per
      // call that nothing would free.
      Value written = bufferization::MaterializeInDestinationOp::create(
                          b, loc, yielded, slice)
                          .getResult();
      scf::YieldOp::create(b, loc, written);
    }
    // Store the track's stream in its slice of the stacked result (in
    // place: the switch's result already is that slice).
    scf::InParallelOp terminator = forall.getTerminator();
    b.setInsertionPointToStart(terminator.getBody());
    tensor::ParallelInsertSliceOp::create(b, loc, select.getResult(0),
                                          forall.getRegionIterArgs()[0],
                                          offsets, sizes, strides);
  }

  // mean over tracks: sum over dim 0, then scale by 1/n.
  SmallVector<OpFoldResult> sizes;
  for (int64_t d : type.getShape())
    sizes.push_back(b.getIndexAttr(d));
  Value zeros = createFilled(b, loc, sizes, type.getElementType(), 0.0);
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineExpr> outDims;
  for (int64_t d = 1; d <= rank; ++d)
    outDims.push_back(getAffineDimExpr(d, ctx));
  SmallVector<utils::IteratorType> iterators(rank + 1,
                                             utils::IteratorType::parallel);
  iterators[0] = utils::IteratorType::reduction;
  Value sum = buildGeneric(
      b, loc, ValueRange{forall.getResult(0)}, zeros,
      {b.getMultiDimIdentityMap(rank + 1),
       AffineMap::get(rank + 1, 0, outDims, ctx)},
      iterators, [](OpBuilder &nb, Location l, ValueRange a) -> Value {
        return arith::AddFOp::create(nb, l, a[0], a[1]);
      });
  double inv = 1.0 / double(tracks);
  Value mean = mapElementwise(
      b, loc, ValueRange{sum}, type.getElementType(),
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value scale = arith::ConstantOp::create(
            nb, l, type.getElementType(),
            nb.getFloatAttr(type.getElementType(), inv));
        return arith::MulFOp::create(nb, l, a[0], scale);
      });
  op.replaceAllUsesWith(mean);
  op.erase();
  return success();
}

namespace {
struct AFMLowerTracksPass
    : afm::impl::AFMLowerTracksPassBase<AFMLowerTracksPass> {
  void runOnOperation() override {
    SmallVector<TrackBlockOp> blocks;
    getOperation().walk([&](TrackBlockOp op) { blocks.push_back(op); });
    for (TrackBlockOp op : blocks)
      if (failed(lowerTrackBlock(op)))
        return signalPassFailure();
  }
};
} // namespace
