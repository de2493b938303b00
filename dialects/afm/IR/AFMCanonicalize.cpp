//===- AFMCanonicalize.cpp - afm canonicalization patterns ----------------===//

#include "dialects/afm/IR/AFMOps.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::afm;

namespace {
/// A track block with a single track synchronizes nothing: the mean of one
/// value is that value, so the track's body replaces the block.
struct InlineSingleTrack : OpRewritePattern<TrackBlockOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TrackBlockOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getNumTracks() != 1)
      return rewriter.notifyMatchFailure(op, "more than one track");
    Block &body = op.getTracks().front().front();
    auto yield = cast<YieldOp>(body.getTerminator());
    Value result = yield.getValue();
    rewriter.inlineBlockBefore(&body, op, op.getInput());
    rewriter.replaceOp(op, result);
    rewriter.eraseOp(yield);
    return success();
  }
};
} // namespace

void TrackBlockOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                               MLIRContext *context) {
  patterns.add<InlineSingleTrack>(context);
}
