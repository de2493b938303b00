//===- LowerVector.cpp - n-D vectors to what LLVM conversion handles ------===//

#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/Debug.h"

namespace mlir::afm {
#define GEN_PASS_DEF_AFMLOWERVECTORPASS
#include "passes/Passes.h.inc"
} // namespace mlir::afm

#define DEBUG_TYPE "afm-lower-vector"

using namespace mlir;

namespace {
/// A reduction over a wide innermost dimension becomes a tree: its two
/// halves are combined element-wise, until the dimension is narrow. The
/// upstream lowering (InnerParallel) otherwise reduces it one element at a
/// time: a dependent chain of N scalar operations (for NaN-propagating
/// maxima, five instructions each). Float sums change their association,
/// as split-K partial sums already do.
struct HalveInnermostReduction
    : OpRewritePattern<vector::MultiDimReductionOp> {
  using OpRewritePattern::OpRewritePattern;
  static constexpr int64_t kNarrow = 8;

  LogicalResult matchAndRewrite(vector::MultiDimReductionOp op,
                                PatternRewriter &rewriter) const override {
    VectorType type = op.getSourceVectorType();
    int64_t rank = type.getRank();
    if (type.isScalable() || !op.isReducedDim(rank - 1))
      return failure();
    // A sum of products with a wide parallel dimension is a contraction
    // tile (attention scores over transposed keys): vector.contract lowers
    // it to FMAs along that dimension (outer products), with no tree. A
    // plain dot product (a norm's sum of squares) still gets the tree.
    auto result = dyn_cast<VectorType>(op.getDestType());
    if (op.getKind() == vector::CombiningKind::ADD &&
        op.getSource().getDefiningOp<arith::MulFOp>() && result &&
        result.getShape().back() >= kNarrow)
      return failure();
    int64_t n = type.getShape().back();
    if (n < 2 * kNarrow || n % 2 != 0)
      return failure();
    LLVM_DEBUG(llvm::dbgs() << "halving the " << n
                            << "-wide innermost reduction over " << type
                            << "\n");
    Location loc = op.getLoc();
    SmallVector<int64_t> offsets(rank, 0), sizes(type.getShape()),
        strides(rank, 1);
    sizes.back() = n / 2;
    Value lo = vector::ExtractStridedSliceOp::create(
        rewriter, loc, op.getSource(), offsets, sizes, strides);
    offsets.back() = n / 2;
    Value hi = vector::ExtractStridedSliceOp::create(
        rewriter, loc, op.getSource(), offsets, sizes, strides);
    Value halves =
        vector::makeArithReduction(rewriter, loc, op.getKind(), lo, hi);
    rewriter.replaceOpWithNewOp<vector::MultiDimReductionOp>(
        op, halves, op.getAcc(), op.getReductionMask(), op.getKind());
    return success();
  }
};

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
    RewritePatternSet trees(&getContext());
    trees.add<HalveInnermostReduction>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(trees))))
      return signalPassFailure();
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
