//===- HostGraphTestSupport.h - graphs compiled and loaded in a test -*- C++ -*-===//
//
// A fixture that parses an MLIR graph, compiles it with HostLibrary for a
// target and loads it, for the tests that run compiled kernels and check
// them against plain loops.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_TEST_UNIT_HOSTGRAPHTESTSUPPORT_H
#define AFM_TEST_UNIT_HOSTGRAPHTESTSUPPORT_H

#include "afm/CodeGen/ObjectEmitter.h"
#include "afm/Compiler/HostLibrary.h"
#include "afm/Compiler/InitAll.h"
#include "afm/Target/TargetDescription.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

namespace mlir::afm::test {

class HostGraphTest : public ::testing::Test {
protected:
  HostGraphTest() : context(makeRegistry()) {
    context.loadAllAvailableDialects();
  }

  static DialectRegistry makeRegistry() {
    DialectRegistry registry;
    registerDialects(registry);
    registerLLVMIRTranslations(registry);
    return registry;
  }

  /// Compiles `source` for `target` with `threads`' signature and loads
  /// it; returns its main (null on failure, with the test failed).
  void *compile(llvm::StringRef source, const TargetDescription &target,
                GraphThreads threads = GraphThreads::CallingThread) {
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(source, &context);
    EXPECT_TRUE(module);
    if (!module)
      return nullptr;
    llvm::Error error = library.compileAndLoad(*module, target, threads);
    EXPECT_FALSE(error) << llvm::toString(std::move(error));
    return library.lookup("main");
  }

  MLIRContext context;
  HostLibrary library;
};

} // namespace mlir::afm::test

#endif // AFM_TEST_UNIT_HOSTGRAPHTESTSUPPORT_H
