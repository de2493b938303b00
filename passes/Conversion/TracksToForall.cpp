//===- TracksToForall.cpp - track blocks as parallel work items -----------===//

#include "passes/Passes.h"

#include "dialects/afm/IR/AFMOps.h"
#include "dialects/afm_cpu/IR/AFMCPUDialect.h"
#include "passes/Conversion/HostAPI.h"
#include "passes/Conversion/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
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

/// The afm_host_api pointer of the entry point `op` is in, or null: IR not
/// bound to the kernel ABI runs every track in this process.
static Value hostOf(Operation *op) {
  auto func = op->getParentOfType<func::FuncOp>();
  if (!func || !getEntryKind(func) || func.getNumArguments() == 0)
    return {};
  Value host = func.getArguments().back();
  return isa<LLVM::LLVMPointerType>(host.getType()) ? host : Value();
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
  // In an entry point the host says which tracks this process computes
  // (kernel_abi.h): the others contribute zeros here and their sum comes
  // from the other processes through the host's reduction.
  Value host = hostOf(op);
  if (host && !type.getElementType().isF32())
    return op.emitOpError("runs its tracks across processes only on an f32 "
                          "residual stream, got ")
           << type;
  Value trackBegin, trackEnd;
  if (host) {
    trackBegin = arith::IndexCastOp::create(
        b, loc, b.getIndexType(),
        loadHostField(b, loc, host, HostField::TrackBegin, b.getI64Type()));
    trackEnd = arith::IndexCastOp::create(
        b, loc, b.getIndexType(),
        loadHostField(b, loc, host, HostField::TrackEnd, b.getI64Type()));
  }
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
    // The track's own body, chosen by its index.
    auto runTrack = [&]() -> Value {
      SmallVector<int64_t> cases;
      for (int64_t t = 0; t + 1 < tracks; ++t)
        cases.push_back(t);
      auto select = scf::IndexSwitchOp::create(b, loc, TypeRange{type}, track,
                                               cases, cases.size());
      OpBuilder::InsertionGuard caseGuard(b);
      for (int64_t t = 0; t < tracks; ++t) {
        Region &region = t + 1 < tracks ? select.getCaseRegions()[t]
                                        : select.getDefaultRegion();
        Block *dest = b.createBlock(&region);
        Value yielded =
            inlineTrack(b, op.getTracks()[t], *dest, op.getInput());
        b.setInsertionPointToEnd(dest);
        // Every case writes its stream into the track's slice itself, so
        // the switch's result is that slice's buffer, not a fresh
        // allocation per call that nothing would free.
        Value written = bufferization::MaterializeInDestinationOp::create(
                            b, loc, yielded, slice)
                            .getResult();
        scf::YieldOp::create(b, loc, written);
      }
      return select.getResult(0);
    };
    Value result;
    if (!host) {
      result = runTrack();
    } else {
      // A track another process computes is zeros in this one's sum.
      Value owned = arith::AndIOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, track,
                                trackBegin),
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, track,
                                trackEnd));
      auto ifOwned = scf::IfOp::create(b, loc, TypeRange{type}, owned,
                                       /*withElseRegion=*/true);
      OpBuilder::InsertionGuard ifGuard(b);
      b.setInsertionPointToStart(&ifOwned.getThenRegion().front());
      scf::YieldOp::create(b, loc, runTrack());
      b.setInsertionPointToStart(&ifOwned.getElseRegion().front());
      Value zero = arith::ConstantOp::create(
          b, loc, type.getElementType(),
          b.getFloatAttr(type.getElementType(), 0.0));
      scf::YieldOp::create(
          b, loc, linalg::FillOp::create(b, loc, zero, slice).getResult(0));
      result = ifOwned.getResult(0);
    }
    // Store the track's stream in its slice of the stacked result (in
    // place: the track's result already is that slice).
    scf::InParallelOp terminator = forall.getTerminator();
    b.setInsertionPointToStart(terminator.getBody());
    tensor::ParallelInsertSliceOp::create(b, loc, result,
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
  if (host) {
    // Exactly one reduction per track block and call: the sum of this
    // process's tracks becomes the sum over all of them.
    auto bufferType = MemRefType::get(type.getShape(), type.getElementType());
    Value buffer = memref::AllocOp::create(b, loc, bufferType);
    auto store = bufferization::MaterializeInDestinationOp::create(
        b, loc, TypeRange{}, sum, buffer);
    store.setRestrict(true);
    store.setWritable(true);
    afm_cpu::TrackAllReduceOp::create(b, loc, buffer, host);
    sum = bufferization::ToTensorOp::create(b, loc, type, buffer,
                                            /*restrict=*/true,
                                            /*writable=*/true);
  }
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
    ModuleOp module = getOperation();
    SmallVector<TrackBlockOp> blocks;
    module.walk([&](TrackBlockOp op) { blocks.push_back(op); });
    // The tracks per block, for the packager and the code's exported
    // afm_track_count: callers split the tracks between processes by it.
    // Taken from the ops, never from an attribute the input carried.
    AFMDialect &afmAttrs = contracts(module);
    afmAttrs.getTrackCountAttrHelper().removeAttr(module);
    if (!blocks.empty()) {
      int64_t tracks = blocks.front().getNumTracks();
      for (TrackBlockOp op : blocks)
        if (op.getNumTracks() != tracks) {
          op.emitOpError("has ")
              << op.getNumTracks() << " tracks, another block " << tracks
              << ": the tracks cannot be split between processes";
          return signalPassFailure();
        }
      afmAttrs.getTrackCountAttrHelper().setAttr(
          module, IntegerAttr::get(IntegerType::get(&getContext(), 64),
                                   tracks));
    }
    for (TrackBlockOp op : blocks)
      if (failed(lowerTrackBlock(op)))
        return signalPassFailure();
  }
};
} // namespace
