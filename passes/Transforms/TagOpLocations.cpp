//===- TagOpLocations.cpp - name each afm op's location after the op ------===//
//
// Lowering turns one afm op into many loops; the only thing they keep of it
// is its location, which every rewrite passes on. Naming that location after
// the op (`linear`, `attention`, `lm_head`, ...) lets the parallel tasks
// outlined from those loops carry the op's name into the binary's symbols,
// so a profile of a decode step can say which model op the time went to.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialects/afm/IR/AFMDialect.h"

#include "llvm/Support/Debug.h"

namespace mlir::afm {
#define GEN_PASS_DEF_AFMTAGOPLOCATIONSPASS
#include "passes/Passes.h.inc"
} // namespace mlir::afm

#define DEBUG_TYPE "afm-tag-op-locations"

using namespace mlir;

namespace {
struct AFMTagOpLocationsPass
    : afm::impl::AFMTagOpLocationsPassBase<AFMTagOpLocationsPass> {
  void runOnOperation() override {
    getOperation().walk([](Operation *op) {
      if (!isa_and_nonnull<afm::AFMDialect>(op->getDialect()))
        return;
      StringRef kind = op->getName().stripDialect();
      // Idempotent: a pipeline run twice does not nest the names.
      if (auto named = dyn_cast<NameLoc>(op->getLoc());
          named && named.getName() == kind)
        return;
      LLVM_DEBUG(llvm::dbgs() << "naming the location of " << op->getName()
                              << " at " << op->getLoc() << "\n");
      op->setLoc(NameLoc::get(StringAttr::get(op->getContext(), kind),
                              op->getLoc()));
    });
  }
};
} // namespace
