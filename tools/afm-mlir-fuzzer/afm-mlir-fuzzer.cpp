//===- afm-mlir-fuzzer.cpp - libFuzzer target of afm IR text --------------===//
//
// Parses each input as MLIR text with the afm dialect and the upstream
// dialects afm models are written in, the way afm-opt reads its input:
// first the nesting check (NestingDepth.h), then the parser, which runs
// the afm verifiers. A module that parses is printed, parsed again and
// printed again: both parses must succeed and both prints agree, in the
// custom and in the generic form. Errors are fine (diagnostics are
// dropped); crashes, sanitizer reports and failed round trips are bugs of
// the afm dialect's parsers, printers or verifiers.
//
//===----------------------------------------------------------------------===//

#include "dialects/afm/IR/AFMDialect.h"
#include "dialects/afm_cpu/IR/AFMCPUDialect.h"
#include "afm/Support/NestingDepth.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <memory>
#include <string>

using namespace mlir;

namespace {

/// A context uniques every attribute and type it ever sees and never
/// frees them, so it is replaced now and then to bound memory.
std::unique_ptr<MLIRContext> makeContext() {
  DialectRegistry registry;
  registry.insert<afm::AFMDialect, afm_cpu::AFMCPUDialect, arith::ArithDialect,
                  func::FuncDialect,
                  memref::MemRefDialect, scf::SCFDialect,
                  tensor::TensorDialect>();
  auto context =
      std::make_unique<MLIRContext>(registry, MLIRContext::Threading::DISABLED);
  context->loadAllAvailableDialects();
  context->getDiagEngine().registerHandler(
      [](Diagnostic &) { return success(); });
  return context;
}

struct FuzzState {
  std::unique_ptr<MLIRContext> context;
  unsigned parsesSinceReset = 0;

  MLIRContext &get() {
    if (!context || ++parsesSinceReset > 2000) {
      context = makeContext();
      parsesSinceReset = 0;
    }
    return *context;
  }
};

std::string print(Operation *op, bool generic) {
  std::string text;
  llvm::raw_string_ostream os(text);
  OpPrintingFlags flags;
  if (generic)
    flags.printGenericOpForm();
  op->print(os, flags);
  return text;
}

/// Prints `module`, parses the text again and prints that: both texts must
/// agree. A context renames a resource blob whose name it has seen before
/// (`w` becomes `w_1`), so text with resources is parsed again in a fresh
/// context.
void checkRoundTrip(ModuleOp module, MLIRContext &context, bool generic) {
  std::string first = print(module, generic);
  std::unique_ptr<MLIRContext> fresh;
  if (llvm::StringRef(first).contains("{-#"))
    fresh = makeContext();
  OwningOpRef<ModuleOp> again =
      parseSourceString<ModuleOp>(first, fresh ? fresh.get() : &context);
  std::string second = again ? print(*again, generic) : "";
  if (!again || first != second) {
    llvm::errs() << "afm-mlir-fuzzer: the " << (generic ? "generic" : "custom")
                 << " form does not round-trip:\n"
                 << first << "\n";
    if (again)
      llvm::errs() << "printed again as:\n" << second << "\n";
    std::abort();
  }
}

} // namespace

// Debian's LLVM and MLIR libraries are not instrumented, but the inline
// allocator code compiled here is: it poisons memory that the libraries'
// copies then touch without unpoisoning. Poisoning by hand is off.
extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0";
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static FuzzState state;
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  std::unique_ptr<llvm::MemoryBuffer> buffer =
      llvm::MemoryBuffer::getMemBufferCopy(text, "input.mlir");
  if (llvm::Error error = afm::checkIRNesting(*buffer)) {
    llvm::consumeError(std::move(error));
    return 0;
  }
  MLIRContext &context = state.get();
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(buffer->getBuffer(), &context);
  if (!module)
    return 0;
  checkRoundTrip(*module, context, /*generic=*/false);
  checkRoundTrip(*module, context, /*generic=*/true);
  return 0;
}
