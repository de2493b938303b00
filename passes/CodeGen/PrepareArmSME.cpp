//===- PrepareArmSME.cpp - scalable GEMM tiles -> 2-D outer products ------===//
//
// Upstream's ArmSME matmul recipe (mlir/test/Integration/Dialect/Linalg/
// CPU/ArmSME/matmul.mlir, steps 4 and 5) as a pass: afm-tile-for-target
// has vectorized `[4] x [4] x 1` tiles with masks; what is left for
// convert-vector-to-arm-sme is a masked accumulator load, one
// `vector.outerproduct` per reduction step and a masked store.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/Debug.h"

namespace mlir::afm {
#define GEN_PASS_DEF_AFMPREPAREARMSMEPASS
#include "passes/Passes.h.inc"
} // namespace mlir::afm

#define DEBUG_TYPE "afm-prepare-arm-sme"

using namespace mlir;

namespace {
struct AFMPrepareArmSMEPass
    : afm::impl::AFMPrepareArmSMEPassBase<AFMPrepareArmSMEPass> {
  void runOnOperation() override {
    // Masked multi-reductions -> masked vector.contract.
    RewritePatternSet contracts(&getContext());
    vector::populateVectorMaskLoweringPatternsForSideEffectingOps(contracts);
    vector::populateVectorTransferPermutationMapLoweringPatterns(contracts);
    vector::populateVectorReductionToContractPatterns(contracts);
    vector::populateSinkVectorOpsPatterns(contracts);
    if (failed(applyPatternsGreedily(getOperation(), std::move(contracts))))
      return signalPassFailure();
    LLVM_DEBUG(llvm::dbgs() << "after the masked contractions:\n"
                            << *getOperation() << "\n");

    // Contractions -> outer products; masks folded in; the k = 1 unit
    // dimension of the operand reads dropped (a vector<[4]x1xf32> read has
    // no lowering, a vector<[4]xf32> one has).
    RewritePatternSet outer(&getContext());
    vector::populateVectorContractLoweringPatterns(
        outer, vector::VectorContractLowering::OuterProduct);
    vector::populateVectorMaskOpLoweringPatterns(outer);
    vector::populateVectorTransferDropUnitDimsPatterns(outer);
    if (failed(applyPatternsGreedily(getOperation(), std::move(outer))))
      signalPassFailure();
  }
};
} // namespace
