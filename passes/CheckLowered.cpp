//===- CheckLowered.cpp - no afm op may survive lowering ------------------===//

#include "passes/Passes.h"

#include "dialects/afm/IR/AFMDialect.h"
#include "dialects/afm/IR/AFMOps.h"

namespace mlir::afm {
#define GEN_PASS_DEF_AFMCHECKLOWEREDPASS
#include "passes/Passes.h.inc"
} // namespace mlir::afm

using namespace mlir;

namespace {
struct AFMCheckLoweredPass
    : afm::impl::AFMCheckLoweredPassBase<AFMCheckLoweredPass> {
  void runOnOperation() override {
    bool failedAny = false;
    getOperation().walk([&](Operation *op) {
      // afm.dot_bytes is a scalar op of the kernels' bodies, lowered
      // after vectorization (afm-lower-dot-bytes).
      if (!isa<afm::AFMDialect>(op->getDialect()) || isa<afm::DotBytesOp>(op))
        return;
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
