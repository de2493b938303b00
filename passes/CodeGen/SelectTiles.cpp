//===- SelectTiles.cpp - choose the tiles of every linalg op --------------===//
//
// The strategy pass of tiling: records on each linalg op on buffers the
// plan afm-tile-for-target applies (TilePlanning.h). Copies become
// linalg.copy first, so they are planned (and vectorized) too.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/CodeGen/TilePlanning.h"

#include "llvm/Support/Debug.h"

namespace mlir::afm {
#define GEN_PASS_DEF_AFMSELECTTILESPASS
#include "passes/Passes.h.inc"
} // namespace mlir::afm

#define DEBUG_TYPE "afm-select-tiles"

using namespace mlir;
using namespace mlir::afm;

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
struct AFMSelectTilesPass
    : afm::impl::AFMSelectTilesPassBase<AFMSelectTilesPass> {
  void runOnOperation() override {
    FailureOr<TargetDescription> target = getTargetDescription(getOperation());
    if (failed(target))
      return signalPassFailure();
    func::FuncOp func = getOperation();
    IRRewriter rewriter(&getContext());
    copiesToLinalg(func, rewriter);
    func.walk([&](linalg::LinalgOp op) {
      TilePlanAttr plan = selectTilePlan(op, *target);
      LLVM_DEBUG({
        llvm::dbgs() << "plan for " << op->getName() << ": ";
        if (plan)
          llvm::dbgs() << plan << "\n";
        else
          llvm::dbgs() << "none (left to convert-linalg-to-loops)\n";
      });
      if (plan)
        contracts(op).getTilePlanAttrHelper().setAttr(op, plan);
    });
  }
};
} // namespace
