//===- afm-opt.cpp - afm optimizer driver ---------------------------------===//
//
// Runs afm and upstream passes over MLIR files, like mlir-opt, with only the
// dialects and passes of the afm pipeline registered.
//
//===----------------------------------------------------------------------===//

#include "afm/Compiler/InitAll.h"
#include "afm/Support/NestingDepth.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

using namespace mlir;

static int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "afm-opt") << message << "\n";
  return 1;
}

int main(int argc, char **argv) {
  DialectRegistry registry;
  afm::registerDialects(registry);
  afm::registerPasses();
  auto [inputPath, outputPath] = registerAndParseCLIOptions(
      argc, argv, "afm-opt: afm dialect optimizer and pass driver\n",
      registry);
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  // Read here (rather than by MlirOptMain) to check the nesting first.
  std::string message;
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(inputPath, &message);
  if (!input)
    return fail(message);
  if (llvm::Error err = afm::checkIRNesting(*input)) {
    llvm::errs() << llvm::toString(std::move(err)) << "\n";
    return 1;
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputPath, &message);
  if (!output)
    return fail(message);
  if (failed(MlirOptMain(output->os(), std::move(input), registry, config)))
    return 1;
  output->keep();
  return 0;
}
