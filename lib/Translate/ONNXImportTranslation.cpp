//===- ONNXImportTranslation.cpp - --import-onnx --------------------------===//

#include "afm/Translate/Translations.h"

#include "afm/Import/ONNXImport.h"
#include "afm/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

void afm::registerONNXImportTranslation() {
  TranslateToMLIRRegistration registration(
      "import-onnx", "import an ONNX model (model.onnx) into func + TOSA",
      [](llvm::SourceMgr &sourceMgr,
         MLIRContext *context) -> OwningOpRef<Operation *> {
        const llvm::MemoryBuffer *input =
            sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
        OwningOpRef<ModuleOp> module = importONNXModel(
            context, input->getBuffer(), input->getBufferIdentifier());
        return OwningOpRef<Operation *>(module.release());
      },
      [](DialectRegistry &registry) { registerDialects(registry); });
}
