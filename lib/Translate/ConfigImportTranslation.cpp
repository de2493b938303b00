//===- ConfigImportTranslation.cpp - --import-afm-config ------------------===//

#include "afm/Translate/Translations.h"

#include "afm/FrontEnd/Config/ConfigImport.h"
#include "afm/Model/ModelWeights.h"
#include "afm/Model/SafeTensors.h"
#include "afm/Compiler/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

static llvm::cl::OptionCategory importCategory("afm import options");
static llvm::cl::opt<std::string> weightsPath(
    "afm-weights",
    llvm::cl::desc("safetensors file to check against the config and to "
                   "record as the model's weights (--import-afm-config)"),
    llvm::cl::init(""), llvm::cl::cat(importCategory));
static llvm::cl::opt<int64_t> prefillChunk(
    "afm-prefill-chunk",
    llvm::cl::desc("Tokens per prefill call (--import-afm-config; default: "
                   "by model size, as afm-compile)"),
    llvm::cl::init(16), llvm::cl::cat(importCategory));
static llvm::cl::opt<int64_t> verifyTokens(
    "afm-verify-tokens",
    llvm::cl::desc("Also emit a verify entry of N rows, every row's logits "
                   "(--import-afm-config; as afm-compile --verify-tokens)"),
    llvm::cl::init(0), llvm::cl::cat(importCategory));

static llvm::cl::opt<int64_t> adapterRank(
    "afm-adapter-rank",
    llvm::cl::desc("Give every attention projection a run-time LoRA adapter "
                   "slot of rank R (--import-afm-config; as afm-compile "
                   "--adapter-rank)"),
    llvm::cl::init(0), llvm::cl::cat(importCategory));

void afm::registerConfigImportTranslation() {
  TranslateToMLIRRegistration registration(
      "import-afm-config",
      "import a model from config.json (+ --afm-weights model.safetensors) "
      "into afm IR",
      [](llvm::SourceMgr &sourceMgr,
         MLIRContext *context) -> OwningOpRef<Operation *> {
        const llvm::MemoryBuffer *input =
            sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
        ConfigImportOptions options;
        options.weightsPath = weightsPath;
        if (prefillChunk.getNumOccurrences())
          options.prefillChunk = prefillChunk;
        options.verifyTokens = verifyTokens;
        options.adapterRank = adapterRank;
        auto module = importModelJSON(context, input->getBuffer(),
                                      input->getBufferIdentifier(), options);
        if (!module) {
          Location loc = FileLineColLoc::get(
              StringAttr::get(context, input->getBufferIdentifier()), 1, 1);
          emitError(loc) << llvm::toString(module.takeError());
          return nullptr;
        }
        return OwningOpRef<Operation *>(module->release());
      },
      [](DialectRegistry &registry) { registerDialects(registry); });
}
