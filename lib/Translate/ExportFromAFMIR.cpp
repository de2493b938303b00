//===- ExportFromAFMIR.cpp - export registrations with a nesting check ----===//

#include "afm/Support/NestingDepth.h"
#include "afm/Translate/Translations.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Tools/ParseUtilities.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

void afm::registerExportFromAFMIR(StringRef name, StringRef description,
                                  const TranslateFromMLIRFunction &function,
                                  const DialectRegistrationFunction &dialects) {
  TranslateRegistration registration(
      name, description,
      [function, dialects](const std::shared_ptr<llvm::SourceMgr> &sourceMgr,
                           llvm::raw_ostream &os,
                           MLIRContext *context) -> LogicalResult {
        const llvm::MemoryBuffer *input =
            sourceMgr->getMemoryBuffer(sourceMgr->getMainFileID());
        if (llvm::Error error = checkIRNesting(*input)) {
          // The message is located already ("FILE:LINE:COL: error: ...").
          llvm::errs() << llvm::toString(std::move(error)) << "\n";
          return failure();
        }
        DialectRegistry registry;
        dialects(registry);
        context->appendDialectRegistry(registry);
        ParserConfig config(context);
        OwningOpRef<Operation *> op = parseSourceFileForTool(
            sourceMgr, config, /*insertImplicitModule=*/true);
        if (!op || failed(verify(*op)))
          return failure();
        return function(op.get(), os);
      });
}
