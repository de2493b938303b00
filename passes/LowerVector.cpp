//===- LowerVector.cpp - n-D vectors to what LLVM conversion handles ------===//

#include "passes/Passes.h"

#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::afm {
#define GEN_PASS_DEF_AFMLOWERVECTORPASS
#include "passes/Passes.h.inc"
} // namespace mlir::afm

using namespace mlir;

namespace {
struct AFMLowerVectorPass
    : afm::impl::AFMLowerVectorPassBase<AFMLowerVectorPass> {
  void runOnOperation() override {
    // First the canonical contraction forms: products with a reduction
    // become vector.contract over its operands' real ranks, and unit
    // dimensions (a packed GEMM's tile indices) are dropped, so the
    // contraction lowers to outer products.
    // Broadcasting reads become read + broadcast, which the contraction
    // absorbs into its indexing maps. (Together with the unit-dimension
    // patterns these do not terminate on transposes of unit dimensions.)
    RewritePatternSet reads(&getContext());
    vector::populateVectorTransferPermutationMapLoweringPatterns(reads);
    if (failed(applyPatternsGreedily(getOperation(), std::move(reads))))
      return signalPassFailure();
    RewritePatternSet contracts(&getContext());
    vector::populateVectorReductionToContractPatterns(contracts);
    vector::populateCastAwayVectorLeadingOneDimPatterns(contracts);
    if (failed(applyPatternsGreedily(getOperation(), std::move(contracts))))
      return signalPassFailure();

    RewritePatternSet patterns(&getContext());
    vector::populateVectorReductionToContractPatterns(patterns);
    vector::populateVectorContractLoweringPatterns(
        patterns, vector::VectorContractLowering::OuterProduct);
    vector::populateVectorOuterProductLoweringPatterns(patterns);
    vector::populateVectorMultiReductionLoweringPatterns(
        patterns, vector::VectorMultiReductionLowering::InnerParallel);
    vector::populateVectorTransposeLoweringPatterns(
        patterns, vector::VectorTransposeLowering::EltWise);
    vector::populateVectorBroadcastLoweringPatterns(patterns);
    vector::populateVectorShapeCastLoweringPatterns(patterns);
    vector::populateVectorMaskOpLoweringPatterns(patterns);
    vector::populateVectorGatherLoweringPatterns(patterns);
    vector::populateVectorStepLoweringPatterns(patterns);
    vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
    vector::populateVectorInsertExtractStridedSliceTransforms(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
