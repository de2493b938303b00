//===- CheckLowered.cpp - no afm op may survive lowering ------------------===//

#include "passes/Passes.h"

#include "dialects/afm/IR/AFMDialect.h"
#include "mlir/Transforms/DialectConversion.h"

#include "llvm/Support/Debug.h"

namespace mlir::afm {
#define GEN_PASS_DEF_AFMCHECKLOWEREDPASS
#include "passes/Passes.h.inc"
} // namespace mlir::afm

#define DEBUG_TYPE "afm-check-lowered"

using namespace mlir;

namespace {
struct AFMCheckLoweredPass
    : afm::impl::AFMCheckLoweredPassBase<AFMCheckLoweredPass> {
  void runOnOperation() override {
    // Leaving the model level: no op of the afm dialect is legal after
    // afm-lower-to-linalg (the CPU-level ops are afm_cpu's).
    ConversionTarget target(getContext());
    target.addIllegalDialect<afm::AFMDialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    bool failedAny = false;
    getOperation().walk([&](Operation *op) {
      if (!target.isIllegal(op))
        return;
      LLVM_DEBUG(llvm::dbgs() << "not lowered: " << *op << "\n");
      op->emitError("'") << op->getName()
                         << "' could not be lowered: this combination of "
                            "operands and attributes is not supported by "
                            "the afm code generator yet";
      failedAny = true;
    });
    if (failedAny)
      signalPassFailure();
  }
};
} // namespace
