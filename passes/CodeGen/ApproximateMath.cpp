//===- ApproximateMath.cpp - polynomial math for vector code --------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/Debug.h"

namespace mlir::afm {
#define GEN_PASS_DEF_AFMAPPROXIMATEMATHPASS
#include "passes/Passes.h.inc"
} // namespace mlir::afm

#define DEBUG_TYPE "afm-approximate-math"

using namespace mlir;

namespace {
struct AFMApproximateMathPass
    : afm::impl::AFMApproximateMathPassBase<AFMApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    auto approximated = [](StringRef name) {
      bool yes = llvm::is_contained(
          {"math.exp", "math.sin", "math.cos", "math.tanh", "math.erf"}, name);
      LLVM_DEBUG(llvm::dbgs() << name
                              << (yes ? ": approximated\n"
                                      : ": left to the math library\n"));
      return yes;
    };
    populateMathF32ExpansionPatterns(patterns, approximated);
    populateMathPolynomialApproximationPatterns(patterns, approximated);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
