//===- SetTarget.cpp - stamp the target on the module ---------------------===//
//
// The one place a target name is resolved in the pipeline; every pass that
// depends on the target reads the module's afm.target
// (getTargetDescription).
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "llvm/Support/Debug.h"

namespace mlir::afm {
#define GEN_PASS_DEF_AFMSETTARGETPASS
#include "passes/Passes.h.inc"
} // namespace mlir::afm

#define DEBUG_TYPE "afm-set-target"

using namespace mlir;
using namespace mlir::afm;

namespace {
struct AFMSetTargetPass : afm::impl::AFMSetTargetPassBase<AFMSetTargetPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto target = lookupTarget(this->target, targetOS);
    if (!target) {
      module.emitError(llvm::toString(target.takeError()));
      return signalPassFailure();
    }
    // The table's name: `host` is recorded as what it resolved to.
    LLVM_DEBUG(llvm::dbgs() << "target " << this->target << " -> "
                            << target->name << " (" << target->triple
                            << ")\n");
    contracts(module).getTargetAttrHelper().setAttr(
        module, TargetAttr::get(&getContext(), target->name, target->os));
  }
};
} // namespace
