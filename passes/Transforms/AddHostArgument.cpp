//===- AddHostArgument.cpp - graphs take an afm_host_api pointer ----------===//
//
// Entry points get their host argument from afm-bind-entry-abi; a graph run
// in the host process (HostLibrary) gets it here, first, so that the out-
// parameters bufferization appends later never move it.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/Debug.h"

namespace mlir::afm {
#define GEN_PASS_DEF_AFMADDHOSTARGUMENTPASS
#include "passes/Passes.h.inc"
} // namespace mlir::afm

#define DEBUG_TYPE "afm-add-host-argument"

using namespace mlir;
using namespace mlir::afm;

namespace {
struct AFMAddHostArgumentPass
    : afm::impl::AFMAddHostArgumentPassBase<AFMAddHostArgumentPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto ptr = LLVM::LLVMPointerType::get(&getContext());
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal() || !func.isPublic() ||
          contracts(func).getHostArgumentAttrHelper().isAttrPresent(func))
        continue;
      if (!SymbolTable::symbolKnownUseEmpty(func, module)) {
        func.emitOpError("is called inside the module, so it cannot take a "
                         "host argument its callers do not pass");
        return signalPassFailure();
      }
      LLVM_DEBUG(llvm::dbgs() << "adding the host argument to @"
                              << func.getSymName() << "\n");
      if (failed(func.insertArgument(0, ptr, DictionaryAttr(), func.getLoc())))
        return signalPassFailure();
      contracts(func).getHostArgumentAttrHelper().setAttr(
          func, IntegerAttr::get(IntegerType::get(&getContext(), 64), 0));
    }
  }
};
} // namespace
