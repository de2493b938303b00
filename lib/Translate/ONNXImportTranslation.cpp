//===- ONNXImportTranslation.cpp - --import-onnx --------------------------===//

#include "afm/Translate/Translations.h"

#include "afm/FrontEnd/ONNX/ONNXImport.h"
#include "afm/Compiler/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

static llvm::cl::opt<bool> raiseToAFM(
    "onnx-raise-to-afm",
    llvm::cl::desc("--import-onnx: raise RMS normalizations to "
                   "afm.rms_norm and one-token MatMuls by constant weights "
                   "to afm.linear (default true)"),
    llvm::cl::init(true));

void afm::registerONNXImportTranslation() {
  TranslateToMLIRRegistration registration(
      "import-onnx", "import an ONNX model (model.onnx) into func + TOSA",
      [](llvm::SourceMgr &sourceMgr,
         MLIRContext *context) -> OwningOpRef<Operation *> {
        const llvm::MemoryBuffer *input =
            sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
        ONNXImportOptions options;
        options.raiseToAFM = raiseToAFM;
        OwningOpRef<ModuleOp> module = importONNXModel(
            context, input->getBuffer(), input->getBufferIdentifier(), options);
        return OwningOpRef<Operation *>(module.release());
      },
      [](DialectRegistry &registry) { registerDialects(registry); });
}
