//===- ApproximateMath.cpp - polynomial math for vector code --------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::afm {
#define GEN_PASS_DEF_AFMAPPROXIMATEMATHPASS
#include "passes/Passes.h.inc"
} // namespace mlir::afm

using namespace mlir;

namespace {
struct AFMApproximateMathPass
    : afm::impl::AFMApproximateMathPassBase<AFMApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    auto approximated = [](StringRef name) {
      return llvm::is_contained({"math.exp", "math.sin", "math.cos", "math.tanh", "math.erf"}, name);
    };
    populateMathF32ExpansionPatterns(patterns, approximated);
    populateMathPolynomialApproximationPatterns(patterns, approximated);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
