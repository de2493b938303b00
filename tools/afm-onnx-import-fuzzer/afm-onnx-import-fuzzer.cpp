//===- afm-onnx-import-fuzzer.cpp - libFuzzer target of the ONNX importer -===//
//
// Feeds arbitrary bytes to importONNXModel. Errors are fine (diagnostics
// are dropped); crashes, sanitizer reports, and modules that import but
// fail to verify are importer bugs. See docs/onnx-import.md, Fuzzing.
//
//===----------------------------------------------------------------------===//

#include "afm/FrontEnd/ONNX/ONNXImport.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

using namespace mlir;

namespace {
/// Everything an import needs that is worth keeping across inputs.
struct FuzzState {
  FuzzState() {
    // External data is read relative to the model: point the model into
    // an empty directory of its own, so that inputs find nothing there.
    llvm::SmallString<128> dir;
    if (llvm::sys::fs::createUniqueDirectory("afm-onnx-import-fuzzer", dir)) {
      llvm::errs() << "afm-onnx-import-fuzzer: cannot create a temporary "
                      "directory\n";
      std::abort();
    }
    directory = std::string(dir);
    llvm::sys::path::append(dir, "fuzz.onnx");
    modelPath = std::string(dir);
    resetContext();
  }
  ~FuzzState() { llvm::sys::fs::remove(directory); }

  /// A context uniques every attribute it ever sees (constants included)
  /// and never frees them, so it is replaced now and then to bound memory.
  void resetContext() {
    context = std::make_unique<MLIRContext>(MLIRContext::Threading::DISABLED);
    context->getDiagEngine().registerHandler([this](Diagnostic &diag) {
      if (keepDiagnostics)
        diagnostics.push_back(diag.str());
      return success();
    });
    importsSinceReset = 0;
  }

  std::unique_ptr<MLIRContext> context;
  std::string directory;
  std::string modelPath;
  unsigned importsSinceReset = 0;
  /// Set while verifying, to print why a module is invalid.
  bool keepDiagnostics = false;
  std::vector<std::string> diagnostics;
};
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static FuzzState state;
  if (++state.importsSinceReset > 1000)
    state.resetContext();

  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  OwningOpRef<ModuleOp> module =
      afm::importONNXModel(state.context.get(), bytes, state.modelPath);
  if (!module)
    return 0;

  state.keepDiagnostics = true;
  if (failed(verify(*module))) {
    llvm::errs() << "afm-onnx-import-fuzzer: the importer produced an "
                    "invalid module:\n";
    for (const std::string &diagnostic : state.diagnostics)
      llvm::errs() << "  error: " << diagnostic << "\n";
    module->getOperation()->print(llvm::errs(),
                                  OpPrintingFlags().assumeVerified());
    llvm::errs() << "\n";
    std::abort();
  }
  state.keepDiagnostics = false;
  return 0;
}
